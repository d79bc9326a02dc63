package jointgraph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Functionalization, as torch's functionalization pass does it for
// AOTAutograd:
//
//   - an in-place op (add_, relu_, copy_, ...) becomes its functional
//     variant (add, relu, copy) computing the new value R of the tensor it
//     writes;
//   - when that tensor is a view of a base (a chain of view ops from a
//     graph input or an op result), R is scattered back through the chain
//     (slice_scatter, select_scatter, transpose back, ...) into a new value
//     of the base;
//   - every later use of a view of a mutated base regenerates the view from
//     the base's current value by replaying its chain;
//   - graph inputs that were mutated get the final value written back with
//     copy_ at the end of the graph (copy-back), so the graph keeps the
//     original's effect on its inputs;
//   - inputs that share storage (the same storage_id) are expressed as
//     as_strided views of the one among them that covers the others, so a
//     write through one is seen by the others;
//   - ops that write arguments their schema does not annotate
//     (native_batch_norm's running stats in training mode), and ops whose
//     annotated writes all go to graph inputs that need no gradient (torch
//     2.x's _native_batch_norm_legit), are kept as they are and marked as
//     side-effecting.

// functional is a functionalized forward graph.
type functional struct {
	b      *builder
	src    *ir.Graph
	file   string
	inputs []V // placeholders, in order
	// inputSrc[i] is the source placeholder of inputs[i].
	inputSrc []ir.NodeID
	outputs  []V // flat output leaves (nodes or constants)
	// effect marks nodes with side effects: never dead, never recomputed.
	effect map[ir.NodeID]bool
	// epilogue are the copy_ nodes writing mutated inputs back, in input
	// order; they come after every other node.
	epilogue []ir.NodeID
	// itemTuples are the tuple nodes, in increasing order, and
	// itemLists[k][i] the getitem node of element i of itemTuples[k]
	// (itemsOf): two lists, not a map with an entry per tuple node.
	itemTuples []ir.NodeID
	itemLists  [][]ir.NodeID
	// itemArena holds the itemLists: one allocation per chunk, not one per
	// tuple node.
	itemArena chunks[ir.NodeID]
	// mutated are the indices of inputs written back with copy_;
	// inPlace those that ops with unannotated writes update in place.
	mutated, inPlace []int

	reg  *opschema.Registry
	ops  *opCache
	cur  []V         // per source node: current value
	base []ir.NodeID // per source node: the base it is a view of (itself for a base)
	// A view is its parent (the source node its step was applied to) and
	// a step; parent is NoNode for a base. rroot is the start of the view's
	// trailing run of reshape-like steps (itself when its step is not
	// one), so a write scatters through such a run with one reshape.
	parent []ir.NodeID
	// stepIdx is the view's step in steps, +1 (0: a base).
	stepIdx []int32
	steps   []viewStep
	rroot   []ir.NodeID
	// multiUp is the nearest of a view and its ancestors whose step takes
	// an element of a multi-output view (split, unbind) eager autograd
	// refuses to write, NoNode for none; multiSeen are the ones a write
	// was recorded for (checkMultiOutputView: O(1) per write, not the
	// length of the view chain).
	multiUp   []ir.NodeID
	multiSeen map[ir.NodeID]bool
	ver       []int32 // per base: number of writes so far
	viewVer   []int32 // per view: ver[base] when cur was computed
	// tuple is, per source node, its functional tuple node's id + 1 (0:
	// not a tuple): 4 bytes a node, not a V's 24.
	tuple  []int32
	noRoot map[ir.NodeID]string
	// multiView records multi-output view nodes (split, unbind): the viewed
	// source node and the step that, with an item index, gives an element.
	multiView map[ir.NodeID]multiView
	// multiWrites are the in-place ops on multi-output views (split,
	// unbind) seen, refused when the view requires grad.
	multiWrites []multiWrite
	aliased     bool // aliasedInputs has run
	// The source getitem nodes reading tuple node t are
	// getitemList[getitemStart[t]:getitemStart[t+1]] (getitemsOf), in
	// order: one list for the graph, not a slice per node.
	getitemStart []int32
	getitemList  []ir.NodeID
	scratch      []ir.Arg // mapArgs
	// srcArgs[id] says whether functional node id's argument list is its
	// source node's (mapArgs shares unchanged lists; ids past its end: no).
	// The joint built in place copies those and remaps every other list
	// where it is, each list the functional graph made being its node's
	// alone (jointBuilder.forwardNodesInPlace).
	srcArgs []bool
	// synthArgs are the arguments of the synthetic steps (aliasedInputs),
	// by the input viewed (their valOf).
	synthArgs map[ir.NodeID][]ir.Arg
}

type multiView struct {
	self ir.NodeID
	step viewStep
}

// viewStep is one view op applied to the previous value in a chain. It
// names the source nodes holding its arguments and value rather than
// copying them: there is a step per view node.
type viewStep struct {
	target string
	// argsOf is the source node whose arguments the step applies (the
	// view node, or a multi-output view's for its getitems; the first
	// argument, the viewed tensor, is replaced on replay); NoNode for an
	// identity step and a synthetic one (its arguments in synthArgs).
	argsOf ir.NodeID
	// valOf is the source node whose recorded value is the step's result's.
	valOf ir.NodeID
	// out is the source node holding this step's result (the view node, or
	// the getitem of a multi-output view), NoNode for a synthetic step.
	out  ir.NodeID
	item int32 // element taken from a multi-output view (split, unbind), or -1
}

// sourceStep is the step of source view node id: its target, arguments
// and value.
func sourceStep(id ir.NodeID, target string) viewStep {
	return viewStep{target: target, argsOf: id, valOf: id, out: id, item: -1}
}

// stepArgs returns the arguments of step st.
func (f *functional) stepArgs(st viewStep) ([]ir.Arg, []ir.Kwarg) {
	if st.argsOf == ir.NoNode {
		return f.synthArgs[st.valOf], nil
	}
	n := &f.src.Nodes[st.argsOf]
	return n.Args, n.Kwargs
}

