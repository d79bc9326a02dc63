package partition

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Mode selects the partitioner.
type Mode int

// The partitioners.
const (
	// Default is AOTAutograd's default_partition: the forward
	// graph computes what the original forward computed and saves every
	// forward value the backward reads.
	Default Mode = iota
	// MinCut is min_cut_rematerialization_partition: a minimum
	// cut of the joint graph weighted by tensor sizes decides what to
	// save; cheap ops after the cut are recomputed in the backward.
	MinCut
)

// ParseMode parses "default" or "mincut".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "default":
		return Default, nil
	case "mincut", "min_cut":
		return MinCut, nil
	}
	return 0, fmt.Errorf("unknown partitioner %q (want default or mincut)", s)
}

func (p Mode) String() string {
	if p == MinCut {
		return "mincut"
	}
	return "default"
}

// Partition is a joint graph split into a forward and a backward graph.
// The forward takes the primals and returns the forward outputs followed by
// the saved values (tensors first, then symbolic ints); the backward takes
// the saved symbolic ints, the saved tensors, then the tangents, and
// returns one gradient per primal — AOTAutograd's order.
type Partition struct {
	Forward, Backward *ir.Module
	Mode              Mode

	// numSaved and savedBytes are NumSaved's and TotalBytes': the saved
	// values themselves are made on demand (Saved), from the forward's
	// outputs.
	numSaved   int
	savedBytes int64
	// why holds the reason of each saved value, in Saved's order.
	why []why

	p      *partitioner
	fw, bw *emission
}

// Source returns the forward (or the backward) graph as the module it is
// in and its root graph's nodes: read in place from the joint when the
// partition came from SplitLazy (the module's root graph is then empty:
// write it with ir.EncodeSourceTo), Forward's or Backward's root graph
// after Split.
func (p *Partition) Source(backward bool) (*ir.Module, ir.NodeSource) {
	m, e := p.Forward, p.fw
	if backward {
		m, e = p.Backward, p.bw
	}
	if m != nil {
		return m, ir.GraphNodes(m.Root())
	}
	return e.shell, e
}

// SavedValue is one value the forward saves for the backward.
type SavedValue struct {
	Name  string
	Kind  string // "tensor" or "symint"
	Shape []ir.Dim
	Dtype string
	// Bytes is numel × element size; -1 when the shape is symbolic.
	Bytes int64
	// Source is where the value is made in the user's program: the
	// innermost frame of its stack trace (ir.StackSummary), else its
	// innermost nn_module_stack entry, "input" for a primal, "" unknown.
	Source string
	// Why says why the partition saves it (memory.go's why).
	Why string
}

// NumSaved returns the number of saved values.
func (p *Partition) NumSaved() int { return p.numSaved }

// Saved lists the saved values in the order the forward returns them,
// made on each call: a command that only counts them (NumSaved,
// TotalBytes) does not allocate a SavedValue per saved value.
func (p *Partition) Saved() []SavedValue {
	outs := p.fw.sp.outputs
	saved := make([]SavedValue, 0, p.numSaved)
	for i, a := range outs[len(outs)-p.numSaved:] {
		sv := p.p.savedValue(a.Ref)
		if i < len(p.why) {
			sv.Why = p.why[i].String()
		}
		saved = append(saved, sv)
	}
	return saved
}

// savedValue describes joint node id as a saved value: its shape, dtype
// and the bytes the tensor takes at runtime (emptyAtRuntime).
func (p *partitioner) savedValue(id ir.NodeID) SavedValue {
	n := &p.g.Nodes[id]
	sv := SavedValue{Name: n.Name, Kind: "tensor", Bytes: p.savedBytes(id), Source: valueSource(n)}
	if t := valueTensor(n.Val); t != nil {
		sv.Shape, sv.Dtype = t.Shape, t.Dtype
		if p.emptyAtRuntime(n) {
			sv.Shape = []ir.Dim{{Val: 0}}
		}
	} else if isSymValue(n.Val) {
		sv.Kind = "symint"
	}
	return sv
}

// savedBytes is savedValue(id).Bytes without the rest: the partition sums
// it over every saved value, and the source text (a stack trace parsed
// per value) is only for the reports that list them.
func (p *partitioner) savedBytes(id ir.NodeID) int64 {
	n := &p.g.Nodes[id]
	if t := valueTensor(n.Val); t != nil {
		if p.emptyAtRuntime(n) {
			return 0
		}
		if b, ok := jointgraph.TensorBytes(t); ok {
			return b
		}
		return -1
	}
	if isSymValue(n.Val) {
		return 0
	}
	return -1
}

