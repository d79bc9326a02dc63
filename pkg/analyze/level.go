package analyze

import (
	"strings"

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
// or getitem and is not SymInt arithmetic (symArithmetic): make_fx's
// symbolic traces compute with sizes through operator.sub and the like,
// as Dynamo's do, so those calls belong to neither level.
func TorchLevelGraph(g *ir.Graph) bool {
	// One graph (a HOP's subgraph, usually small): a map, not a memo's
	// table.
	seen := map[string]bool{}
	return torchLevelGraph(g, func(target string) bool {
		ok, found := seen[target]
		if !found {
			ok = atenLevelTarget(target)
			seen[target] = ok
		}
		return ok
	})
}

// atenLevelTarget reports whether a call_function target is an operator
// overload or getitem.
func atenLevelTarget(target string) bool {
	_, err := opschema.ParseTarget(target)
	return err == nil || IsGetitem(target)
}

// torchLevelGraph is TorchLevelGraph with atenLevel answering
// atenLevelTarget: a graph has a few distinct targets, each on many nodes,
// so each is parsed once.
func torchLevelGraph(g *ir.Graph, atenLevel func(target string) bool) bool {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		switch n.Op {
		case ir.OpCallMethod, ir.OpCallModule:
			return true
		case ir.OpCallFunction:
			if !atenLevel(n.Target) && !symArithmetic(n) {
				return true
			}
		}
	}
	return false
}

// symArith are the functions torch's SymNode records when a traced
// program computes with SymInts, SymFloats and SymBools, as FX names them
// (torch/fx/experimental/sym_node.py METHOD_TO_OPERATOR, and torch.sym_*,
// torch._sym_* for the unary math functions).
var symArith = map[string]struct{}{}

func init() {
	for _, op := range []string{"pos", "abs", "add", "and_", "eq", "floordiv", "ge", "gt", "le", "lshift", "lt", "mod",
		"mul", "ne", "neg", "or_", "xor", "pow", "rshift", "sub", "truediv", "invert"} {
		symArith["_operator."+op] = struct{}{}
		symArith["operator."+op] = struct{}{}
	}
	for _, f := range []string{"math.ceil", "math.floor", "math.trunc", "builtins.round", "round"} {
		symArith[f] = struct{}{}
	}
}

// symArithmetic reports whether call_function n is SymInt arithmetic: one
// of symArith's functions (or torch.sym_*, torch._sym_*) whose recorded
// value is a symbolic or plain scalar, not a tensor (Dynamo writes
// operator.add for tensor addition too). A node without a recorded value
// is not taken as one.
func symArithmetic(n *ir.Node) bool {
	if n.Val == nil {
		return false
	}
	switch n.Val.Kind {
	case ir.ValSym, ir.ValInt, ir.ValFloat, ir.ValBool:
	default:
		return false
	}
	if _, ok := symArith[n.Target]; ok {
		return true
	}
	return strings.HasPrefix(n.Target, "torch.sym_") || strings.HasPrefix(n.Target, "torch._sym_")
}

// DynamoLevel reports whether module m is a Dynamo-level (torch-level)
// module: one of its graphs has a torch-level node. A module is written at
// one level, so one such node decides. A module with nodes of neither
// level (only HOP calls and getitems: a BaseHOP whose subgraph returns its
// operand) is Dynamo-level when its root placeholders bear the names
// Dynamo gives graph inputs (dynamoInputs) and no graph calls an ATen op.
func DynamoLevel(m *ir.Module) bool {
	// Every graph's targets in one memo, found by their interned
	// strings' addresses (ir.TargetMemo).
	atenLevel := ir.NewTargetMemo(atenLevelTarget)
	for _, g := range m.Graphs {
		if torchLevelGraph(g, atenLevel.Get) {
			return true
		}
	}
	if !dynamoInputs(m.Root()) {
		return false
	}
	for _, g := range m.Graphs {
		for i := range g.Nodes {
			if n := &g.Nodes[i]; n.Op == ir.OpCallFunction && !IsGetitem(n.Target) && !opschema.IsHOPTarget(n.Target) {
				return false
			}
		}
	}
	return true
}

// dynamoInputs reports whether g has tensor placeholders and every one is
// named as Dynamo names graph inputs after their source: VariableBuilder
// replaces the non-alphanumerics of the source's name with "_"
// (torch/_dynamo/variables/builder.py), a local's name being L['x'] and a
// global's G['w'] (torch/_dynamo/source.py), so "L_x_", "G_w_". make_fx
// names them after the traced function's arguments ("x_1", "arg0_1",
// "primals_1"). Placeholders of sizes (a SymInt value) are named after
// their symbol at both levels, and skipped.
func dynamoInputs(g *ir.Graph) bool {
	if g == nil {
		return false
	}
	seen := false
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpPlaceholder || n.Val != nil && n.Val.Kind == ir.ValSym {
			continue
		}
		if !strings.HasPrefix(n.Target, "L_") && !strings.HasPrefix(n.Target, "G_") {
			return false
		}
		seen = true
	}
	return seen
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

// GradEnabled is the grad mode the module was traced under
// (ModuleGradMode: as the file records it, else --grad-mode, else grad
// enabled, the default, under which PyTorch's HOP rules are strictest).
// GradEnabledAt is the mode at one node.
func (p *Pass) GradEnabled() bool {
	mode, _ := ModuleGradMode(p.Module, p.opts)
	return mode == GradModeEnabled
}
