package jointgraph

import (
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Typed emitters for the ATen ops that derivative formulas and
// functionalization write. Each computes its result's metadata from its
// operands' metadata, the way the op's meta function would.

func isContiguous(m *ir.TensorMeta) bool {
	if m == nil {
		return false
	}
	if m.Stride == nil {
		return true
	}
	return stridesContiguous(m.Shape, m.Stride)
}

// stridesContiguous is ir.IsContiguous without building the contiguous
// strides when every size is a plain integer (the rules ask it of most
// nodes they emit).
func stridesContiguous(shape, stride []ir.Dim) bool {
	if len(shape) != len(stride) {
		return false
	}
	for i := range shape {
		if shape[i].Expr != "" {
			return ir.IsContiguous(shape, stride)
		}
	}
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		v := shape[i].Val
		if v != 1 && !stride[i].Equal(ir.Dim{Val: want}) {
			return false
		}
		want *= v
	}
	return true
}

// viewMeta returns the metadata of a view of m with the given shape and
// strides (offset kept); builder.viewMeta interns it.
func viewMeta(m *ir.TensorMeta, shape, stride []ir.Dim) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	return buildView(m, shape, stride, viewMemFormat(shape, stride))
}

// viewMemFormat is the memory format a view's metadata records.
func viewMemFormat(shape, stride []ir.Dim) string {
	if stride == nil || stridesContiguous(shape, stride) {
		return "contiguous_format"
	}
	return ""
}

func buildView(m *ir.TensorMeta, shape, stride []ir.Dim, memFormat string) *ir.TensorMeta {
	out := *m
	out.Shape = slices.Clone(shape)
	out.Stride = slices.Clone(stride)
	out.RequiresGrad = false
	out.HasStorageID = false
	out.StorageID = 0
	out.MemoryFormat = memFormat
	return &out
}

// withoutStorage returns v with a tensor's recorded storage identity
// dropped: the value of a fresh tensor with v's metadata.
func withoutStorage(v *ir.Value) *ir.Value {
	t := valueTensor(v)
	if t == nil || !t.HasStorageID {
		return v
	}
	m := *t
	m.HasStorageID, m.StorageID = false, 0
	return &ir.Value{Kind: ir.ValTensor, Tensor: &m}
}

// viewKey is the intern key of buildView(m, shape, stride, memFormat), without
// building it.
func viewKey(m *ir.TensorMeta, shape, stride []ir.Dim, memFormat string) (metaKey, bool) {
	var k metaKey
	if len(shape) > maxInternRank || len(stride) > maxInternRank || m.QParams != nil || m.IsQuantized || m.StorageOffset.Expr != "" {
		return k, false
	}
	k.rank, k.strideRank, k.offset = int8(len(shape)), int8(len(stride)), m.StorageOffset.Val
	if stride == nil {
		k.strideRank = -1
	}
	for i, d := range shape {
		if d.Expr != "" {
			return k, false
		}
		k.shape[i] = d.Val
	}
	for i, d := range stride {
		if d.Expr != "" {
			return k, false
		}
		k.stride[i] = d.Val
	}
	k.dtype, k.device, k.layout, k.memFormat = m.Dtype, m.Device, m.Layout, memFormat
	return k, true
}

func (b *builder) unary(target string, x V, extra ...any) V {
	if len(extra) == 0 {
		return b.op1(target, b.like(x.meta), x)
	}
	return b.op(target, b.like(x.meta), append([]any{x}, extra...)...)
}

// op1 is op(target, out, x) without boxing.
func (b *builder) op1(target string, out *ir.TensorMeta, x V) V {
	args := b.argList(1)
	args[0] = b.refArg(x)
	return b.opArgs(target, out, args)
}

// op2 is op(target, out, x, y) without boxing.
func (b *builder) op2(target string, out *ir.TensorMeta, x, y V) V {
	args := b.argList(2)
	args[0], args[1] = b.refArg(x), b.refArg(y)
	return b.opArgs(target, out, args)
}

