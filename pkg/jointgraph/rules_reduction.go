package jointgraph

import (
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Reductions: the gradient is the output gradient restored to the input's
// rank (unsqueezed at reduced dims unless keepdim) and expanded, scaled or
// routed to the selected elements.

func reductionRules() []Rule {
	return []Rule{
		{Op: "aten.sum.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.expand(c.Grad(), c.In("self").Shape())
		})}},
		{Op: "aten.sum.dim_IntList", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.sumBackward(c.Grad(), c.reducedDims("dim"), c.Bool("keepdim"))
		})}},
		{Op: "aten.mean.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			n, ok := numel(x.Shape())
			if !ok {
				return c.fail("mean over a symbolic shape")
			}
			return c.div(c.expand(c.Grad(), x.Shape()), scalarI(n))
		})}},
		{Op: "aten.mean.dim", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			red := c.reducedDims("dim")
			n := int64(1)
			for _, d := range red {
				sz := x.Shape()[d]
				if sz.Expr != "" {
					return c.fail("mean over a symbolic dimension")
				}
				n *= sz.Val
			}
			return c.div(c.sumBackward(c.Grad(), red, c.Bool("keepdim")), scalarI(n))
		})}},
		{Op: "aten.amax.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.amaxBackward() })}},
		{Op: "aten.amin.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.amaxBackward() })}},
		{Op: "aten.max.dim", Outputs: []bool{true, false}, Grads: []Grad{one("self", func(c *Ctx) V {
			return c.valueSelectingBackward(c.Int("dim"), c.Result(1), c.Bool("keepdim"))
		})}},
		{Op: "aten.min.dim", Outputs: []bool{true, false}, Grads: []Grad{one("self", func(c *Ctx) V {
			return c.valueSelectingBackward(c.Int("dim"), c.Result(1), c.Bool("keepdim"))
		})}},
		{Op: "aten.max.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.evenlyDistribute() })}},
		{Op: "aten.min.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.evenlyDistribute() })}},
		{Op: "aten.var.correction", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.varBackward(c.Grad(), c.correction())
		})}},
		{Op: "aten.var.dim", Grads: []Grad{one("self", func(c *Ctx) V {
			corr := 0.0
			if !c.Has("unbiased") || c.Bool("unbiased") {
				corr = 1
			}
			return c.varBackward(c.Grad(), corr)
		})}},
		{Op: "aten.std.correction", Grads: []Grad{one("self", func(c *Ctx) V {
			// var_backward(grad / (2 * result)), zero where result is 0
			r := c.Out()
			g := c.maskedFill(c.div(c.Grad(), c.mul(r, scalarI(2))), c.cmp("eq", r, scalarI(0)), scalarI(0))
			return c.varBackward(g, c.correction())
		})}},
		{Op: "aten.logsumexp.default", Grads: []Grad{one("self", func(c *Ctx) V {
			red := c.reducedDims("dim")
			keep := c.Bool("keepdim")
			g := c.restoreDims(c.Grad(), red, keep)
			r := c.restoreDims(c.Out(), red, keep)
			return c.mul(g, c.unary("aten.exp.default", c.sub(c.In("self"), r)))
		})}},
		{Op: "aten.prod.default", Grads: []Grad{one("self", func(c *Ctx) V {
			// Flatten, then the zero-safe product-of-the-others formula.
			x := c.In("self")
			n, ok := numel(x.Shape())
			if !ok {
				return c.fail("prod over a symbolic shape")
			}
			flat := c.reshape(x, dims(n))
			others := c.prodOthers(flat, 0)
			return c.reshape(c.mul(others, c.Grad()), x.Shape())
		})}},
		{Op: "aten.prod.dim_int", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			d := c.dim(c.Int("dim"), x.Rank())
			g := c.restoreDims(c.Grad(), []int64{d}, c.Bool("keepdim"))
			return c.mul(c.prodOthers(x, d), g)
		})}},
		{Op: "aten.cumsum.default", Grads: []Grad{one("self", func(c *Ctx) V {
			d := []int64{c.dim(c.Int("dim"), c.In("self").Rank())}
			f := c.op("aten.flip.default", c.like(c.Grad().meta), c.Grad(), d)
			s := c.op("aten.cumsum.default", c.like(f.meta), f, d[0])
			return c.op("aten.flip.default", c.like(s.meta), s, d)
		})}},
	}
}

