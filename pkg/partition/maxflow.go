package partition

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
// they share a cache line.
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

// cutNet is min-cut's network in the shape minCutSaved makes it, stored
// per node instead of per arc: node i (0 ≤ i < k) is split into in_i = 2i
// and out_i = 2i+1, joined by an arc of capacity w[i]; s = 2k has an
// infinite arc to in_i when src[i], out_i has one to t = 2k+1 when
// sink[i], and one to in_j for every edge i → j. Only the node arcs are
// finite, so a flow is f (per node) and flow (per edge), and the reverse
// arcs are implied.
//
// sinkSide computes a maximum flow and returns the network nodes that can
// reach t in its residual graph. That set is the same for every maximum
// flow (the sink side of the minimum cut nearest the sink), so it is
// flowNet's sinkSide after flowNet's maxFlow, whatever order either finds
// its paths in — except when the flow is unbounded (a path of infinite
// arcs), where flowNet stops at its first flowInf: sinkSide then returns
// nil, and the caller runs flowNet. The network stores each edge once
// (flowNet stores an arc and its reverse), and it is filled in one pass.
type cutNet struct {
	k         int
	w, f      []int64 // node arc capacity and flow
	src, sink []bool
	srcs      []int32 // the i with src[i], ascending
	// Edges out of i are e = uStart[i] ≤ e < uStart[i+1], to head[e];
	// edges into j are oStart[j] ≤ o < oStart[j+1], from tail[o], edge
	// number edge[o].
	uStart, head, oStart, tail, edge []int32
	flow                             []int64 // per edge
	total                            int64   // the flow's value
	// The search's state, per network node: the next arc to try, and the
	// distance to t (-1: unknown, or a dead end).
	cur, dist, stack []int32
	ints             *pool[int32]
}

// The arcs of a network node, numbered in the order the searches try
// them: in_j's node arc (0), then the reverses of its edges in
// (1 + o − oStart[j]); out_i's arc to t (0), the reverse of its node arc
// (1), then its edges out (2 + e − uStart[i]); s's arcs to in_srcs[a] (a).
// An arc that does not exist (no arc to t; the reverse of an arc without
// flow) has no residual capacity.

// arc returns the head of arc a of network node x and its residual
// capacity (flowInf: infinite); ok is false past x's last arc.
func (g *cutNet) arc(x, a int32) (y int32, res int64, ok bool) {
	s := int32(2 * g.k)
	if x == s {
		if int(a) >= len(g.srcs) {
			return 0, 0, false
		}
		return 2 * g.srcs[a], flowInf, true
	}
	i := x >> 1
	if x&1 == 0 { // in_i
		if a == 0 {
			return x + 1, g.w[i] - g.f[i], true
		}
		o := g.oStart[i] + a - 1
		if o >= g.oStart[i+1] {
			return 0, 0, false
		}
		return 2*g.tail[o] + 1, g.flow[g.edge[o]], true
	}
	switch a { // out_i
	case 0:
		if g.sink[i] {
			return s + 1, flowInf, true
		}
		return s + 1, 0, true
	case 1:
		return x - 1, g.f[i], true
	}
	e := g.uStart[i] + a - 2
	if e >= g.uStart[i+1] {
		return 0, 0, false
	}
	return 2 * g.head[e], flowInf, true
}

// push adds b units of flow along arc a of network node x.
func (g *cutNet) push(x, a int32, b int64) {
	if x == int32(2*g.k) {
		return
	}
	i := x >> 1
	switch {
	case x&1 == 0 && a == 0:
		g.f[i] += b
	case x&1 == 0:
		g.flow[g.edge[g.oStart[i]+a-1]] -= b
	case a == 1:
		g.f[i] -= b
	case a >= 2:
		g.flow[g.uStart[i]+a-2] += b
	}
}

// augment pushes flow along the path on the stack (each node's current
// arc leads to the next; the last one's leads to t) and pops the stack
// back to the tail of the first arc it saturates. It reports false when
// the flow reaches flowInf (unbounded).
func (g *cutNet) augment() bool {
	b := flowInf
	for _, x := range g.stack {
		_, res, _ := g.arc(x, g.cur[x])
		b = min(b, res)
	}
	g.total += b
	if g.total >= flowInf {
		return false
	}
	keep := -1
	for p, x := range g.stack {
		g.push(x, g.cur[x], b)
		if _, res, _ := g.arc(x, g.cur[x]); res == 0 && keep < 0 {
			keep = p
		}
	}
	g.stack = g.stack[:keep+1]
	return true
}