// emptyAtRuntime reports whether n is a tensor the kernel makes empty
// though the trace's metadata gives it elements: save_mean or save_invstd
// (results 1, 2) of an eval-mode native_batch_norm on CPU, by torch 1.13
// (version row batch-norm-eval-stats-1.13). The report gives what the
// forward returns at runtime, which AOTAutograd's forward returns too.
func (p *partitioner) emptyAtRuntime(n *ir.Node) bool {
	if n.Target != "_operator.getitem" || len(n.Args) < 2 || n.Args[0].Kind != ir.ArgNode ||
		n.Args[1].Kind != ir.ArgInt || (n.Args[1].Int() != 1 && n.Args[1].Int() != 2) {
		return false
	}
	r := n.Args[0].Ref
	if r < 0 || int(r) >= len(p.g.Nodes) {
		return false
	}
	bn := &p.g.Nodes[r]
	if bn.Target != "aten.native_batch_norm.default" || len(bn.Args) < 6 || bn.Args[5].Kind != ir.ArgBool || bn.Args[5].B {
		return false
	}
	t := valueTensor(n.Val)
	return t != nil && t.Device == "cpu" && opschema.TorchDiffers(opschema.DiffBatchNormEvalStats113, p.j.Module.TorchVersion)
}

// TotalBytes sums the saved values' sizes (symbolic ones count 0).
func (p *Partition) TotalBytes() int64 { return p.savedBytes }

// Split partitions a joint graph built with jointgraph.ConventionNone. The joint
// graph is only read.
func Split(j *jointgraph.Joint, mode Mode) (p *Partition, err error) {
	if p, err = SplitLazy(j, mode); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, ir.Panicked("partition", ir.Location{File: j.File}, r)
		}
	}()
	p.materialize()
	return p, nil
}

// SplitLazy is Split without Forward and Backward: the two graphs are read
// from the joint in place (Source), which must then stay unchanged: most
// of the cost of Split at scale is copying the nodes and their arguments
// into the two graphs.
func SplitLazy(j *jointgraph.Joint, mode Mode) (p *Partition, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, ir.Panicked("partition", ir.Location{File: j.File}, r)
		}
		if e, ok := err.(*jointgraph.Error); ok && e.Loc.File == "" {
			e.Loc.File = j.File
		}
	}()
	return split(j, mode, 1)
}

// SplitBudget is SplitLazy(j, MinCut) under an activation memory budget
// in [0, 1] (budget.go): 1 is min-cut, 0 saves only the inputs.
func SplitBudget(j *jointgraph.Joint, budget float64) (p *Partition, err error) {
	if budget < 0 || budget > 1 || math.IsNaN(budget) {
		return nil, fmt.Errorf("the memory budget must be between 0 and 1, not %v", budget)
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, ir.Panicked("partition", ir.Location{File: j.File}, r)
		}
		if e, ok := err.(*jointgraph.Error); ok && e.Loc.File == "" {
			e.Loc.File = j.File
		}
	}()
	return split(j, MinCut, budget)
}

func split(j *jointgraph.Joint, mode Mode, budget float64) (*Partition, error) {
	if j.Convention != jointgraph.ConventionNone {
		return nil, fmt.Errorf("partitioning needs a joint graph in the default convention, not %s", j.Convention)
	}
	p := newPartitioner(j.Module.Root(), j, mode == MinCut)
	var saved []int32
	if mode == MinCut {
		saved = p.budgetSaved(budget)
	} else {
		saved = p.defaultSaved()
	}
	return p.extract(saved, mode)
}

func isSymValue(v *ir.Value) bool {
	return v != nil && (v.Kind == ir.ValSym || v.Kind == ir.ValInt)
}

// Node classes of the partitioner's compact graph.
const (
	classOther uint8 = iota
	classPlaceholder
	classCall
	classGetAttr
	classOutput
)

// partitioner is a read-only, compact view of a joint graph: the nodes
// left after common-subexpression elimination (min-cut only), numbered
// densely in graph order ("compact ids"), with their distinct operands and
// users in CSR form. Every step below is one linear sweep over these
// arrays; the joint graph itself is never modified.
//
// Every per-node array is pointer-free (the collector does not scan it),
// made once at its final size and filled in place; the temporary ones are
// taken from and given back to ints and bools, so that a later step
// reuses the memory an earlier one is done with.
type partitioner struct {
	g *ir.Graph
	j *jointgraph.Joint
	n int // compact nodes
	// fullNetwork builds min-cut's flow network exactly as AOTAutograd
	// does, without merging the backward into the sink: the tests' oracle.
	fullNetwork bool

	// When CSE merged no node (always with the default partitioner) the
	// compact ids are the joint ids and node, canon and cid are nil.
	node  []int32 // compact id → joint node id
	canon []int32 // joint id → the joint id CSE merged it into (itself if kept)
	cid   []int32 // joint id → compact id of canon

	opStart, opnd   []int32 // operands: distinct, in reference order, no self references
	useStart, users []int32 // users: distinct, ascending
	bad             []bool  // a reference that does not resolve (or refers to the node itself)
	class           []uint8
	tgt             []int32 // call nodes: index into targets, else -1
	targets         []string
	infos           []packetInfo // per target
	effect          []bool
	// fills holds, by compact id, the constant of a constant-fill node
	// (zerofill.go), which has no operands here and is never saved.
	fills fillTable

	primals, tangents []int32 // compact ids
	fwdOuts, bwdOuts  []ir.Arg
	fwAvail           []bool // fwAvailable's
	// sym tells, of the candidates to save, which are symbolic ints: the
	// step that chose them read their values (splitSyms).
	sym []bool
	// why holds, by compact id, why the step that chose the candidates
	// would save each (memory.go).
	why []why

	ints  pool[int32]
	bools pool[bool]
}