// pointwise2 is pointwise(target, []V{x, y}).
func (b *builder) pointwise2(target string, x, y V) V {
	var out *ir.TensorMeta
	switch {
	case x.meta != nil && y.meta != nil:
		shape := x.meta.Shape
		if !ir.DimsEqual(shape, y.meta.Shape) {
			var ok bool
			if shape, ok = broadcastShapes(x.meta.Shape, y.meta.Shape); !ok {
				shape = x.meta.Shape
			}
		} else if dt := promoteDtype(x.meta, y.meta); dt == x.meta.Dtype {
			// x's shape and dtype: like(x), remembered per x's metadata.
			out = b.like(x.meta)
			break
		}
		out = b.freshMeta(shape, promoteDtype(x.meta, y.meta), x.meta.Device)
	case x.meta != nil:
		out = b.freshMeta(x.meta.Shape, promoteDtype(x.meta), x.meta.Device)
	case y.meta != nil:
		out = b.freshMeta(y.meta.Shape, promoteDtype(y.meta), y.meta.Device)
	}
	return b.op2(target, out, x, y)
}

// pointwise emits an elementwise op over tensor and scalar operands,
// broadcasting the tensor shapes.
func (b *builder) pointwise(target string, operands []V, extra ...any) V {
	var shapes [][]ir.Dim
	var metas []*ir.TensorMeta
	for _, o := range operands {
		if o.meta != nil {
			shapes = append(shapes, o.meta.Shape)
			metas = append(metas, o.meta)
		}
	}
	var out *ir.TensorMeta
	if len(metas) > 0 {
		shape, ok := broadcastShapes(shapes...)
		if !ok {
			shape = metas[0].Shape
		}
		out = b.freshMeta(shape, promoteDtype(metas...), metas[0].Device)
	}
	args := make([]any, 0, len(operands)+len(extra))
	for _, o := range operands {
		args = append(args, o)
	}
	return b.op(target, out, append(args, extra...)...)
}

func isTensor(v V) bool { return v.ok }

func (b *builder) mul(x, y V) V { return b.pointwise2("aten.mul.Tensor", x, y) }
func (b *builder) div(x, y V) V { return b.pointwise2("aten.div.Tensor", x, y) }
func (b *builder) add(x, y V) V { return b.pointwise2("aten.add.Tensor", x, y) }
func (b *builder) sub(x, y V) V { return b.pointwise2("aten.sub.Tensor", x, y) }
func (b *builder) neg(x V) V    { return b.unary("aten.neg.default", x) }

func scalarF(f float64) V { return constV(ir.FloatArg(f)) }
func scalarI(i int64) V   { return constV(ir.IntArg(i)) }

func (b *builder) mm(x, y V) V {
	var out *ir.TensorMeta
	if x.meta != nil && y.meta != nil && x.Rank() == 2 && y.Rank() == 2 {
		out = b.withShape(x.meta, []ir.Dim{x.Shape()[0], y.Shape()[1]})
	}
	return b.op2("aten.mm.default", out, x, y)
}

func (b *builder) bmm(x, y V) V {
	var out *ir.TensorMeta
	if x.meta != nil && y.meta != nil && x.Rank() == 3 && y.Rank() == 3 {
		out = b.withShape(x.meta, []ir.Dim{x.Shape()[0], x.Shape()[1], y.Shape()[2]})
	}
	return b.op2("aten.bmm.default", out, x, y)
}

func (b *builder) permuteMeta(m *ir.TensorMeta, perm []int64) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	// The shape and stride are built in the builder's scratch: view interns
	// them or copies them (buildView), so a transpose, in every layer's
	// forward and backward, allocates nothing once its metadata is known.
	k := len(perm)
	b.dims = slices.Grow(b.dims[:0], 2*k)[:2*k]
	shape, stride := b.dims[:k:k], b.dims[k:]
	st := m.Stride
	if st == nil {
		st = ir.ContiguousStrides(m.Shape)
	}
	for i, p := range perm {
		shape[i], stride[i] = m.Shape[p], st[p]
	}
	return b.metas.view(m, shape, stride)
}

func (b *builder) t(x V) V { return b.op1("aten.t.default", b.tMeta(x.meta), x) }

// tMeta is the metadata of t(x) for x's m.
func (b *builder) tMeta(m *ir.TensorMeta) *ir.TensorMeta {
	if m == nil {
		return nil
	}
	perm := []int64{1, 0}
	if len(m.Shape) < 2 {
		// t of a 0-d or 1-d tensor is the identity (perm[:1] was [1]).
		perm = []int64{0}[:len(m.Shape)]
	}
	return b.permuteMeta(m, perm)
}

func transposePerm(rank int, d0, d1 int64) []int64 {
	perm := make([]int64, rank)
	for i := range perm {
		perm[i] = int64(i)
	}
	if rank > 0 {
		perm[d0], perm[d1] = perm[d1], perm[d0]
	}
	return perm
}

