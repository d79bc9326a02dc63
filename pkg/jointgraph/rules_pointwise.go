package jointgraph

import (
	"math"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Pointwise (elementwise) ops. Formulas follow derivatives.yaml; the walk
// reduces each gradient to its input's shape (sum_to_size) afterwards, as
// the autograd engine does for broadcast inputs.

func pointwiseRules() []Rule {
	g := func(c *Ctx) V { return c.Grad() }
	negGrad := func(c *Ctx) V { return c.neg(c.Grad()) }
	// alphaTimes returns grad * alpha, or grad when alpha is 1.
	alphaTimes := func(c *Ctx, x V) V {
		if a := c.Arg("alpha"); !(a.Kind == ir.ArgNone || isOneScalar(a)) {
			return c.mul(x, constV(a))
		}
		return x
	}
	return []Rule{
		{Op: "aten.add.Tensor", Grads: []Grad{
			one("self", g),
			one("other", func(c *Ctx) V { return alphaTimes(c, c.Grad()) }),
		}},
		{Op: "aten.add.Scalar", Grads: []Grad{one("self", g)}},
		{Op: "aten.sub.Tensor", Grads: []Grad{
			one("self", g),
			one("other", func(c *Ctx) V { return alphaTimes(c, c.neg(c.Grad())) }),
		}},
		{Op: "aten.sub.Scalar", Grads: []Grad{one("self", g)}},
		{Op: "aten.rsub.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return alphaTimes(c, c.neg(c.Grad())) }),
			one("other", g),
		}},
		{Op: "aten.rsub.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return alphaTimes(c, c.neg(c.Grad())) }),
		}},
		{Op: "aten.mul.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mul(c.Grad(), c.In("other")) }),
			one("other", func(c *Ctx) V { return c.mul(c.Grad(), c.In("self")) }),
		}},
		{Op: "aten.mul.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mul(c.Grad(), c.In("other")) }),
		}},
		{Op: "aten.div.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.div(c.Grad(), c.In("other")) }),
			one("other", func(c *Ctx) V {
				// -grad * self / (other * other)
				o := c.In("other")
				return c.div(c.mul(c.neg(c.Grad()), c.In("self")), c.mul(o, o))
			}),
		}},
		{Op: "aten.div.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.div(c.Grad(), c.In("other")) }),
		}},
		{Op: "aten.div.Tensor_mode", Grads: []Grad{
			one("self", func(c *Ctx) V {
				if c.Has("rounding_mode") {
					return c.zerosLike(c.Grad())
				}
				return c.div(c.Grad(), c.In("other"))
			}),
			one("other", func(c *Ctx) V {
				if c.Has("rounding_mode") {
					return c.zerosLike(c.Grad())
				}
				o := c.In("other")
				return c.div(c.mul(c.neg(c.Grad()), c.In("self")), c.mul(o, o))
			}),
		}},
		{Op: "aten.neg.default", Grads: []Grad{one("self", negGrad)}},
		{Op: "aten.clone.default", Grads: []Grad{one("self", g)}},
		{Op: "aten.alias.default", Grads: []Grad{one("self", g)}},
		{Op: "aten.lift_fresh_copy.default", Grads: []Grad{one("self", g)}},
		{Op: "aten.positive.default", Grads: []Grad{one("self", g)}},
		{Op: "aten._to_copy.default", Grads: []Grad{one("self", g)}}, // the walk casts back to self's dtype
		{Op: "aten.copy.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.zerosLike(c.In("self")) }),
			one("src", g),
		}},
		{Op: "aten.fill.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.zerosLike(c.In("self")) }),
		}},
		{Op: "aten.fill.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.zerosLike(c.In("self")) }),
			one("value", func(c *Ctx) V { return c.sumAll(c.Grad()) }),
		}},
		{Op: "aten.zero.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.zerosLike(c.In("self")) }),
		}},
		{Op: "aten.exp.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.mul(c.Grad(), c.Out()) })}},
		{Op: "aten.exp2.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.mul(c.Out(), scalarF(math.Ln2)))
		})}},
		{Op: "aten.expm1.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.add(c.Out(), scalarI(1)))
		})}},
		{Op: "aten.log.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.div(c.Grad(), c.In("self")) })}},
		{Op: "aten.log2.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.div(c.Grad(), c.mul(c.In("self"), scalarF(math.Ln2)))
		})}},
		{Op: "aten.log10.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.div(c.Grad(), c.mul(c.In("self"), scalarF(math.Ln10)))
		})}},
		{Op: "aten.log1p.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.div(c.Grad(), c.add(c.In("self"), scalarI(1)))
		})}},
		{Op: "aten.sin.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.unary("aten.cos.default", c.In("self")))
		})}},
		{Op: "aten.cos.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.neg(c.unary("aten.sin.default", c.In("self"))))
		})}},
		{Op: "aten.tan.default", Grads: []Grad{one("self", func(c *Ctx) V {
			r := c.Out()
			return c.mul(c.Grad(), c.add(c.mul(r, r), scalarI(1)))
		})}},
		{Op: "aten.sinh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.unary("aten.cosh.default", c.In("self")))
		})}},
		{Op: "aten.cosh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.unary("aten.sinh.default", c.In("self")))
		})}},
		{Op: "aten.asin.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.mul(c.Grad(), c.unary("aten.rsqrt.default", c.rsubOne(c.mul(x, x))))
		})}},
		{Op: "aten.acos.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.mul(c.Grad(), c.neg(c.unary("aten.rsqrt.default", c.rsubOne(c.mul(x, x)))))
		})}},
		{Op: "aten.atan.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.div(c.Grad(), c.add(c.mul(x, x), scalarI(1)))
		})}},
		{Op: "aten.asinh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.mul(c.Grad(), c.unary("aten.rsqrt.default", c.add(c.mul(x, x), scalarI(1))))
		})}},
		{Op: "aten.acosh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.mul(c.Grad(), c.unary("aten.rsqrt.default", c.sub(c.mul(x, x), scalarI(1))))
		})}},
		{Op: "aten.atanh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			return c.div(c.Grad(), c.rsubOne(c.mul(x, x)))
		})}},
		{Op: "aten.tanh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.tanh_backward.default", c.like(c.Out().meta), c.Grad(), c.Out())
		})}},
		{Op: "aten.sigmoid.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.sigmoid_backward.default", c.like(c.Out().meta), c.Grad(), c.Out())
		})}},
		{Op: "aten.sqrt.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.div(c.Grad(), c.mul(c.Out(), scalarI(2)))
		})}},
		{Op: "aten.rsqrt.default", Grads: []Grad{one("self", func(c *Ctx) V {
			// -0.5 * grad * result^3
			return c.mul(c.Grad(), c.mul(c.pow(c.Out(), scalarI(3)), scalarF(-0.5)))
		})}},
		{Op: "aten.reciprocal.default", Grads: []Grad{one("self", func(c *Ctx) V {
			r := c.Out()
			return c.mul(c.neg(c.Grad()), c.mul(r, r))
		})}},
		{Op: "aten.abs.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.mul(c.Grad(), c.unary("aten.sign.default", c.In("self")))
		})}},
		{Op: "aten.erf.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			e := c.unary("aten.exp.default", c.neg(c.mul(x, x)))
			return c.mul(c.Grad(), c.mul(e, scalarF(2/math.Sqrt(math.Pi))))
		})}},
		{Op: "aten.frac.default", Grads: []Grad{one("self", g)}},
		{Op: "aten.pow.Tensor_Scalar", Grads: []Grad{one("self", func(c *Ctx) V {
			e := c.Arg("exponent")
			if isZeroScalar(e) {
				return c.zerosLike(c.In("self"))
			}
			// grad * exponent * self^(exponent-1)
			em1 := constMinusOne(e)
			return c.mul(c.Grad(), c.mul(c.pow(c.In("self"), constV(em1)), constV(e)))
		})}},
		{Op: "aten.pow.Tensor_Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V {
				e := c.In("exponent")
				return c.mul(c.Grad(), c.mul(c.pow(c.In("self"), c.sub(e, scalarI(1))), e))
			}),
			one("exponent", func(c *Ctx) V {
				// where(self == 0 & exponent >= 0, 0, grad * result * log(self))
				x, e := c.In("self"), c.In("exponent")
				v := c.mul(c.Grad(), c.mul(c.Out(), c.unary("aten.log.default", x)))
				cond := c.logical("and", c.cmp("eq", x, scalarI(0)), c.cmp("ge", e, scalarI(0)))
				return c.where(cond, scalarI(0), v)
			}),
		}},
		{Op: "aten.pow.Scalar", Grads: []Grad{one("exponent", func(c *Ctx) V {
			base := c.Arg("self")
			b := base.Float()
			if base.Kind != ir.ArgFloat {
				b = float64(base.Int())
			}
			if b == 0 {
				return c.zerosLike(c.In("exponent"))
			}
			return c.mul(c.Grad(), c.mul(c.Out(), scalarF(math.Log(b))))
		})}},
		{Op: "aten.relu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.threshold_backward.default", c.like(c.Out().meta), c.Grad(), c.Out(), 0)
		})}},
		{Op: "aten.threshold.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.threshold_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"), c.Arg("threshold"))
		})}},
		{Op: "aten.gelu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.gelu_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"), geluApprox(c))
		})}},
		{Op: "aten.silu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.silu_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"))
		})}},
		{Op: "aten.mish.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.mish_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"))
		})}},
		{Op: "aten.hardsigmoid.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.hardsigmoid_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"))
		})}},
		{Op: "aten.hardswish.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.hardswish_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"))
		})}},
		{Op: "aten.elu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.elu_backward.default", c.like(c.Out().meta), c.Grad(), c.Arg("alpha"), c.Arg("scale"),
				c.Arg("input_scale"), false, c.In("self"))
		})}},
		{Op: "aten.leaky_relu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.leaky_relu_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"),
				c.Arg("negative_slope"), false)
		})}},
		{Op: "aten.hardtanh.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.hardtanh_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"),
				c.Arg("min_val"), c.Arg("max_val"))
		})}},
		{Op: "aten.softplus.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.softplus_backward.default", c.like(c.Out().meta), c.Grad(), c.In("self"),
				c.Arg("beta"), c.Arg("threshold"))
		})}},
		{Op: "aten.clamp.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.where(clampMask(c), c.Grad(), scalarI(0))
		})}},
		{Op: "aten.clamp_min.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.where(c.cmp("ge", c.In("self"), c.In("min")), c.Grad(), scalarI(0))
		})}},
		{Op: "aten.clamp_max.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.where(c.cmp("le", c.In("self"), c.In("max")), c.Grad(), scalarI(0))
		})}},
		{Op: "aten.maximum.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.maxMinGrad("lt") }),
			one("other", func(c *Ctx) V { return c.maxMinGrad("gt") }),
		}},
		{Op: "aten.minimum.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.maxMinGrad("gt") }),
			one("other", func(c *Ctx) V { return c.maxMinGrad("lt") }),
		}},
		{Op: "aten.where.self", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.where(c.In("condition"), c.Grad(), scalarI(0)) }),
			one("other", func(c *Ctx) V { return c.where(c.In("condition"), scalarI(0), c.Grad()) }),
		}},
		{Op: "aten.where.ScalarOther", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.where(c.In("condition"), c.Grad(), scalarI(0)) }),
		}},
		{Op: "aten.where.ScalarSelf", Grads: []Grad{
			one("other", func(c *Ctx) V { return c.where(c.In("condition"), scalarI(0), c.Grad()) }),
		}},
		{Op: "aten.masked_fill.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.maskedFill(c.Grad(), c.In("mask"), scalarI(0)) }),
		}},
		{Op: "aten.masked_fill.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.maskedFill(c.Grad(), c.In("mask"), scalarI(0)) }),
			one("value", func(c *Ctx) V {
				return c.sumAll(c.where(c.In("mask"), c.Grad(), scalarI(0)))
			}),
		}},
		{Op: "aten.lerp.Scalar", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mul(c.Grad(), c.rsubOne(c.In("weight"))) }),
			one("end", func(c *Ctx) V { return c.mul(c.Grad(), c.In("weight")) }),
		}},
		{Op: "aten.lerp.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mul(c.Grad(), c.rsubOne(c.In("weight"))) }),
			one("end", func(c *Ctx) V { return c.mul(c.Grad(), c.In("weight")) }),
			one("weight", func(c *Ctx) V { return c.mul(c.Grad(), c.sub(c.In("end"), c.In("self"))) }),
		}},
		{Op: "aten.addcmul.default", Grads: []Grad{
			one("self", g),
			one("tensor1", func(c *Ctx) V { return c.mul(c.mul(c.Grad(), c.In("tensor2")), c.In("value")) }),
			one("tensor2", func(c *Ctx) V { return c.mul(c.mul(c.Grad(), c.In("tensor1")), c.In("value")) }),
		}},
		{Op: "aten.addcdiv.default", Grads: []Grad{
			one("self", g),
			one("tensor1", func(c *Ctx) V { return c.div(c.mul(c.Grad(), c.In("value")), c.In("tensor2")) }),
			one("tensor2", func(c *Ctx) V {
				t2 := c.In("tensor2")
				num := c.mul(c.mul(c.neg(c.Grad()), c.In("value")), c.In("tensor1"))
				return c.div(num, c.mul(t2, t2))
			}),
		}},
		{Op: "aten.atan2.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				x, y := c.In("self"), c.In("other")
				return c.div(c.mul(c.Grad(), y), c.add(c.mul(x, x), c.mul(y, y)))
			}),
			one("other", func(c *Ctx) V {
				x, y := c.In("self"), c.In("other")
				return c.div(c.mul(c.neg(c.Grad()), x), c.add(c.mul(x, x), c.mul(y, y)))
			}),
		}},
		{Op: "aten.fmod.Scalar", Grads: []Grad{one("self", g)}},
		{Op: "aten.remainder.Scalar", Grads: []Grad{one("self", g)}},
		{Op: "aten.fmod.Tensor", Grads: []Grad{
			one("self", g),
			one("other", func(c *Ctx) V {
				q := c.unary("aten.trunc.default", c.div(c.In("self"), c.In("other")))
				return c.mul(c.neg(c.Grad()), q)
			}),
		}},
		{Op: "aten.remainder.Tensor", Grads: []Grad{
			one("self", g),
			one("other", func(c *Ctx) V {
				q := c.unary("aten.floor.default", c.div(c.In("self"), c.In("other")))
				return c.mul(c.neg(c.Grad()), q)
			}),
		}},
		{Op: "aten.div.Scalar_mode", Grads: []Grad{one("self", func(c *Ctx) V {
			if c.Has("rounding_mode") {
				return c.zerosLike(c.Grad())
			}
			return c.div(c.Grad(), c.In("other"))
		})}},
		{Op: "aten.clamp.Tensor", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.where(clampMask(c), c.Grad(), scalarI(0)) }),
			one("min", func(c *Ctx) V {
				return c.where(c.cmp("lt", c.In("self"), c.In("min")), c.Grad(), scalarI(0))
			}),
			one("max", func(c *Ctx) V {
				return c.where(c.cmp("gt", c.In("self"), c.In("max")), c.Grad(), scalarI(0))
			}),
		}},
		{Op: "aten.native_dropout.default", Outputs: []bool{true, false}, Grads: []Grad{one("input", func(c *Ctx) V {
			p := c.Float("p")
			scale := 1.0
			if p < 1 {
				scale = 1 / (1 - p)
			}
			if c.Has("train") && !c.Bool("train") {
				scale = 1
			}
			return c.op("aten.native_dropout_backward.default", c.like(c.Grad().meta), c.Grad(), c.Result(1), scale)
		})}},
	}
}

