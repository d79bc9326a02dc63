package jointgraph

import (
	"fmt"
	"math"
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Tensor metadata helpers: shapes of emitted nodes are computed here from
// their operands' shapes, so every backward node carries a value like the
// nodes make_fx records.

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

// freshMeta is newTensor: the metadata of a fresh contiguous tensor. The
// builder interns it when a node is emitted with it (builder.value), so
// emitted nodes share it; builder.freshMeta interns without the temporary.
func freshMeta(shape []ir.Dim, dtype, device string) *ir.TensorMeta {
	return newTensor(shape, dtype, device)
}

// like returns metadata of a fresh contiguous tensor shaped and typed like m.
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
// saves four allocations per node. Each builder has its own table (a
// metaTable: one build's nodes, one goroutine), so concurrent builds share
// nothing. Metadata is never modified in place (the IR's values are
// immutable), so emitted nodes may share it.
const (
	maxInternRank = 6
	maxInterned   = 1 << 13
)

// metaKey is interned metadata's key: the fields interned metadata may
// have set.
type metaKey struct {
	dtype, device, layout, memFormat string
	rank, strideRank                 int8 // strideRank -1: Stride is nil
	offset                           int64
	shape, stride                    [maxInternRank]int64
}

// metaTable interns the tensor metadata of one builder's nodes: by key
// (the fields metaKey covers; metadata with other fields set is not
// interned) and by pointer (the canonical metadata's shared Value). The
// zero table is empty; a nil table interns nothing.
type metaTable struct {
	byKey map[metaKey]*ir.Value
	byPtr map[*ir.TensorMeta]*ir.Value
	// tuples are the interned tuple values, by their elements' canonical
	// values (tuple).
	tuples map[tupleKey]*ir.Value
}

// maxInternTuple is the longest tuple whose value is interned.
const maxInternTuple = 4

type tupleKey struct {
	n     int
	elems [maxInternTuple]*ir.Value // nil: None
}

// tuple returns the value of a tuple of tensors with metadata outs (nil:
// None). A tuple whose elements are all interned is interned too: the
// backward repeats each layer's tuples (native_layer_norm_backward's three
// gradients), and sharing their values saves 350 bytes and two
// allocations a tuple node.
func (t *metaTable) tuple(outs []*ir.TensorMeta) *ir.Value {
	var k tupleKey
	intern := t != nil && len(outs) <= maxInternTuple
	if intern {
		k.n = len(outs)
		for i, m := range outs {
			if m == nil {
				continue
			}
			v := t.value(m)
			if t.byPtr[v.Tensor] != v {
				intern = false // not canonical: its tuple would never recur
				break
			}
			k.elems[i] = v
		}
		if intern {
			if v := t.tuples[k]; v != nil {
				return v
			}
		}
	}
	elems := make([]ir.Value, len(outs))
	for i, m := range outs {
		if m != nil {
			elems[i] = *t.value(m)
		} else {
			elems[i] = ir.Value{Kind: ir.ValNone}
		}
	}
	v := &ir.Value{Kind: ir.ValTuple, Elems: elems}
	if intern && len(t.tuples) < maxInterned {
		if t.tuples == nil {
			t.tuples = map[tupleKey]*ir.Value{}
		}
		t.tuples[k] = v
	}
	return v
}

// keyOf returns m's intern key, and false when m is not internable
// (symbolic sizes, rank above maxInternRank, quantized, requiring grad, a
// storage id: fields the key does not hold).
func keyOf(m *ir.TensorMeta) (metaKey, bool) {
	if m.RequiresGrad || m.HasStorageID || m.StorageID != 0 {
		return metaKey{}, false
	}
	return viewKey(m, m.Shape, m.Stride, m.MemoryFormat)
}

// lookup returns the canonical value for k, or nil.
func (t *metaTable) lookup(k *metaKey) *ir.Value {
	if t == nil {
		return nil
	}
	return t.byKey[*k]
}

// store records m (owned by the table from now on) under k and returns its
// value; past maxInterned entries m is returned unshared.
func (t *metaTable) store(k *metaKey, m *ir.TensorMeta) *ir.Value {
	v := &ir.Value{Kind: ir.ValTensor, Tensor: m}
	if !t.interns() {
		return v
	}
	if t.byPtr == nil {
		t.byKey, t.byPtr = map[metaKey]*ir.Value{}, map[*ir.TensorMeta]*ir.Value{}
	}
	t.byKey[*k] = v
	t.byPtr[m] = v
	return v
}

// interns reports whether store interns what it is given.
func (t *metaTable) interns() bool { return t != nil && len(t.byKey) < maxInterned }

// value returns the Value of a node whose result has metadata m: the
// canonical one when m (or metadata equal to it) is interned, m interned
// when it can be.
func (t *metaTable) value(m *ir.TensorMeta) *ir.Value {
	if m == nil {
		return nil
	}
	if t != nil {
		if v := t.byPtr[m]; v != nil {
			return v
		}
		if k, ok := keyOf(m); ok {
			if v := t.byKey[k]; v != nil {
				return v
			}
			return t.store(&k, m)
		}
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: m}
}

// fresh is freshMeta, interned.
func (t *metaTable) fresh(shape []ir.Dim, dtype, device string) *ir.TensorMeta {
	if len(shape) > maxInternRank {
		return newTensor(shape, dtype, device)
	}
	k := metaKey{rank: int8(len(shape)), strideRank: int8(len(shape))}
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i].Expr != "" {
			return newTensor(shape, dtype, device)
		}
		k.shape[i], k.stride[i] = shape[i].Val, acc
		acc *= shape[i].Val
	}
	k.dtype, k.device, k.layout, k.memFormat = dtype, device, "strided", "contiguous_format"
	if v := t.lookup(&k); v != nil {
		return v.Tensor
	}
	return t.store(&k, newTensor(shape, dtype, device)).Tensor
}

