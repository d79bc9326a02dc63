package jointgraph

import (
	"github.com/hopctl/hopctl/pkg/ir"
)

// Composite ops: CompositeImplicitAutograd overloads that autograd never
// sees (derivatives.yaml has no entry: their decomposition is
// differentiated). torch.export's training IR keeps them (aten.linear,
// aten.conv2d, aten.matmul, aten.batch_norm, ...), so joint needs their
// gradients. Each formula is the backward of the ops the overload
// decomposes into (torch/_decomp/decompositions.py and
// aten/src/ATen/native/*.cpp), written with the kernels the decomposed
// forms would use; where the decomposition saves a value the composite's
// outputs do not carry (batch norm's mean and invstd, max pooling's
// indices) the forward kernel is run again in the backward.

func compositeRules() []Rule {
	return []Rule{
		// linear(input, weight, bias) = input @ weightᵀ + bias, input of any
		// rank ≥ 1 (torch/_decomp: matmul(input, weight.t()) + bias).
		{Op: "aten.linear.default", Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			x, w, g := c.In("input"), c.In("weight"), c.Grad()
			var gx, gw, gb V
			if c.Need("input") || c.Need("weight") {
				x2, g2 := c.rows(x), c.rows(g)
				if c.Need("input") {
					gx = c.reshape(c.mm(g2, w), x.Shape())
				}
				if c.Need("weight") {
					gw = c.mm(c.t(g2), x2)
				}
			}
			if c.Need("bias") {
				gb = c.sumToSize(g, c.In("bias").Shape())
			}
			return []V{gx, gw, gb}
		})}},
		{Op: "aten.conv1d.default", Grads: []Grad{many("input, weight, bias", convNdBackward)}},
		{Op: "aten.conv2d.default", Grads: []Grad{many("input, weight, bias", convNdBackward)}},
		{Op: "aten.conv3d.default", Grads: []Grad{many("input, weight, bias", convNdBackward)}},
		// flatten.using_ints is a reshape (or the input itself).
		{Op: "aten.flatten.using_ints", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.reshape(c.Grad(), c.In("self").Shape())
		})}},
		{Op: "aten.matmul.default", Grads: []Grad{many("self, other", matmulBackward)}},
		// softmax.int / log_softmax.int are _softmax / _log_softmax of the
		// input cast to dtype (aten/src/ATen/native/SoftMax.cpp).
		{Op: "aten.softmax.int", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.softmaxBackward("aten._softmax_backward_data.default")
		})}},
		{Op: "aten.log_softmax.int", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.softmaxBackward("aten._log_softmax_backward_data.default")
		})}},
		// batch_norm → _batch_norm_impl_index → native_batch_norm: in
		// training the batch statistics are recomputed with
		// _native_batch_norm_legit.no_stats (which leaves the running stats
		// alone); in eval the running stats are the statistics.
		{Op: "aten.batch_norm.default", Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in := c.In("input")
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			outs := []*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}
			if !c.Bool("training") {
				return c.tupleOp("aten.native_batch_norm_backward.default", outs, mask,
					c.Grad(), in, c.In("weight"), c.In("running_mean"), c.In("running_var"),
					V{}, V{}, false, c.Float("eps"), mask)
			}
			stat := c.statMeta(in, []ir.Dim{in.Shape()[1]})
			saved := c.tupleOp("aten._native_batch_norm_legit.no_stats",
				[]*ir.TensorMeta{c.like(in.meta), stat, stat}, []bool{false, true, true},
				in, c.In("weight"), c.In("bias"), true, c.Float("momentum"), c.Float("eps"))
			return c.tupleOp("aten.native_batch_norm_backward.default", outs, mask,
				c.Grad(), in, c.In("weight"), V{}, V{}, saved[1], saved[2], true, c.Float("eps"), mask)
		})}},
		// layer_norm → native_layer_norm, whose mean and rstd are recomputed.
		{Op: "aten.layer_norm.default", Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in := c.In("input")
			ns := c.Arg("normalized_shape")
			shape := slicesClone(in.Shape())
			for i := len(shape) - len(c.Ints("normalized_shape")); i < len(shape); i++ {
				shape[i] = ir.Dim{Val: 1}
			}
			stat := c.statMeta(in, shape)
			saved := c.tupleOp("aten.native_layer_norm.default",
				[]*ir.TensorMeta{c.like(in.meta), stat, stat}, []bool{false, true, true},
				in, ns, c.In("weight"), c.In("bias"), c.Float("eps"))
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			return c.tupleOp("aten.native_layer_norm_backward.default",
				[]*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}, mask,
				c.Grad(), in, ns, saved[1], saved[2], c.In("weight"), c.In("bias"), mask)
		})}},
		// max_pool2d → max_pool2d_with_indices, whose indices are recomputed.
		{Op: "aten.max_pool2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			out := c.Out()
			var idx *ir.TensorMeta
			if out.meta != nil {
				idx = c.freshMeta(out.meta.Shape, "int64", out.meta.Device)
			}
			pool := c.tupleOp("aten.max_pool2d_with_indices.default",
				[]*ir.TensorMeta{c.like(out.meta), idx}, []bool{false, true},
				x, c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"), c.Bool("ceil_mode"))
			return c.op("aten.max_pool2d_with_indices_backward.default", c.like(x.meta), c.Grad(), x,
				c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"),
				c.Bool("ceil_mode"), pool[1])
		})}},
		// adaptive_avg_pool2d → _adaptive_avg_pool2d.
		{Op: "aten.adaptive_avg_pool2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten._adaptive_avg_pool2d_backward.default", c.like(x.meta), c.Grad(), x)
		})}},
	}
}

