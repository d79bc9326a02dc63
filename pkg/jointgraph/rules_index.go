package jointgraph

import (
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Indexing, gathering and scattering, concatenation and reordering: the
// gradient flows back to the positions each output element came from.

func indexRules() []Rule {
	return []Rule{
		{Op: "aten.gather.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			z := c.newZeros(x.meta, c.Grad(), x.Shape())
			return c.op("aten.scatter_add.default", c.like(x.meta), z, c.Int("dim"), c.In("index"), c.Grad())
		})}},
		{Op: "aten.scatter.src", Grads: []Grad{
			one("self", func(c *Ctx) V {
				return c.op("aten.scatter.value", c.like(c.Grad().meta), c.Grad(), c.Int("dim"), c.In("index"), 0)
			}),
			one("src", func(c *Ctx) V { return c.gather(c.Grad(), c.Int("dim"), c.In("index")) }),
		}},
		{Op: "aten.scatter.value", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.scatter.value", c.like(c.Grad().meta), c.Grad(), c.Int("dim"), c.In("index"), 0)
		})}},
		{Op: "aten.scatter_add.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.Grad() }),
			one("src", func(c *Ctx) V { return c.gather(c.Grad(), c.Int("dim"), c.In("index")) }),
		}},
		{Op: "aten.index_select.default", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			z := c.newZeros(x.meta, c.Grad(), x.Shape())
			return c.op("aten.index_add.default", c.like(x.meta), z, c.Int("dim"), c.In("index"), c.Grad())
		})}},
		{Op: "aten.index_add.default", Grads: []Grad{
			one("self", func(c *Ctx) V { return c.Grad() }),
			one("source", func(c *Ctx) V {
				s := c.In("source")
				g := c.op("aten.index_select.default", c.like(s.meta), c.Grad(), c.Int("dim"), c.In("index"))
				if a := c.Arg("alpha"); !isOneScalar(a) {
					g = c.mul(g, constV(a))
				}
				return g
			}),
		}},
		{Op: "aten.index.Tensor", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			z := c.newZeros(x.meta, c.Grad(), x.Shape())
			return c.op("aten.index_put.default", c.like(x.meta), z, c.Arg("indices"), c.Grad(), true)
		})}},
		// torch 2.x decomposes upsampling to _unsafe_index; derivatives.yaml:
		// _unsafe_index_put(zeros, indices, grad, accumulate=true), which
		// index_put computes the same way.
		{Op: "aten._unsafe_index.Tensor", Grads: []Grad{one("self", func(c *Ctx) V {
			x := c.In("self")
			z := c.newZeros(x.meta, c.Grad(), x.Shape())
			return c.op("aten.index_put.default", c.like(x.meta), z, c.Arg("indices"), c.Grad(), true)
		})}},
		{Op: "aten.index_put.default", Grads: []Grad{
			one("self", func(c *Ctx) V {
				if c.Bool("accumulate") {
					return c.Grad()
				}
				v := c.In("values")
				return c.op("aten.index_put.default", c.like(c.Grad().meta), c.Grad(), c.Arg("indices"), c.zerosLike(v), false)
			}),
			one("values", func(c *Ctx) V {
				return c.op("aten.index.Tensor", c.Out().meta, c.Grad(), c.Arg("indices"))
			}),
		}},
		{Op: "aten.cat.default", Grads: []Grad{{Args: []string{"tensors"}, Fn: func(c *Ctx) []V {
			ts := c.InList("tensors")
			out := make([]V, len(ts))
			rank := c.Out().Rank()
			d := c.dim(c.Int("dim"), rank)
			off := int64(0)
			for i, t := range ts {
				if t.meta == nil {
					c.fail("cat input %d has no shape", i)
					return nil
				}
				if t.Rank() == 1 && t.Shape()[0].Expr == "" && t.Shape()[0].Val == 0 && rank != 1 {
					continue // legacy empty tensor: skipped by cat
				}
				if t.Rank() != rank {
					c.fail("cat input %d has rank %d, the result %d: the recorded values disagree", i, t.Rank(), rank)
					return nil
				}
				n := t.Shape()[d]
				if n.Expr != "" {
					c.fail("cat over a symbolic dimension")
					return nil
				}
				if isTensor(t) && c.needElem(t) {
					out[i] = c.slice(c.Grad(), d, off, off+n.Val, 1)
				}
				off += n.Val
			}
			return out
		}}}},
		{Op: "aten.stack.default", Grads: []Grad{{Args: []string{"tensors"}, Fn: func(c *Ctx) []V {
			ts := c.InList("tensors")
			out := make([]V, len(ts))
			d := c.dim(c.Int("dim"), c.Out().Rank())
			for i, t := range ts {
				if isTensor(t) && c.needElem(t) {
					out[i] = c.selectInt(c.Grad(), d, int64(i))
				}
			}
			return out
		}}}},
		{Op: "aten.flip.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.flip.default", c.like(c.Grad().meta), c.Grad(), c.Ints("dims"))
		})}},
		{Op: "aten.roll.default", Grads: []Grad{one("self", func(c *Ctx) V {
			sh := c.Ints("shifts")
			neg := make([]int64, len(sh))
			for i, s := range sh {
				neg[i] = -s
			}
			return c.op("aten.roll.default", c.like(c.Grad().meta), c.Grad(), neg, c.Ints("dims"))
		})}},
		{Op: "aten.repeat.default", Grads: []Grad{one("self", func(c *Ctx) V { return c.repeatBackward() })}},
		{Op: "aten.tril.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.tril.default", c.like(c.Grad().meta), c.Grad(), c.Int("diagonal"))
		})}},
		{Op: "aten.triu.default", Grads: []Grad{one("self", func(c *Ctx) V {
			return c.op("aten.triu.default", c.like(c.Grad().meta), c.Grad(), c.Int("diagonal"))
		})}},
		{Op: "aten.sort.default", Outputs: []bool{true, false}, Grads: []Grad{one("self", func(c *Ctx) V {
			return c.valueSelectingBackward(c.Int("dim"), c.Result(1), true)
		})}},
		{Op: "aten.topk.default", Outputs: []bool{true, false}, Grads: []Grad{one("self", func(c *Ctx) V {
			return c.valueSelectingBackward(c.Int("dim"), c.Result(1), true)
		})}},
	}
}

func (c *Ctx) gather(g V, dim int64, index V) V {
	return c.op("aten.gather.default", c.withShape(g.meta, index.Shape()), g, dim, index)
}

// repeatBackward sums the gradient of x.repeat(repeats) over the repeats:
// the gradient is viewed as [r0, (r1, s1), ...] and summed over each r.
func (c *Ctx) repeatBackward() V {
	x := c.In("self")
	reps := c.Ints("repeats")
	shape := x.Shape()
	lead := len(reps) - len(shape)
	var split []ir.Dim
	var red []int64
	for i, r := range reps {
		if i < lead {
			red = append(red, int64(len(split)))
			split = append(split, ir.Dim{Val: r})
			continue
		}
		s := shape[i-lead]
		if s.Expr != "" {
			return c.fail("repeat of a symbolic dimension")
		}
		red = append(red, int64(len(split)))
		split = append(split, ir.Dim{Val: r}, s)
	}
	g := c.reshape(c.Grad(), split)
	g = c.sum(g, red, false)
	return c.reshape(g, slices.Clone(shape))
}
