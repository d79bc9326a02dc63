package jointgraph

import (
	"github.com/hopctl/hopctl/pkg/ir"
)

// Neural-network ops whose backward is a dedicated ATen kernel:
// convolution, the normalizations, softmax, pooling, embedding, padding,
// losses. Multi-input formulas pass grad_input_mask as output_mask so the
// kernel computes only the gradients that are needed.

func nnRules() []Rule {
	firstOnly3 := []bool{true, false, false}
	firstOnly2 := []bool{true, false}
	return []Rule{
		{Op: "aten.convolution.default", Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in, w := c.In("input"), c.In("weight")
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			biasSizes, biasMeta := convBias(c)
			return c.tupleOp("aten.convolution_backward.default",
				[]*ir.TensorMeta{c.like(in.meta), c.like(w.meta), biasMeta}, mask,
				c.Grad(), in, w, biasSizes, c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"),
				c.Bool("transposed"), c.Ints("output_padding"), c.Int("groups"), mask)
		})}},
		{Op: "aten.native_batch_norm.default", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in := c.In("input")
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			return c.tupleOp("aten.native_batch_norm_backward.default",
				[]*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}, mask,
				c.Grad(), in, c.In("weight"), c.In("running_mean"), c.In("running_var"),
				c.Result(1), c.Result(2), c.Bool("training"), c.Float("eps"), mask)
		})}},
		// torch 2.x's make_fx traces batch norm as _native_batch_norm_legit
		// (training, or no_stats) and _native_batch_norm_legit_no_training
		// (eval); derivatives.yaml gives all three native_batch_norm_backward.
		{Op: "aten._native_batch_norm_legit.default", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			return batchNormLegitBackward(c, c.In("running_mean"), c.In("running_var"), c.Bool("training"))
		})}},
		{Op: "aten._native_batch_norm_legit.no_stats", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			return batchNormLegitBackward(c, V{}, V{}, c.Bool("training"))
		})}},
		// _native_batch_norm_legit_functional is what functionalization
		// (run_decompositions) turns _native_batch_norm_legit into: the
		// running stats are returned updated instead of written in place.
		{Op: "aten._native_batch_norm_legit_functional.default", Outputs: []bool{true, false, false, false, false}, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			return batchNormLegitBackward(c, c.In("running_mean"), c.In("running_var"), c.Bool("training"))
		})}},
		{Op: "aten._native_batch_norm_legit_no_training.default", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			return batchNormLegitBackward(c, c.In("running_mean"), c.In("running_var"), false)
		})}},
		{Op: "aten.native_layer_norm.default", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in := c.In("input")
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			return c.tupleOp("aten.native_layer_norm_backward.default",
				[]*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}, mask,
				c.Grad(), in, c.Arg("normalized_shape"), c.Result(1), c.Result(2),
				c.In("weight"), c.In("bias"), mask)
		})}},
		{Op: "aten.native_group_norm.default", Outputs: firstOnly3, Grads: []Grad{many("input, weight, bias", func(c *Ctx) []V {
			in := c.In("input")
			mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
			// derivatives.yaml passes grad.contiguous(), input.contiguous():
			// the CPU kernel reads them as dense.
			return c.tupleOp("aten.native_group_norm_backward.default",
				[]*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}, mask,
				c.contiguous(c.Grad()), c.contiguous(in), c.Result(1), c.Result(2), c.In("weight"),
				c.Arg("N"), c.Arg("C"), c.Arg("HxW"), c.Int("group"), mask)
		})}},
		{Op: "aten._softmax.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten._softmax_backward_data.default", c.like(c.Out().meta), c.Grad(), c.Out(),
				c.Int("dim"), dtypeArg(c.In("self").meta.Dtype))
		})}},
		{Op: "aten._log_softmax.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten._log_softmax_backward_data.default", c.like(c.Out().meta), c.Grad(), c.Out(),
				c.Int("dim"), dtypeArg(c.In("self").meta.Dtype))
		})}},
		{Op: "aten.embedding.default", Grads: []Grad{one("weight", func(c *Ctx) V {
			if c.Bool("sparse") {
				return c.fail("sparse embedding gradients are not supported")
			}
			w := c.In("weight")
			return c.op("aten.embedding_dense_backward.default", c.like(w.meta), c.Grad(), c.In("indices"),
				w.Shape()[0], c.Int("padding_idx"), c.Bool("scale_grad_by_freq"))
		})}},
		{Op: "aten.max_pool2d_with_indices.default", Outputs: firstOnly2, Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.max_pool2d_with_indices_backward.default", c.like(x.meta), c.Grad(), x,
				c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"),
				c.Bool("ceil_mode"), c.Result(1))
		})}},
		{Op: "aten.max_pool3d_with_indices.default", Outputs: firstOnly2, Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.max_pool3d_with_indices_backward.default", c.like(x.meta), c.Grad(), x,
				c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Ints("dilation"),
				c.Bool("ceil_mode"), c.Result(1))
		})}},
		{Op: "aten.avg_pool2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.avg_pool2d_backward.default", c.like(x.meta), c.Grad(), x,
				c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Bool("ceil_mode"),
				c.Bool("count_include_pad"), c.Arg("divisor_override"))
		})}},
		{Op: "aten.avg_pool3d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.avg_pool3d_backward.default", c.like(x.meta), c.Grad(), x,
				c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding"), c.Bool("ceil_mode"),
				c.Bool("count_include_pad"), c.Arg("divisor_override"))
		})}},
		{Op: "aten._adaptive_avg_pool2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten._adaptive_avg_pool2d_backward.default", c.like(x.meta), c.Grad(), x)
		})}},
		{Op: "aten._adaptive_avg_pool3d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten._adaptive_avg_pool3d_backward.default", c.like(x.meta), c.Grad(), x)
		})}},
		{Op: "aten.adaptive_max_pool2d.default", Outputs: firstOnly2, Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.adaptive_max_pool2d_backward.default", c.like(x.meta), c.Grad(), x, c.Result(1))
		})}},
		{Op: "aten.upsample_nearest2d.vec", Grads: []Grad{one("input", func(c *Ctx) V {
			x := c.In("input")
			return c.op("aten.upsample_nearest2d_backward.vec", c.like(x.meta), c.Grad(), c.Arg("output_size"),
				x.Shape(), c.Arg("scale_factors"))
		})}},
		// torch 2.x's make_fx decomposes F.interpolate to the overloads with
		// explicit scales (1.13 traced the .vec ones).
		{Op: "aten.upsample_nearest2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.upsample_nearest2d_backward.default", c.like(x.meta), c.Grad(), c.Arg("output_size"),
				x.Shape(), c.Arg("scales_h"), c.Arg("scales_w"))
		})}},
		{Op: "aten.upsample_bilinear2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.upsample_bilinear2d_backward.default", c.like(x.meta), c.Grad(), c.Arg("output_size"),
				x.Shape(), c.Bool("align_corners"), c.Arg("scales_h"), c.Arg("scales_w"))
		})}},
		{Op: "aten.upsample_bilinear2d.vec", Grads: []Grad{one("input", func(c *Ctx) V {
			x := c.In("input")
			return c.op("aten.upsample_bilinear2d_backward.vec", c.like(x.meta), c.Grad(), c.Arg("output_size"),
				x.Shape(), c.Bool("align_corners"), c.Arg("scale_factors"))
		})}},
		{Op: "aten.constant_pad_nd.default", Grads: []Grad{one("self", func(c *Ctx) V {
			pad := c.Ints("pad")
			neg := make([]int64, len(pad))
			for i, p := range pad {
				neg[i] = -p
			}
			return c.op("aten.constant_pad_nd.default", c.like(c.In("self").meta), c.Grad(), neg, 0)
		})}},
		{Op: "aten.reflection_pad1d.default", Grads: []Grad{one("self", padBackward("aten.reflection_pad1d_backward.default"))}},
		{Op: "aten.reflection_pad3d.default", Grads: []Grad{one("self", padBackward("aten.reflection_pad3d_backward.default"))}},
		{Op: "aten.replication_pad1d.default", Grads: []Grad{one("self", padBackward("aten.replication_pad1d_backward.default"))}},
		{Op: "aten.replication_pad3d.default", Grads: []Grad{one("self", padBackward("aten.replication_pad3d_backward.default"))}},
		{Op: "aten.avg_pool1d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			// avg_pool1d is avg_pool2d over an unsqueezed height of 1.
			x := c.In("self")
			k, st, pd := c.Ints("kernel_size"), c.Ints("stride"), c.Ints("padding")
			st2 := []int64{}
			if len(st) > 0 {
				st2 = []int64{1, st[0]}
			}
			x4 := c.unsqueeze(x, -2)
			g4 := c.unsqueeze(c.Grad(), -2)
			gi := c.op("aten.avg_pool2d_backward.default", c.like(x4.meta), g4, x4, []int64{1, k[0]}, st2,
				[]int64{0, pd[0]}, c.Bool("ceil_mode"), c.Bool("count_include_pad"), nil)
			return c.squeezeDim(gi, -2)
		})}},
		{Op: "aten.adaptive_avg_pool1d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x4 := c.unsqueeze(c.In("self"), -2)
			gi := c.op("aten._adaptive_avg_pool2d_backward.default", c.like(x4.meta), c.unsqueeze(c.Grad(), -2), x4)
			return c.squeezeDim(gi, -2)
		})}},
		{Op: "aten.col2im.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.im2col.default", c.like(c.In("self").meta), c.Grad(), c.Ints("kernel_size"),
				c.Ints("dilation"), c.Ints("padding"), c.Ints("stride"))
		})}},
		{Op: "aten.grid_sampler_2d.default", Grads: []Grad{many("input, grid", func(c *Ctx) []V {
			in, gr := c.In("input"), c.In("grid")
			mask := []bool{c.Need("input"), c.Need("grid")}
			return c.tupleOp("aten.grid_sampler_2d_backward.default", []*ir.TensorMeta{c.like(in.meta), c.like(gr.meta)}, mask,
				c.Grad(), in, gr, c.Int("interpolation_mode"), c.Int("padding_mode"), c.Bool("align_corners"), mask)
		})}},
		{Op: "aten.reflection_pad2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.reflection_pad2d_backward.default", c.like(x.meta), c.Grad(), x, c.Ints("padding"))
		})}},
		{Op: "aten.replication_pad2d.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.replication_pad2d_backward.default", c.like(x.meta), c.Grad(), x, c.Ints("padding"))
		})}},
		{Op: "aten.nll_loss_forward.default", Outputs: firstOnly2, Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.nll_loss_backward.default", c.like(x.meta), c.Grad(), x, c.In("target"),
				c.In("weight"), c.Int("reduction"), c.Int("ignore_index"), c.Result(1))
		})}},
		{Op: "aten.mse_loss.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				x := c.In("self")
				return c.op("aten.mse_loss_backward.default", c.like(x.meta), c.Grad(), x, c.In("target"), c.Int("reduction"))
			}),
			one("target", func(c *Ctx) V {
				t := c.In("target")
				return c.op("aten.mse_loss_backward.default", c.like(t.meta), c.Grad(), t, c.In("self"), c.Int("reduction"))
			}),
		}},
		{Op: "aten.binary_cross_entropy.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.op("aten.binary_cross_entropy_backward.default", c.like(x.meta), c.Grad(), x, c.In("target"),
				c.In("weight"), c.Int("reduction"))
		})}},
	}
}

