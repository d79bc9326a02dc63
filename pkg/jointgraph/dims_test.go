package jointgraph

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestSymbolicContiguity: strides are spelled as torch records them
// (sympy: "3*s0"), so a tensor torch calls contiguous is contiguous here
// too, and the tensors the joint builder makes get torch's spelling. The
// builder used to spell the product "3*(s0)" and so found every symbolic
// tensor from a file non-contiguous.
func TestSymbolicContiguity(t *testing.T) {
	shape := []ir.Dim{{Val: 2}, {Expr: "s0"}, {Val: 3}}
	recorded := &ir.TensorMeta{Shape: shape, Stride: []ir.Dim{{Expr: "3*s0"}, {Val: 3}, {Val: 1}}, Dtype: "float32"}
	if !isContiguous(recorded) {
		t.Error("a contiguous symbolic tensor as torch records it is not contiguous")
	}
	m := newTensor(shape, "float32", "cpu")
	if got := ir.FormatDims(m.Stride); got != "[3*s0, 3, 1]" {
		t.Errorf("new tensor strides %s, want [3*s0, 3, 1]", got)
	}
	if v := viewMeta(recorded, shape, recorded.Stride); v.MemoryFormat != "contiguous_format" {
		t.Errorf("view memory format %q", v.MemoryFormat)
	}
}