// search runs depth-first searches from s for paths to t along arcs that
// go one step nearer t (levels' distances: Dinic's phase), pushing flow
// along each path found, until none is left. A node none of whose arcs
// leads on is marked dead (dist -1), and each node's current arc only
// advances, so the search is linear in the network's size and the paths'
// lengths.
func (g *cutNet) search() bool {
	s, t := int32(2*g.k), int32(2*g.k+1)
	g.stack = append(g.stack[:0], s)
	for len(g.stack) > 0 {
		x := g.stack[len(g.stack)-1]
		advanced := false
		for ; ; g.cur[x]++ {
			y, res, ok := g.arc(x, g.cur[x])
			if !ok {
				break
			}
			if res <= 0 || g.dist[y] != g.dist[x]-1 {
				continue
			}
			if y == t {
				if !g.augment() {
					return false
				}
			} else {
				g.stack = append(g.stack, y)
			}
			advanced = true
			break
		}
		if !advanced {
			g.dist[x] = -1
			g.stack = g.stack[:len(g.stack)-1]
			if len(g.stack) > 0 {
				g.cur[g.stack[len(g.stack)-1]]++
			}
		}
	}
	return true
}

// levels sets dist to each network node's distance to t in the residual
// graph, as far as s's, and reports whether s reaches t. When it does
// not, the nodes with a distance are the sink side. It overwrites cur.
func (g *cutNet) levels() bool {
	s, t := int32(2*g.k), int32(2*g.k+1)
	dist := g.dist
	for x := range dist {
		dist[x] = -1
	}
	dist[t] = 0
	// The queue is cur, which sinkSide resets before each search. A node
	// is queued once, so it never grows.
	queue := append(g.cur[:0], t)
	for qi := 0; qi < len(queue); qi++ {
		y := queue[qi]
		if ds := dist[s]; ds >= 0 && dist[y] >= ds {
			break // farther from t than s: on no shortest path
		}
		d := dist[y] + 1
		visit := func(x int32) {
			if dist[x] < 0 {
				dist[x] = d
				queue = append(queue, x)
			}
		}
		if y == t {
			for i, sk := range g.sink {
				if sk {
					visit(int32(2*i + 1))
				}
			}
			continue
		}
		i := y >> 1
		if y&1 == 1 { // out_i, from in_i and from the heads of edges with flow
			if g.f[i] < g.w[i] {
				visit(y - 1)
			}
			for e := g.uStart[i]; e < g.uStart[i+1]; e++ {
				if g.flow[e] > 0 {
					visit(2 * g.head[e])
				}
			}
			continue
		}
		for o := g.oStart[i]; o < g.oStart[i+1]; o++ { // in_i, from the tails of edges in
			visit(2*g.tail[o] + 1)
		}
		if g.f[i] > 0 {
			visit(y + 1)
		}
		if g.src[i] {
			visit(s)
		}
	}
	return dist[s] >= 0
}

// sinkSide computes a maximum flow and returns the network nodes that
// reach t in its residual graph, or nil if the flow is unbounded. It first
// pushes flow along forward arcs only (greedy), which leaves few paths for
// Dinic's phases, which follow distances to t.
func (g *cutNet) sinkSide() []bool {
	n := 2*g.k + 2
	// The stack holds one path, a few nodes long: it grows as needed. cur
	// and dist need no zeroing: index counts in cur, greedy sets the
	// entries of cur it reads, and levels every distance.
	g.cur, g.dist, g.stack = g.ints.get(n), g.ints.get(n), make([]int32, 0, 64)
	g.index()
	defer func() {
		g.ints.put(g.cur, g.dist)
		g.cur, g.dist, g.stack = nil, nil, nil
	}()
	if !g.greedy() {
		return nil
	}
	for g.levels() {
		clear(g.cur)
		if !g.search() {
			return nil
		}
	}
	side := make([]bool, n)
	for x, d := range g.dist {
		side[x] = d >= 0
	}
	return side
}

