package opschema

// viewOrCopy lists the ops whose schema ties the return to self (Tensor(a)
// self -> Tensor(a)) although the op returns a copy whenever the input's
// layout does not allow a view: reshape (and reshape_as, flatten, which call
// it) returns self.view(shape) when ATen's computeStride finds strides for
// the new shape (aten/src/ATen/native/TensorShape.cpp reshape_symint →
// _reshape_copy / view; computeStride in aten/src/ATen/TensorUtils.cpp),
// else a contiguous copy; contiguous returns self when it is already
// contiguous, else a copy. The recorded metadata of a traced call says
// which: torch's own checks run the op on fake tensors with that layout, and
// AOTAutograd's collect_metadata_analysis.py sees a non_alias output for
// x.t().reshape(-1).
var viewOrCopy = map[string]ViewOrCopyKind{
	"aten::reshape.":           ReshapeLike,
	"aten::reshape_as.":        ReshapeLike,
	"aten::flatten.using_ints": ReshapeLike,
	"aten::contiguous.":        ContiguousLike,
}

// ViewOrCopyKind says how an op that may return a view or a copy decides.
type ViewOrCopyKind int

const (
	// AlwaysAsSchema: the schema's alias annotation is the answer.
	AlwaysAsSchema ViewOrCopyKind = iota
	// ReshapeLike: a view iff computeStride finds strides for the new shape.
	ReshapeLike
	// ContiguousLike: self iff self is contiguous (the default memory format).
	ContiguousLike
)

// ViewOrCopy returns how s decides between returning a view of self and a
// copy (viewOrCopy), AlwaysAsSchema for every other op.
func ViewOrCopy(s *Schema) ViewOrCopyKind {
	if s == nil {
		return AlwaysAsSchema
	}
	return viewOrCopy[s.QualifiedName()+"."+s.Overload]
}

// IsView reports whether an op of kind k, given a tensor of shape and
// stride, returns a view of it with shape newShape; false means a copy.
// Sizes are concrete: a caller with symbolic sizes keeps the schema's
// answer.
func (k ViewOrCopyKind) IsView(shape, stride, newShape []int64) bool {
	switch k {
	case ReshapeLike:
		return computeStride(shape, stride, newShape)
	case ContiguousLike:
		return isContiguous(shape, stride)
	}
	return true
}

// computeStride reports whether a tensor of shape and stride can be viewed
// as newShape: ATen's computeStride_impl (aten/src/ATen/TensorUtils.cpp),
// which returns nullopt exactly where this returns false.
func computeStride(shape, stride, newShape []int64) bool {
	if len(shape) == 0 || len(shape) != len(stride) {
		return len(shape) == len(stride)
	}
	numel := int64(1)
	for _, d := range shape {
		numel *= d
	}
	if numel == 0 {
		return true // an empty tensor views as any shape of no elements
	}
	viewD := len(newShape) - 1
	chunkBaseStride := stride[len(stride)-1]
	tensorNumel, viewNumel := int64(1), int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		tensorNumel *= shape[d]
		// A chunk ends where the next outer dimension is not contiguous
		// with it (size-1 dimensions never break one).
		if d == 0 || (shape[d-1] != 1 && stride[d-1] != tensorNumel*chunkBaseStride) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return false
			}
			if d > 0 {
				chunkBaseStride = stride[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	return viewD == -1
}

// isContiguous is TensorImpl's is_contiguous for the default memory
// format: strides of a row-major layout, size-1 dimensions ignored.
func isContiguous(shape, stride []int64) bool {
	if len(shape) != len(stride) {
		return false
	}
	expected := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] == 0 {
			return true
		}
		if shape[d] != 1 {
			if stride[d] != expected {
				return false
			}
			expected *= shape[d]
		}
	}
	return true
}
