package jointgraph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// while_loop's backward, as PyTorch builds it (torch 2.14,
// torch/_higher_order_ops/while_loop.py, WhileLoopAutogradOp and its Note
// [while_loop autograd]).
//
// Forward: a while_loop whose operands require grad runs as
// while_loop_stack_output, which returns every iteration's carries stacked
// along a new dim 0 (the carries entering iteration 1 when the loop is
// never entered); the loop's results are the last elements,
// select(stacked, 0, -1). make_fx writes exactly that; a while_loop call
// in the graph hopctl differentiates is rewritten to it (augmentWhile).
//
// Backward: one while_loop over the iterations in reverse, whose
//
//   - carried inputs are (idx, *grad_carries, *grad_additional_inputs):
//     idx = zeros((), int64); the carries' gradients, cloned contiguous,
//     zeros where undefined; zeros for the additional inputs' gradients;
//     only floating-point tensors get a gradient slot (PyTorch's
//     carries_tensor_masks / additional_inputs_tensor_masks);
//   - additional inputs are (*fw_carries, *additional_inputs), fw_carries[k]
//     = cat([carry_k.unsqueeze(0), stacked_k[:-1]]): the carries each
//     iteration started from;
//   - cond_fn is idx < fw_carries[0].size(0);
//   - body_fn selects iteration r = size - idx - 1 of every fw_carry
//     (select(fw_carry, 0, (size - idx - 1).item())), runs the body's
//     create_bw_fn joint on it inline, and returns (idx + 1, *the carries'
//     gradients, *the additional inputs' gradients + the accumulated ones).
//
// The loop's results 1.. are the operands' gradients.

// whileGradMessage26 is torch 2.6's refusal (autograd_not_implemented):
// the version table row opschema.DiffWhileLoopGrad26.
const whileGradMessage26 = "Autograd not implemented for while_loop"

var (
	whileTarget      = opschema.HOPTarget("while_loop")
	whileStackTarget = opschema.HOPTarget("while_loop_stack_output")
)

// lastOfStacked reports whether n is select(stacked, 0, -1) of a stacked
// carry of a while_loop_stack_output call, and returns the getitem of that
// stacked carry: the gradient of the loop's result, which the loop's
// backward takes as its grad_carries (WhileLoopAutogradOp.backward's
// grads), is the select's.
func (j *jointBuilder) lastOfStacked(n *ir.Node) (ir.NodeID, bool) {
	if n.Target != "aten.select.int" || len(n.Args) != 3 || len(n.Kwargs) != 0 {
		return ir.NoNode, false
	}
	a, dim, idx := n.Args[0], n.Args[1], n.Args[2]
	if a.Kind != ir.ArgNode || a.Ref < 0 || dim.Kind != ir.ArgInt || dim.Int() != 0 || idx.Kind != ir.ArgInt || idx.Int() != -1 {
		return ir.NoNode, false
	}
	it := &j.b.g.Nodes[a.Ref]
	if it.Target != "_operator.getitem" || len(it.Args) != 2 || it.Args[0].Kind != ir.ArgNode || it.Args[0].Ref < 0 {
		return ir.NoNode, false
	}
	return a.Ref, j.b.g.Nodes[it.Args[0].Ref].Target == whileStackTarget
}

// isFloatingDtype is torch's dtype.is_floating_point.
func isFloatingDtype(dtype string) bool {
	return isDifferentiableDtype(dtype) && !strings.HasPrefix(dtype, "complex")
}