func geluApprox(c *Ctx) kw {
	a := c.Str("approximate")
	if a == "" || a == "none" {
		return kw{"approximate", approximateNone}
	}
	return kw{"approximate", a}
}

// approximateNone is "none" boxed once, not once per gelu node.
var approximateNone any = "none"

func clampMask(c *Ctx) V {
	x := c.In("self")
	var mask V
	if c.Has("min") {
		mask = c.cmp("ge", x, c.In("min"))
	}
	if c.Has("max") {
		m := c.cmp("le", x, c.In("max"))
		if mask.Defined() {
			mask = c.logical("and", mask, m)
		} else {
			mask = m
		}
	}
	if !mask.Defined() {
		return c.fail("clamp without min and max")
	}
	return mask
}

// maxMinGrad is maximum/minimum's formula: grad, halved where the operands
// tie, and zero where this operand lost (zeroWhen compares self to other).
func (c *Ctx) maxMinGrad(zeroWhen string) V {
	x, y := c.In("self"), c.In("other")
	half := c.where(c.cmp("eq", x, y), c.div(c.Grad(), scalarI(2)), c.Grad())
	return c.maskedFill(half, c.cmp(zeroWhen, x, y), scalarI(0))
}

// rsubOne emits 1 - x.
func (c *Ctx) rsubOne(x V) V {
	if !isTensor(x) {
		a := *x.c
		switch a.Kind {
		case ir.ArgFloat:
			return scalarF(1 - a.Float())
		case ir.ArgInt:
			return scalarI(1 - a.Int())
		}
	}
	return c.op("aten.rsub.Scalar", c.like(x.meta), x, 1)
}

// sumAll emits sum.default (a 0-dim result).
func (c *Ctx) sumAll(x V) V {
	return c.op("aten.sum.default", c.withShape(x.meta, nil), x)
}

func isOneScalar(a ir.Arg) bool {
	return a.Kind == ir.ArgInt && a.Int() == 1 || a.Kind == ir.ArgFloat && a.Float() == 1
}

func isZeroScalar(a ir.Arg) bool {
	return a.Kind == ir.ArgInt && a.Int() == 0 || a.Kind == ir.ArgFloat && a.Float() == 0
}

func constMinusOne(a ir.Arg) ir.Arg {
	if a.Kind == ir.ArgInt {
		return ir.IntArg(a.Int() - 1)
	}
	return ir.FloatArg(a.Float() - 1)
}
