package analyze

import "github.com/hopctl/hopctl/pkg/ir"

// ArgValue is the value an argument of a node of g passes: the referenced
// node's recorded value (nil when it has none), or the literal itself for
// ints, floats, bools, None, symbolic scalars and lists/tuples of these.
// Arguments with no value form (strings, dtypes, devices, ...) give nil.
func ArgValue(g *ir.Graph, a *ir.Arg) *ir.Value {
	return argValue(g, a, 0)
}

func argValue(g *ir.Graph, a *ir.Arg, depth int) *ir.Value {
	if a == nil || depth > 64 {
		return nil
	}
	switch a.Kind {
	case ir.ArgNode:
		if a.Ref >= 0 && int(a.Ref) < len(g.Nodes) {
			return g.Nodes[a.Ref].Val
		}
	case ir.ArgInt:
		return &ir.Value{Kind: ir.ValInt, I: a.Int()}
	case ir.ArgFloat:
		return &ir.Value{Kind: ir.ValFloat, F: a.Float()}
	case ir.ArgBool:
		return &ir.Value{Kind: ir.ValBool, B: a.B}
	case ir.ArgNone:
		return &ir.Value{Kind: ir.ValNone}
	case ir.ArgSym:
		if a.Sym() != nil {
			return &ir.Value{Kind: ir.ValSym, Sym: a.Sym()}
		}
	case ir.ArgList, ir.ArgTuple:
		v := &ir.Value{Kind: ir.ValList, Elems: make([]ir.Value, len(a.Elems()))}
		if a.Kind == ir.ArgTuple {
			v.Kind = ir.ValTuple
		}
		for i := range a.Elems() {
			e := argValue(g, &a.Elems()[i], depth+1)
			if e == nil {
				return nil
			}
			v.Elems[i] = *e
		}
		return v
	}
	return nil
}

// LeafValues is ArgValue of each leaf (ir.Arg.Leaves, ir.Graph.Outputs).
func LeafValues(g *ir.Graph, leaves []*ir.Arg) []*ir.Value {
	out := make([]*ir.Value, len(leaves))
	for i, a := range leaves {
		out[i] = ArgValue(g, a)
	}
	return out
}

// ArgValues is ArgValue of each element.
func ArgValues(g *ir.Graph, as []ir.Arg) []*ir.Value {
	out := make([]*ir.Value, len(as))
	for i := range as {
		out[i] = ArgValue(g, &as[i])
	}
	return out
}

// Inputs returns the values of g's placeholders, in order.
func Inputs(g *ir.Graph) (names []string, vals []*ir.Value) {
	for _, id := range g.Placeholders() {
		names = append(names, g.Nodes[id].Name)
		vals = append(vals, g.Nodes[id].Val)
	}
	return names, vals
}