func (p *partitioner) operands(c int32) []int32 { return p.opnd[p.opStart[c]:p.opStart[c+1]] }
func (p *partitioner) usersOf(c int32) []int32  { return p.users[p.useStart[c]:p.useStart[c+1]] }
func (p *partitioner) nd(c int32) *ir.Node      { return &p.g.Nodes[p.jointID(c)] }

// jointID returns the joint node id of compact node c.
func (p *partitioner) jointID(c int32) int32 {
	if p.node == nil {
		return c
	}
	return p.node[c]
}

// compactOf returns the compact id of joint node r (a valid id), or of the
// node it was merged into.
func (p *partitioner) compactOf(r int32) int32 {
	if p.cid == nil {
		return r
	}
	return p.cid[p.canon[r]]
}

func newPartitioner(g *ir.Graph, j *jointgraph.Joint, cse bool) *partitioner {
	p := &partitioner{g: g, j: j}
	N := len(g.Nodes)
	effect := make([]bool, N)
	if len(j.Effects) > 0 {
		want := make(map[string]bool, len(j.Effects))
		for _, name := range j.Effects {
			want[name] = true
		}
		for i := range g.Nodes {
			if name := g.Nodes[i].Name; want[name] {
				effect[i] = true
				delete(want, name) // the first node of that name, as Lookup finds
			}
		}
	}
	ph, out := p.index(effect, cse)
	p.primals = p.compactIDs(ph[:j.NumPrimals])
	p.tangents = p.compactIDs(ph[j.NumPrimals:])
	elems := g.Nodes[out].Args[0].Elems()
	p.fwdOuts = elems[:j.NumFwdOutputs]
	p.bwdOuts = elems[j.NumFwdOutputs:]
	return p
}

func (p *partitioner) compactIDs(ids []int32) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = p.compactOf(id)
	}
	return out
}

// refCompact returns the compact id a reference resolves to, or -1.
func (p *partitioner) refCompact(r ir.NodeID) int32 {
	if r < 0 || int(r) >= len(p.g.Nodes) {
		return -1
	}
	return p.compactOf(int32(r))
}

