package hopmeta_test

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestContiguousStrides(t *testing.T) {
	d := func(v int64) ir.Dim { return ir.Dim{Val: v} }
	s := func(e string) ir.Dim { return ir.Dim{Expr: e} }
	for _, tt := range []struct {
		shape []ir.Dim
		want  string
	}{
		{nil, "()"},
		{[]ir.Dim{d(5)}, "(1,)"},
		{[]ir.Dim{d(2), d(3), d(4)}, "(12, 4, 1)"},
		{[]ir.Dim{s("s0"), d(3), s("s1")}, "(3*s1, s1, 1)"},
		{[]ir.Dim{d(2), s("s1"), s("s0")}, "(s0*s1, s0, 1)"},
		{[]ir.Dim{d(2), s("s0 + 1"), d(1)}, "((s0 + 1), 1, 1)"},
	} {
		if got := metadiff.FormatTuple(hopmeta.ContiguousStrides(tt.shape)); got != tt.want {
			t.Errorf("ContiguousStrides(%v) = %s, want %s", tt.shape, got, tt.want)
		}
	}
}

func TestFirstSlice(t *testing.T) {
	x := &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{
		Shape: []ir.Dim{{Val: 5}, {Val: 3}, {Val: 2}}, Stride: []ir.Dim{{Val: 1}, {Val: 10}, {Val: 5}},
		Dtype: "float16", Device: "cuda:0", RequiresGrad: true, HasStorageID: true, StorageID: 7}}
	got := hopmeta.FirstSlice(x)
	if got == nil || metadiff.FormatSize(got.Tensor.Shape) != "torch.Size([3, 2])" || metadiff.FormatTuple(got.Tensor.Stride) != "(2, 1)" ||
		got.Tensor.Dtype != "float16" || got.Tensor.Device != "cuda:0" || got.Tensor.HasStorageID {
		t.Errorf("FirstSlice = %+v", got.Tensor)
	}
	if x.Tensor.Shape[0].Val != 5 {
		t.Error("FirstSlice modified its argument")
	}
	if hopmeta.FirstSlice(&ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{}}) != nil || hopmeta.FirstSlice(&ir.Value{Kind: ir.ValInt}) != nil {
		t.Error("FirstSlice of a 0-dim tensor or an int")
	}
}
