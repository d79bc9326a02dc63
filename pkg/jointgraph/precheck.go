package jointgraph

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// precheck refuses, before anything is built, a graph joint cannot
// differentiate although it is valid input (package validate): the
// format lets a node omit its recorded value, and validate judges no
// argument whose node has none, but the functionalization and the
// derivative formulas compute every shape from the recorded values. What
// it refuses is an input error at the node to fix (file, graph, node):
//
//   - a node passed to a Tensor parameter of an op, or as an operand of a
//     HOP call, without a recorded value (but a get_attr: make_fx in
//     torch 1.13 records none for a module's parameters left as
//     constants, which get no gradient);
//   - a call of an op returning a Tensor without a recorded tensor value,
//     and one returning several tensors (or a Tensor[]) whose recorded
//     value is not a tuple of as many (make_fx in torch 1.13 records none
//     for a tuple; its getitems carry the elements');
//   - a getitem whose recorded value is not its tuple's element
//     (checkGetitem);
//   - a dimension argument (dim, dims, dim0, dim1, dim2, dimension,
//     start_dim, end_dim) outside [-rank, rank), rank being the larger
//     of the first tensor argument's and the result's (unsqueeze and
//     stack index the result's dims, select_backward those of its
//     input_sizes); torch raises IndexError tracing such a call, so
//     only an edited file holds one.
//
// make_fx and torch.export record every node's value, so no traced graph
// is refused here. Recorded values can still disagree in ways only
// torch's meta functions would catch (a stack recorded with the rank of
// its inputs): a dimension out of range for the tensor a formula or the
// builder indexes is refused where it is read (Ctx.dim, builder.dim),
// never a panic.
func precheck(g *ir.Graph, file string, ops *opCache) error {
	var scratch []ir.Arg // BindValuesInto's storage, reused from node to node
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpCallFunction {
			continue
		}
		id := ir.NodeID(i)
		if n.Target == "_operator.getitem" {
			if err := checkGetitem(file, g, id); err != nil {
				return err
			}
			continue
		}
		if opschema.IsHOPTarget(n.Target) {
			var err error
			n.WalkRefs(func(a *ir.Arg) {
				if err == nil && a.Ref >= 0 && g.Nodes[a.Ref].Val == nil && g.Nodes[a.Ref].Op != ir.OpGetAttr {
					err = valueError(file, g, a.Ref, fmt.Sprintf("has no recorded value, which the %s call %s needs", n.Target, ir.Printable(n.Name)))
				}
			})
			if err != nil {
				return err
			}
			continue
		}
		s := ops.get(n.Target).schema
		if s == nil {
			continue // functionalize refuses it, or keeps a SymInt op as it is
		}
		bound, err := s.BindValuesInto(scratch, n.Args, n.Kwargs)
		if err != nil {
			continue // functionalize refuses it, naming the node
		}
		if len(bound) > 0 && (len(n.Args) == 0 || &bound[0] != &n.Args[0]) {
			scratch = bound // keep the storage (not the node's own list, which bound may be)
		}
		if err := checkOwnValue(file, g, id, s); err != nil {
			return err
		}
		rank := -1
		if m := valueTensor(n.Val); m != nil {
			rank = len(m.Shape)
		}
		first := true // the first tensor argument's first tensor
		for k := range s.Arguments {
			if !hasTensor(s.Arguments[k].Type) {
				continue
			}
			var bad ir.NodeID = ir.NoNode
			bound[k].WalkRefs(func(a *ir.Arg) {
				if bad == ir.NoNode && a.Ref >= 0 {
					if g.Nodes[a.Ref].Val == nil && g.Nodes[a.Ref].Op != ir.OpGetAttr {
						bad = a.Ref
					} else if m := valueTensor(g.Nodes[a.Ref].Val); m != nil && first {
						rank, first = max(rank, len(m.Shape)), false
					}
				}
			})
			if bad != ir.NoNode {
				return valueError(file, g, bad, fmt.Sprintf("has no recorded value, which argument %s of %s (node %s) needs", s.Arguments[k].Name, n.Target, ir.Printable(n.Name)))
			}
		}
		for k := range s.Arguments {
			if rank < 0 || !isDimArg(s.Arguments[k].Name) {
				continue
			}
			r := max(rank, 1) // a 0-d tensor takes -1 and 0, as maybe_wrap_dim
			a := &bound[k]
			check := func(d int64) error {
				if d < -int64(r) || d >= int64(r) {
					return nodeError(file, g, id, fmt.Sprintf("dimension out of range (expected to be in range of [%d, %d], but got %d) in argument %s: torch raises IndexError tracing this", -r, r-1, d, s.Arguments[k].Name))
				}
				return nil
			}
			switch {
			case a.Kind == ir.ArgInt:
				if err := check(a.Int()); err != nil {
					return err
				}
			case a.Kind == ir.ArgList || a.Kind == ir.ArgTuple:
				for _, e := range a.Elems() {
					if e.Kind == ir.ArgInt {
						if err := check(e.Int()); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// checkOwnValue refuses a call of an op returning tensors whose recorded
// value does not hold them: the formulas read their results' shapes.
func checkOwnValue(file string, g *ir.Graph, id ir.NodeID, s *opschema.Schema) error {
	n := &g.Nodes[id]
	if len(s.Returns) == 0 || s.IsVarret {
		return nil
	}
	what := ""
	switch {
	case len(s.Returns) == 1 && s.Returns[0].Type.Kind == opschema.KindTensor:
		if valueTensor(n.Val) == nil {
			what = "a tensor"
		}
	case len(s.Returns) == 1 && s.Returns[0].Type.Kind == opschema.KindList && hasTensor(s.Returns[0].Type):
		if n.Val != nil && n.Val.Kind != ir.ValList && n.Val.Kind != ir.ValTuple {
			what = "a list of tensors"
		}
	case len(s.Returns) > 1 && hasTensor(s.Returns[0].Type):
		// make_fx in torch 1.13 records no value for a tuple: its
		// getitems carry the elements'.
		if n.Val != nil && (n.Val.Kind != ir.ValList && n.Val.Kind != ir.ValTuple || len(n.Val.Elems) != len(s.Returns)) {
			what = fmt.Sprintf("a tuple of %d values", len(s.Returns))
		}
	}
	if what == "" {
		return nil
	}
	got := "has no recorded value"
	if n.Val != nil {
		got = "has a recorded value that is " + valueKind(n.Val)
	}
	return valueError(file, g, id, fmt.Sprintf("%s, but %s returns %s", got, n.Target, what))
}

// dim is wrapDim for a dimension argument a formula reads, against the
// rank of the tensor it indexes. precheck has checked it against the
// node's input and result, but when their recorded values disagree (an
// edited file: a stack recorded as 1-d) it can be out of range for the
// one the formula indexes: that records a failure, naming the node, and
// returns 0.
func (c *Ctx) dim(d int64, rank int) int64 {
	r := max(rank, 1)
	if d < -int64(r) || d >= int64(r) {
		c.fail("dimension %d is out of range for rank %d: the recorded values of the node and its inputs disagree", d, rank)
		return 0
	}
	return wrapDim(d, rank)
}

// dim is wrapDim for the builder's ops, whose dims come from the input
// graph's arguments: out of range for the tensor at hand (recorded values
// that disagree) it records the failure in b.bad and returns false, and
// the op computes no metadata; the node's rule or functionalization step
// then fails with it.
func (b *builder) dim(d int64, rank int) (int64, bool) {
	r := max(rank, 1)
	if d < -int64(r) || d >= int64(r) {
		if b.bad == "" {
			b.bad = fmt.Sprintf("dimension %d is out of range for rank %d: the recorded values of the node and its inputs disagree", d, rank)
		}
		return 0, false
	}
	return wrapDim(d, rank), true
}

// dimOf is dim for a dimension of x (of a tensor of x's rank + extra, for
// unsqueeze): false without a failure when x has no metadata, whose shape
// the op then leaves unknown.
func (b *builder) dimOf(x V, d int64, extra int) (int64, bool) {
	if x.meta == nil {
		return 0, false
	}
	return b.dim(d, x.Rank()+extra)
}

// checkGetitem refuses a getitem whose recorded value is not the element
// of its tuple's recorded value it takes: the functional graph reads the
// element from the tuple, so its consumers' shapes would not be the ones
// they were checked against.
func checkGetitem(file string, g *ir.Graph, id ir.NodeID) error {
	n := &g.Nodes[id]
	if len(n.Args) != 2 || n.Args[0].Kind != ir.ArgNode || n.Args[0].Ref < 0 || n.Args[1].Kind != ir.ArgInt || n.Val == nil {
		return nil // functionalize refuses the forms it does not take
	}
	tv, k := g.Nodes[n.Args[0].Ref].Val, n.Args[1].Int()
	if tv == nil || tv.Kind != ir.ValTuple && tv.Kind != ir.ValList || k < 0 || k >= int64(len(tv.Elems)) {
		return nil
	}
	e, v := valueTensor(&tv.Elems[k]), valueTensor(n.Val)
	if e == nil && v == nil || e != nil && v != nil && ir.DimsEqual(e.Shape, v.Shape) && e.Dtype == v.Dtype {
		return nil
	}
	return nodeError(file, g, id, fmt.Sprintf("recorded value %s is not element %d of %s's, %s: the file was edited", ir.ShortValue(n.Val), k, ir.Printable(n.Args[0].S), ir.ShortValue(&tv.Elems[k])))
}

// valueKind describes a recorded value's kind, for messages.
func valueKind(v *ir.Value) string {
	switch v.Kind {
	case ir.ValTensor:
		return "a tensor"
	case ir.ValList, ir.ValTuple:
		return fmt.Sprintf("a tuple of %d values", len(v.Elems))
	case ir.ValNone:
		return "None"
	}
	return "a scalar"
}

func valueError(file string, g *ir.Graph, id ir.NodeID, msg string) error {
	return nodeError(file, g, id, msg+": joint computes every shape from the recorded values (make_fx and torch.export record one for every node; re-export the graph)")
}

// hasTensor reports whether t is or holds Tensor (Tensor?, Tensor[]).
func hasTensor(t *opschema.Type) bool {
	for ; t != nil; t = t.Elem {
		if t.Kind == opschema.KindTensor {
			return true
		}
	}
	return false
}

// isDimArg reports whether a parameter named name indexes a tensor's
// dimensions.
func isDimArg(name string) bool {
	switch name {
	case "dim", "dims", "dim0", "dim1", "dim2", "dimension", "start_dim", "end_dim":
		return true
	}
	return false
}
