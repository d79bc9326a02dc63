// Package hopargs is the lifted-argument-types analyzer: at every HOP call
// it checks the operand lists the HOP convention table's ArgTypeChecks name
// (opschema.HOP): those PyTorch passes to validate_subgraph_args_types
// (torch/_higher_order_ops/utils.py), which accepts only Tensor, int and
// SymInt (a Python bool is an int) — cond's operands, while_loop's
// carried_inputs and additional_inputs (each), scan's and the newer
// associative_scan's additional_inputs, flex_attention's buffers — and
// invoke_subgraph's own operand check (Tensor, int, SymInt, Generator or a
// script object). map_impl validates nothing. The type of an operand is
// that of its recorded value, or of the literal passed; an operand whose
// node has no recorded value is not judged. The message is PyTorch's
// AssertionError text followed by a line per offending operand.
package hopargs

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// RuleArgType is the rule id of the findings this analyzer reports.
const RuleArgType = "hop-arg-type"

// Analyzer is the lifted-argument-types analyzer. It has no result.
var Analyzer = hopcalls.Check("hopargs",
	"HOP operands of types PyTorch rejects (validate_subgraph_args_types: only Tensor, int, SymInt)",
	analyze.Rule{ID: RuleArgType, Name: "HopOperandType",
		Short: "HOP operand of a type PyTorch rejects (validate_subgraph_args_types)",
		Doc: "cond operands, while_loop carried and additional inputs, scan/associative_scan additional inputs and flex_attention buffers " +
			"may only be Tensor, int or SymInt (invoke_subgraph also allows Generator and script objects).",
		Example: `~~~python
torch.cond(pred, true_fn, false_fn, (x, 1.5))   # a float operand
~~~`,
		Fix: "pass tensors, ints or SymInts ('torch.tensor(1.5)'), or close over constants in the branch functions."}, run)

// operand is one checked element.
type operand struct {
	where string // "operands[1]"
	arg   *ir.Arg
}

func run(pass *analyze.Pass) (any, error) {
	g := pass.Graph
	for _, c := range hopcalls.Of(pass).Calls {
		h := c.HOP
		for _, v := range h.ArgTypeChecks {
			if !v.Torch.Holds(pass.TorchVersion()) {
				continue
			}
			ops, tuple, ok := collect(&c, v)
			if !ok {
				continue
			}
			var bad []string
			types := make([]string, len(ops))
			reprs := make([]string, len(ops))
			for k, op := range ops {
				typ, allowed, known := classify(g, op.arg, v.Opaque)
				types[k], reprs[k] = typ, repr(g, op.arg)
				if known && !allowed {
					bad = append(bad, fmt.Sprintf("%s is %s", describe(op), typ))
				}
			}
			if len(bad) == 0 {
				continue
			}
			var msg string
			if v.Message != "" {
				msg = fmt.Sprintf(v.Message, seq(reprs, false))
			} else {
				msg = fmt.Sprintf("%s can only be of (<class 'torch.Tensor'>, <class 'int'>, <class 'torch.SymInt'>) but got %s",
					seq(reprs, tuple), seq(types, true))
			}
			msg += "\n" + strings.Join(bad, "\n")
			c.Report(pass, msg)
		}
	}
	return nil, nil
}

// collect gathers the operands one check judges, named by the argument
// ("*operands" names the variadic arguments "operands"). ok is false when
// an argument is missing or not a list/tuple (the call is malformed, which
// validation reports, or an older form without the list).
func collect(c *hopcalls.Call, v opschema.ArgTypeCheck) (ops []operand, tuple, ok bool) {
	for _, name := range v.Args {
		elems, isTuple, ok := c.Group(name)
		if !ok {
			return nil, false, false
		}
		tuple = isTuple
		name = strings.TrimPrefix(name, "*")
		for j := range elems {
			ops = append(ops, operand{where: fmt.Sprintf("%s[%d]", name, j), arg: &elems[j]})
		}
	}
	return ops, tuple, true
}

func describe(op operand) string {
	if op.arg.Kind == ir.ArgNode {
		return fmt.Sprintf("%s (node %s)", op.where, op.arg.S)
	}
	return op.where
}

// classify returns the Python type an operand has at run time, whether the
// validation allows it, and whether the type is known at all.
func classify(g *ir.Graph, a *ir.Arg, allowOpaque bool) (typ string, allowed, known bool) {
	switch a.Kind {
	case ir.ArgStr:
		return "<class 'str'>", false, true
	case ir.ArgDtype:
		return "<class 'torch.dtype'>", false, true
	case ir.ArgDevice:
		return "<class 'torch.device'>", false, true
	case ir.ArgLayout:
		return "<class 'torch.layout'>", false, true
	case ir.ArgMemoryFormat:
		return "<class 'torch.memory_format'>", false, true
	case ir.ArgComplex:
		return "<class 'complex'>", false, true
	case ir.ArgDict:
		return "<class 'dict'>", false, true
	case ir.ArgOp:
		return "<class 'torch._ops.OpOverload'>", false, true
	case ir.ArgSlice:
		return "<class 'slice'>", false, true
	case ir.ArgEllipsis:
		return "<class 'ellipsis'>", false, true
	case ir.ArgConstant:
		return "<class '" + a.S + "'>", false, true
	}
	v := analyze.ArgValue(g, a)
	if v == nil {
		return "<unknown>", true, false
	}
	switch v.Kind {
	case ir.ValTensor:
		return "<class 'torch._subclasses.fake_tensor.FakeTensor'>", true, true
	case ir.ValInt:
		return "<class 'int'>", true, true
	case ir.ValBool:
		return "<class 'bool'>", true, true
	case ir.ValSym:
		if v.Sym != nil {
			switch v.Sym.Kind {
			case ir.SymInt:
				return "<class 'torch.SymInt'>", true, true
			case ir.SymFloat:
				return "<class 'torch.SymFloat'>", false, true
			case ir.SymBool:
				return "<class 'torch.SymBool'>", false, true
			}
		}
	case ir.ValFloat:
		return "<class 'float'>", false, true
	case ir.ValNone:
		return "<class 'NoneType'>", false, true
	case ir.ValList:
		return "<class 'list'>", false, true
	case ir.ValTuple:
		return "<class 'tuple'>", false, true
	case ir.ValOpaque:
		return "<class '" + v.S + "'>", allowOpaque && v.S != "GraphModule", true
	}
	return "<unknown>", true, false
}

func repr(g *ir.Graph, a *ir.Arg) string {
	switch a.Kind {
	case ir.ArgStr:
		return "'" + strings.ReplaceAll(a.S, "'", `\'`) + "'"
	case ir.ArgDtype, ir.ArgLayout, ir.ArgMemoryFormat:
		return ir.TorchName(a.S)
	case ir.ArgDevice:
		typ, idx, ok := strings.Cut(a.S, ":")
		if ok {
			return fmt.Sprintf("device(type='%s', index=%s)", typ, idx)
		}
		return fmt.Sprintf("device(type='%s')", typ)
	}
	if v := analyze.ArgValue(g, a); v != nil {
		return metadiff.Format(v)
	}
	if a.Kind == ir.ArgNode {
		return a.S
	}
	return "?"
}

func seq(xs []string, tuple bool) string {
	if tuple {
		if len(xs) == 1 {
			return "(" + xs[0] + ",)"
		}
		return "(" + strings.Join(xs, ", ") + ")"
	}
	return "[" + strings.Join(xs, ", ") + "]"
}