// augmentWhile copies the forward while_loop node n (functional node fid)
// into the joint graph as while_loop_stack_output, with a getitem of every
// stacked carry and a select(stacked, 0, -1) per result (what
// WhileLoopAutogradOp.forward computes). The selects stand for the
// while_loop's getitems, recorded in sel; it returns the new node.
func (j *jointBuilder) augmentWhile(n *ir.Node, fid ir.NodeID, sel map[ir.NodeID]ir.NodeID) (ir.NodeID, []ir.NodeID, error) {
	if opschema.TorchDiffers(opschema.DiffWhileLoopGrad26, j.src.TorchVersion) {
		return 0, nil, fmt.Errorf("%s", whileGradMessage26)
	}
	if len(n.Args) != 4 || n.Val == nil || n.Val.Kind != ir.ValTuple {
		return 0, nil, fmt.Errorf("while_loop takes (cond_fn, body_fn, carried_inputs, additional_inputs) and returns a tuple")
	}
	fg := j.f.b.g
	var metas []*ir.TensorMeta
	for _, a := range j.hopArg(n, "carried_inputs").Elems() {
		var m *ir.TensorMeta
		if a.Kind == ir.ArgNode && a.Ref >= 0 {
			m = valueTensor(fg.Nodes[a.Ref].Val)
		}
		if m == nil {
			return 0, nil, fmt.Errorf("while_loop with operands that require grad needs tensor carried_inputs (while_loop_stack_output stacks them)")
		}
		metas = append(metas, m)
	}
	length := ir.Dim{Expr: j.freshSymbol()}
	c := *n
	c.Target = whileStackTarget
	c.Args = slices.Clone(n.Args)
	for k := range c.Args {
		c.Args[k] = j.remap(c.Args[k])
	}
	c.Kwargs = slices.Clone(n.Kwargs)
	for k := range c.Kwargs {
		c.Kwargs[k].Value = j.remap(c.Kwargs[k].Value)
	}
	stackedMeta := make([]*ir.TensorMeta, len(metas))
	v := &ir.Value{Kind: ir.ValTuple}
	for k, m := range metas {
		stackedMeta[k] = withShape(m, slices.Concat([]ir.Dim{length}, m.Shape))
		v.Elems = append(v.Elems, *tensorValue(stackedMeta[k]))
	}
	c.Val = v
	c.Name = j.b.names.fresh("while_loop_stack_output")
	id := j.b.append(c)
	its := j.f.itemsOf(fid)
	stacked := make([]ir.NodeID, len(metas))
	for k, m := range metas {
		s := j.b.getitem(nodeV(id, nil), k, stackedMeta[k])
		stacked[k] = s.id
		last := j.b.op("aten.select.int", like(m), s, 0, -1)
		if k < len(its) && its[k] != ir.NoNode {
			sel[its[k]] = last.id
		}
	}
	return id, stacked, nil
}

// freshSymbol returns an unbacked SymInt name ("u<n>") no dimension of the
// forward graph uses, for the iteration count of a while_loop the joint
// stacks.
func (j *jointBuilder) freshSymbol() string {
	if j.symbols == nil {
		j.symbols = map[string]bool{}
		for i := range j.f.b.g.Nodes {
			markSymbols(j.f.b.g.Nodes[i].Val, j.symbols)
		}
	}
	for k := len(j.symbols); ; k++ {
		s := fmt.Sprintf("u%d", k)
		if !j.symbols[s] {
			j.symbols[s] = true
			return s
		}
	}
}

// markSymbols records the identifiers of v's symbolic dimensions.
func markSymbols(v *ir.Value, set map[string]bool) {
	if v == nil {
		return
	}
	add := func(e string) {
		for _, f := range strings.FieldsFunc(e, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			set[f] = true
		}
	}
	switch v.Kind {
	case ir.ValTensor:
		if t := v.Tensor; t != nil {
			for _, d := range t.Shape {
				add(d.Expr)
			}
		}
	case ir.ValSym:
		if v.Sym != nil {
			add(v.Sym.Expr)
		}
	case ir.ValTuple, ir.ValList:
		for k := range v.Elems {
			markSymbols(&v.Elems[k], set)
		}
	}
}

func whileBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	for _, kw := range n.Kwargs {
		if kw.Name == "mutated_arg_indices" && !(kw.Value.Kind == ir.ArgStr && kw.Value.S == "") {
			return nodeError(j.file, j.b.g, id, "while_loop whose body writes its operands (mutated_arg_indices) is not differentiated")
		}
	}
	if opschema.TorchDiffers(opschema.DiffWhileLoopGrad26, j.src.TorchVersion) {
		return nodeError(j.file, j.b.g, id, whileGradMessage26)
	}
	bq, ok := j.graphTarget(j.hopArg(n, "body_fn"))
	if !ok {
		return nodeError(j.file, j.b.g, id, "while_loop body_fn is not a subgraph of this file")
	}
	carries, adds := j.hopArg(n, "carried_inputs").Elems(), j.hopArg(n, "additional_inputs").Elems()
	nc, na := len(carries), len(adds)
	if nc == 0 {
		return nodeError(j.file, j.b.g, id, "while_loop_stack_output has no carried inputs")
	}
	b := j.b
	cv := make([]V, nc)
	for k, a := range carries {
		cv[k] = b.remapArgV(a)
		if cv[k].meta == nil {
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("while_loop_stack_output's carried input %d is not a tensor", k))
		}
	}
	av := make([]V, na)
	for k, a := range adds {
		av[k] = b.remapArgV(a)
		if !av[k].ok {
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("while_loop's additional input %d is a constant: the backward passes it to its loop, which takes values", k))
		}
	}
	// The stacked carries (a getitem of each; make_fx writes one for every
	// carry, the joint adds the missing ones).
	its := j.itemsOf(id)
	stacked := make([]V, nc)
	for k := range nc {
		var m *ir.TensorMeta
		if n.Val != nil && k < len(n.Val.Elems) {
			m = valueTensor(&n.Val.Elems[k])
		}
		if m == nil || len(m.Shape) != cv[k].Rank()+1 {
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("while_loop_stack_output's output %d is not carried input %d stacked", k, k))
		}
		if k < len(its) && its[k] != ir.NoNode {
			stacked[k] = nodeV(its[k], m)
		} else {
			stacked[k] = b.getitem(nodeV(id, nil), k, m)
		}
	}
	for k, g := range grads {
		if g.Defined() && k < nc && (g.meta == nil || g.Rank() != cv[k].Rank()) {
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("while_loop_stack_output's stacked output %d is used other than through its last element (select(..., 0, -1)): only the loop's results are differentiated, as WhileLoopAutogradOp returns them", k))
		}
	}
	maskC := make([]bool, nc)
	maskA := make([]bool, na)
	rg := make([]bool, nc+na)
	for k, v := range cv {
		maskC[k] = isFloatingDtype(v.meta.Dtype)
		rg[k] = maskC[k]
	}
	for k, v := range av {
		maskA[k] = v.meta != nil && isFloatingDtype(v.meta.Dtype)
		rg[nc+k] = maskA[k]
	}
	// create_bw_fn(body_fn, carries + additional_inputs): every floating
	// operand requires grad (prepare_fw_with_masks_all_requires_grad).
	bw, err := j.subJoint(id, bq, rg)
	if err != nil {
		return err
	}
	cond, body, err := whileBackwardGraphs(bw.Module.Root(), cv, av, stacked, maskC, maskA, b.g, adds, j.freshSymbol())
	if err != nil {
		return nodeError(j.file, j.b.g, id, err.Error())
	}
	i := j.freshGraphName("while_loop_cond_graph_%d", "while_loop_body_graph_%d")
	cname, bname := "while_loop_cond_graph_"+i, "while_loop_body_graph_"+i
	j.addGraphs(&ir.Module{Graphs: []*ir.Graph{cond}}, cname)
	bm := &ir.Module{Graphs: append([]*ir.Graph{body}, bw.Module.Graphs[1:]...), Attributes: bw.Module.Attributes,
		Schemas: mergeSchemas(schemasForTargets(bw.Module.Schemas, scanGraphRefs(body).calls), []nestedModule{{m: bw.Module}})}
	j.opts.cache.registerNested(bm, j.opts.cache.nestedOf(bw.Module))
	j.addGraphs(bm, bname)
	condV, bodyV := j.getAttr(cname), j.getAttr(bname)

	idx0 := b.op("aten.zeros.default", freshMeta(nil, "int64", "cpu"), []int64{},
		kw{"dtype", dtypeArg("int64")}, kw{"device", ir.Arg{Kind: ir.ArgDevice, S: "cpu"}}, kw{"pin_memory", false})
	init := []V{idx0}
	outs := []*ir.TensorMeta{idx0.meta}
	for k, v := range cv {
		if !maskC[k] {
			continue
		}
		g := V{}
		if k < len(grads) {
			g = grads[k]
		}
		if g.Defined() {
			// Autograd can pass view gradients: the carries of the
			// backward loop are canonicalized (clone, contiguous).
			g = b.op("aten.clone.default", like(v.meta), g, kw{"memory_format", ir.Arg{Kind: ir.ArgMemoryFormat, S: "contiguous_format"}})
		} else {
			g = b.zerosLike(v)
		}
		init = append(init, g)
		outs = append(outs, like(v.meta))
	}
	for k, v := range av {
		if maskA[k] {
			init = append(init, b.zerosLike(v))
			outs = append(outs, like(v.meta))
		}
	}
	addIn := make([]V, 0, nc+na)
	for k, v := range cv {
		sm := stacked[k].meta
		first := b.unsqueeze(v, 0)
		rest := b.op("aten.slice.Tensor", withShape(sm, slices.Concat([]ir.Dim{minusOne(sm.Shape[0])}, v.Shape())), stacked[k], 0, 0, -1)
		addIn = append(addIn, b.op("aten.cat.default", like(sm), []V{first, rest}))
	}
	addIn = append(addIn, av...)
	res := j.hopCall(whileTarget, []any{condV, bodyV, init, addIn}, outs)
	gradOf := make([]V, nc+na)
	r := 1
	for k := range nc {
		if maskC[k] {
			gradOf[k] = res[r]
			r++
		}
	}
	for k := range na {
		if maskA[k] {
			gradOf[nc+k] = res[r]
			r++
		}
	}
	j.accumulateOperands(slices.Concat(carries, adds), gradOf)
	return nil
}

