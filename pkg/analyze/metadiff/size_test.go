package metadiff

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestMessageSizeLinear: many values that are one large tuple, compared
// with lists of different length and with differing pairs, give messages
// that grow linearly in the input, not with the square of it (57 KB of
// input once printed 112 MB: every difference spelled out the whole
// tuple).
func TestMessageSizeLinear(t *testing.T) {
	const n = 3000
	tuple := func(dtype string) *ir.Value {
		v := &ir.Value{Kind: ir.ValTuple, Elems: make([]ir.Value, n)}
		for i := range v.Elems {
			v.Elems[i] = ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: 4}}, Stride: []ir.Dim{{Val: 1}}, Dtype: dtype, Device: "cpu"}}
		}
		return v
	}
	a, b := tuple("float32"), tuple("float64")
	lhs, rhs := List{Name: "lhs"}, List{Name: "rhs"}
	for range n {
		lhs.Values = append(lhs.Values, a)
		rhs.Values = append(rhs.Values, b)
	}
	if msg := Compare(lhs, rhs, Options{}).Message(); len(msg) > 2000*n || len(msg) == 0 {
		t.Errorf("differing pairs: %d bytes of message for %d values of %d elements", len(msg), n, n)
	}
	rhs.Values = rhs.Values[:n-1]
	if msg := Compare(lhs, rhs, Options{}).Message(); len(msg) > 2000*n || len(msg) == 0 {
		t.Errorf("lengths: %d bytes of message", len(msg))
	}
}
