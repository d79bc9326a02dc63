package jointgraph

import (
	"fmt"
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// associative_scan's backward, as torch 2.14 builds it
// (torch/_higher_order_ops/associative_scan.py, AssociativeScanAutogradOp
// and its NOTE [associative_scan autograd implementation]). For
// ys = associative_scan(combine_fn, xs, ()) with L leaves of T steps:
//
//  1. the combine_fn's create_bw_fn joint, (*a, *b, *g_out) → (*g_a, *g_b),
//     is run at every step at once on (ys rolled by one step, xs, ones):
//     bwys_t = ∂combine/∂a at (ys_{t-1}, xs_t), bwxs_t = ∂combine/∂b.
//     PyTorch vmaps the joint over dim 0 (make_fx traces the batched ops);
//     hopctl writes that vmap as a map_impl over the joint subgraph
//     (body_graph_N), which computes the same stacked values for any
//     combine_fn without a batching rule per op;
//  2. the leaves are stacked (torch.stack: every leaf one shape) and, per
//     leaf, bwxs_0 is set to 1, the transition matrix y_mat[i, j] =
//     Π_{i<k≤j} bwys_k is built with tril masks, masked_fill and cumprod,
//     scaled by the upstream gradients, summed over j and multiplied by
//     bwxs: g_xs = Σ_j y_mat[:, j] · gl_ys_j · bwxs;
//  3. the stacked g_xs are unbound into one gradient per leaf.
//
// As in PyTorch, additional_inputs get no gradient: a call that has any is
// refused with PyTorch's message, and a scan dimension of size 0 gives
// zero gradients. torch 2.6 has no autograd for associative_scan
// (autograd_not_implemented): the version table row
// opschema.DiffAssocScanGrad26 refuses it with 2.6's message.

// assocScanBackward is associative_scan's derivative rule.
func assocScanBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	if opschema.TorchDiffers(opschema.DiffAssocScanGrad26, j.src.TorchVersion) {
		return nodeError(j.file, j.b.g, id, "Autograd not implemented for associative_scan")
	}
	cq, ok := j.graphTarget(j.hopArg(n, "combine_fn"))
	if !ok {
		return nodeError(j.file, j.b.g, id, "associative_scan combine_fn is not a subgraph of this file")
	}
	xs, add := j.hopArg(n, "xs").Elems(), j.hopArg(n, "additional_inputs").Elems()
	if len(add) > 0 {
		return nodeError(j.file, j.b.g, id, "Associative_scan does currently not support gradients for lifted parameters!")
	}
	nx := len(xs)
	if nx == 0 {
		return nodeError(j.file, j.b.g, id, "associative_scan has no xs")
	}
	b := j.b
	xv := make([]V, nx)
	for k, a := range xs {
		xv[k] = b.remapArgV(a)
		if a.Kind != ir.ArgNode || xv[k].meta == nil || xv[k].Rank() == 0 {
			return nodeError(j.file, j.b.g, id, "associative_scan backward supports tensor xs with a scan dimension only")
		}
	}
	its := j.itemsOf(id)
	if len(its) != nx || slices.Contains(its, ir.NoNode) {
		return nodeError(j.file, j.b.g, id, fmt.Sprintf("associative_scan returns %d values, want one per xs leaf (%d)", len(its), nx))
	}
	gl := j.gradsOrZeros(id, grads)
	res := make([]V, nx)
	length := xv[0].Shape()[0]
	if length.Expr == "" && length.Val == 0 {
		// scan_length == 0: zeros_like(xs).
		for k := range xv {
			res[k] = b.zerosLike(xv[k])
		}
		j.accumulateOperands(xs, res)
		return nil
	}
	for k := 1; k < nx; k++ {
		if !ir.DimsEqual(xv[k].Shape(), xv[0].Shape()) {
			// torch.stack of the leaves' gradients in PyTorch's backward.
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
				dimsString(xv[0].Shape()), dimsString(xv[k].Shape()), k))
		}
	}

	// 1. The per-step gradients: the create_bw_fn joint of combine_fn over
	// every step (vmap, written as map_impl).
	rg := j.operandRG(xs)
	bw, err := j.subJoint(id, cq, slices.Concat(rg, rg))
	if err != nil {
		return err
	}
	// The joint's operands are (ys rolled by one step, xs, ones), nx of
	// each. Those it does not read are not passed: PyTorch's vmap writes
	// the batched ops into the backward graph, where min-cut sees what
	// each step reads and saves only that (a leaf of ys no derivative
	// involves is not saved); an operand of the map_impl call would be
	// saved whether the body reads it or not. map_impl needs one mapped
	// operand: the last is kept when the joint reads none.
	g := bw.Module.Root()
	ph := g.Placeholders()
	if len(ph) != 3*nx {
		return nodeError(j.file, j.b.g, id, fmt.Sprintf("associative_scan combine_fn's backward takes %d inputs, want %d", len(ph), 3*nx))
	}
	unused := unusedPlaceholders(g)
	if !slices.Contains(unused, false) {
		unused[len(unused)-1] = false
	}
	var order []ir.NodeID
	for k, id := range ph {
		if !unused[k] {
			order = append(order, id)
		}
	}
	if len(order) < len(ph) {
		permutePlaceholders(g, order)
	}
	name := "body_graph_" + j.freshGraphName("body_graph_%d")
	j.addGraphs(bw.Module, name)
	bv := j.getAttr(name)
	mapped := make([]V, 0, len(order))
	for k := range nx {
		if !unused[k] {
			y := j.val(its[k])
			mapped = append(mapped, b.op("aten.roll.default", like(y.meta), y, []int64{1}, []int64{0}))
		}
	}
	for k := range nx {
		if !unused[nx+k] {
			mapped = append(mapped, xv[k])
		}
	}
	for k := range nx {
		if !unused[2*nx+k] {
			mapped = append(mapped, b.op("aten.ones_like.default", like(gl[k].meta), gl[k], kw{"pin_memory", false}))
		}
	}
	outs := make([]*ir.TensorMeta, 2*nx)
	for k := range outs {
		outs[k] = like(xv[k%nx].meta)
	}
	step := j.hopCall(opschema.HOPTarget("map_impl"), []any{bv, mapped, []V{}}, outs)
	bwys, bwxs := step[:nx], step[nx:]

	// 2. The leaves stacked, compute_grad on all of them at once (PyTorch
	// vmaps it over the leaves: dim 0 here, the scan dimension is 1).
	m0 := xv[0].meta
	stacked := slices.Concat([]ir.Dim{{Val: int64(nx)}}, m0.Shape)
	stack := func(vs []V) V { return b.op("aten.stack.default", withShape(m0, stacked), vs) }
	sx, sy, sg := stack(bwxs), stack(bwys), stack(gl)

	// bwxs_0 = 1 (select(bwxs, 0, 0).fill_(1.0), functionalized).
	first := withShape(m0, slices.Concat([]ir.Dim{{Val: int64(nx)}}, m0.Shape[1:]))
	sel := b.op("aten.select.int", first, sx, 1, 0)
	fill := b.op("aten.fill.Scalar", first, sel, 1.0)
	sx = b.op("aten.select_scatter.default", like(sx.meta), sx, fill, 1, 0)

	// Sizes as arguments: a symbolic size is read from xs[0] with
	// sym_size, once (the graph must bind every symbol it passes).
	syms := map[string]ir.Arg{}
	sizes := func(ds []ir.Dim) ir.Arg {
		l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, make([]ir.Arg, len(ds)))
		for i, d := range ds {
			l.Elems()[i] = dimArg(d)
			if d.Expr == "" {
				continue
			}
			if a, ok := syms[d.Expr]; ok {
				l.Elems()[i] = a
				continue
			}
			for k, e := range m0.Shape {
				if e.Expr == d.Expr {
					val := &ir.Value{Kind: ir.ValSym, Sym: &ir.SymExpr{Kind: ir.SymInt, Expr: d.Expr}}
					id := b.call("aten.sym_size.int", []ir.Arg{b.ref(xv[0].id), ir.IntArg(int64(k))}, nil, val, "sym_size_int")
					syms[d.Expr] = b.ref(id)
					l.Elems()[i] = syms[d.Expr]
					break
				}
			}
		}
		return l
	}

	// The tril masks, [T, T, *slice] (compute_helper_tril_mask).
	mask := func(diagonal int64) V {
		sq := []ir.Dim{length, length}
		ones := b.op("aten.ones.default", freshMeta(sq, "bool", m0.Device), sizes(sq),
			kw{"dtype", dtypeArg("bool")}, kw{"device", ir.Arg{Kind: ir.ArgDevice, S: m0.Device}}, kw{"pin_memory", false})
		var t V
		if diagonal == 0 {
			t = b.op("aten.tril.default", ones.meta, ones)
		} else {
			t = b.op("aten.tril.default", ones.meta, ones, diagonal)
		}
		for range len(m0.Shape) - 1 {
			t = b.unsqueeze(t, -1)
		}
		return expandTo(b, t, slices.Concat(sq, m0.Shape[1:]), sizes)
	}
	onesMask, zerosMask := mask(0), mask(-1)

	// y_mat: bwys repeated along a new dim 1 (repeat_interleave), the
	// lower triangle set to 1, cumprod along dim 2, the strict lower
	// triangle set to 0.
	square := slices.Concat([]ir.Dim{{Val: int64(nx)}, length}, m0.Shape)
	ymat := expandTo(b, b.unsqueeze(sy, 1), square, sizes)
	ymat = b.op("aten.clone.default", withShape(m0, square), ymat, kw{"memory_format", ir.Arg{Kind: ir.ArgMemoryFormat, S: "contiguous_format"}})
	ymat = b.maskedFill(ymat, onesMask, scalarF(1))
	ymat = b.op("aten.cumprod.default", like(ymat.meta), ymat, 2)
	ymat = b.maskedFill(ymat, zerosMask, scalarF(0))
	scaled := b.mul(ymat, b.unsqueeze(sg, 1))
	gxs := b.mul(b.sum(scaled, []int64{2}, false), sx)

	// 3. One gradient per leaf.
	leaf := make([]*ir.TensorMeta, nx)
	for k := range leaf {
		leaf[k] = like(m0)
	}
	res = b.tupleOp("aten.unbind.int", leaf, nil, gxs)
	j.accumulateOperands(xs, res)
	return nil
}

func dimsString(ds []ir.Dim) string {
	s := "["
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		if d.Expr != "" {
			s += d.Expr
		} else {
			s += fmt.Sprint(d.Val)
		}
	}
	return s + "]"
}

// expandTo is b.expand(x, shape) with the sizes passed as sizes gives
// them (symbolic ones bound to graph nodes).
func expandTo(b *builder, x V, shape []ir.Dim, sizes func([]ir.Dim) ir.Arg) V {
	arg := sizes(shape) // before the expand node that reads it
	e := b.expand(x, shape)
	if e.ok && e.id != x.id {
		n := &b.g.Nodes[e.id]
		args := slices.Clone(n.Args)
		args[1] = arg
		n.Args = args
	}
	return e
}
