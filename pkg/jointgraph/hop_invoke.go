package jointgraph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// invoke_subgraph's backward, as torch 2.14 builds it
// (torch/_higher_order_ops/invoke_subgraph.py, InvokeSubgraphAutogradOp):
//
//   - the forward call is invoke_subgraph(subgraph, "fw_<identifier>",
//     *operands) (an identifier that already has the fw_ prefix — make_fx
//     traced the call through the autograd op — keeps it);
//   - its backward is another invoke_subgraph call,
//     invoke_subgraph(bw_graph, "bw_<identifier>_<n>", *operands,
//     *tangents)[:-num_fw_outs], over the subgraph's AOTAutograd joint
//     (trace_joint_graph_as_bwd: create_joint of prepare_fw_with_masks):
//     (*primals, *tangents) → (*grads, *fw_outs), a tangent only for each
//     output that requires grad (filtered grad_outs), None for the
//     gradient of an operand that does not require grad, outputs sharing
//     an input's storage cloned (clone_outputs_aliasing_inputs);
//   - n counts the tangent layouts seen per identifier (the lazy backward
//     cache, get_lazy_bwd_entry): calls of one identifier whose tangents
//     have the same metadata share one backward graph, as they share it in
//     PyTorch's joint.
//
// A subgraph that writes its inputs (Dynamo allows it) is refused as torch
// refuses to train it (trainingMutationMessage).
//
// torch 2.6 (version row invoke-subgraph-grad-2.6) takes the operands as
// one tuple, names the calls ___forward_<identifier> and
// ___backward_<identifier>, passes a tangent for every output (the joint
// of create_fw_bw_graph) and lets every floating output require grad.

// invokeSubgraphs records the backward graphs built for invoke_subgraph
// calls: per identifier, the tangent layouts seen, in order (n of
// bw_<identifier>_<n>) and the graph each one got.
type invokeSubgraphs struct {
	layouts map[string][]string
	graphs  map[string]string // identifier + "\x00" + layout → graph name
}

func invokeSubgraphBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	sq, ok := j.graphTarget(j.hopArg(n, "subgraph"))
	if !ok {
		return nodeError(j.file, j.b.g, id, "invoke_subgraph subgraph is not a subgraph of this file")
	}
	// torch 2.6 (version row invoke-subgraph-grad-2.6) calls
	// invoke_subgraph(subgraph, identifier, operands), its operands one
	// tuple (the HOP table's older form: hop.Lookup reads it), and names
	// the calls ___forward_/___backward_<identifier>; its backward graph
	// takes a tangent for every output (create_fw_bw_graph). The backward
	// call is written in the form the forward call has.
	row := j.hopRow(n)
	ops := hop.CallerOperands(row, n)
	tupleForm := !row.ParsedSchema().IsVararg
	v26 := opschema.TorchDiffers(opschema.DiffInvokeSubgraph26, j.src.TorchVersion)
	fwPrefix, masks := "fw_", MasksAuto
	if v26 {
		fwPrefix, masks = "___forward_", MasksAll
	}
	ident := "None"
	if a := j.hopArg(n, "identifier"); a.Kind == ir.ArgStr {
		ident = strings.TrimPrefix(a.S, fwPrefix)
	}
	bw, err := j.subJointAs(id, sq, j.operandRG(ops), ConventionNone, masks)
	if err != nil {
		return err
	}
	if len(bw.MutatedInputs) > 0 {
		return nodeError(j.file, j.b.g, id, fmt.Sprintf("%s (subgraph %s writes its input %d)",
			trainingMutationMessage("invoke_subgraph"), sq, bw.MutatedInputs[0]))
	}
	nf := bw.NumFwdOutputs
	if err := invokeBwOutputs(bw.Module.Root(), nf); err != nil {
		return nodeError(j.file, j.b.g, id, err.Error())
	}

	// The forward call's identifier.
	args := slices.Clone(n.Args)
	args[1] = ir.Arg{Kind: ir.ArgStr, S: fwPrefix + ident}
	n.Args = args

	// The tangents: the outputs the joint masked (those requiring grad).
	b := j.b
	g := j.gradsOrZeros(id, grads)
	its := j.itemsOf(id)
	var tangents []V
	var layout strings.Builder
	for k, m := range bw.Masks {
		if !m {
			continue
		}
		if k >= len(g) || !g[k].Defined() {
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("invoke_subgraph output %d requires grad but has no gradient value", k))
		}
		tangents = append(tangents, g[k])
		if t := g[k].meta; t != nil {
			fmt.Fprintf(&layout, "%s%v%v%s;", t.Dtype, t.Shape, t.Stride, t.Device)
		}
	}

	// The backward graph, one per identifier and tangent layout.
	if j.invoke.layouts == nil {
		j.invoke = invokeSubgraphs{layouts: map[string][]string{}, graphs: map[string]string{}}
	}
	lk := layout.String()
	suffix := slices.Index(j.invoke.layouts[ident], lk)
	if suffix < 0 {
		suffix = len(j.invoke.layouts[ident])
		j.invoke.layouts[ident] = append(j.invoke.layouts[ident], lk)
	}
	key := ident + "\x00" + lk
	name, ok := j.invoke.graphs[key]
	if !ok {
		name = "repeated_subgraph" + j.freshGraphName("repeated_subgraph%d")
		j.addGraphs(bw.Module, name)
		j.invoke.graphs[key] = name
	}
	bv := j.getAttr(name)

	// invoke_subgraph(bw_graph, "bw_<identifier>_<n>", *primals, *tangents):
	// (*grads, *fw_outs); the gradients are the first len(ops).
	bwIdent := fmt.Sprintf("bw_%s_%d", ident, suffix)
	if v26 {
		bwIdent = "___backward_" + ident
	}
	call := []any{bv, bwIdent}
	var operands []V // the operands and tangents, passed one by one (2.14) or as one tuple (2.6)
	outs := make([]*ir.TensorMeta, 0, len(ops)+nf)
	want := make([]bool, 0, len(ops)+nf)
	for k, a := range ops {
		v := b.remapArgV(a)
		operands = append(operands, v)
		var m *ir.TensorMeta
		if k < len(bw.RequiresGrad) && bw.RequiresGrad[k] {
			m = like(v.meta)
		}
		outs = append(outs, m)
		want = append(want, m != nil)
	}
	operands = append(operands, tangents...)
	if tupleForm {
		call = append(call, operands)
	} else {
		for _, v := range operands {
			call = append(call, v)
		}
	}
	for k := range nf {
		var m *ir.TensorMeta
		if k < len(its) && its[k] != ir.NoNode {
			m = like(j.val(its[k]).meta)
		}
		outs = append(outs, m)
		want = append(want, false)
	}
	res := b.tupleOp(opschema.HOPTarget("invoke_subgraph"), outs, want, call...)
	j.accumulateOperands(ops, res[:len(ops)])
	return nil
}

// invokeBwOutputs turns the AOTAutograd joint g, which returns (*fw_outs,
// *grads) with nf forward outputs, into trace_joint_graph_as_bwd's
// (*grads, *fw_outs), cloning outputs that are inputs or views of inputs
// (clone_outputs_aliasing_inputs) and repeats of an earlier output.
func invokeBwOutputs(g *ir.Graph, nf int) error {
	o := g.OutputNode()
	if o == ir.NoNode || len(g.Nodes[o].Args) != 1 {
		return fmt.Errorf("invoke_subgraph backward graph has no output tuple")
	}
	res := g.Nodes[o].Args[0]
	if (res.Kind != ir.ArgTuple && res.Kind != ir.ArgList) || len(res.Elems()) < nf {
		return fmt.Errorf("invoke_subgraph backward graph returns no (*fw_outs, *grads) tuple")
	}
	out := g.Nodes[o]
	nodes := slices.Clone(g.Nodes[:o])
	b := &builder{g: &ir.Graph{Name: g.Name, Nodes: nodes}, names: newNames()}
	for i := range g.Nodes {
		b.names.reserve(g.Nodes[i].Name)
	}
	elems := slices.Concat(res.Elems()[nf:], res.Elems()[:nf])
	seen := map[ir.NodeID]bool{}
	for i, a := range elems {
		if a.Kind != ir.ArgNode || a.Ref < 0 {
			continue
		}
		if seen[a.Ref] || aliasesPlaceholder(b.g, a.Ref) {
			m := valueTensor(b.g.Nodes[a.Ref].Val)
			if m != nil {
				elems[i] = b.ref(b.clone(nodeV(a.Ref, m)).id)
			}
		}
		seen[elems[i].Ref] = true
	}
	res.SetElems(elems)
	out.Args = []ir.Arg{res}
	b.g.Nodes = append(b.g.Nodes, out)
	g.Nodes = b.g.Nodes
	g.Reindex()
	return nil
}