// index builds the compact graph. With cse it merges call nodes with the
// same target and arguments (functorch's fx_graph_cse), except
// side-effecting and random ones: a node's references are first redirected
// to the nodes their referents were merged into, then the node is merged
// into an earlier equal one if there is one.
//
// It reads each joint node once: the arrays are filled by joint id and
// compacted in place (a compact id is never larger than its joint id). It
// returns the joint ids of the placeholders and of the (last) output node
// (-1 if none).
func (p *partitioner) index(effect []bool, cse bool) (ph []int32, out int) {
	g := p.g
	N := len(g.Nodes)
	out = -1
	var canon []int32 // made at the first merge: until then the identity
	bad := make([]bool, N)
	class := make([]uint8, N)
	start := make([]int32, N+1)
	ops := make([]int32, 0, 2*N)
	stamp := p.ints.get(N)
	clear(stamp)
	tids := make([]int32, N)
	var infos []packetInfo
	// Targets are looked up by their string's address: the decoder
	// interns them, and the derivative rules' are constants.
	tidOf := ir.NewTargetMemo(func(target string) int32 {
		p.targets = append(p.targets, target)
		infos = append(infos, packetOf(target, p.j.Module.TorchVersion))
		return int32(len(infos) - 1)
	})
	fills := newFillTable(N)
	col := &opCollector{n: int32(N), bad: bad, stamp: stamp}
	var ct *cseIndex
	if cse {
		ct = newCSEIndex(N, &p.ints)
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		tids[i] = -1
		switch n.Op {
		case ir.OpPlaceholder:
			class[i] = classPlaceholder
			ph = append(ph, int32(i))
		case ir.OpCallFunction:
			class[i] = classCall
			tids[i] = tidOf.Get(n.Target)
		case ir.OpGetAttr:
			class[i] = classGetAttr
		case ir.OpOutput:
			class[i] = classOutput
			out = i
		}
		s := len(ops)
		col.self, col.ops = int32(i), ops
		fill := false
		if tids[i] >= 0 {
			var v ir.Arg
			if v, fill = constantFill(n, infos[tids[i]].fill, &fills); fill {
				fills.set(i, v) // made from its metadata: it reads nothing
			}
		}
		if !fill {
			for k := range n.Args {
				col.add(&n.Args[k])
			}
			for k := range n.Kwargs {
				col.add(&n.Kwargs[k].Value)
			}
		}
		ops = col.ops
		start[i+1] = int32(len(ops))
		if cse && n.Op == ir.OpCallFunction && !effect[i] && !infos[tids[i]].random {
			if prev := ct.find(int32(i), n, tids[i], infos[tids[i]].hash, tids, g, canon); prev >= 0 {
				if canon == nil {
					canon = make([]int32, N)
					for k := range canon {
						canon[k] = int32(k)
					}
					col.canon = canon
				}
				canon[i] = prev
				ops = ops[:s]
				start[i+1] = int32(s)
				continue
			}
		}
	}
	p.ints.put(stamp)
	if ct != nil {
		p.ints.put(ct.last, ct.prev)
	}
	p.infos = infos
	n := N
	if canon != nil {
		// Renumber densely, and move each kept node's entries to its
		// compact id.
		cid := make([]int32, N)
		node := make([]int32, 0, N)
		for i := range cid {
			if canon[i] != int32(i) {
				cid[i] = -1
				continue
			}
			cid[i] = int32(len(node))
			node = append(node, int32(i))
		}
		for i := range cid {
			if canon[i] != int32(i) {
				cid[i] = cid[canon[i]]
			}
		}
		for c, id := range node {
			start[c+1] = start[id+1]
			bad[c], class[c], tids[c], effect[c] = bad[id], class[id], tids[id], effect[id]
			if fills.at != nil {
				fills.at[c] = fills.at[id]
			}
		}
		for k, o := range ops {
			ops[k] = cid[o] // merged nodes have no operands left, so ranges stay contiguous
		}
		n = len(node)
		p.node, p.canon, p.cid = node, canon, cid
	}
	p.n = n
	p.opStart, p.opnd = start[:n+1], ops
	p.bad, p.class, p.tgt, p.effect = bad[:n], class[:n], tids[:n], effect[:n]
	if fills.at != nil {
		fills.at = fills.at[:n]
	}
	fills.n = n
	p.fills = fills
	// Users, ascending: count them at useStart[o+1], turn the counts into
	// each row's start, fill every row advancing its start to the next
	// row's, and shift the starts back into place.
	useStart := make([]int32, n+1)
	for _, o := range p.opnd {
		useStart[o+1]++
	}
	for c := 1; c <= n; c++ {
		useStart[c] += useStart[c-1]
	}
	p.users = make([]int32, len(p.opnd))
	for u := range n {
		for _, o := range p.operands(int32(u)) {
			p.users[useStart[o]] = int32(u)
			useStart[o]++
		}
	}
	copy(useStart[1:], useStart[:n])
	useStart[0] = 0
	p.useStart = useStart
	return ph, out
}

// defaultSaved is default_partition: every forward node the backward
// reads.
func (p *partitioner) defaultSaved() []int32 {
	fwd := p.forwardNodes()
	for _, c := range p.primals {
		fwd[c] = true
	}
	var saved []int32
	p.sym = p.bools.zeroed(p.n)
	p.resetWhy(whyRead)
	for c := range int32(p.n) {
		if !fwd[c] || p.isFill(c) {
			continue
		}
		v := p.nd(c).Val
		if reads := p.metadataOnlyUsers(c, fwd); reads != nil {
			// The backward reads only c's sizes or strides: those are
			// saved, not c (default_partition's saved_sym_nodes).
			for _, u := range reads {
				saved = append(saved, u)
				p.sym[u] = true
			}
			continue
		}
		if !p.isTuple(c, v) {
			saved = append(saved, c)
			p.sym[c] = isSymValue(v)
			continue
		}
		// A tuple cannot be saved: its elements (getitem users) are.
		for _, u := range p.usersOf(c) {
			if n := p.nd(u); n.Target == "_operator.getitem" {
				saved = append(saved, u)
				p.sym[u] = isSymValue(n.Val)
			}
		}
	}
	p.bools.put(fwd)
	return saved // extract drops the ones the backward does not read
}

// metadataOnlyUsers returns the users of forward tensor c outside the
// forward (fwd) when there are some and every one is a metadata read of a
// symbolic int computable in the forward (zerofill.go's metadataReads),
// else nil.
func (p *partitioner) metadataOnlyUsers(c int32, fwd []bool) []int32 {
	if valueTensor(p.nd(c).Val) == nil {
		return nil
	}
	avail := p.fwAvailable()
	var reads []int32
	for _, u := range p.usersOf(c) {
		if fwd[u] {
			continue
		}
		if p.class[u] != classCall || !metadataReads[p.targets[p.tgt[u]]] || !isSymValue(p.nd(u).Val) || !avail[u] {
			return nil
		}
		reads = append(reads, u)
	}
	return reads
}

