package jointgraph

import (
	"encoding/json"
	"fmt"
	"strings"

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
func requiresGrad(m *ir.Module, g *ir.Graph, ops *opCache, effect map[ir.NodeID]bool, outputs []V, file string) ([]bool, []MetaDisagreement, error) {
	live := liveNodes(g, effect, outputs)
	p := &rgPass{m: m, g: g, ops: ops, effect: effect, rg: make([]bool, len(g.Nodes)), elemRG: map[ir.NodeID][]bool{}}
	for i := range g.Nodes {
		p.node(ir.NodeID(i))
	}
	for _, id := range p.noRule {
		if live[id] {
			n := &g.Nodes[id]
			return nil, nil, nodeError(file, g, id, fmt.Sprintf("no derivative rule for %s, and an input of this node requires grad; %s is neither in the rule table nor in the non-differentiable list (see pkg/jointgraph/COVERAGE.md)", n.Target, n.Target))
		}
	}
	var dis []MetaDisagreement
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !live[i] || !p.rg[i] || n.Op != ir.OpCallFunction || n.Target == "aten.detach.default" {
			continue
		}
		if rec, ok := recordedDetach(n); ok {
			dis = append(dis, MetaDisagreement{Node: n.Name, Target: n.Target, Recorded: rec})
		}
	}
	// A dead node's flag reaches only dead nodes (a live node's arguments
	// are live), so clearing them afterwards is skipping them as they come.
	for i := range g.Nodes {
		if !live[i] && g.Nodes[i].Op == ir.OpCallFunction {
			p.rg[i] = false
		}
	}
	return p.rg, dis, nil
}

// MetaDisagreement is a node whose recorded metadata says it was traced
// from x.detach() (its value requires no grad in the traced program)
// while its op's derivative rule makes it require grad: torch 2.14's
// decompositions write a detach as aten.alias.default (2.6's as a chain of
// them), keeping the detach only in the node's torch_fn and from_node
// records.
//
// The op wins, and the disagreement is reported (never applied silently):
// torch differentiates the graph as written — ep.module() of the
// decomposed program returns a value that requires grad there
// (testdata/pt2 detach_buffer.aten, expect.json's outputs_require_grad) —
// so the joint is the gradient of this graph; the report tells a user
// that the source's detach is lost here, and that the training IR (which
// keeps aten.detach.default) differentiates as the source does.
// The recorded requires_grad of a call node's value is no record of
// autograd in these traces: make_fx and torch.export trace below
// autograd and record false for every call node; placeholders' flags
// (taken from the example inputs) are the records requiresGrad reads.
type MetaDisagreement struct {
	Node, Target string
	// Recorded is the metadata that names the detach
	// ("torch_fn detach_1;method_descriptor.detach").
	Recorded string
}

// recordedDetach returns the metadata of n that names x.detach() as the
// source of n, if any: torch_fn (the Python function export traced,
// "detach_1;method_descriptor.detach") or from_node (the node n was made
// from, `[{"name": "detach", "target": "aten.detach.default", ...}]`).
func recordedDetach(n *ir.Node) (string, bool) {
	if n.Meta == nil {
		return "", false
	}
	for _, a := range n.Meta.Extra {
		switch a.Key {
		case "torch_fn":
			_, fn, _ := strings.Cut(a.Value, ";")
			if strings.HasSuffix(fn, ".detach") || fn == "detach" {
				return "torch_fn " + a.Value, true
			}
		case "from_node":
			var from []struct {
				Target string `json:"target"`
			}
			if json.Unmarshal([]byte(a.Value), &from) == nil && len(from) > 0 && from[0].Target == "aten.detach.default" {
				return "from_node " + from[0].Target, true
			}
		}
	}
	return "", false
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
