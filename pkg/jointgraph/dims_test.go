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

// TestStridesContiguousAgreesWithIR: the joint's allocation-free
// contiguity check answers as ir.IsContiguous for every shape of rank 0
// to 3 over sizes {0, 1, 2, 3, 16} and every stride list over concrete,
// integer-expression and symbolic strides.
func TestStridesContiguousAgreesWithIR(t *testing.T) {
	sizes := []ir.Dim{{Val: 0}, {Val: 1}, {Val: 2}, {Val: 3}, {Val: 16}}
	strides := []ir.Dim{{Val: 0}, {Val: 1}, {Val: 2}, {Val: 3}, {Val: 16}, {Val: 48}, {Expr: "16"}, {Expr: "s0"}}
	var each func(dims []ir.Dim, rank int, fn func([]ir.Dim))
	each = func(dims []ir.Dim, rank int, fn func([]ir.Dim)) {
		var rec func(cur []ir.Dim)
		rec = func(cur []ir.Dim) {
			if len(cur) == rank {
				fn(cur)
				return
			}
			for _, d := range dims {
				rec(append(cur, d))
			}
		}
		rec(nil)
	}
	checked, contiguous := 0, 0
	for rank := 0; rank <= 3; rank++ {
		each(sizes, rank, func(shape []ir.Dim) {
			each(strides, rank, func(stride []ir.Dim) {
				got, want := stridesContiguous(shape, stride), ir.IsContiguous(shape, stride)
				if got != want {
					t.Fatalf("shape %v stride %v: stridesContiguous %v, ir.IsContiguous %v", shape, stride, got, want)
				}
				checked++
				if got {
					contiguous++
				}
			})
		})
	}
	if contiguous == 0 || contiguous == checked {
		t.Fatalf("%d of %d cases contiguous: the cases do not tell the answers apart", contiguous, checked)
	}
	// A symbolic size takes ir.IsContiguous's path.
	if !stridesContiguous([]ir.Dim{{Expr: "s0"}, {Val: 3}}, []ir.Dim{{Val: 3}, {Val: 1}}) {
		t.Error("[s0, 3] with strides [3, 1] is contiguous")
	}
}