// isFill reports whether c is a constant-fill node (zerofill.go).
func (p *partitioner) isFill(c int32) bool { return p.fills.is(int(c)) }

// isTuple reports whether node c, whose value is v, makes a tuple.
func (p *partitioner) isTuple(c int32, v *ir.Value) bool {
	return p.class[c] == classCall && (v == nil || v.Kind == ir.ValTuple || v.Kind == ir.ValList)
}

// forwardNodes returns which nodes, of those computable from the primals
// alone (side-effecting ones included), the forward outputs or a
// side-effecting node need: the nodes the forward graph computes.
func (p *partitioner) forwardNodes() (need []bool) {
	avail := p.fwAvailable()
	need = p.bools.zeroed(p.n)
	roots := p.ints.get(p.n)[:0] // as plan's stack
	defer func() { p.ints.put(roots[:cap(roots)]) }()
	for _, a := range p.fwdOuts {
		if a.Kind == ir.ArgNode && a.Ref >= 0 {
			if c := p.refCompact(a.Ref); c >= 0 {
				roots = append(roots, c)
			}
		}
	}
	for c := range int32(p.n) {
		if p.effect[c] && avail[c] {
			roots = append(roots, c)
		}
	}
	for len(roots) > 0 {
		c := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if need[c] || !avail[c] {
			continue
		}
		need[c] = true
		roots = append(roots, p.operands(c)...)
	}
	return need
}

// fwAvailable returns the nodes computable from the primals
// (side-effecting ones included), computed once: the forward's nodes
// (forwardNodes) and the forward graph's plan both read them.
func (p *partitioner) fwAvailable() []bool {
	if p.fwAvail == nil {
		p.fwAvail = p.available(p.primals, true)
	}
	return p.fwAvail
}

// available returns the nodes computable from inputs: the inputs, and call
// and get_attr nodes whose operands all are (side-effecting nodes only
// when effects is set).
func (p *partitioner) available(inputs []int32, effects bool) []bool {
	avail := p.bools.zeroed(p.n)
	for _, c := range inputs {
		avail[c] = true
	}
	for c := range int32(p.n) {
		// Before c's turn only the inputs are available: avail[c] says
		// whether c is one.
		if avail[c] || (p.class[c] != classCall && p.class[c] != classGetAttr) || p.bad[c] || (!effects && p.effect[c]) {
			continue
		}
		ok := true
		for _, o := range p.operands(c) {
			if !avail[o] {
				ok = false
				break
			}
		}
		avail[c] = ok
	}
	return avail
}

// subgraphPlan is a graph _extract_graph_with_inputs_outputs would build
// followed by dead-code elimination: its placeholders are inputs, its
// output returns outputs, and it computes the live nodes.
type subgraphPlan struct {
	inputs  []int32
	outputs []ir.Arg // references are joint ids
	isIn    []bool
	live    []bool // computed nodes kept (inputs excluded)
	nLive   int    // how many
}

// plan computes the nodes a subgraph with the given inputs computes for
// outputs (and, with effects, for the side-effecting nodes it can
// compute): those reached walking back from them through nodes computable
// from the inputs (avail: available(inputs, effects)). It also reports
// which inputs were reached.
func (p *partitioner) plan(inputs []int32, avail []bool, outputs []ir.Arg, effects bool) (*subgraphPlan, []bool, error) {
	sp := &subgraphPlan{inputs: inputs, outputs: outputs, isIn: p.bools.zeroed(p.n), live: p.bools.zeroed(p.n)}
	for _, c := range inputs {
		sp.isIn[c] = true
	}
	reached := p.bools.zeroed(p.n)
	// The stack from the pool: it grows to about a node per live node.
	stack := p.ints.get(p.n)[:0]
	defer func() { p.ints.put(stack[:cap(stack)]) }()
	var err error
	for k := range outputs {
		outputs[k].WalkRefs(func(a *ir.Arg) {
			if a.Ref < 0 {
				return // an unresolved reference stays as it is
			}
			c := p.refCompact(a.Ref)
			if c < 0 || !avail[c] {
				if err == nil {
					// A gradient the backward cannot compute: with
					// --unmask-none-gradients, min-cut does not save the
					// primal the zeros_like of an input without a
					// gradient reads.
					err = &jointgraph.Error{Msg: fmt.Sprintf("cannot partition the joint graph: output %s cannot be computed from the graph's inputs", a.S)}
				}
				return
			}
			stack = append(stack, c)
		})
	}
	if err != nil {
		return nil, nil, err
	}
	if effects {
		for c := range int32(p.n) {
			if p.effect[c] && avail[c] {
				stack = append(stack, c)
			}
		}
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reached[c] {
			continue
		}
		reached[c] = true
		if sp.isIn[c] {
			continue
		}
		sp.live[c] = true
		sp.nLive++
		stack = append(stack, p.operands(c)...)
	}
	return sp, reached, nil
}