func slicesClone(d []ir.Dim) []ir.Dim { return append([]ir.Dim(nil), d...) }

// statMeta is the metadata of a normalization statistic of x: shape, x's
// dtype and device, contiguous.
func (c *Ctx) statMeta(x V, shape []ir.Dim) *ir.TensorMeta {
	if x.meta == nil {
		return nil
	}
	return c.freshMeta(shape, x.meta.Dtype, x.meta.Device)
}

// rows views x as a matrix of its last dimension: [prod(leading), last]
// (a vector becomes one row). The leading sizes must be concrete.
func (c *Ctx) rows(x V) V {
	s := x.Shape()
	switch len(s) {
	case 1:
		return c.unsqueeze(x, 0)
	case 2:
		return x
	}
	n, ok := numel(s[:len(s)-1])
	if !ok {
		return c.fail("linear over an input with symbolic leading sizes %v is not supported", s)
	}
	return c.reshape(x, []ir.Dim{{Val: n}, s[len(s)-1]})
}

// convNdBackward is the backward of conv1d/2d/3d: convolution_backward with
// transposed=false and no output padding, an unbatched input (rank of the
// weight minus one) given a batch of one as at::convolution does.
func convNdBackward(c *Ctx) []V {
	in, w, g := c.In("input"), c.In("weight"), c.Grad()
	unbatched := in.Rank() == w.Rank()-1
	if unbatched {
		in, g = c.unsqueeze(in, 0), c.unsqueeze(g, 0)
	}
	mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
	biasSizes, biasMeta := convBias(c)
	spatial := w.Rank() - 2
	grads := c.tupleOp("aten.convolution_backward.default",
		[]*ir.TensorMeta{c.like(in.meta), c.like(w.meta), biasMeta}, mask,
		g, in, w, biasSizes, c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"),
		false, make([]int64, spatial), c.Int("groups"), mask)
	if unbatched && grads[0].ok {
		grads[0] = c.squeezeDim(grads[0], 0)
	}
	return grads
}

// matmulBackward is the backward of matmul over its cases
// (aten/src/ATen/native/LinearAlgebra.cpp _matmul_impl): 1-D operands are
// made matrices (a row for self, a column for other), batch dimensions are
// broadcast, and each gradient is summed back to its operand's shape.
func matmulBackward(c *Ctx) []V {
	a, b, g := c.In("self"), c.In("other"), c.Grad()
	if a.Rank() == 1 && b.Rank() == 1 {
		return []V{c.needMul(c.Need("self"), b, g), c.needMul(c.Need("other"), a, g)}
	}
	A, B, G := a, b, g
	if a.Rank() == 1 {
		A, G = c.unsqueeze(a, 0), c.unsqueeze(G, -2)
	}
	if b.Rank() == 1 {
		B, G = c.unsqueeze(b, -1), c.unsqueeze(G, -1)
	}
	var ga, gb V
	if A.Rank() == 2 && B.Rank() == 2 {
		if c.Need("self") {
			ga = c.mm(G, c.t(B))
		}
		if c.Need("other") {
			gb = c.mm(c.t(A), G)
		}
	} else {
		ra, rb := A.Rank(), B.Rank()
		batch, ok := broadcastShapes(A.Shape()[:ra-2], B.Shape()[:rb-2])
		n, okN := numel(batch)
		if !ok || !okN {
			c.fail("matmul over symbolic or non-broadcastable batch sizes is not supported")
			return nil
		}
		as, bs := A.Shape()[ra-2:], B.Shape()[rb-2:]
		A3 := c.reshape(c.expand(A, append(slicesClone(batch), as...)), []ir.Dim{{Val: n}, as[0], as[1]})
		B3 := c.reshape(c.expand(B, append(slicesClone(batch), bs...)), []ir.Dim{{Val: n}, bs[0], bs[1]})
		G3 := c.reshape(G, []ir.Dim{{Val: n}, as[0], bs[1]})
		if c.Need("self") {
			full := c.reshape(c.bmm(G3, c.transpose(B3, 1, 2)), append(slicesClone(batch), as...))
			ga = c.sumToSize(full, A.Shape())
		}
		if c.Need("other") {
			full := c.reshape(c.bmm(c.transpose(A3, 1, 2), G3), append(slicesClone(batch), bs...))
			gb = c.sumToSize(full, B.Shape())
		}
	}
	if ga.ok {
		ga = c.reshape(ga, a.Shape())
	}
	if gb.ok {
		gb = c.reshape(gb, b.Shape())
	}
	return []V{ga, gb}
}

func (c *Ctx) needMul(need bool, x, y V) V {
	if !need {
		return V{}
	}
	return c.mul(x, y)
}

// softmaxBackward is target(grad, out, dim, dtype) for softmax.int and
// log_softmax.int; with a dtype argument the gradient is cast back to the
// input's dtype, as the _to_copy the composite inserts would be.
func (c *Ctx) softmaxBackward(target string) V {
	x, out := c.In("self"), c.Out()
	gi := c.op(target, c.like(out.meta), c.Grad(), out, c.Int("dim"), dtypeArg(out.meta.Dtype))
	if x.meta != nil && out.meta != nil && x.meta.Dtype != out.meta.Dtype {
		gi = c.toDtype(gi, x.meta.Dtype)
	}
	return gi
}