func (b *builder) transpose(x V, d0, d1 int64) V {
	r := x.Rank()
	var m *ir.TensorMeta
	if x.meta != nil {
		w0, ok0 := b.dim(d0, r)
		w1, ok1 := b.dim(d1, r)
		if ok0 && ok1 {
			m = b.permuteMeta(x.meta, transposePerm(r, w0, w1))
		}
	}
	return b.op("aten.transpose.int", m, x, d0, d1)
}

func (b *builder) permute(x V, perm []int64) V {
	r := x.Rank()
	var m *ir.TensorMeta
	if x.meta != nil {
		p := make([]int64, len(perm))
		ok := true
		for i, d := range perm {
			var okd bool
			p[i], okd = b.dim(d, r)
			ok = ok && okd
		}
		if ok {
			m = b.permuteMeta(x.meta, p)
		}
	}
	return b.op("aten.permute.default", m, x, perm)
}

// reshape emits view when x's strides allow one, reshape (a copy)
// otherwise, as Tensor.reshape decides. It emits nothing when the shape is
// unchanged.
func (b *builder) reshape(x V, shape []ir.Dim) V {
	if x.meta != nil && ir.DimsEqual(x.Shape(), shape) {
		return x
	}
	if x.meta != nil {
		st := x.meta.Stride
		if st == nil {
			st = ir.ContiguousStrides(x.Shape())
		}
		var buf [maxInternRank]ir.Dim
		if ns, ok := viewStrides(buf[:], x.Shape(), st, shape); ok {
			return b.opShape("aten.view.default", b.viewMeta(x.meta, shape, ns), x, shape)
		}
	}
	return b.opShape("aten.reshape.default", b.withShape(x.meta, shape), x, shape)
}

// opShape is op(target, out, x, shape) without boxing.
func (b *builder) opShape(target string, out *ir.TensorMeta, x V, shape []ir.Dim) V {
	args := b.argList(2)
	args[0], args[1] = b.refArg(x), b.dimsArg(shape)
	return b.opArgs(target, out, args)
}

