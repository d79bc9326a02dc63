package jointgraph

import (
	"fmt"
	"math"
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// View ops and their scatter inverses. A view's gradient is the inverse
// view of the output gradient (reshape back, transpose back, scatter into
// zeros for select/slice); the *_scatter ops functionalization writes are
// differentiated as in derivatives.yaml.

func viewRules() []Rule {
	reshapeBack := func(c *Ctx) V { return c.reshape(c.Grad(), c.In("self").Shape()) }
	return []Rule{
		{Op: "aten.view.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten._unsafe_view.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten._reshape_alias.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.reshape.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.view_copy.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.squeeze.default", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.squeeze.dim", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.squeeze.dims", Grads: []Grad{one("self", reshapeBack)}},
		{Op: "aten.unsqueeze.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.squeezeDim(c.Grad(), c.dim(c.Int("dim"), c.In("self").Rank()+1))
		})}},
		{Op: "aten.t.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.t(c.Grad()) })}},
		{Op: "aten.transpose.int", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.transpose(c.Grad(), c.Int("dim0"), c.Int("dim1"))
		})}},
		{Op: "aten.permute.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.permute(c.Grad(), c.invertPerm(c.Ints("dims"), c.In("self").Rank()))
		})}},
		{Op: "aten.expand.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.sumToSize(c.Grad(), c.In("self").Shape())
		})}},
		{Op: "aten.expand_copy.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.sumToSize(c.Grad(), c.In("self").Shape())
		})}},
		{Op: "aten.select.int", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.select_backward.default", c.like(x.meta), c.Grad(), x.Shape(), c.Int("dim"), c.Int("index"))
		})}},
		{Op: "aten.slice.Tensor", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			start, end := sliceBounds(c)
			return c.op("aten.slice_backward.default", c.like(x.meta), c.Grad(), x.Shape(), c.Int("dim"), start, end, c.Int("step"))
		})}},
		{Op: "aten.narrow.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			s := c.Int("start")
			return c.op("aten.slice_backward.default", c.like(x.meta), c.Grad(), x.Shape(), c.Int("dim"), s, s+c.Int("length"), 1)
		})}},
		{Op: "aten.diagonal.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.diagonal_backward.default", c.like(x.meta), c.Grad(), x.Shape(), c.Int("offset"), c.Int("dim1"), c.Int("dim2"))
		})}},
		{Op: "aten.unfold.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.unfold_backward.default", c.like(x.meta), c.Grad(), x.Shape(), c.Int("dimension"), c.Int("size"), c.Int("step"))
		})}},
		{Op: "aten.as_strided.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			if !isContiguous(x.meta) || x.meta.StorageOffset.Expr != "" || x.meta.StorageOffset.Val != 0 {
				return c.fail("as_strided of a tensor that is not contiguous at storage offset 0")
			}
			size, stride := c.Dims("size"), c.Dims("stride")
			if overlapping(size, stride) {
				return c.fail("as_strided view with overlapping elements")
			}
			return c.op("aten.as_strided_scatter.default", c.like(x.meta), c.zerosLike(x), c.Grad(), size, stride, c.Arg("storage_offset"))
		})}},
		{Op: "aten.split.Tensor", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		{Op: "aten.split_with_sizes.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		// derivatives.yaml: unsafe_split / unsafe_split_with_sizes / unsafe_chunk
		// have split's backward (split_backward / split_with_sizes_backward,
		// chunk's pieces are split_size = ceil(n / chunks)).
		{Op: "aten.unsafe_split.Tensor", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		{Op: "aten.unsafe_split_with_sizes.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		{Op: "aten.unsafe_chunk.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		{Op: "aten.chunk.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.catGrads() })}},
		{Op: "aten.unbind.int", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			gs := make([]V, len(c.results))
			for i := range gs {
				gs[i] = c.GradOrZeros(i)
			}
			return c.op("aten.stack.default", c.like(x.meta), gs, c.Int("dim"))
		})}},
		{Op: "aten.slice_scatter.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				start, end := sliceBounds(c)
				return c.op("aten.slice_scatter.default", c.like(c.Grad().meta), c.Grad(), c.zerosLike(c.In("src")), c.Int("dim"), start, end, c.Int("step"))
			}),
			one("src", func(c *Ctx) V {
				start, end := sliceBounds(c)
				return c.slice(c.Grad(), c.Int("dim"), start, end, c.Int("step"))
			}),
		}},
		{Op: "aten.select_scatter.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				return c.op("aten.select_scatter.default", c.like(c.Grad().meta), c.Grad(), c.zerosLike(c.In("src")), c.Int("dim"), c.Int("index"))
			}),
			one("src", func(c *Ctx) V { return c.selectInt(c.Grad(), c.Int("dim"), c.Int("index")) }),
		}},
		{Op: "aten.diagonal_scatter.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				return c.op("aten.diagonal_scatter.default", c.like(c.Grad().meta), c.Grad(), c.zerosLike(c.In("src")), c.Int("offset"), c.Int("dim1"), c.Int("dim2"))
			}),
			one("src", func(c *Ctx) V {
				return c.op("aten.diagonal.default", c.like(c.In("src").meta), c.Grad(), c.Int("offset"), c.Int("dim1"), c.Int("dim2"))
			}),
		}},
		{Op: "aten.as_strided_scatter.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				return c.op("aten.as_strided_scatter.default", c.like(c.Grad().meta), c.Grad(), c.zerosLike(c.In("src")), c.Arg("size"), c.Arg("stride"), c.Arg("storage_offset"))
			}),
			one("src", func(c *Ctx) V {
				return c.op("aten.as_strided.default", c.like(c.In("src").meta), c.Grad(), c.Arg("size"), c.Arg("stride"), c.Arg("storage_offset"))
			}),
		}},
		{Op: "aten.slice_backward.default", Grads: []Grad{one("grad_output", func(c *Ctx) V {
			return c.slice(c.Grad(), c.Int("dim"), c.Int("start"), c.Int("end"), c.Int("step"))
		})}},
		{Op: "aten.select_backward.default", Grads: []Grad{one("grad_output", func(c *Ctx) V {
			return c.selectInt(c.Grad(), c.Int("dim"), c.Int("index"))
		})}},
	}
}