// extract builds the forward and backward graphs for the saved
// candidates, keeping only the candidates the backward reads, as
// AOTAutograd's _extract_fwd_bwd_modules does. Saved symbolic ints go after
// the saved tensors in the forward's outputs and before them in the
// backward's inputs.
func (p *partitioner) extract(cands []int32, mode Mode) (*Partition, error) {
	slices.Sort(cands)
	cands = slices.Compact(cands)
	// The backward built from every candidate computes the same nodes as
	// the one built from the candidates it reads: a node it computes
	// reaches only inputs it reads.
	syms, tensors := p.splitSyms(cands)
	p.ints.put(cands[:cap(cands)]) // minCutSaved's
	bwIn := slices.Concat(syms, tensors, p.tangents)
	bwAvail := p.available(bwIn, false)
	bwPlan, reached, err := p.plan(bwIn, bwAvail, p.bwdOuts, false)
	p.bools.put(bwAvail)
	if err != nil {
		return nil, err
	}
	// The backward's inputs: the candidates it reads, then the tangents
	// (bwIn, filtered in place).
	k := 0
	for i, c := range bwIn {
		if i >= len(syms)+len(tensors) || reached[c] {
			bwIn[k] = c
			k++
		}
	}
	bwIn = bwIn[:k]
	bwPlan.inputs = bwIn
	nsyms := 0
	for _, c := range syms {
		if reached[c] {
			nsyms++
		}
	}
	p.bools.put(reached)
	// The saved values, as the forward returns them: the backward's
	// tensors, then its symbolic ints.
	saved := [2][]int32{bwIn[nsyms : len(bwIn)-len(p.tangents)], bwIn[:nsyms]}
	numSaved := len(bwIn) - len(p.tangents)
	fwOuts := make([]ir.Arg, 0, len(p.fwdOuts)+numSaved)
	fwOuts = append(fwOuts, p.fwdOuts...)
	var savedBytes int64
	whys := make([]why, 0, numSaved)
	for _, cs := range saved {
		for _, c := range cs {
			w := whyRead
			if c < int32(len(p.why)) {
				w = p.why[c]
			}
			if w == whyRead && p.class[c] == classPlaceholder {
				w = whyInput
			}
			whys = append(whys, w)
			id := p.jointID(c)
			n := &p.g.Nodes[id]
			fwOuts = append(fwOuts, ir.NodeArg(ir.NodeID(id), n.Name))
			if b := p.savedBytes(ir.NodeID(id)); b > 0 {
				savedBytes = satAdd(savedBytes, b)
			}
		}
	}
	fwPlan, fwReached, err := p.plan(p.primals, p.fwAvailable(), fwOuts, true)
	if err != nil {
		return nil, err
	}
	p.bools.put(fwReached)

	out := &Partition{Mode: mode, numSaved: numSaved, savedBytes: savedBytes, why: whys}
	out.fw, out.bw = p.prepare(fwPlan), p.prepare(bwPlan)
	shell := func(e *emission, role string) *ir.Module {
		calls, getAttrs := p.graphRefs(e)
		m := p.j.ModuleFor(&ir.Graph{}, calls, getAttrs)
		m.SetAnnotation(jointgraph.AnnotationRole, role)
		m.SetAnnotation("hopctl.partition.mode", mode.String())
		m.SetAnnotation("hopctl.partition.num_saved", strconv.Itoa(numSaved))
		return m
	}
	out.fw.shell, out.bw.shell = shell(out.fw, "forward"), shell(out.bw, "backward")
	out.p = p
	p.release(out.fw, out.bw)
	return out, nil
}

// release drops what the partition's decisions needed and reading the two
// graphs (emission.Node, emission.Ref, materialize) does not: the operand
// and user lists, the per-node classes, the plans' node sets and the
// arrays kept for reuse — several arrays per node, which a SplitLazy
// partition would otherwise keep live while its graphs are checked and
// encoded.
func (p *partitioner) release(es ...*emission) {
	p.opStart, p.opnd, p.useStart, p.users = nil, nil, nil, nil
	p.bad, p.class, p.tgt, p.effect = nil, nil, nil, nil
	p.targets, p.infos, p.fills = nil, nil, fillTable{}
	p.primals, p.tangents, p.fwdOuts, p.bwdOuts, p.fwAvail, p.sym, p.why = nil, nil, nil, nil, nil, nil, nil
	p.ints, p.bools = pool[int32]{}, pool[bool]{}
	for _, e := range es {
		e.sp.isIn, e.sp.live = nil, nil
	}
}