// greedy pushes flow along paths of forward arcs (s, then node arcs and
// edges to later nodes, then t), depth first from each of s's arcs in
// turn, until no such path is left; it reports false if the flow is
// unbounded. A path is a list of nodes, each one's node arc and current
// edge (cur[out_i]: an edge number) leading to the next, the last one's
// arc to t. A node is dead once its node arc is full or, without an arc to
// t, its edges are all tried; edges only go to later nodes, so no path
// meets itself and each edge is tried past once.
func (g *cutNet) greedy() bool {
	w, f, cur := g.w, g.f, g.cur
	for i := range g.k {
		cur[2*i+1] = g.uStart[i]
	}
	dead := func(i int32) bool { return f[i] == w[i] || !g.sink[i] && cur[2*i+1] == g.uStart[i+1] }
	for _, a := range g.srcs {
		path := append(g.stack[:0], a)
		for len(path) > 0 {
			i := path[len(path)-1]
			if dead(i) {
				path = path[:len(path)-1]
				if len(path) > 0 {
					cur[2*path[len(path)-1]+1]++
				}
				continue
			}
			if !g.sink[i] {
				// On along the first live edge to a later node.
				e := cur[2*i+1]
				if j := g.head[e]; j > i && !dead(j) {
					path = append(path, j)
				} else {
					cur[2*i+1]++
				}
				continue
			}
			b := flowInf
			for _, i := range path {
				b = min(b, w[i]-f[i])
			}
			if g.total += b; g.total >= flowInf {
				return false
			}
			keep := -1
			for p, i := range path {
				if f[i] += b; f[i] == w[i] && keep < 0 {
					keep = p
				}
				if p+1 < len(path) {
					g.flow[cur[2*i+1]] += b
				}
			}
			path = path[:keep+1]
		}
		g.stack = path
	}
	return true
}

// newCutNet returns a network of len(w) nodes, w[i] node i's arc capacity
// (the network keeps w), with room for edges edges, to be filled with
// addNode and addEdge, node by node in order.
func newCutNet(w []int64, edges int, ints *pool[int32], bools *pool[bool]) *cutNet {
	k := len(w)
	return &cutNet{k: k, w: w, f: make([]int64, k), src: bools.get(k), sink: bools.get(k), srcs: ints.get(k)[:0],
		uStart: ints.get(k + 1)[:0], head: ints.get(edges)[:0], ints: ints}
}

// addNode adds the next node: whether s and t have arcs to it.
func (g *cutNet) addNode(src, sink bool) {
	i := len(g.uStart)
	g.src[i], g.sink[i] = src, sink
	if src {
		g.srcs = append(g.srcs, int32(i))
	}
	g.uStart = append(g.uStart, int32(len(g.head)))
}

// addEdge adds an edge from the last node added to node j.
func (g *cutNet) addEdge(j int32) { g.head = append(g.head, j) }

// index lists each node's edges in, once every node is added (counting
// in cur, which sinkSide has made).
func (g *cutNet) index() {
	m := len(g.head)
	g.uStart = append(g.uStart, int32(m))
	g.flow = make([]int64, m)
	g.oStart = g.ints.zeroed(g.k + 1)
	for _, j := range g.head {
		g.oStart[j+1]++
	}
	for j := 1; j <= g.k; j++ {
		g.oStart[j] += g.oStart[j-1]
	}
	g.tail, g.edge = g.ints.get(m), g.ints.get(m)
	next := g.cur[:g.k] // free until greedy
	copy(next, g.oStart[:g.k])
	for i := range g.k {
		for e := g.uStart[i]; e < g.uStart[i+1]; e++ {
			o := next[g.head[e]]
			next[g.head[e]]++
			g.tail[o], g.edge[o] = int32(i), e
		}
	}
}

// release gives the network's arrays back to the pools.
func (g *cutNet) release(bools *pool[bool]) {
	g.ints.put(g.srcs[:cap(g.srcs)], g.uStart[:cap(g.uStart)], g.head[:cap(g.head)], g.oStart, g.tail, g.edge)
	bools.put(g.src, g.sink)
	*g = cutNet{}
}