// minusOne returns d - 1.
func minusOne(d ir.Dim) ir.Dim {
	if d.Expr == "" {
		return ir.Dim{Val: d.Val - 1}
	}
	return ir.Dim{Expr: d.Expr + " - 1"}
}

// whileBackwardGraphs builds the backward loop's cond_fn and body_fn from
// bw, the create_bw_fn joint of the forward body_fn — (*carries,
// *additional_inputs, *grad_outputs) → (*grad_carries,
// *grad_additional_inputs). Both take (idx, *grad_carries[maskC],
// *grad_additional_inputs[maskA], *fw_carries, *additional_inputs); cv,
// av and stacked are the forward's carries, additional inputs and stacked
// carries (for metadata), g the joint graph holding adds, sym the name of
// the reversed index's unbacked SymInt.
func whileBackwardGraphs(bw *ir.Graph, cv, av, stacked []V, maskC, maskA []bool, g *ir.Graph, adds []ir.Arg, sym string) (*ir.Graph, *ir.Graph, error) {
	nc, na := len(cv), len(av)
	ph := bw.Placeholders()
	if len(ph) != nc+na+nc {
		return nil, nil, fmt.Errorf("while_loop body_fn's backward has %d inputs, want %d", len(ph), 2*nc+na)
	}
	idxMeta := freshMeta(nil, "int64", "cpu")
	// placeholders appends the loop's inputs to b.
	placeholders := func(b *builder) (idx V, gC, gA, fwC, addV []V) {
		idx = b.placeholder("idx", tensorValue(idxMeta), nil)
		for k, v := range cv {
			if maskC[k] {
				gC = append(gC, b.placeholder("grad_carry", tensorValue(like(v.meta)), nil))
			}
		}
		for k, v := range av {
			if maskA[k] {
				gA = append(gA, b.placeholder("grad_additional_input", tensorValue(like(v.meta)), nil))
			}
		}
		for _, s := range stacked {
			fwC = append(fwC, b.placeholder("fw_carry", tensorValue(like(s.meta)), nil))
		}
		for _, a := range adds {
			addV = append(addV, b.placeholder("additional_input", g.Nodes[a.Ref].Val, nil))
		}
		return
	}
	// size appends sym_size(fw_carries[0], 0).
	size := func(b *builder, fwC []V) V {
		d := stacked[0].Shape()[0]
		val := &ir.Value{Kind: ir.ValInt, I: d.Val}
		if d.Expr != "" {
			val = &ir.Value{Kind: ir.ValSym, Sym: &ir.SymExpr{Kind: ir.SymInt, Expr: d.Expr}}
		}
		id := b.call("aten.sym_size.int", []ir.Arg{b.ref(fwC[0].id), ir.IntArg(0)}, nil, val, "sym_size_int")
		return nodeV(id, nil)
	}

	// cond_fn: idx < fw_carries[0].size(0), returned bare.
	cb := newBuilder("")
	idx, _, _, fwC, _ := placeholders(cb)
	lt := cb.op("aten.lt.Scalar", freshMeta(nil, "bool", "cpu"), idx, size(cb, fwC))
	cb.append(ir.Node{Name: cb.names.fresh("output"), Op: ir.OpOutput, Target: "output", Args: []ir.Arg{cb.ref(lt.id)}})

	// body_fn.
	b := newBuilder("")
	for i := range bw.Nodes {
		if bw.Nodes[i].Op != ir.OpPlaceholder {
			b.names.reserve(bw.Nodes[i].Name)
		}
	}
	idx, gC, gA, fwC, addV := placeholders(b)
	rsub := b.op("aten.rsub.Scalar", idxMeta, idx, size(b, fwC))
	sub := b.op("aten.sub.Tensor", idxMeta, rsub, 1)
	rid := b.call("aten._local_scalar_dense.default", []ir.Arg{b.ref(sub.id)}, nil,
		&ir.Value{Kind: ir.ValSym, Sym: &ir.SymExpr{Kind: ir.SymInt, Expr: sym}}, "")
	m := make([]ir.NodeID, len(bw.Nodes))
	sel := make([]V, nc)
	for k, v := range cv {
		sel[k] = b.op("aten.select.int", like(v.meta), fwC[k], 0, b.ref(rid))
		m[ph[k]] = sel[k].id
	}
	for k := range na {
		m[ph[nc+k]] = addV[k].id
	}
	c := 0
	for k := range nc {
		if maskC[k] {
			m[ph[nc+na+k]] = gC[c].id
			c++
		} else {
			// No gradient slot (not floating): its tangent is zeros.
			m[ph[nc+na+k]] = b.zerosLike(sel[k]).id
		}
	}
	outs, err := inlineGraph(b, bw, m)
	if err != nil {
		return nil, nil, err
	}
	if len(outs) != nc+na {
		return nil, nil, fmt.Errorf("while_loop body_fn's backward returns %d values, want %d", len(outs), nc+na)
	}
	res := []V{b.op("aten.add.Tensor", idxMeta, idx, 1)}
	for k := range nc {
		if maskC[k] {
			res = append(res, b.remapArgV(outs[k]))
		}
	}
	a := 0
	for k := range na {
		if maskA[k] {
			res = append(res, b.add(b.remapArgV(outs[nc+k]), gA[a]))
			a++
		}
	}
	b.output(res)
	body, _ := dce(b.g, nil)
	return cb.g, body, nil
}