// materialize copies the forward and backward graphs' nodes into modules
// of their own: Forward and Backward.
func (out *Partition) materialize() {
	p, fw, bw := out.p, out.fw, out.bw
	fw.alloc(p)
	bw.alloc(p)
	p.fill(fw)
	p.fill(bw)
	mk := func(e *emission) *ir.Module {
		m := e.shell
		m.Graphs[0] = p.finish(e)
		return m
	}
	out.Forward = mk(fw)
	out.Backward = mk(bw)
}

// splitSyms splits saved values into symbolic ints and tensors, each
// list in saved's order: the backward takes the symbolic ints first.
func (p *partitioner) splitSyms(saved []int32) (syms, tensors []int32) {
	tensors = make([]int32, 0, len(saved))
	for _, c := range saved {
		if p.sym[c] {
			syms = append(syms, c)
		} else {
			tensors = append(tensors, c)
		}
	}
	return syms, tensors
}

// emission is a graph made from a plan: the inputs as placeholders, the
// live nodes in graph order with their references renumbered, and the
// output. Node names, values and metadata are the joint's. It is read in
// place (emission.Node, for the encoders: Partition.Source) or copied into
// a graph of its own (materialize).
type emission struct {
	p    *partitioner
	sp   *subgraphPlan
	m    []int32 // compact id → id in the new graph (-1: none)
	live []int32 // the computed nodes, in order
	// ph holds the placeholders, made from the inputs' joint nodes; nil
	// when every input's joint node is already the placeholder the graph
	// needs (plainPlaceholder: the forward's primals), which Node then
	// returns in place.
	ph    []ir.Node
	fills map[int32]*ir.Node // the live constant fills, as made (fillNode)
	out   ir.Node            // the output node, its references the joint's
	shell *ir.Module         // the module, its root graph empty until materialized
	nodes []ir.Node          // materialize's copy
}

// prepare numbers the plan's nodes and makes the placeholders, the fills
// and the output node.
func (p *partitioner) prepare(sp *subgraphPlan) *emission {
	e := &emission{p: p, sp: sp, m: p.ints.get(p.n), live: make([]int32, 0, sp.nLive)}
	// The forward's inputs are the joint's primals, placeholders as the
	// forward has them: read in place, not copied. The backward's start
	// with saved values, which are computed nodes in the joint.
	if slices.ContainsFunc(sp.inputs, func(c int32) bool { return !plainPlaceholder(p.nd(c)) }) {
		e.ph = make([]ir.Node, len(sp.inputs))
	}
	for k, c := range sp.inputs {
		e.m[c] = int32(k)
		if e.ph != nil {
			nd := p.nd(c)
			ph := &e.ph[k]
			ph.Name, ph.Op, ph.Target, ph.Val, ph.Meta = nd.Name, ir.OpPlaceholder, nd.Name, nd.Val, nd.Meta
		}
	}
	// One loop numbers the live nodes and leaves the others (but the
	// inputs, numbered above) without a number.
	for c := range int32(p.n) {
		if !sp.live[c] {
			if !sp.isIn[c] {
				e.m[c] = -1
			}
			continue
		}
		e.m[c] = int32(len(sp.inputs) + len(e.live))
		e.live = append(e.live, c)
		if p.isFill(c) {
			if e.fills == nil {
				e.fills = map[int32]*ir.Node{}
			}
			f := fillNode(p.nd(c), p.fills.get(int(c)))
			e.fills[c] = &f
		}
	}
	// The joint's node names are unique and none is "output" (FX names
	// only the output node so), so the subgraph keeps them all.
	e.out = ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, sp.outputs)}}
	return e
}

// plainPlaceholder reports whether joint node n is a placeholder as an
// emission makes one of it: named as its target, without arguments (the
// name, value and metadata are n's own either way).
func plainPlaceholder(n *ir.Node) bool {
	return n.Op == ir.OpPlaceholder && n.Target == n.Name && n.Args == nil && n.Kwargs == nil
}

// Len, Node and Ref make an emission an ir.NodeSource: the graph's nodes
// read in place, the joint's nodes with their references resolved
// through the emission's numbering.
func (e *emission) Len() int { return len(e.sp.inputs) + len(e.live) + 1 }

func (e *emission) Node(i int) *ir.Node {
	if i < len(e.sp.inputs) {
		if e.ph == nil {
			return e.p.nd(e.sp.inputs[i])
		}
		return &e.ph[i]
	}
	k := i - len(e.sp.inputs)
	if k == len(e.live) {
		return &e.out
	}
	c := e.live[k]
	if f := e.fills[c]; f != nil {
		return f
	}
	return e.p.nd(c)
}