// like is like(m) interned (m is not nil).
func (t *metaTable) like(m *ir.TensorMeta) *ir.TensorMeta {
	return t.fresh(m.Shape, m.Dtype, m.Device)
}

// view is viewMeta, interned.
func (t *metaTable) view(m *ir.TensorMeta, shape, stride []ir.Dim) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	memFormat := viewMemFormat(shape, stride)
	if k, ok := viewKey(m, shape, stride, memFormat); ok {
		if v := t.lookup(&k); v != nil {
			return v.Tensor
		}
		return t.store(&k, buildView(m, shape, stride, memFormat)).Tensor
	}
	return buildView(m, shape, stride, memFormat)
}

// The builder's interned forms of freshMeta, like, withShape and viewMeta,
// and the Value of a node it emits.
func (b *builder) freshMeta(shape []ir.Dim, dtype, device string) *ir.TensorMeta {
	return b.metas.fresh(shape, dtype, device)
}

func (b *builder) like(m *ir.TensorMeta) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	return b.metas.like(m)
}

func (b *builder) withShape(m *ir.TensorMeta, shape []ir.Dim) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	return b.metas.fresh(shape, m.Dtype, m.Device)
}

func (b *builder) viewMeta(m *ir.TensorMeta, shape, stride []ir.Dim) *ir.TensorMeta {
	return b.metas.view(m, shape, stride)
}

func (b *builder) value(m *ir.TensorMeta) *ir.Value { return b.metas.value(m) }

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

// satMul is the multiplication of sizes (non-negative): it saturates at
// math.MaxInt64 instead of wrapping. A f32[2**62] tensor has 2**64 bytes:
// wrapped, that is 0, and the partitioners would save it as free.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return max(a*b, 0)
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
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
	sz, ok := ir.ElementSize(m.Dtype)
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

// wrapDim normalises a possibly negative dimension index for rank (a
// 0-d tensor takes -1 and 0, as torch's maybe_wrap_dim). The dimension
// arguments of the input graph are in range (precheck refuses the others,
// as torch raises IndexError tracing them), and the builder derives the
// others from them: one out of range is a bug of hopctl, a panic Build
// reports as an internal error.
func wrapDim(d int64, rank int) int64 {
	if rank == 0 {
		rank = 1
	}
	if d < -int64(rank) || d >= int64(rank) {
		panic(fmt.Sprintf("dimension %d out of range for rank %d", d, rank))
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

// tensorValue wraps m in a Value (unshared; builder.value interns).
func tensorValue(m *ir.TensorMeta) *ir.Value {
	if m == nil {
		return nil
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: m}
}

// TensorBytes is tensorBytes for other packages (the partitioners' weights,
// the report's saved-value sizes).
func TensorBytes(m *ir.TensorMeta) (int64, bool) { return tensorBytes(m) }
