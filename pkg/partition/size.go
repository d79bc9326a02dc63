package partition

import (
	"math"

	"github.com/hopctl/hopctl/pkg/ir"
)

// satMul and satAdd are the arithmetic of sizes (non-negative): they
// saturate at math.MaxInt64 instead of wrapping. A f32[2**62] tensor has
// 2**64 bytes: wrapped, that is 0, and the partitioners would save it as
// free.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return max(a*b, 0)
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// valueTensor returns v's tensor metadata, or nil when v is not a tensor.
func valueTensor(v *ir.Value) *ir.TensorMeta {
	if v != nil && v.Kind == ir.ValTensor {
		return v.Tensor
	}
	return nil
}
