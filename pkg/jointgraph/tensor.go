package jointgraph

import (
	"math"
	"slices"
	"sync"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Tensor metadata helpers: shapes of emitted nodes are computed here from
// their operands' shapes, so every backward node carries a value like the
// nodes make_fx records.

// dtypeSize returns the element size of dtype in bytes.
func dtypeSize(dtype string) (int64, bool) {
	switch dtype {
	case "float64", "int64", "complex64":
		return 8, true
	case "float32", "int32", "complex32", "qint32":
		return 4, true
	case "float16", "bfloat16", "int16":
		return 2, true
	case "complex128":
		return 16, true
	case "int8", "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "qint8", "quint8":
		return 1, true
	}
	return 0, false
}

// isDifferentiableDtype reports whether a tensor of dtype can require grad:
// floating point and complex dtypes.
func isDifferentiableDtype(dtype string) bool {
	switch dtype {
	case "float64", "float32", "float16", "bfloat16", "complex128", "complex64", "complex32",
		"float8_e4m3fn", "float8_e5m2":
		return true
	}
	return false
}

func dims(vs ...int64) []ir.Dim {
	out := make([]ir.Dim, len(vs))
	for i, v := range vs {
		out[i] = ir.Dim{Val: v}
	}
	return out
}

func isOne(d ir.Dim) bool { return d.Expr == "" && d.Val == 1 }

// newTensor returns metadata of a fresh contiguous tensor.
func newTensor(shape []ir.Dim, dtype, device string) *ir.TensorMeta {
	return &ir.TensorMeta{
		Shape:        slices.Clone(shape),
		Stride:       ir.ContiguousStrides(shape),
		Dtype:        dtype,
		Device:       device,
		Layout:       "strided",
		MemoryFormat: "contiguous_format",
	}
}

// freshMeta is newTensor, shared: the same pointer for equal small,
// concrete metadata. Metadata is never modified in place (the IR's values
// are immutable), so emitted nodes may share it.
func freshMeta(shape []ir.Dim, dtype, device string) *ir.TensorMeta {
	if len(shape) > maxInternRank {
		return newTensor(shape, dtype, device)
	}
	k := metaKey{dtype: dtype, device: device, layout: "strided", memFormat: "contiguous_format",
		rank: int8(len(shape)), strideRank: int8(len(shape))}
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i].Expr != "" {
			return newTensor(shape, dtype, device)
		}
		k.shape[i], k.stride[i] = shape[i].Val, acc
		acc *= shape[i].Val
	}
	if m := lookupMeta(&k); m != nil {
		return m
	}
	return storeMeta(&k, newTensor(shape, dtype, device))
}

// like returns metadata of a fresh contiguous tensor shaped and typed like m.
// The result is shared; it must not be modified.
func like(m *ir.TensorMeta) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	return freshMeta(m.Shape, m.Dtype, m.Device)
}

// withShape is like(m) with another shape.
func withShape(m *ir.TensorMeta, shape []ir.Dim) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	return freshMeta(shape, m.Dtype, m.Device)
}

// Interning of tensor metadata: emitted nodes mostly carry a handful of
// distinct shapes, so sharing their metadata (and the Value wrapping it)
// saves four allocations per node.
const (
	maxInternRank = 6
	maxInterned   = 1 << 13
)

type metaKey struct {
	dtype, device, layout, memFormat string
	rank, strideRank                 int8 // strideRank -1: Stride is nil
	offset                           int64
	shape, stride                    [maxInternRank]int64
}

var (
	internMu   sync.RWMutex
	internTab  = map[metaKey]*ir.TensorMeta{}
	internVals = map[*ir.TensorMeta]*ir.Value{}
)

func lookupMeta(k *metaKey) *ir.TensorMeta {
	internMu.RLock()
	m := internTab[*k]
	internMu.RUnlock()
	return m
}

// storeMeta records m (fresh, owned) under k and returns the recorded
// metadata for k.
func storeMeta(k *metaKey, m *ir.TensorMeta) *ir.TensorMeta {
	internMu.Lock()
	defer internMu.Unlock()
	if old, ok := internTab[*k]; ok {
		return old
	}
	if len(internTab) >= maxInterned {
		return m
	}
	internTab[*k] = m
	internVals[m] = &ir.Value{Kind: ir.ValTensor, Tensor: m}
	return m
}

// numel returns the element count and whether it is concrete.
func numel(shape []ir.Dim) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d.Expr != "" {
			return 0, false
		}
		n = satMul(n, d.Val)
	}
	return n, true
}

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

// tensorBytes returns the size in bytes of a tensor's elements (numel ×
// element size), and false when the shape is symbolic or the dtype unknown.
func tensorBytes(m *ir.TensorMeta) (int64, bool) {
	if m == nil {
		return 0, false
	}
	n, ok := numel(m.Shape)
	if !ok {
		return 0, false
	}
	sz, ok := dtypeSize(m.Dtype)
	return satMul(n, sz), ok
}

// broadcastShapes returns the broadcast of shapes, as torch's
// infer_size does; ok is false when they do not broadcast.
func broadcastShapes(shapes ...[]ir.Dim) ([]ir.Dim, bool) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]ir.Dim, rank)
	for i := range out {
		out[i] = ir.Dim{Val: 1}
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case isOne(d):
			case isOne(*o):
				*o = d
			case !o.Equal(d):
				return nil, false
			}
		}
	}
	return out, true
}

// wrapDim normalises a possibly negative dimension index for rank.
func wrapDim(d int64, rank int) int64 {
	if rank == 0 {
		rank = 1
	}
	if d < 0 {
		d += int64(rank)
	}
	return d
}

// promoteDtype returns the result dtype of a pointwise op over the tensor
// operands' dtypes: the first floating or complex dtype, else the first.
// (Scalar operands do not promote across categories in these graphs.)
func promoteDtype(ms ...*ir.TensorMeta) string {
	first := ""
	for _, m := range ms {
		if m == nil {
			continue
		}
		if first == "" {
			first = m.Dtype
		}
		if isDifferentiableDtype(m.Dtype) {
			return m.Dtype
		}
	}
	return first
}

func valueTensor(v *ir.Value) *ir.TensorMeta {
	if v != nil && v.Kind == ir.ValTensor {
		return v.Tensor
	}
	return nil
}

func tensorValue(m *ir.TensorMeta) *ir.Value {
	if m == nil {
		return nil
	}
	internMu.RLock()
	v := internVals[m]
	internMu.RUnlock()
	if v != nil {
		return v
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: m}
}

// TensorBytes is tensorBytes for other packages (the report's saved-value
// sizes of joint and partition files).
func TensorBytes(m *ir.TensorMeta) (int64, bool) { return tensorBytes(m) }
