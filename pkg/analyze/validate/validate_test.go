package validate_test

import (
	"errors"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestCallModuleAndWithEffects(t *testing.T) {
	src := `format_version { major: 1 }
graph {
  nodes { name: "x" op: PLACEHOLDER target: "x" }
  nodes { name: "sub" op: CALL_MODULE target: "sub" args { node: "x" } args { node: "x" } }
  nodes { name: "eff" op: CALL_FUNCTION target: "higher_order.with_effects" args { node: "x" } args { int: 1 } }
  nodes { name: "af" op: CALL_FUNCTION target: "higher_order.auto_functionalized" args { node: "x" } kwargs { name: "self" value { node: "x" } } }
  nodes { name: "af_ok" op: CALL_FUNCTION target: "higher_order.auto_functionalized" args { op: "aten.add_.Tensor" } kwargs { name: "self" value { node: "x" } } }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "sub" } }
}
submodules { qualified_name: "sub" graph {
  nodes { name: "y" op: PLACEHOLDER target: "y" }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "y" } }
} }`
	m, err := ir.Decode([]byte(src), ir.Text, "m.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	err = validate.Check(m, "m.pbtxt", nil)
	var ve *ir.VerifyError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("err = %v, want three problems", err)
	}
	for i, want := range []string{
		"m.pbtxt: graph <root>: node sub: module subgraph sub takes 1 inputs but the call passes 2 [hop-call]",
		"m.pbtxt: graph <root>: node eff: with_effects call: argument 1 must be the op [hop-call]",
		// Fixed with the HOP convention table: every HOP with an operator
		// argument is checked as with_effects was; auto_functionalized's
		// _mutable_op used to be accepted whatever it held.
		"m.pbtxt: graph <root>: node af: auto_functionalized call: argument 0 must be the op [hop-call]",
	} {
		if got := ve.Problems[i].String(); got != want {
			t.Errorf("problem %d = %q, want %q", i, got, want)
		}
	}
}
