package jointgraph

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
)

// requiresGrad propagates requires_grad through a functional graph, as
// autograd does while the forward runs: an input requires grad when its
// value says so and its dtype is floating or complex; an op's output
// requires grad when some argument its rule differentiates requires grad,
// the rule marks that output differentiable, and its dtype can carry a
// gradient. An op without a rule that receives a tensor requiring grad is
// an error, as it is in torch ("derivative for ... is not implemented").
//
// It returns, per node, whether the node (for a tuple node: any element)
// requires grad; getitem nodes carry their element's flag.
//
// Dead code — call nodes neither the output nor a side-effecting node
// reads (make_fx leaves some: map's traces carry a select_copy of xs) — is
// removed before differentiation, as make_fx's joint tracing never sees
// it: it requires no grad and needs no rule.
func requiresGrad(m *ir.Module, g *ir.Graph, ops *opCache, effect map[ir.NodeID]bool, outputs []V, file string) ([]bool, error) {
	rg := make([]bool, len(g.Nodes))
	live := liveNodes(g, effect, outputs)
	// noRule are the call nodes without a rule an input requiring grad
	// reaches, live or not (known once live is).
	var noRule []ir.NodeID
	elemRG := map[ir.NodeID][]bool{}
	anyArg := func(n *ir.Node) bool {
		for k := range n.Args {
			if anyRefIn(&n.Args[k], rg) {
				return true
			}
		}
		for k := range n.Kwargs {
			if anyRefIn(&n.Kwargs[k].Value, rg) {
				return true
			}
		}
		return false
	}
	for i := range g.Nodes {
		id := ir.NodeID(i)
		n := &g.Nodes[i]
		switch n.Op {
		case ir.OpPlaceholder, ir.OpGetAttr:
			t := valueTensor(n.Val)
			rg[i] = t != nil && t.RequiresGrad && isDifferentiableDtype(t.Dtype)
			continue
		case ir.OpCallFunction:
		default:
			continue
		}
		if n.Target == "aten.copy_.default" && effect[id] {
			continue
		}
		if n.Target == "_operator.getitem" {
			src := n.Args[0].Ref
			if el, ok := elemRG[src]; ok {
				rg[i] = int(n.Args[1].Int()) < len(el) && el[n.Args[1].Int()]
			} else if src >= 0 {
				// A tuple without a value (a multi-output view replayed
				// by functionalization): its elements require grad as
				// the tuple does.
				rg[i] = rg[src]
			}
			continue
		}
		if !anyArg(n) {
			continue
		}
		info := ops.get(n.Target)
		if info.nonDiff {
			continue
		}
		if hr := info.hop; hr != nil {
			// autograd.Function semantics: every floating output requires
			// grad when an operand does.
			anyOp := false
			for _, a := range hr.operands(n) {
				anyOp = anyOp || anyRefIn(&a, rg)
			}
			if !anyOp {
				continue
			}
			outs := outputMetas(n)
			el := make([]bool, len(outs))
			sub, precise := hopOutputsRG(m, g, n, hr, ops, rg)
			for j, m := range outs {
				el[j] = m != nil && isDifferentiableDtype(m.Dtype) && (!precise || j < len(sub) && sub[j])
				rg[i] = rg[i] || el[j]
			}
			elemRG[id] = el
			continue
		}
		rule := info.rule
		if rule == nil {
			noRule = append(noRule, id)
			continue
		}
		if !diffArgRG(info, n, rg) {
			continue
		}
		if n.Val == nil || n.Val.Kind != ir.ValTuple && n.Val.Kind != ir.ValList {
			rg[i] = outputRG(rule, 0, valueTensor(n.Val))
			continue
		}
		// The elements' metadata read in place (outputMetas' slice per
		// tuple node was a tenth of Build's allocations,
		// docs/performance-log.md, Twelfth pass).
		el := make([]bool, len(n.Val.Elems))
		for j := range n.Val.Elems {
			el[j] = outputRG(rule, j, valueTensor(&n.Val.Elems[j]))
			rg[i] = rg[i] || el[j]
		}
		elemRG[id] = el
	}
	for _, id := range noRule {
		if live[id] {
			n := &g.Nodes[id]
			return nil, nodeError(file, g, id, fmt.Sprintf("no derivative rule for %s, and an input of this node requires grad; %s is neither in the rule table nor in the non-differentiable list (see pkg/jointgraph/COVERAGE.md)", n.Target, n.Target))
		}
	}
	for i := range g.Nodes {
		if !live[i] && g.Nodes[i].Op == ir.OpCallFunction {
			rg[i] = false
		}
	}
	return rg, nil
}

// diffArgRG reports whether a node passed to an argument the rule
// differentiates requires grad (false when the call does not bind).
func diffArgRG(info *opInfo, n *ir.Node, rg []bool) bool {
	s := info.schema
	if s == nil || s.CheckBind(n.Args, n.Kwargs) != nil {
		return false
	}
	for _, i := range info.diffIdx {
		if a := s.BoundAt(n.Args, n.Kwargs, i); a != nil && anyRefIn(a, rg) {
			return true
		}
	}
	return false
}

// outputRG reports whether output j, of metadata m (nil: unknown), of a
// node that requires grad through rule does: the rule differentiates it
// and its dtype can carry a gradient.
func outputRG(rule *Rule, j int, m *ir.TensorMeta) bool {
	return (rule.Outputs == nil || j < len(rule.Outputs) && rule.Outputs[j]) &&
		(m == nil || isDifferentiableDtype(m.Dtype))
}

// outputMetas returns the tensor metadata of each output of n (one entry
// for a single result; nil entries where unknown or not a tensor).
func outputMetas(n *ir.Node) []*ir.TensorMeta {
	if n.Val == nil {
		return []*ir.TensorMeta{nil}
	}
	if n.Val.Kind == ir.ValTuple || n.Val.Kind == ir.ValList {
		out := make([]*ir.TensorMeta, len(n.Val.Elems))
		for i := range n.Val.Elems {
			out[i] = valueTensor(&n.Val.Elems[i])
		}
		return out
	}
	return []*ir.TensorMeta{valueTensor(n.Val)}
}

// liveNodes marks the nodes the graph's outputs (its output node, or the
// given output values of a graph not yet finished) or a side-effecting
// node depend on, themselves included. One pass from the last node to the
// first marks what each live node refers to, as dce does, instead of a
// search from the roots: a node's references are mostly to earlier nodes,
// read in order (docs/performance-log.md, Eleventh pass).
func liveNodes(g *ir.Graph, effect map[ir.NodeID]bool, outputs []V) []bool {
	d := &dceState{live: make([]bool, len(g.Nodes))}
	for i := range g.Nodes {
		if g.Nodes[i].Op == ir.OpOutput || effect[ir.NodeID(i)] {
			d.live[i] = true
		}
	}
	for _, v := range outputs {
		if v.IsNode() && int(v.id) < len(d.live) {
			d.live[v.id] = true
		}
	}
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		if d.live[i] {
			d.visit(g, ir.NodeID(i))
		}
	}
	return d.live
}