// invertPerm inverts a permutation of rank dims; a dim out of range, or a
// permutation of another length, is recorded in b.bad (builder.dim).
func (b *builder) invertPerm(perm []int64, rank int) []int64 {
	inv := make([]int64, len(perm))
	for i, p := range perm {
		if d, ok := b.dim(p, len(perm)); ok {
			inv[d] = int64(i)
		}
	}
	if len(perm) != rank && b.bad == "" {
		b.bad = fmt.Sprintf("permutation of %d dims for a tensor of rank %d: the recorded values of the node and its inputs disagree", len(perm), rank)
	}
	return inv
}

// sliceBounds returns slice's start and end with None as 0 and INT64_MAX.
func sliceBounds(c *Ctx) (int64, int64) {
	return c.IntOr("start", 0), c.IntOr("end", math.MaxInt64)
}

// catGrads is split's backward: the outputs' gradients (zeros for missing
// ones) concatenated along dim.
func (c *Ctx) catGrads() V {
	x := c.In("self")
	gs := make([]V, len(c.results))
	for i := range gs {
		gs[i] = c.GradOrZeros(i)
	}
	return c.op("aten.cat.default", c.like(x.meta), gs, c.Int("dim"))
}

// sliceLen returns the length of x[start:end:step] along a dim of size n.
func sliceLen(n, start, end, step int64) int64 {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = min(max(start, 0), n)
	end = min(max(end, start), n)
	if step <= 0 {
		step = 1
	}
	return (end - start + step - 1) / step
}

func (b *builder) slice(x V, dim, start, end, step int64) V {
	var m *ir.TensorMeta
	if d, ok := b.dimOf(x, dim, 0); ok {
		shape := slices.Clone(x.Shape())
		if shape[d].Expr == "" {
			shape[d] = ir.Dim{Val: sliceLen(shape[d].Val, start, end, step)}
		}
		m = b.withShape(x.meta, shape)
	}
	return b.op("aten.slice.Tensor", m, x, dim, start, end, step)
}

func (b *builder) selectInt(x V, dim, index int64) V {
	var m *ir.TensorMeta
	if d, ok := b.dimOf(x, dim, 0); ok {
		m = b.withShape(x.meta, slices.Delete(slices.Clone(x.Shape()), int(d), int(d)+1))
	}
	return b.op("aten.select.int", m, x, dim, index)
}

// overlapping reports whether an as_strided view may address one element
// twice: with dims sorted by stride, each stride must exceed the extent of
// the dims below it. Symbolic sizes count as overlapping.
func overlapping(size, stride []ir.Dim) bool {
	type ds struct{ size, stride int64 }
	var v []ds
	for i := range size {
		if size[i].Expr != "" || stride[i].Expr != "" {
			return true
		}
		if size[i].Val > 1 {
			v = append(v, ds{size[i].Val, stride[i].Val})
		}
	}
	slices.SortFunc(v, func(a, b ds) int { return int(a.stride - b.stride) })
	extent := int64(1)
	for _, d := range v {
		if d.stride < extent {
			return true
		}
		extent += (d.size - 1) * d.stride
	}
	return false
}
