package jointgraph

// flowNet is a flow network with int64 capacities, solved with Dinic's
// algorithm. gonum's network.MaxFlowDinic computes the same flow value
// (the tests check they agree) but does not expose the residual graph, and
// the partitioner needs the cut itself.
//
// Edges are collected first; maxFlow lays the arcs out by tail node
// (compressed rows, each node's arcs newest first — the order a linked
// adjacency list with head insertion gives), so the searches read memory
// in order. Its int32 arrays come from ints and go back to it (release).
type flowNet struct {
	n          int
	eu, ev     []int32 // edges as added
	ec         []int64
	start      []int32 // arcs of node u: start[u] ≤ a < start[u+1]
	arcs       []flowArc
	fill       []int32 // place's next free arc, per node (counting down)
	stack      []flowFrame
	level, cur []int32
	ints       *pool[int32]
}

// flowArc is an arc of the network. Its fields are read together (the
// searches read head and capacity, a push the reverse arc's capacity), so
// they share a cache line: at 1M input nodes the arcs are 100 MB.
type flowArc struct {
	to, rev int32 // head; the index of the reverse arc
	cap     int64 // residual capacity
}

type flowFrame struct {
	u   int32
	arc int32 // arc taken into u
}

// flowInf is an "infinite" capacity: larger than any sum of finite ones.
const flowInf = int64(1) << 60

func newFlowNet(n int) *flowNet { return newFlowNetCap(n, 0) }

// newFlowNetCap returns a network of n nodes with room for edges edges.
func newFlowNetCap(n, edges int) *flowNet {
	return &flowNet{n: n, eu: make([]int32, 0, edges), ev: make([]int32, 0, edges), ec: make([]int64, 0, edges), ints: &pool[int32]{}}
}

func (f *flowNet) addEdge(u, v int, c int64) {
	f.eu = append(f.eu, int32(u))
	f.ev = append(f.ev, int32(v))
	f.ec = append(f.ec, c)
	f.start = nil
}

// prepareArcs turns start, holding each node's arc count at start[u+1],
// into offsets and allocates the arcs for place.
func (f *flowNet) prepareArcs() {
	for u := 1; u <= f.n; u++ {
		f.start[u] += f.start[u-1]
	}
	f.arcs = make([]flowArc, f.start[f.n])
	f.fill = f.ints.get(f.n)
	copy(f.fill, f.start[1:])
}

// place adds edge u→v with capacity c after prepareArcs; edges are placed
// in the order addEdge would have added them (each node's arcs fill its
// row from the end, so the row lists them newest first).
func (f *flowNet) place(u, v int, c int64) {
	f.fill[u]--
	a := f.fill[u]
	f.fill[v]--
	b := f.fill[v]
	f.arcs[a] = flowArc{to: int32(v), rev: b, cap: c}
	f.arcs[b] = flowArc{to: int32(u), rev: a}
}

// layout builds the arc arrays. Edge k has arc 2k (u→v, capacity c) and
// its reverse 2k+1 (v→u, 0); a node lists its arcs by decreasing arc
// number.
func (f *flowNet) layout() {
	n, m := f.n, len(f.eu)
	start := make([]int32, n+1)
	for k := range m {
		start[f.eu[k]+1]++
		start[f.ev[k]+1]++
	}
	for u := 1; u <= n; u++ {
		start[u] += start[u-1]
	}
	fill := make([]int32, n)
	copy(fill, start[:n])
	f.arcs = make([]flowArc, 2*m)
	for k := m - 1; k >= 0; k-- {
		u, v := f.eu[k], f.ev[k]
		b := fill[v] // arc 2k+1: v → u
		fill[v]++
		a := fill[u] // arc 2k: u → v
		fill[u]++
		f.arcs[a] = flowArc{to: v, rev: b, cap: f.ec[k]}
		f.arcs[b] = flowArc{to: u, rev: a}
	}
	f.start = start
}

// maxFlow runs Dinic's algorithm from s to t and returns the flow value
// (saturating at flowInf).
func (f *flowNet) maxFlow(s, t int) int64 {
	if f.start == nil {
		f.layout()
	}
	n := f.n
	if f.fill != nil {
		f.ints.put(f.fill) // placing is done
		f.fill = nil
	}
	level := f.ints.get(n)
	cur := f.ints.get(n)
	queue := f.ints.get(n)[:0]
	defer f.ints.put(queue[:cap(queue)])
	f.level, f.cur = level, cur
	var total int64
	for {
		for i := range level {
			level[i] = -1
		}
		level[s] = 0
		queue = append(queue[:0], int32(s))
		for qi := 0; qi < len(queue); qi++ {
			u := queue[qi]
			if lt := level[t]; lt >= 0 && level[u] >= lt {
				// The nodes left are as far as the sink or farther: on
				// no shortest path to it, which is all augment follows
				// (it would only find them dead ends).
				break
			}
			for _, a := range f.arcs[f.start[u]:f.start[u+1]] {
				if a.cap > 0 && level[a.to] < 0 {
					level[a.to] = level[u] + 1
					queue = append(queue, a.to)
				}
			}
		}
		if level[t] < 0 {
			return total
		}
		copy(cur, f.start[:n])
		for {
			pushed := f.augment(s, t, flowInf)
			if pushed == 0 {
				break
			}
			total += pushed
			if total >= flowInf {
				return flowInf
			}
		}
	}
}

// augment finds one blocking-flow path iteratively (no recursion, so deep
// graphs are safe) and pushes flow along it.
func (f *flowNet) augment(s, t int, limit int64) int64 {
	level, cur := f.level, f.cur
	stack := append(f.stack[:0], flowFrame{u: int32(s), arc: -1})
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if int(top.u) == t {
			// Bottleneck along the path, then push.
			push := limit
			for _, fr := range stack[1:] {
				push = min(push, f.arcs[fr.arc].cap)
			}
			for _, fr := range stack[1:] {
				a := &f.arcs[fr.arc]
				a.cap -= push
				f.arcs[a.rev].cap += push
			}
			f.stack = stack[:0]
			return push
		}
		advanced := false
		for end := f.start[top.u+1]; cur[top.u] < end; cur[top.u]++ {
			a := cur[top.u]
			v := f.arcs[a].to
			if f.arcs[a].cap > 0 && level[v] == level[top.u]+1 {
				stack = append(stack, flowFrame{u: v, arc: a})
				advanced = true
				break
			}
		}
		if !advanced {
			// Dead end: retreat and skip the arc that led here.
			level[top.u] = -1
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				cur[stack[len(stack)-1].u]++
			}
		}
	}
	f.stack = stack[:0]
	return 0
}

// sinkSide returns the nodes that can still reach t in the residual graph
// after maxFlow: the sink side of the minimum cut networkx's minimum_cut
// returns (the source side is everything else).
func (f *flowNet) sinkSide(t int) []bool {
	if f.start == nil {
		f.layout()
	}
	// Reverse reachability: u reaches t if some residual arc u→v with v
	// reaching t exists; that arc is the reverse of an arc of v.
	in := make([]bool, f.n)
	in[t] = true
	stack := append(f.ints.get(f.n)[:0], int32(t))
	defer func() { f.ints.put(stack[:cap(stack)]) }()
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, a := range f.arcs[f.start[v]:f.start[v+1]] {
			u := a.to
			if !in[u] && f.arcs[a.rev].cap > 0 {
				in[u] = true
				stack = append(stack, u)
			}
		}
	}
	return in
}

// release gives the network's int32 arrays back to its pool.
func (f *flowNet) release() {
	f.ints.put(f.start, f.level, f.cur)
	*f = flowNet{ints: f.ints}
}
