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
	live := liveNodes(g, effect, outputs)
	p := &rgPass{m: m, g: g, ops: ops, effect: effect, rg: make([]bool, len(g.Nodes)), elemRG: map[ir.NodeID][]bool{}}
	for i := range g.Nodes {
		p.node(ir.NodeID(i))
	}
	for _, id := range p.noRule {
		if live[id] {
			n := &g.Nodes[id]
			return nil, nodeError(file, g, id, fmt.Sprintf("no derivative rule for %s, and an input of this node requires grad; %s is neither in the rule table nor in the non-differentiable list (see pkg/jointgraph/COVERAGE.md)", n.Target, n.Target))
		}
	}
	// A dead node's flag reaches only dead nodes (a live node's arguments
	// are live), so clearing them afterwards is skipping them as they come.
	for i := range g.Nodes {
		if !live[i] && g.Nodes[i].Op == ir.OpCallFunction {
			p.rg[i] = false
		}
	}
	return p.rg, nil
}

// rgPass is requiresGrad's state: the flags so far, per node and per
// element of a tuple node.
type rgPass struct {
	m      *ir.Module
	g      *ir.Graph
	ops    *opCache
	effect map[ir.NodeID]bool
	rg     []bool
	elemRG map[ir.NodeID][]bool
	// noRule are the call nodes without a rule an input requiring grad
	// reaches, live or not.
	noRule []ir.NodeID
}

// node sets node id's flag from its inputs' flags.
func (p *rgPass) node(id ir.NodeID) {
	n := &p.g.Nodes[id]
	switch {
	case n.Op == ir.OpPlaceholder || n.Op == ir.OpGetAttr:
		t := valueTensor(n.Val)
		p.rg[id] = t != nil && t.RequiresGrad && isDifferentiableDtype(t.Dtype)
	case n.Op != ir.OpCallFunction || n.Target == "aten.copy_.default" && p.effect[id]:
	case n.Target == "_operator.getitem":
		p.getitem(id, n)
	case !p.anyArg(n):
	default:
		info := p.ops.get(n.Target)
		switch {
		case info.nonDiff:
		case info.hop != nil:
			p.hopCall(id, n, info.hop)
		case info.rule == nil:
			p.noRule = append(p.noRule, id)
		case diffArgRG(info, n, p.rg):
			p.ruleCall(id, n, info.rule)
		}
	}
}

// anyArg reports whether an argument of n refers to a node requiring grad.
func (p *rgPass) anyArg(n *ir.Node) bool {
	for k := range n.Args {
		if anyRefIn(&n.Args[k], p.rg) {
			return true
		}
	}
	for k := range n.Kwargs {
		if anyRefIn(&n.Kwargs[k].Value, p.rg) {
			return true
		}
	}
	return false
}

// getitem gives a getitem its element's flag.
func (p *rgPass) getitem(id ir.NodeID, n *ir.Node) {
	src := n.Args[0].Ref
	if el, ok := p.elemRG[src]; ok {
		p.rg[id] = int(n.Args[1].Int()) < len(el) && el[n.Args[1].Int()]
	} else if src >= 0 {
		// A tuple without a value (a multi-output view replayed by
		// functionalization): its elements require grad as the tuple does.
		p.rg[id] = p.rg[src]
	}
}

// hopCall flags a HOP call's outputs with autograd.Function semantics:
// every floating output requires grad when an operand does (narrowed by
// what the body's own joint says, when it can be built).
func (p *rgPass) hopCall(id ir.NodeID, n *ir.Node, hr *hopRule) {
	anyOp := false
	for _, a := range hr.operands(n) {
		anyOp = anyOp || anyRefIn(&a, p.rg)
	}
	if !anyOp {
		return
	}
	outs := outputMetas(n)
	el := make([]bool, len(outs))
	sub, precise := hopOutputsRG(p.m, p.g, n, hr, p.ops, p.rg)
	for j, m := range outs {
		el[j] = m != nil && isDifferentiableDtype(m.Dtype) && (!precise || j < len(sub) && sub[j])
		p.rg[id] = p.rg[id] || el[j]
	}
	p.elemRG[id] = el
}

// ruleCall flags the outputs of a call whose rule differentiates an
// argument that requires grad.
func (p *rgPass) ruleCall(id ir.NodeID, n *ir.Node, rule *Rule) {
	if n.Val == nil || n.Val.Kind != ir.ValTuple && n.Val.Kind != ir.ValList {
		p.rg[id] = outputRG(rule, 0, valueTensor(n.Val))
		return
	}
	el := make([]bool, len(n.Val.Elems))
	for j := range n.Val.Elems {
		el[j] = outputRG(rule, j, valueTensor(&n.Val.Elems[j]))
		p.rg[id] = p.rg[id] || el[j]
	}
	p.elemRG[id] = el
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
// node depend on, themselves included. A sweep from the last node to the
// first marks what each live node refers to, as dce does, instead of a
// search from the roots: a node's references are mostly to earlier nodes.
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