// viewStrides returns the strides a view of a tensor (shape, stride) with
// newShape has, and false when no view exists (ATen's computeStride).
// Symbolic sizes or strides give false. The strides are written to buf's
// storage when it has room (reshape's array on its stack).
func viewStrides(buf, shape, stride, newShape []ir.Dim) ([]ir.Dim, bool) {
	for _, ds := range [][]ir.Dim{shape, stride, newShape} {
		for _, d := range ds {
			if d.Expr != "" {
				return nil, false
			}
		}
	}
	ns := buf[:0]
	if cap(ns) < len(newShape) {
		ns = make([]ir.Dim, 0, len(newShape))
	}
	ns = ns[:len(newShape)]
	if len(shape) == 0 {
		for i := range ns {
			ns[i] = ir.Dim{Val: 1}
		}
		return ns, true
	}
	if n, _ := numel(shape); n == 0 {
		return ir.ContiguousStrides(newShape), true
	}
	viewD := len(newShape) - 1
	chunkBase := stride[len(stride)-1].Val
	tensorNumel, viewNumel := int64(1), int64(1)
	for td := len(shape) - 1; td >= 0; td-- {
		tensorNumel *= shape[td].Val
		if td == 0 || (shape[td-1].Val != 1 && stride[td-1].Val != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD].Val == 1) {
				ns[viewD] = ir.Dim{Val: viewNumel * chunkBase}
				viewNumel *= newShape[viewD].Val
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if td > 0 {
				chunkBase = stride[td-1].Val
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return ns, true
}

func (b *builder) expand(x V, shape []ir.Dim) V {
	if x.meta != nil && ir.DimsEqual(x.Shape(), shape) {
		return x
	}
	var m *ir.TensorMeta
	if x.meta != nil {
		st := x.meta.Stride
		if st == nil {
			st = ir.ContiguousStrides(x.Shape())
		}
		stride := make([]ir.Dim, len(shape))
		off := len(shape) - x.Rank()
		for i := range shape {
			if i < off || (isOne(x.Shape()[i-off]) && !isOne(shape[i])) {
				stride[i] = ir.Dim{}
			} else {
				stride[i] = st[i-off]
			}
		}
		m = b.viewMeta(x.meta, shape, stride)
	}
	return b.opShape("aten.expand.default", m, x, shape)
}

func (b *builder) unsqueeze(x V, d int64) V {
	var m *ir.TensorMeta
	if w, ok := b.dimOf(x, d, 1); ok {
		d = w
		shape := slices.Insert(slices.Clone(x.Shape()), int(d), ir.Dim{Val: 1})
		if isContiguous(x.meta) {
			m = b.viewMeta(x.meta, shape, ir.ContiguousStrides(shape))
		} else {
			m = b.withShape(x.meta, shape)
		}
	}
	return b.op("aten.unsqueeze.default", m, x, d)
}

func (b *builder) squeezeDim(x V, d int64) V {
	var m *ir.TensorMeta
	if w, ok := b.dimOf(x, d, 0); ok {
		d = w
		shape := slices.Clone(x.Shape())
		if int(d) < len(shape) && isOne(shape[d]) {
			shape = slices.Delete(shape, int(d), int(d)+1)
		}
		m = b.withShape(x.meta, shape)
	}
	return b.op("aten.squeeze.dim", m, x, d)
}

// sum emits sum.dim_IntList over dims. dimsToSum is not kept (sumToSize
// passes an array on its stack).
func (b *builder) sum(x V, dimsToSum []int64, keepdim bool) V {
	args := b.argList(3)
	args[0] = b.refArg(x)
	args[1] = b.intsArg(dimsToSum)
	args[2] = ir.Arg{Kind: ir.ArgBool, B: keepdim}
	return b.opArgs("aten.sum.dim_IntList", b.sumMeta(x, dimsToSum, keepdim), args)
}

// sumMeta is the metadata of sum's result (nil when unknown, or when a
// dimension is out of range).
func (b *builder) sumMeta(x V, dimsToSum []int64, keepdim bool) *ir.TensorMeta {
	if x.meta == nil {
		return nil
	}
	r := x.Rank()
	var redBuf [maxInternRank]bool
	var shapeBuf [maxInternRank]ir.Dim
	red, shape := redBuf[:0], shapeBuf[:0]
	if r > maxInternRank {
		red = make([]bool, 0, r)
	}
	// A 0-dim tensor reduces over dim 0 or -1 (dim wraps scalars as rank
	// 1, as ATen's maybe_wrap_dim does) and stays 0-dim.
	red = red[:max(r, 1)]
	for _, d := range dimsToSum {
		w, ok := b.dim(d, r)
		if !ok {
			return nil
		}
		red[w] = true
	}
	for i, d := range x.Shape() {
		switch {
		case !red[i]:
			shape = append(shape, d)
		case keepdim:
			shape = append(shape, ir.Dim{Val: 1})
		}
	}
	if len(shape) == 0 {
		shape = nil // as appending to nil leaves it
	}
	return b.withShape(x.meta, shape)
}

// sumToSize reduces a gradient g to shape, as at::sum_to does: leading
// dimensions are summed away and dimensions of size 1 in shape are summed
// with keepdim. It emits nothing when g already has the shape.
func (b *builder) sumToSize(g V, shape []ir.Dim) V {
	if !g.ok || g.meta == nil || ir.DimsEqual(g.Shape(), shape) {
		return g
	}
	gs := g.Shape()
	lead := len(gs) - len(shape)
	if lead < 0 {
		return b.reshape(g, shape)
	}
	var buf [maxInternRank]int64
	red := buf[:0]
	for i := range gs {
		if i < lead || (isOne(shape[i-lead]) && !isOne(gs[i])) {
			red = append(red, int64(i))
		}
	}
	if len(red) == 0 {
		return b.reshape(g, shape)
	}
	s := b.sum(g, red, true)
	return b.reshape(s, shape)
}

// zerosLike is a zero-filled tensor shaped and typed like x. Of static
// metadata it is a shape-only fill, aten.zeros.default(sizes, dtype,
// layout, device) with every argument a constant, as AOTAutograd's joint
// writes the zeros autograd makes for a missing gradient (the engine's
// InputMetadata::zeros_like calls at::zeros(shape, options), which make_fx
// records with the sizes and options as constants): x is not an operand,
// so the backward does not depend on a forward tensor for its metadata and
// the partition never saves x for it. Symbolic sizes keep zeros_like(x):
// the sizes must be read from a tensor of the graph.
func (b *builder) zerosLike(x V) V {
	if z, ok := b.zerosOf(x.meta); ok {
		return z
	}
	return b.op1("aten.zeros_like.default", b.like(x.meta), x)
}

// newZeros is like.new_zeros(shape) for a tensor like of the metadata m
// (the derivative formulas' grad.new_zeros(self.sizes())): a shape-only
// fill when m is static (zerosLike), else new_zeros of like.
func (b *builder) newZeros(m *ir.TensorMeta, like V, shape []ir.Dim) V {
	if z, ok := b.zerosOf(m); ok {
		return z
	}
	return b.op("aten.new_zeros.default", b.like(m), like, shape)
}

// zerosOf emits aten.zeros.default of m's sizes, dtype and device, all
// constants, if m's sizes are static and its dtype and device known
// (false otherwise: the caller fills from a tensor).
func (b *builder) zerosOf(m *ir.TensorMeta) (V, bool) {
	if m == nil || m.Dtype == "" || m.Device == "" || m.IsQuantized || m.QParams != nil ||
		m.Layout != "" && m.Layout != "strided" {
		return V{}, false
	}
	sizes := make([]int64, len(m.Shape))
	for i, d := range m.Shape {
		if d.Expr != "" {
			return V{}, false
		}
		sizes[i] = d.Val
	}
	return b.op("aten.zeros.default", b.like(m), sizes, kw{"dtype", dtypeArg(m.Dtype)},
		kw{"layout", ir.Arg{Kind: ir.ArgLayout, S: "strided"}},
		kw{"device", ir.Arg{Kind: ir.ArgDevice, S: m.Device}}, kw{"pin_memory", false}), true
}

// clone emits a contiguous copy.
func (b *builder) clone(x V) V { return b.op1("aten.clone.default", b.like(x.meta), x) }

// cmp emits a comparison (bool result) of x with a tensor or scalar y.
func (b *builder) cmp(name string, x, y V) V {
	target := "aten." + name + ".Scalar"
	var shape []ir.Dim
	if isTensor(y) {
		target = "aten." + name + ".Tensor"
		shape, _ = broadcastShapes(x.Shape(), y.Shape())
	} else {
		shape = x.Shape()
	}
	var m *ir.TensorMeta
	if x.meta != nil {
		m = b.freshMeta(shape, "bool", x.meta.Device)
	}
	return b.op(target, m, x, y)
}

// logical emits logical_and/logical_or of two bool tensors.
func (b *builder) logical(name string, x, y V) V {
	var m *ir.TensorMeta
	if x.meta != nil && y.meta != nil {
		shape, _ := broadcastShapes(x.Shape(), y.Shape())
		m = b.freshMeta(shape, "bool", x.meta.Device)
	}
	return b.op("aten.logical_"+name+".default", m, x, y)
}

// where emits where(cond, x, y) for tensors or scalars x, y.
func (b *builder) where(cond, x, y V) V {
	var target string
	switch {
	case isTensor(x) && isTensor(y):
		target = "aten.where.self"
	case isTensor(x):
		target = "aten.where.ScalarOther"
	case isTensor(y):
		target = "aten.where.ScalarSelf"
	default:
		target = "aten.where.Scalar"
	}
	return b.pointwise(target, []V{cond, x, y})
}

// maskedFill emits masked_fill.Scalar(x, mask, value).
func (b *builder) maskedFill(x, mask V, value V) V {
	return b.op("aten.masked_fill.Scalar", b.like(x.meta), x, mask, value)
}

// toDtype emits _to_copy(x, dtype=dtype).
func (b *builder) toDtype(x V, dtype string) V {
	var m *ir.TensorMeta
	if x.meta != nil {
		m = b.freshMeta(x.meta.Shape, dtype, x.meta.Device)
	}
	return b.op("aten._to_copy.default", m, x, kw{"dtype", dtypeArg(dtype)})
}

func (b *builder) pow(x V, e V) V {
	if isTensor(e) {
		return b.pointwise("aten.pow.Tensor_Tensor", []V{x, e})
	}
	return b.pointwise("aten.pow.Tensor_Scalar", []V{x, e})
}

// contiguous emits clone(memory_format=contiguous_format) unless x is known
// contiguous (Tensor.contiguous at the ATen level).
func (b *builder) contiguous(x V) V {
	if isContiguous(x.meta) {
		return x
	}
	return b.op("aten.clone.default", b.like(x.meta), x, kw{"memory_format", ir.Arg{Kind: ir.ArgMemoryFormat, S: "contiguous_format"}})
}
