package jointgraph

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestPrecheckAcceptsConstantsWithoutValues: make_fx in torch 1.13 of a
// module whose parameters are not lifted leaves them get_attr constants
// without a recorded value (python/tests/test_torch_level.py's
// FrozenParameters, nn.Linear): joint builds it, the constant getting no
// gradient; the precheck refused it once.
func TestPrecheckAcceptsConstantsWithoutValues(t *testing.T) {
	const src = `graph {
  nodes { name: "x" op: PLACEHOLDER target: "x" val {tensor {shape: [{value: 2}, {value: 3}] stride: [{value: 3}, {value: 1}] dtype: "float32" device: "cpu" requires_grad: true}} }
  nodes { name: "_param_constant0" op: GET_ATTR target: "_param_constant0" }
  nodes { name: "t" op: CALL_FUNCTION target: "aten.t.default" args {node: "_param_constant0"} val {tensor {shape: [{value: 3}, {value: 4}] stride: [{value: 1}, {value: 3}] dtype: "float32" device: "cpu"}} }
  nodes { name: "mm" op: CALL_FUNCTION target: "aten.mm.default" args {node: "x"} args {node: "t"} val {tensor {shape: [{value: 2}, {value: 4}] stride: [{value: 4}, {value: 1}] dtype: "float32" device: "cpu"}} }
  nodes { name: "output" op: OUTPUT target: "output" args {tuple {items {node: "mm"}}} }
}
format_version {major: 1}
`
	m, err := ir.Decode([]byte(src), ir.Text, "frozen.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	j, err := Build(m, Options{File: "frozen.pbtxt"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(j.RequiresGrad) != 1 || !j.RequiresGrad[0] {
		t.Errorf("primals requiring grad: %v, want x's", j.RequiresGrad)
	}
}