// optMeta is the metadata of an optional tensor argument's gradient.
func optMeta(c *Ctx, name string) *ir.TensorMeta {
	if !c.Has(name) {
		return nil
	}
	return c.like(c.In(name).meta)
}

func padBackward(target string) func(c *Ctx) V {
	return func(c *Ctx) V {
		x := c.In("self")
		return c.op(target, c.like(x.meta), c.Grad(), x, c.Ints("padding"))
	}
}

// batchNormLegitBackward is the backward of the _native_batch_norm_legit
// family: native_batch_norm_backward with the running stats given (None for
// no_stats) and the saved mean and invstd the forward returned.
func batchNormLegitBackward(c *Ctx, runningMean, runningVar V, training bool) []V {
	in := c.In("input")
	mask := []bool{c.Need("input"), c.Need("weight"), c.Need("bias")}
	return c.tupleOp("aten.native_batch_norm_backward.default",
		[]*ir.TensorMeta{c.like(in.meta), optMeta(c, "weight"), optMeta(c, "bias")}, mask,
		c.Grad(), in, c.In("weight"), runningMean, runningVar,
		c.Result(1), c.Result(2), training, c.Float("eps"), mask)
}

// convBias is convolution_backward's bias_sizes argument and the bias
// gradient's metadata: the bias's shape and metadata, or None and nil.
func convBias(c *Ctx) (any, *ir.TensorMeta) {
	if !c.Has("bias") {
		return nil, nil
	}
	b := c.In("bias")
	return b.Shape(), c.like(b.meta)
}