// inlineGraph appends the nodes of g other than its placeholders and
// output to b, placeholder p of g standing for node m[p] of b, and returns
// the elements of g's output tuple as arguments of b.
func inlineGraph(b *builder, g *ir.Graph, m []ir.NodeID) ([]ir.Arg, error) {
	var outs []ir.Arg
	re := func(a ir.Arg) ir.Arg {
		a = a.Clone()
		a.WalkRefs(func(x *ir.Arg) { x.Ref, x.S = m[x.Ref], b.g.Nodes[m[x.Ref]].Name })
		return a
	}
	for i := range g.Nodes {
		n := g.Nodes[i]
		switch n.Op {
		case ir.OpPlaceholder:
			continue
		case ir.OpOutput:
			if len(n.Args) != 1 || n.Args[0].Kind != ir.ArgTuple && n.Args[0].Kind != ir.ArgList {
				return nil, fmt.Errorf("graph %s does not return a tuple", g.Name)
			}
			for _, a := range n.Args[0].Elems() {
				outs = append(outs, re(a))
			}
			continue
		}
		n.Args = slices.Clone(n.Args)
		for k := range n.Args {
			n.Args[k] = re(n.Args[k])
		}
		n.Kwargs = slices.Clone(n.Kwargs)
		for k := range n.Kwargs {
			n.Kwargs[k].Value = re(n.Kwargs[k].Value)
		}
		m[i] = b.append(n)
	}
	return outs, nil
}