// hopOutputsRG returns, for a HOP call whose autograd marks outputs that
// need no gradient as non-differentiable, which outputs require grad, and
// true; false for the HOPs whose every floating output requires grad when
// an operand does (autograd.Function semantics: cond, map_impl, scan,
// associative_scan). invoke_subgraph is the first kind in torch 2.14
// (InvokeSubgraphAutogradOp.forward: get_non_differentiable_indices, from
// the requires_grad Dynamo recorded on the subgraph's outputs): an output
// requires grad when it depends, through differentiable ops, on an
// operand that requires grad.
func hopOutputsRG(m *ir.Module, g *ir.Graph, n *ir.Node, hr *hopRule, ops *opCache, rg []bool) ([]bool, bool) {
	if hr.row.Name != "invoke_subgraph" || opschema.TorchDiffers(opschema.DiffInvokeSubgraph26, m.TorchVersion) {
		return nil, false
	}
	sa := hop.Arg(hr.row, n, "subgraph")
	if sa == nil || sa.Kind != ir.ArgNode || sa.Ref < 0 {
		return nil, false
	}
	sub := m.Graph(g.Nodes[sa.Ref].Target)
	if sub == nil {
		return nil, false
	}
	row := hr.row
	if h, ok := hop.Lookup(ops.reg, n); ok {
		row = h // the form the call follows (torch 2.6's operand tuple)
	}
	operands := hop.CallerOperands(row, n)
	in := make([]bool, len(sub.Nodes))
	k := 0
	for i := range sub.Nodes {
		s := &sub.Nodes[i]
		switch s.Op {
		case ir.OpPlaceholder:
			if k < len(operands) {
				t := valueTensor(s.Val)
				in[i] = anyRefIn(&operands[k], rg) && (t == nil || isDifferentiableDtype(t.Dtype))
			}
			k++
		case ir.OpCallFunction:
			if ops.get(s.Target).nonDiff {
				continue
			}
			dep := false
			for a := range s.Args {
				dep = dep || anyRefIn(&s.Args[a], in)
			}
			for a := range s.Kwargs {
				dep = dep || anyRefIn(&s.Kwargs[a].Value, in)
			}
			if t := valueTensor(s.Val); t != nil && !isDifferentiableDtype(t.Dtype) {
				dep = false
			}
			in[i] = dep
		case ir.OpOutput:
			if len(s.Args) != 1 {
				return nil, false
			}
			res := s.Args[0]
			if res.Kind != ir.ArgTuple && res.Kind != ir.ArgList {
				return []bool{anyRefIn(&res, in)}, true
			}
			out := make([]bool, len(res.Elems()))
			for e := range res.Elems() {
				out[e] = anyRefIn(&res.Elems()[e], in)
			}
			return out, true
		}
	}
	return nil, false
}

// trainingMutationMessage is torch 2.14's refusal to differentiate a HOP
// call whose subgraph writes an input (torch/_ops.py,
// HigherOrderOperator.py_autograd_impl's maybe_run_autograd, for HOPs with
// a gen_schema and no _supports_training_input_mutation).
func trainingMutationMessage(hop string) string {
	return "The " + hop + " HigherOrderOperator does not currently support training with in-place input or buffer mutations " +
		"If you require this feature, please submit an issue to PyTorch. Alternatively, consider creating your own custom autograd.Function."
}