// stepVal returns the value of step st's result.
func (f *functional) stepVal(st viewStep) *ir.Value { return f.src.Nodes[st.valOf].Val }

// functionalize returns the functional form of m's root graph; its node
// list has room for room nodes (at least the graph's and an eighth more):
// a joint builds on in place (jointBuilder.forwardInPlace).
func functionalize(m *ir.Module, file string, reg *opschema.Registry, at **ir.Node, room int) (*functional, error) {
	g := m.Root()
	if reg == nil {
		files := make([]opschema.FileSchema, len(m.Schemas))
		for i, s := range m.Schemas {
			files[i] = opschema.FileSchema{Name: s.Name, Schema: s.Schema}
		}
		reg, _ = opschema.NewRegistryForTorch(m.TorchVersion, files) // bad entries are left out; the built-in table fills in
	}
	n := len(g.Nodes)
	f := &functional{
		b: newBuilder(""), src: g, file: file, reg: reg, ops: newOpCache(reg), effect: map[ir.NodeID]bool{},
		cur: make([]V, n), base: make([]ir.NodeID, n), parent: make([]ir.NodeID, n),
		stepIdx: make([]int32, n), rroot: make([]ir.NodeID, n), multiUp: make([]ir.NodeID, n),
		ver: make([]int32, n), viewVer: make([]int32, n), tuple: make([]int32, n),
		noRoot: map[ir.NodeID]string{}, multiView: map[ir.NodeID]multiView{},
	}
	f.b.names.reserveGraph(g, false)
	if err := precheck(g, file, f.ops); err != nil {
		return nil, err
	}
	f.b.g.Nodes = make([]ir.Node, 0, max(n+n/8, room))
	// Count the getitems of each node and the placeholders, then list the
	// getitems by the node they read.
	f.getitemStart = make([]int32, n+1)
	nGetitems, nPlaceholders := 0, 0
	for i := range g.Nodes {
		f.base[i] = ir.NodeID(i)
		f.parent[i], f.rroot[i], f.multiUp[i] = ir.NoNode, ir.NodeID(i), ir.NoNode
		u := &g.Nodes[i]
		if t := sourceGetitemOf(u); t >= 0 {
			f.getitemStart[t+1]++
			nGetitems++
		} else if u.Op == ir.OpPlaceholder {
			nPlaceholders++
		}
	}
	if nGetitems > 0 {
		for i := range n {
			f.getitemStart[i+1] += f.getitemStart[i]
		}
		f.getitemList = make([]ir.NodeID, nGetitems)
		fill := slices.Clone(f.getitemStart[:n])
		for i := range g.Nodes {
			if t := sourceGetitemOf(&g.Nodes[i]); t >= 0 {
				f.getitemList[fill[t]] = ir.NodeID(i)
				fill[t]++
			}
		}
	}
	f.inputs = make([]V, 0, nPlaceholders)
	f.inputSrc = make([]ir.NodeID, 0, nPlaceholders)
	for i := range g.Nodes {
		id := ir.NodeID(i)
		nd := &g.Nodes[i]
		*at = nd
		var err error
		if nd.Op != ir.OpPlaceholder && !f.aliased {
			f.aliasedInputs()
		}
		switch nd.Op {
		case ir.OpPlaceholder:
			v := f.exact(ir.Node{Name: nd.Name, Op: ir.OpPlaceholder, Target: nd.Target, Args: nd.Args, Val: nd.Val, Meta: nd.Meta})
			f.cur[i] = v
			f.inputs = append(f.inputs, v)
			f.inputSrc = append(f.inputSrc, id)
		case ir.OpGetAttr:
			f.cur[i] = f.exact(ir.Node{Name: nd.Name, Op: ir.OpGetAttr, Target: nd.Target, Val: nd.Val, Meta: nd.Meta})
		case ir.OpCallFunction:
			err = f.call(id)
		case ir.OpOutput:
			if len(nd.Args) == 1 {
				err = f.flattenOutputs(id, &nd.Args[0])
			}
		default:
			err = nodeError(file, g, id, fmt.Sprintf("%s nodes are not supported in a forward graph", nd.Op))
		}
		if err == nil && f.b.bad != "" {
			err = nodeError(file, g, id, f.b.bad)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := f.copyBack(); err != nil {
		return nil, err
	}
	return f, nil
}

// tupleOf returns the functional tuple node of source node id.
func (f *functional) tupleOf(id ir.NodeID) (V, bool) {
	if id < 0 || int(id) >= len(f.tuple) {
		return V{}, false
	}
	if t := f.tuple[id]; t > 0 {
		return nodeV(ir.NodeID(t-1), nil), true
	}
	return V{}, false
}

// sourceGetitemOf returns the node that source node u, a getitem of it,
// reads, or -1 when u is not such a getitem.
func sourceGetitemOf(u *ir.Node) ir.NodeID {
	if u.Target == "_operator.getitem" && len(u.Args) == 2 && u.Args[0].Kind == ir.ArgNode && u.Args[0].Ref >= 0 && u.Args[1].Kind == ir.ArgInt {
		return u.Args[0].Ref
	}
	return -1
}

// getitemsOf returns the source getitem nodes reading source node id.
func (f *functional) getitemsOf(id ir.NodeID) []ir.NodeID {
	if f.getitemList == nil {
		return nil
	}
	return f.getitemList[f.getitemStart[id]:f.getitemStart[id+1]]
}

// exact appends n keeping its (reserved) name.
func (f *functional) exact(n ir.Node) V {
	id := f.b.append(n)
	return nodeV(id, valueTensor(n.Val))
}

func (f *functional) fail(id ir.NodeID, format string, a ...any) error {
	return nodeError(f.file, f.src, id, fmt.Sprintf(format, a...))
}

// get returns the current value of source node id, regenerating a view
// whose base was written since the view was computed: from its nearest
// up-to-date ancestor, one step at a time.
func (f *functional) get(id ir.NodeID) V {
	b := f.base[id]
	if b == id || f.viewVer[id] == f.ver[b] {
		return f.cur[id]
	}
	var path []ir.NodeID
	x := id
	for x != b && f.viewVer[x] != f.ver[b] {
		path = append(path, x)
		x = f.parent[x]
	}
	v := f.cur[x]
	for i := len(path) - 1; i >= 0; i-- {
		n := path[i]
		v = f.replay(f.stepOf(n), v)
		f.cur[n], f.viewVer[n] = v, f.ver[b]
	}
	return v
}

// stepOf returns the step of view id (the zero step for a base).
func (f *functional) stepOf(id ir.NodeID) viewStep {
	if k := f.stepIdx[id]; k > 0 {
		return f.steps[k-1]
	}
	return viewStep{}
}

// setView records that source node id is parent viewed through st.
func (f *functional) setView(id, parent ir.NodeID, st viewStep) {
	f.base[id] = f.base[parent]
	f.parent[id] = parent
	if k := f.stepIdx[id]; k > 0 {
		f.steps[k-1] = st
	} else {
		f.steps = append(f.steps, st)
		f.stepIdx[id] = int32(len(f.steps))
	}
	f.multiUp[id] = f.multiUp[parent]
	if _, refused := multiOutputBackward[st.target]; refused && st.item >= 0 && st.out != ir.NoNode {
		f.multiUp[id] = id
	}
	f.rroot[id] = id
	if reshapeLike(st.target) {
		if f.parent[parent] == ir.NoNode || !reshapeLike(f.stepOf(parent).target) {
			f.rroot[id] = parent
		} else {
			f.rroot[id] = f.rroot[parent]
		}
	}
	f.viewVer[id] = f.ver[f.base[id]]
}

// identityStep is the step of an in-place op's result: the written tensor
// itself.
const identityStep = "<identity>"

// reshapeLike reports whether a view step only reshapes its input (same
// elements in the same order), so that writing back through it is a
// reshape to the input's shape.
func reshapeLike(target string) bool {
	switch target {
	case identityStep, "aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default",
		"aten.reshape.default", "aten.squeeze.default", "aten.squeeze.dim", "aten.unsqueeze.default",
		"aten.view_copy.default", "aten.flatten.using_ints", "aten.unflatten.int", "aten.alias.default",
		"aten.detach.default", "aten.lift_fresh.default":
		return true
	}
	return false
}

// mapArg maps a source argument to the functional graph.
func (f *functional) mapArg(a ir.Arg) ir.Arg {
	if a.Kind == ir.ArgNode {
		return f.mapRef(a)
	}
	if len(a.Elems()) == 0 {
		return a
	}
	return ir.MapRefs(a, f.b.arena.alloc, f.mapRef)
}

// mapRef maps a source reference to the functional graph.
func (f *functional) mapRef(a ir.Arg) ir.Arg {
	if a.Ref < 0 {
		return a
	}
	if t, ok := f.tupleOf(a.Ref); ok {
		return f.b.ref(t.id)
	}
	return f.b.refArg(f.get(a.Ref))
}

// mapArgs maps a node's arguments. When they map to themselves (the
// functional graph numbers and names the nodes as the source does, which
// it does until the first change), the source's lists are shared: argument
// lists are never modified in place.
func (f *functional) mapArgs(args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, []ir.Kwarg) {
	same := true
	scratch := f.scratch[:0]
	for i := range args {
		m := f.mapArg(args[i])
		same = same && unchangedArg(&m, &args[i])
		scratch = append(scratch, m)
	}
	f.scratch = scratch
	var kws []ir.Kwarg
	if len(kwargs) > 0 {
		kws = make([]ir.Kwarg, len(kwargs))
		for i, k := range kwargs {
			kws[i] = ir.Kwarg{Name: k.Name, Value: f.mapArg(k.Value)}
			same = same && unchangedArg(&kws[i].Value, &kwargs[i].Value)
		}
	}
	if same {
		return args, kwargs
	}
	out := f.b.arena.alloc(len(args))
	copy(out, scratch)
	clear(scratch)
	return out, kws
}

// noteArgs records in srcArgs whether a, the argument list of functional
// node id, is src, its source node's.
func (f *functional) noteArgs(id ir.NodeID, a, src []ir.Arg) {
	if len(a) == 0 || &a[0] != &src[0] {
		return
	}
	if int(id) >= len(f.srcArgs) {
		f.srcArgs = append(f.srcArgs, make([]bool, int(id)+1-len(f.srcArgs))...)
	}
	f.srcArgs[id] = true
}

// ownsArgs reports whether functional node id's argument list is its own
// (made by the functional graph, referenced by no other node or value).
func (f *functional) ownsArgs(id ir.NodeID) bool {
	return int(id) >= len(f.srcArgs) || !f.srcArgs[id]
}

// unchangedArg reports whether mapArg returned a itself (m is its result).
func unchangedArg(m, a *ir.Arg) bool {
	switch a.Kind {
	case ir.ArgNode:
		return m.Kind == ir.ArgNode && m.Ref == a.Ref && m.S == a.S
	case ir.ArgList, ir.ArgTuple, ir.ArgDict, ir.ArgSlice, ir.ArgConstant:
		return len(a.Elems()) == 0 || len(m.Elems()) > 0 && &m.Elems()[0] == &a.Elems()[0]
	}
	return true
}

func (f *functional) call(id ir.NodeID) error {
	nd := &f.src.Nodes[id]
	if nd.Target == "_operator.getitem" {
		return f.getitem(id)
	}
	info := f.ops.get(nd.Target)
	if nd.Target == withEffectsTarget {
		// with_effects(token, op, *args) threads an effect token
		// through an op with side effects (torch/_higher_order_ops/effects.py):
		// kept as it is, never dead, never recomputed; its results are
		// not differentiable (requiresGrad refuses one fed by a tensor
		// that requires grad, as for any op without a rule).
		v := f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
		f.effect[v.id] = true
		return nil
	}
	if opschema.IsHOPTarget(nd.Target) {
		// HOPs must not mutate or alias their operands (hopctl analyze checks
		// that); they are copied as they are.
		if info.hop == nil {
			return f.fail(id, "higher-order operator %s is not supported in a forward graph (cond, map_impl, scan, while_loop, associative_scan and invoke_subgraph are)", nd.Target)
		}
		f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
		return nil
	}
	s := info.schema
	if s == nil && opschema.IsPythonScalarTarget(nd.Target) && valueTensor(nd.Val) == nil {
		// SymInt arithmetic (sym_size(x, 0) - 1, u0 >= 0): no tensor in
		// or out, nothing mutated; kept as it is.
		f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
		return nil
	}
	if s == nil {
		return f.fail(id, "no schema for %s: cannot tell whether it mutates its inputs", nd.Target)
	}
	if err := s.CheckBind(nd.Args, nd.Kwargs); err != nil {
		return f.fail(id, "%v", err)
	}
	var bound []ir.Arg
	if len(info.condWrites) > 0 {
		bound, _ = s.BindValues(nd.Args, nd.Kwargs)
	}
	// Unannotated writes (native_batch_norm's running stats): keep the op.
	for _, cw := range info.condWrites {
		if cw.ConditionIndex < 0 || bound[cw.ConditionIndex].Kind == ir.ArgBool && bound[cw.ConditionIndex].B {
			v := f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
			f.effect[v.id] = true
			for _, k := range cw.Indices {
				if a := bound[k]; a.Kind == ir.ArgNode && a.Ref >= 0 {
					if i := slices.Index(f.inputSrc, f.base[a.Ref]); i >= 0 && !slices.Contains(f.inPlace, i) {
						f.inPlace = append(f.inPlace, i)
					}
				}
			}
			return nil
		}
	}
	if ft := info.inplaceView; ft != "" {
		return f.inplaceView(id, ft)
	}
	if muts := info.muts; len(muts) > 0 {
		if f.keepBufferWrites(id, s, muts) {
			return nil
		}
		return f.inplace(id, s, muts)
	}
	if info.isView && len(nd.Args) > 0 && nd.Args[0].Kind == ir.ArgNode && nd.Args[0].Ref >= 0 {
		return f.view(id, s)
	}
	f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
	return nil
}

// emitLike emits target with the source node's (mapped) arguments, name,
// value and metadata; a tuple result gets a getitem per element.
func (f *functional) emitLike(id ir.NodeID, target string, args []ir.Arg, kwargs []ir.Kwarg) V {
	nd := &f.src.Nodes[id]
	a, k := f.mapArgs(args, kwargs)
	val := f.sourceValue(id)
	v := f.exact(ir.Node{Name: nd.Name, Op: ir.OpCallFunction, Target: target, Args: a, Kwargs: k, Val: val, Meta: nd.Meta})
	f.noteArgs(v.id, a, args)
	f.cur[id] = v
	if val != nil && (val.Kind == ir.ValTuple || val.Kind == ir.ValList) {
		f.tuple[id] = int32(v.id) + 1
		f.cur[id] = V{}
		f.makeItems(id, v, val)
	}
	return v
}

// sourceValue returns node id's value, or for a tuple-returning node that
// has none (torch 1.13 records none), a tuple built from its getitem
// users' values.
func (f *functional) sourceValue(id ir.NodeID) *ir.Value {
	nd := &f.src.Nodes[id]
	if nd.Val != nil {
		return nd.Val
	}
	s := f.ops.get(nd.Target).schema
	ok := s != nil
	if !ok || len(s.Returns) < 2 {
		if ok && len(s.Returns) == 1 && s.Returns[0].Type.Kind == opschema.KindList {
			return f.itemsValue(id, -1)
		}
		return nil
	}
	return f.itemsValue(id, len(s.Returns))
}

func (f *functional) itemsValue(id ir.NodeID, n int) *ir.Value {
	size := max(n, 0)
	for _, j := range f.getitemsOf(id) {
		if i := int(f.src.Nodes[j].Args[1].Int()); i >= 0 && i <= 1<<16 {
			size = max(size, i+1)
		}
	}
	if size == 0 {
		return nil
	}
	elems := make([]ir.Value, 0, size)
	for _, j := range f.getitemsOf(id) {
		u := &f.src.Nodes[j]
		i := int(u.Args[1].Int())
		if i < 0 || i > 1<<16 {
			continue
		}
		for len(elems) <= i {
			elems = append(elems, ir.Value{Kind: ir.ValNone})
		}
		if u.Val != nil {
			elems[i] = *u.Val
		}
	}
	for len(elems) < n {
		elems = append(elems, ir.Value{Kind: ir.ValNone})
	}
	if elems == nil {
		return nil
	}
	return &ir.Value{Kind: ir.ValTuple, Elems: elems}
}

// makeItems emits a getitem for every tensor element of tuple node t, named
// after the source's getitem for that element when there is one.
func (f *functional) makeItems(id ir.NodeID, t V, val *ir.Value) {
	items := f.itemArena.alloc(len(val.Elems))
	for i := range val.Elems {
		items[i] = ir.NoNode
		if val.Elems[i].Kind != ir.ValTensor {
			continue
		}
		name, found := "", false
		for _, j := range f.getitemsOf(id) {
			if u := &f.src.Nodes[j]; int(u.Args[1].Int()) == i {
				name, found = u.Name, true // the first source getitem of element i
				break
			}
		}
		if !found {
			name = f.b.names.fresh("getitem")
		}
		args := f.b.argList(2)
		args[0], args[1] = f.b.ref(t.id), ir.IntArg(int64(i))
		// Values are immutable: the getitem shares the tuple's element.
		n := ir.Node{Name: name, Op: ir.OpCallFunction, Target: "_operator.getitem",
			Args: args, Val: &val.Elems[i], Meta: f.src.Nodes[id].Meta}
		items[i] = f.exact(n).id
	}
	// t is the node appended last, so itemTuples stays sorted.
	f.itemTuples = append(f.itemTuples, t.id)
	f.itemLists = append(f.itemLists, items)
}

// itemsOf returns the getitem nodes of tuple node t, by element (NoNode:
// none), nil when t is not a tuple node.
func (f *functional) itemsOf(t ir.NodeID) []ir.NodeID {
	if k, ok := slices.BinarySearch(f.itemTuples, t); ok {
		return f.itemLists[k]
	}
	return nil
}

func (f *functional) getitem(id ir.NodeID) error {
	nd := &f.src.Nodes[id]
	if len(nd.Args) != 2 || nd.Args[0].Kind != ir.ArgNode || nd.Args[1].Kind != ir.ArgInt {
		return f.fail(id, "unsupported getitem form")
	}
	src := nd.Args[0].Ref
	t, ok := f.tupleOf(src)
	if !ok {
		return f.fail(id, "getitem of %s, which is not a tuple", nd.Args[0].S)
	}
	i := int(nd.Args[1].Int())
	if i < 0 {
		// Python's t[-1], which no trace writes (make_fx and export index
		// from 0); every later pass indexes element lists with it.
		return f.fail(id, "getitem index %d is negative: traced graphs index tuples from 0", i)
	}
	items := f.itemsOf(t.id)
	if i >= len(items) || items[i] == ir.NoNode {
		// An element without a tensor value: emit a plain getitem.
		v := f.b.getitem(t, i, valueTensor(nd.Val))
		f.cur[id] = v
		return nil
	}
	f.cur[id] = nodeV(items[i], valueTensor(f.b.g.Nodes[items[i]].Val))
	// An element of a multi-output view (split, unbind) is a view of its base.
	if st, ok := f.multiView[src]; ok {
		self := st.self
		f.base[id] = f.base[self]
		step := st.step
		step.item = int32(i)
		step.valOf, step.out = id, id
		f.setView(id, self, step)
	}
	return nil
}

func (f *functional) view(id ir.NodeID, s *opschema.Schema) error {
	nd := &f.src.Nodes[id]
	self := nd.Args[0].Ref
	if _, isTuple := f.tupleOf(self); isTuple {
		return f.fail(id, "view of a tuple")
	}
	v := f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
	step := sourceStep(id, nd.Target)
	if _, isTuple := f.tupleOf(id); isTuple {
		f.multiView[id] = multiView{self: self, step: step}
		return nil
	}
	_ = v
	f.setView(id, self, step)
	return nil
}

// keepBufferWrites keeps an op whose annotated writes all go to graph inputs
// themselves (not views) that need no gradient and are not its first
// argument, as the unannotated writes above are kept: torch 2.x's
// _native_batch_norm_legit updates running_mean and running_var (a!, b!),
// where torch 1.13's native_batch_norm did the same unannotated. It reports
// whether it kept the op.
func (f *functional) keepBufferWrites(id ir.NodeID, s *opschema.Schema, muts []int) bool {
	nd := &f.src.Nodes[id]
	bound, err := s.BindValues(nd.Args, nd.Kwargs)
	if err != nil {
		return false
	}
	var inputs []int
	for _, k := range muts {
		if k == 0 || k >= len(bound) {
			return false
		}
		a := bound[k]
		if a.Kind != ir.ArgNode || a.Ref < 0 || f.src.Nodes[a.Ref].Op != ir.OpPlaceholder {
			return false
		}
		if v := f.src.Nodes[a.Ref].Val; v == nil || v.Kind != ir.ValTensor || v.Tensor.RequiresGrad {
			return false
		}
		i := slices.Index(f.inputSrc, a.Ref)
		if i < 0 {
			return false
		}
		inputs = append(inputs, i)
	}
	v := f.emitLike(id, nd.Target, nd.Args, nd.Kwargs)
	f.effect[v.id] = true
	for _, i := range inputs {
		if !slices.Contains(f.inPlace, i) {
			f.inPlace = append(f.inPlace, i)
		}
	}
	return true
}

// functionalVariant returns the out-of-place overload of an in-place one:
// aten.add_.Tensor → aten.add.Tensor.
//
// Where torch names the out-of-place overload differently, the table
// functionalOverload says which (transpose_ has one overload, transpose two:
// aten.transpose_.default → aten.transpose.int, as torch's functionalization
// writes it).
func functionalVariant(target string) string {
	if ft, ok := functionalOverload[target]; ok {
		return ft
	}
	parts := strings.Split(target, ".")
	if len(parts) != 3 || !strings.HasSuffix(parts[1], "_") || strings.HasSuffix(parts[1], "__") {
		return ""
	}
	parts[1] = strings.TrimSuffix(parts[1], "_")
	return strings.Join(parts, ".")
}

// inplaceView functionalizes an in-place view op (transpose_: it changes
// self's metadata, not its elements) as the view op ft of self. make_fx
// records later uses of the tensor through the in-place node, which is now
// that view; self keeps its value, and a later write through the view
// scatters back through ft.
func (f *functional) inplaceView(id ir.NodeID, ft string) error {
	nd := &f.src.Nodes[id]
	if len(nd.Args) == 0 || nd.Args[0].Kind != ir.ArgNode || nd.Args[0].Ref < 0 {
		return f.fail(id, "%s writes something that is not a node", nd.Target)
	}
	self := nd.Args[0].Ref
	if _, isTuple := f.tupleOf(self); isTuple {
		return f.fail(id, "%s of a tuple", nd.Target)
	}
	f.fixInplaceViewInput(id, self)
	f.emitLike(id, ft, nd.Args, nd.Kwargs)
	f.setView(id, self, sourceStep(id, ft))
	return nil
}

// fixInplaceViewInput undoes a tracing artifact: make_fx records a node's
// meta["val"] as the fake tensor itself, so when transpose_ later changes
// that tensor's metadata, the node written in place shows the metadata
// after the transpose (torch 1.13's GRU: stack's value is [2, 5, 16] where
// it is [5, 2, 16]). When self's recorded value equals the in-place node's
// although the transpose changes it, self's functional value gets the
// metadata before the transpose (transposes are their own inverse).
func (f *functional) fixInplaceViewInput(id, self ir.NodeID) {
	nd := &f.src.Nodes[id]
	out, in := valueTensor(nd.Val), valueTensor(f.src.Nodes[self].Val)
	cur := f.cur[self]
	if out == nil || in == nil || !cur.IsNode() || f.base[self] != self || !sameLayout(in, out) {
		return
	}
	r := len(out.Shape)
	var perm []int64
	switch nd.Target {
	case "aten.transpose_.default":
		if len(nd.Args) < 3 || nd.Args[1].Kind != ir.ArgInt || nd.Args[2].Kind != ir.ArgInt {
			return
		}
		d0, ok0 := f.b.dim(nd.Args[1].Int(), r)
		d1, ok1 := f.b.dim(nd.Args[2].Int(), r)
		if !ok0 || !ok1 {
			return
		}
		perm = transposePerm(r, d0, d1)
	case "aten.t_.default":
		if r < 2 {
			return
		}
		perm = transposePerm(r, 0, 1)
	default:
		return
	}
	before := f.b.permuteMeta(out, perm)
	if sameLayout(before, out) {
		return // the transpose changes nothing: no artifact to undo
	}
	f.b.g.Nodes[cur.id].Val = &ir.Value{Kind: ir.ValTensor, Tensor: before}
	f.cur[self] = nodeV(cur.id, before)
}

// sameLayout reports whether a and b have equal shapes and strides.
func sameLayout(a, b *ir.TensorMeta) bool {
	return slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Stride, b.Stride)
}

// functionalOverload maps the in-place view ops (metadata mutations) to
// the view op torch's functionalization writes for them.
var functionalOverload = map[string]string{
	"aten.transpose_.default": "aten.transpose.int",
	"aten.t_.default":         "aten.t.default",
}

func (f *functional) inplace(id ir.NodeID, s *opschema.Schema, muts []int) error {
	nd := &f.src.Nodes[id]
	ft := functionalVariant(nd.Target)
	if len(muts) != 1 || muts[0] != 0 || s.IsOut() || ft == "" {
		return f.fail(id, "cannot functionalize %s: only in-place ops that write their first argument are supported", nd.Target)
	}
	if _, _, ok := f.reg.Lookup(ft); !ok {
		return f.fail(id, "cannot functionalize %s: torch has no functional variant %s", nd.Target, ft)
	}
	if len(nd.Args) == 0 || nd.Args[0].Kind != ir.ArgNode || nd.Args[0].Ref < 0 {
		return f.fail(id, "%s writes something that is not a node", nd.Target)
	}
	m := nd.Args[0].Ref
	if _, isTuple := f.tupleOf(m); isTuple {
		return f.fail(id, "%s writes a tuple", nd.Target)
	}
	if err := f.checkMultiOutputView(m, id); err != nil {
		return err
	}
	a, k := f.mapArgs(nd.Args, nd.Kwargs)
	f.b.meta = nd.Meta
	rid := f.b.call(ft, a, k, nd.Val, "")
	f.noteArgs(rid, a, nd.Args)
	f.b.meta = nil
	r := nodeV(rid, valueTensor(nd.Val))
	if err := f.mutate(m, r, id); err != nil {
		return err
	}
	// The in-place op's result is the written tensor.
	b := f.base[m]
	f.setView(id, m, viewStep{target: identityStep, argsOf: ir.NoNode, valOf: id, out: id, item: -1})
	f.cur[id] = r
	if b != m {
		f.cur[m], f.viewVer[m] = r, f.ver[b]
	}
	return nil
}

// multiOutputBackward names the autograd node of the multi-output views
// eager autograd refuses to write in place (torch/csrc/autograd/
// VariableTypeUtils.h, check_inplace with CreationMeta::MULTI_OUTPUT_NODE);
// chunk is split underneath. The unsafe_* variants exist to allow it.
var multiOutputBackward = map[string]string{
	"aten.split.Tensor":             "SplitBackward0",
	"aten.split_with_sizes.default": "SplitWithSizesBackward0",
	"aten.chunk.default":            "SplitBackward0",
	"aten.unbind.int":               "UnbindBackward0",
}

// multiWrite is an in-place op (at) on an output of a multi-output view,
// or on a view of one; view is that output's functional node.
type multiWrite struct {
	at, view ir.NodeID
	item     int
	fn       string
}

// checkMultiOutputView records an in-place op (node at) on source tensor m
// when m is, or is a view of, an output of a multi-output view. Eager
// autograd raises there when the output requires grad, so no correct joint
// exists; refuseMultiWrites decides once requires_grad is known.
//
// Only the first write under each such view is recorded (refuseMultiWrites
// reports the first), and the walk up the chain stops at a view recorded
// before: the views above it were recorded with it.
func (f *functional) checkMultiOutputView(m, at ir.NodeID) error {
	if f.base[m] == m {
		return nil
	}
	for cur := f.multiUp[m]; cur != ir.NoNode && !f.multiSeen[cur]; cur = f.multiUp[f.parent[cur]] {
		if f.multiSeen == nil {
			f.multiSeen = map[ir.NodeID]bool{}
		}
		f.multiSeen[cur] = true
		st := f.stepOf(cur)
		if v := f.cur[st.out]; v.IsNode() {
			f.multiWrites = append(f.multiWrites, multiWrite{at: at, view: v.id, item: int(st.item), fn: multiOutputBackward[st.target]})
		}
	}
	return nil
}

// refuseMultiWrites fails on the first recorded multi-output view write
// whose view requires grad (rg, per functional node), in PyTorch's words.
func (f *functional) refuseMultiWrites(rg []bool) error {
	for _, w := range f.multiWrites {
		if int(w.view) < len(rg) && rg[w.view] {
			return f.fail(w.at, "Output %d of %s is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one. (the view: %s)",
				w.item, w.fn, f.b.g.Nodes[w.view].Name)
		}
	}
	return nil
}

// mutate records that source tensor m now holds r, scattering r back
// through m's views into a new value of its base. at is the writing node.
// A run of reshape-like steps is undone with one reshape; other steps
// scatter into the current value of the view they were applied to.
func (f *functional) mutate(m ir.NodeID, r V, at ir.NodeID) error {
	b := f.base[m]
	if why, bad := f.noRoot[b]; bad {
		return f.fail(at, "%s", why)
	}
	f.b.meta = f.src.Nodes[at].Meta
	defer func() { f.b.meta = nil }()
	cur, nv := m, r
	for cur != b {
		if rr := f.rroot[cur]; rr != cur {
			nv = f.b.reshape(nv, f.shapeOf(rr))
			cur = rr
			continue
		}
		p := f.parent[cur]
		var err error
		if nv, err = f.scatter(f.stepOf(cur), func() V { return f.get(p) }, f.shapeOf(p), nv, at); err != nil {
			return err
		}
		cur = p
	}
	f.cur[b] = nv
	f.ver[b]++
	return nil
}

// shapeOf returns a source node's shape (from its value, or its current
// functional value's).
func (f *functional) shapeOf(id ir.NodeID) []ir.Dim {
	if t := valueTensor(f.src.Nodes[id].Val); t != nil {
		return t.Shape
	}
	return f.cur[id].Shape()
}

// replay applies view step st to x.
func (f *functional) replay(st viewStep, x V) V {
	if st.target == identityStep {
		return x
	}
	stArgs, stKwargs := f.stepArgs(st)
	args := slices.Clone(stArgs)
	for i := 1; i < len(args); i++ {
		args[i] = f.mapArg(args[i])
	}
	args[0] = f.b.arg(x)
	var kws []ir.Kwarg
	for _, k := range stKwargs {
		kws = append(kws, ir.Kwarg{Name: k.Name, Value: f.mapArg(k.Value)})
	}
	val := f.stepVal(st)
	if st.item < 0 {
		id := f.b.call(st.target, args, kws, val, "")
		return nodeV(id, valueTensor(val))
	}
	t := nodeV(f.b.call(st.target, args, kws, nil, ""), nil)
	return f.b.getitem(t, int(st.item), valueTensor(val))
}

// scatter writes nv, the new value of step st's result, into inter, the
// value st was applied to, returning inter's new value.
func (f *functional) scatter(st viewStep, interV func() V, interShape []ir.Dim, nv V, at ir.NodeID) (V, error) {
	switch st.target {
	case identityStep, "aten.alias.default", "aten.detach.default", "aten.lift_fresh.default":
		return nv, nil
	}
	s, _, ok := f.reg.Lookup(st.target)
	if !ok {
		return V{}, f.fail(at, "no schema for view op %s", st.target)
	}
	bound, err := s.BindValues(f.stepArgs(st))
	if err != nil {
		return V{}, f.fail(at, "%v", err)
	}
	arg := func(name string) ir.Arg {
		if i := s.Argument(name); i >= 0 {
			return bound[i]
		}
		return ir.Arg{Kind: ir.ArgNone}
	}
	ival := func(name string, def int64) int64 {
		a := arg(name)
		if a.Kind == ir.ArgInt {
			return a.Int()
		}
		return def
	}
	// The value st was applied to is emitted only for the scatters that
	// read it.
	var inter V
	needInter := func() V {
		if !inter.IsNode() {
			inter = interV()
		}
		return inter
	}
	b := f.b
	switch st.target {
	case "aten.slice.Tensor", "aten.narrow.default", "aten.select.int", "aten.diagonal.default",
		"aten.as_strided.default", "aten.split.Tensor", "aten.split_with_sizes.default", "aten.unbind.int",
		"aten.chunk.default":
		needInter()
	}
	out := like(inter.meta)
	switch st.target {
	case "aten.slice.Tensor":
		return b.op("aten.slice_scatter.default", out, inter, nv, arg("dim"), arg("start"), arg("end"), arg("step")), nil
	case "aten.narrow.default":
		start := ival("start", 0)
		return b.op("aten.slice_scatter.default", out, inter, nv, arg("dim"), start, start+ival("length", 0), 1), nil
	case "aten.select.int":
		return b.op("aten.select_scatter.default", out, inter, nv, arg("dim"), arg("index")), nil
	case "aten.diagonal.default":
		return b.op("aten.diagonal_scatter.default", out, inter, nv, arg("offset"), arg("dim1"), arg("dim2")), nil
	case "aten.as_strided.default":
		return b.op("aten.as_strided_scatter.default", out, inter, nv, arg("size"), arg("stride"), arg("storage_offset")), nil
	case "aten.t.default":
		return b.t(nv), nil
	case "aten.transpose.int":
		return b.transpose(nv, ival("dim0", 0), ival("dim1", 1)), nil
	case "aten.permute.default":
		var dims []int64
		for _, e := range arg("dims").Elems() {
			dims = append(dims, e.Int())
		}
		return b.permute(nv, b.invertPerm(dims, len(dims))), nil
	case "aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default", "aten.reshape.default",
		"aten.squeeze.default", "aten.squeeze.dim", "aten.unsqueeze.default", "aten.view_copy.default",
		"aten.flatten.using_ints", "aten.unflatten.int":
		return b.reshape(nv, interShape), nil
	case "aten.expand.default":
		if ir.DimsEqual(nv.Shape(), interShape) {
			return nv, nil
		}
	case "aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default":
		d := ival("dim", 0)
		dim, ok := f.b.dim(d, inter.Rank())
		if !ok {
			break
		}
		sizes := splitSizes(s, bound, inter.Shape()[dim].Val)
		if int(st.item) < len(sizes) {
			start := int64(0)
			for _, n := range sizes[:st.item] {
				start += n
			}
			return b.op("aten.slice_scatter.default", out, inter, nv, d, start, start+sizes[st.item], 1), nil
		}
	case "aten.unbind.int":
		return b.op("aten.select_scatter.default", out, inter, nv, arg("dim"), int(st.item)), nil
	}
	return V{}, f.fail(at, "cannot write through a view made by %s", st.target)
}

func splitSizes(s *opschema.Schema, bound []ir.Arg, n int64) []int64 {
	if i := s.Argument("chunks"); i >= 0 {
		// chunk: pieces of ceil(n / chunks), as at::chunk computes them.
		if k := bound[i].Int(); k > 0 {
			return evenSplit((n+k-1)/k, n)
		}
		return nil
	}
	if i := s.Argument("split_sizes"); i >= 0 {
		var out []int64
		for _, e := range bound[i].Elems() {
			out = append(out, e.Int())
		}
		return out
	}
	return evenSplit(bound[s.Argument("split_size")].Int(), n)
}

// evenSplit returns the sizes of pieces of sz (the last smaller) along a
// dim of size n.
func evenSplit(sz, n int64) []int64 {
	var out []int64
	if sz <= 0 || n/sz > 1<<16 {
		return nil
	}
	for n > 0 {
		out = append(out, min(sz, n))
		n -= sz
	}
	return out
}

// aliasedInputs makes inputs that share storage views of one root input:
// the one, contiguous at storage offset 0, whose elements cover the
// others'. Groups without such a root are recorded so that a write into
// them fails with a clear message.
func (f *functional) aliasedInputs() {
	f.aliased = true
	// Inputs that share storage are rare (a model's parameters each have
	// their own): find out with a sorted list of the ids before grouping
	// (a map entry and a list per input cost more than the rest of the
	// placeholders' functionalization).
	var ids []int64
	for i := range f.src.Nodes {
		nd := &f.src.Nodes[i]
		if t := valueTensor(nd.Val); nd.Op == ir.OpPlaceholder && t != nil && t.HasStorageID {
			ids = append(ids, t.StorageID)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) == len(ids) {
		return
	}
	groups := map[int64][]ir.NodeID{}
	var keys []int64
	for i := range f.src.Nodes {
		nd := &f.src.Nodes[i]
		t := valueTensor(nd.Val)
		if nd.Op != ir.OpPlaceholder || t == nil || !t.HasStorageID {
			continue
		}
		if _, ok := groups[t.StorageID]; !ok {
			keys = append(keys, t.StorageID)
		}
		groups[t.StorageID] = append(groups[t.StorageID], ir.NodeID(i))
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		root := ir.NoNode
		for _, r := range g {
			if f.covers(r, g) {
				root = r
				break
			}
		}
		if root == ir.NoNode {
			var names []string
			for _, p := range g {
				names = append(names, f.src.Nodes[p].Name)
			}
			for _, p := range g {
				f.noRoot[p] = fmt.Sprintf("inputs %s share storage and none of them covers the others, so a write into one cannot be expressed functionally", strings.Join(names, ", "))
			}
			continue
		}
		for _, p := range g {
			if p == root {
				continue
			}
			t := valueTensor(f.src.Nodes[p].Val)
			if f.synthArgs == nil {
				f.synthArgs = map[ir.NodeID][]ir.Arg{}
			}
			f.synthArgs[p] = []ir.Arg{f.b.ref(f.cur[root].id), dimsArg(t.Shape), dimsArg(t.Stride), dimArg(t.StorageOffset)}
			f.setView(p, root, viewStep{target: "aten.as_strided.default", argsOf: ir.NoNode, valOf: p, out: ir.NoNode, item: -1})
		}
	}
}

// covers reports whether input r, contiguous at storage offset 0, holds
// every element of the inputs in group.
func (f *functional) covers(r ir.NodeID, group []ir.NodeID) bool {
	rt := valueTensor(f.src.Nodes[r].Val)
	if !isContiguous(rt) || rt.StorageOffset.Expr != "" || rt.StorageOffset.Val != 0 {
		return false
	}
	n, ok := numel(rt.Shape)
	if !ok {
		return false
	}
	for _, p := range group {
		t := valueTensor(f.src.Nodes[p].Val)
		if t.StorageOffset.Expr != "" {
			return false
		}
		end := t.StorageOffset.Val
		for i, d := range t.Shape {
			if d.Expr != "" || t.Stride[i].Expr != "" {
				return false
			}
			if d.Val == 0 {
				end = t.StorageOffset.Val - 1
				break
			}
			end += (d.Val - 1) * t.Stride[i].Val
		}
		if end >= n {
			return false
		}
	}
	return true
}

// copyBack writes every mutated input's final value back with copy_.
func (f *functional) copyBack() error {
	for i, in := range f.inputs {
		src := f.inputSrc[i]
		if f.base[src] != src || f.ver[src] == 0 {
			continue
		}
		f.b.meta = nil
		id := f.b.call("aten.copy_.default", []ir.Arg{f.b.ref(in.id), f.b.arg(f.cur[src])}, nil, f.b.g.Nodes[in.id].Val, "copy_")
		f.effect[id] = true
		f.epilogue = append(f.epilogue, id)
		f.mutated = append(f.mutated, i)
	}
	return nil
}

// flattenOutputs appends the output node argument's pytree leaves to
// f.outputs, a tuple-valued node's items each.
func (f *functional) flattenOutputs(id ir.NodeID, a *ir.Arg) error {
	if a.Has(ir.ArgDict) {
		return f.fail(id, "dict outputs are not supported")
	}
	for _, l := range a.Leaves() {
		if l.Kind != ir.ArgNode {
			f.outputs = append(f.outputs, constV(*l))
			continue
		}
		if l.Ref < 0 {
			return f.fail(id, "output refers to unknown node %q", l.S)
		}
		if t, ok := f.tupleOf(l.Ref); ok {
			for _, it := range f.itemsOf(t.id) {
				if it == ir.NoNode {
					return f.fail(id, "output returns a tuple with non-tensor elements")
				}
				f.outputs = append(f.outputs, nodeV(it, valueTensor(f.b.g.Nodes[it].Val)))
			}
			continue
		}
		f.outputs = append(f.outputs, f.get(l.Ref))
	}
	return nil
}