func (e *emission) Ref(a *ir.Arg) (ir.NodeID, string) {
	p := e.p
	r := a.Ref
	if r < 0 || int(r) >= len(p.g.Nodes) {
		return a.Ref, a.S
	}
	if p.canon == nil {
		return ir.NodeID(e.m[r]), a.S
	}
	cr := p.canon[r]
	name := a.S
	if cr != int32(r) {
		name = p.g.Nodes[cr].Name
	}
	return ir.NodeID(e.m[p.cid[cr]]), name
}

// OwnNames makes an emission an ir.OwnNames: when CSE merged no node,
// Ref names every reference as it stores itself.
func (e *emission) OwnNames() bool { return e.p.canon == nil }

// alloc makes room for materialize's copy, the placeholders in place.
func (e *emission) alloc(p *partitioner) {
	n := len(e.sp.inputs) + len(e.live)
	e.nodes = make([]ir.Node, n, n+1)
	for k := range e.sp.inputs {
		e.nodes[k] = *e.Node(k)
	}
}

// remap returns a with its references renumbered for e (references CSE
// merged also renamed).
func (p *partitioner) remap(e *emission, a ir.Arg) ir.Arg {
	return ir.MapRefs(a, newArgs, func(a ir.Arg) ir.Arg {
		a.Ref, a.S = e.Ref(&a)
		return a
	})
}

// fill copies e.live into the new graph.
func (p *partitioner) fill(e *emission) {
	base := len(e.sp.inputs)
	for k := range e.live {
		c := e.live[k]
		cp := &e.nodes[base+k]
		if f := e.fills[c]; f != nil {
			*cp = *f
			continue
		}
		n := p.nd(c)
		*cp = *n
		if n.Args != nil {
			cp.Args = make([]ir.Arg, len(n.Args))
			for i := range n.Args {
				cp.Args[i] = p.remap(e, n.Args[i])
			}
		}
		if len(n.Kwargs) > 0 {
			cp.Kwargs = make([]ir.Kwarg, len(n.Kwargs))
			for i := range n.Kwargs {
				cp.Kwargs[i] = ir.Kwarg{Name: n.Kwargs[i].Name, Value: p.remap(e, n.Kwargs[i].Value)}
			}
		}
	}
}

// finish appends the output node to the copy and returns the graph.
func (p *partitioner) finish(e *emission) *ir.Graph {
	out := e.out
	out.Args = []ir.Arg{p.remap(e, e.out.Args[0])}
	return &ir.Graph{Nodes: append(e.nodes, out)}
}

// graphRefs returns the calls and get_attr targets of e's graph.
func (p *partitioner) graphRefs(e *emission) (calls, getAttrs []string) {
	seen := make([]bool, len(p.targets))
	fillSeen := map[string]bool{}
	for _, c := range e.live {
		switch p.class[c] {
		case classCall:
			if f := e.fills[c]; f != nil {
				if t := f.Target; !fillSeen[t] {
					fillSeen[t] = true
					calls = append(calls, t)
				}
				continue
			}
			if t := p.tgt[c]; !seen[t] {
				seen[t] = true
				calls = append(calls, p.targets[t])
			}
		case classGetAttr:
			getAttrs = append(getAttrs, p.nd(c).Target)
		}
	}
	return calls, getAttrs
}

func newArgs(n int) []ir.Arg { return make([]ir.Arg, n) }

// opCollector gathers a node's distinct operands (references redirected
// through canon, when CSE merged a node) into ops.
type opCollector struct {
	self  int32
	n     int32 // joint nodes
	ops   []int32
	canon []int32
	bad   []bool
	stamp []int32 // last node (+1) that recorded each operand
}

func (o *opCollector) add(a *ir.Arg) {
	if a.Kind != ir.ArgNode {
		for i := range a.Elems() {
			o.add(&a.Elems()[i])
		}
		return
	}
	r := a.Ref
	if r < 0 || r >= ir.NodeID(o.n) {
		o.bad[o.self] = true
		return
	}
	c := int32(r)
	if o.canon != nil {
		c = o.canon[r]
	}
	if c == o.self {
		o.bad[o.self] = true
		return
	}
	if o.stamp[c] == o.self+1 {
		return
	}
	o.stamp[c] = o.self + 1
	o.ops = append(o.ops, c)
}

// pool keeps arrays a step is done with for a later step to reuse.
type pool[T any] struct{ free [][]T }

// get returns an array of length n, its contents undefined: the smallest
// kept one that is large enough, or a new one.
func (pl *pool[T]) get(n int) []T {
	best := -1
	for i, b := range pl.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(pl.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]T, n)
	}
	b := pl.free[best]
	pl.free = slices.Delete(pl.free, best, best+1)
	return b[:n]
}

// zeroed is get with the contents zeroed.
func (pl *pool[T]) zeroed(n int) []T {
	b := pl.get(n)
	clear(b)
	return b
}

// put gives arrays back for reuse; the caller no longer reads them.
func (pl *pool[T]) put(bs ...[]T) { pl.free = append(pl.free, bs...) }
