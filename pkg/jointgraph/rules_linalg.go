package jointgraph

// Matrix products. mm_mat1_backward / mm_mat2_backward are written in
// their plain forms (grad @ mat2ᵀ, mat1ᵀ @ grad).

func linalgRules() []Rule {
	scaled := func(c *Ctx, x V, name string) V {
		if a := c.Arg(name); !isOneScalar(a) {
			return c.mul(x, constV(a))
		}
		return x
	}
	return []Rule{
		{Op: "aten.mm.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mm(c.Grad(), c.t(c.In("mat2"))) }),
			one("mat2", func(c *Ctx) V { return c.mm(c.t(c.In("self")), c.Grad()) }),
		}},
		{Op: "aten.addmm.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return scaled(c, c.Grad(), "beta") }),
			one("mat1", func(c *Ctx) V { return scaled(c, c.mm(c.Grad(), c.t(c.In("mat2"))), "alpha") }),
			one("mat2", func(c *Ctx) V { return scaled(c, c.mm(c.t(c.In("mat1")), c.Grad()), "alpha") }),
		}},
		{Op: "aten.bmm.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.bmm(c.Grad(), c.transpose(c.In("mat2"), 1, 2)) }),
			one("mat2", func(c *Ctx) V { return c.bmm(c.transpose(c.In("self"), 1, 2), c.Grad()) }),
		}},
		{Op: "aten.baddbmm.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return scaled(c, c.Grad(), "beta") }),
			one("batch1", func(c *Ctx) V {
				return scaled(c, c.bmm(c.Grad(), c.transpose(c.In("batch2"), 1, 2)), "alpha")
			}),
			one("batch2", func(c *Ctx) V {
				return scaled(c, c.bmm(c.transpose(c.In("batch1"), 1, 2), c.Grad()), "alpha")
			}),
		}},
		{Op: "aten.mv.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.outer(c.Grad(), c.In("vec")) }),
			one("vec", func(c *Ctx) V { return c.mv(c.t(c.In("self")), c.Grad()) }),
		}},
		{Op: "aten.addmv.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return scaled(c, c.Grad(), "beta") }),
			one("mat", func(c *Ctx) V { return scaled(c, c.outer(c.Grad(), c.In("vec")), "alpha") }),
			one("vec", func(c *Ctx) V { return scaled(c, c.mv(c.t(c.In("mat")), c.Grad()), "alpha") }),
		}},
		{Op: "aten.dot.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.mul(c.In("tensor"), c.Grad()) }),
			one("tensor", func(c *Ctx) V { return c.mul(c.In("self"), c.Grad()) }),
		}},
	}
}

// outer emits the outer product of two vectors as an mm of a column and a
// row.
func (c *Ctx) outer(a, b V) V { return c.mm(c.unsqueeze(a, 1), c.unsqueeze(b, 0)) }

func (c *Ctx) mv(m, v V) V {
	return c.op("aten.mv.default", c.withShape(v.meta, m.Shape()[:1]), m, v)
}
