package analyze

import (
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// The level of a graph decides which of PyTorch's checks, in which words,
// apply to its HOP calls. make_fx, AOTAutograd and torch.export write
// ATen-level graphs: every call_function target is an operator overload
// (aten.add.Tensor, higher_order.cond) or getitem. Dynamo (and
// symbolic_trace) write torch-level graphs: methods (x.add_(1)), modules,
// torch.* and operator.* functions. torch.compile checks a Dynamo-level
// graph's HOPs in Dynamo (its own rules and words, which depend on the
// grad mode in torch 2.14), then in AOTAutograd's re-trace (the make_fx
// rules); see opschema.Restriction's NoGrad and DynamoAccepts.

// TorchLevelGraph reports whether g has a torch-level node: a method or
// module call, or a call_function whose target is not an operator overload
// or getitem.
func TorchLevelGraph(g *ir.Graph) bool {
	// A graph has a few distinct targets, each on many nodes: each is
	// parsed once (1M nodes: 0.19 s of parsing → 0.02 s of look-ups).
	atenLevel := map[string]bool{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		switch n.Op {
		case ir.OpCallMethod, ir.OpCallModule:
			return true
		case ir.OpCallFunction:
			ok, seen := atenLevel[n.Target]
			if !seen {
				_, err := opschema.ParseTarget(n.Target)
				ok = err == nil || IsGetitem(n.Target)
				atenLevel[n.Target] = ok
			}
			if !ok {
				return true
			}
		}
	}
	return false
}

// DynamoLevel reports whether module m is a Dynamo-level (torch-level)
// module: one of its graphs has a torch-level node. A module is written at
// one level, so one such node decides.
func DynamoLevel(m *ir.Module) bool {
	for _, g := range m.Graphs {
		if TorchLevelGraph(g) {
			return true
		}
	}
	return false
}

// IsGetitem reports whether target is operator.getitem as FX spells it.
func IsGetitem(target string) bool {
	return target == "_operator.getitem" || target == "operator.getitem" || target == "getitem"
}

// DynamoLevel reports whether this pass's module is a Dynamo-level module
// (DynamoLevel), decided once per Run.
func (p *Pass) DynamoLevel() bool {
	if p.level == nil {
		return p.Module != nil && DynamoLevel(p.Module)
	}
	return p.level()
}

// GradEnabled is the grad mode the module was traced under, as the file
// records it (File.grad_enabled); a file that does not say is taken as
// traced with grad enabled, the default, under which PyTorch's HOP rules
// are strictest.
func (p *Pass) GradEnabled() bool {
	return p.Module == nil || !p.Module.HasGradEnabled || p.Module.GradEnabled
}