// reducedDims returns the wrapped, sorted dims a reduction's dim argument
// names (every dim when it is None or empty).
func (c *Ctx) reducedDims(name string) []int64 {
	rank := c.In("self").Rank()
	ds := c.Ints(name)
	if len(ds) == 0 {
		ds = make([]int64, rank)
		for i := range ds {
			ds[i] = int64(i)
		}
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = c.dim(d, rank)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// restoreDims unsqueezes g at the reduced dims (ascending) unless keepdim.
func (c *Ctx) restoreDims(g V, red []int64, keepdim bool) V {
	if keepdim || c.In("self").Rank() == 0 {
		return g
	}
	for _, d := range red {
		g = c.unsqueeze(g, d)
	}
	return g
}

// sumBackward is sum_backward: restore the reduced dims and expand.
func (c *Ctx) sumBackward(g V, red []int64, keepdim bool) V {
	return c.expand(c.restoreDims(g, red, keepdim), c.In("self").Shape())
}

func (c *Ctx) amaxBackward() V {
	red := c.reducedDims("dim")
	keep := c.Bool("keepdim")
	x := c.In("self")
	g := c.restoreDims(c.Grad(), red, keep)
	mask := c.cmp("eq", c.restoreDims(c.Out(), red, keep), x)
	maskF := c.toDtype(mask, x.meta.Dtype)
	count := c.sum(maskF, red, true)
	return c.mul(c.div(g, count), maskF)
}

// valueSelectingBackward scatters grad into zeros at the selected indices.
func (c *Ctx) valueSelectingBackward(dim int64, indices V, keepdim bool) V {
	x := c.In("self")
	g := c.Grad()
	if !keepdim && x.Rank() > 0 {
		g = c.unsqueeze(g, dim)
		indices = c.unsqueeze(indices, dim)
	}
	z := c.newZeros(x.meta, g, x.Shape())
	return c.op("aten.scatter.src", c.like(x.meta), z, dim, indices, g)
}

func (c *Ctx) evenlyDistribute() V {
	x := c.In("self")
	mask := c.cmp("eq", x, c.Out())
	maskF := c.toDtype(mask, x.meta.Dtype)
	count := c.sumAll(maskF)
	return c.mul(maskF, c.div(c.Grad(), count))
}

func (c *Ctx) correction() float64 {
	if !c.Has("correction") {
		return 1
	}
	return c.Float("correction")
}

// varBackward is var_backward: 2 / (N - correction) * grad * (self - mean).
func (c *Ctx) varBackward(g V, correction float64) V {
	x := c.In("self")
	red := c.reducedDims("dim")
	keep := c.Has("keepdim") && c.Bool("keepdim")
	n := int64(1)
	for _, d := range red {
		if x.Shape()[d].Expr != "" {
			return c.fail("var over a symbolic dimension")
		}
		n *= x.Shape()[d].Val
	}
	g = c.restoreDims(g, red, keep)
	mean := c.op("aten.mean.dim", c.withShape(x.meta, keptShape(x.Shape(), red)), x, red, true)
	scale := 2 / (float64(n) - correction)
	return c.mul(c.mul(g, scalarF(scale)), c.sub(x, mean))
}

func keptShape(shape []ir.Dim, red []int64) []ir.Dim {
	out := slices.Clone(shape)
	for _, d := range red {
		out[d] = ir.Dim{Val: 1}
	}
	return out
}

// prodOthers returns, for each element of x along dim, the product of the
// other elements: an exclusive cumulative product from the front times one
// from the back. Unlike result / x it is right when x has zeros.
func (c *Ctx) prodOthers(x V, dim int64) V {
	n := x.Shape()[dim]
	if n.Expr != "" {
		return c.fail("prod over a symbolic dimension")
	}
	exclusive := func(v V) V {
		cp := c.op("aten.cumprod.default", c.like(v.meta), v, dim)
		head := c.slice(cp, dim, 0, n.Val-1, 1)
		pad := make([]int64, 2*(v.Rank()-int(dim)))
		pad[len(pad)-2] = 1
		return c.op("aten.constant_pad_nd.default", c.like(v.meta), head, pad, 1)
	}
	flip := func(v V) V { return c.op("aten.flip.default", c.like(v.meta), v, []int64{dim}) }
	return c.mul(exclusive(x), flip(exclusive(flip(x))))
}
