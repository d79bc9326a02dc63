package hopmeta_test

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/ir"
)

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
