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
		return &ir.Value{Kind: ir.ValInt, I: a.I}
	case ir.ArgFloat:
		return &ir.Value{Kind: ir.ValFloat, F: a.F}
	case ir.ArgBool:
		return &ir.Value{Kind: ir.ValBool, B: a.B}
	case ir.ArgNone:
		return &ir.Value{Kind: ir.ValNone}
	case ir.ArgSym:
		if a.Sym != nil {
			return &ir.Value{Kind: ir.ValSym, Sym: a.Sym}
		}
	case ir.ArgList, ir.ArgTuple:
		v := &ir.Value{Kind: ir.ValList, Elems: make([]ir.Value, len(a.Elems))}
		if a.Kind == ir.ArgTuple {
			v.Kind = ir.ValTuple
		}
		for i := range a.Elems {
			e := argValue(g, &a.Elems[i], depth+1)
			if e == nil {
				return nil
			}
			v.Elems[i] = *e
		}
		return v
	}
	return nil
}

// ArgValues is ArgValue of each element.
func ArgValues(g *ir.Graph, as []ir.Arg) []*ir.Value {
	out := make([]*ir.Value, len(as))
	for i := range as {
		out[i] = ArgValue(g, &as[i])
	}
	return out
}

// Outputs returns the pytree leaves of g's output node argument, in order,
// and whether the output is a tuple (as opposed to a list or a bare value).
// PyTorch's analyses read a graph's outputs this way.
func Outputs(g *ir.Graph) (leaves []ir.Arg, tuple bool) {
	out := g.OutputNode()
	if out < 0 || len(g.Nodes[out].Args) == 0 {
		return nil, false
	}
	a := &g.Nodes[out].Args[0]
	var walk func(a *ir.Arg, depth int)
	walk = func(a *ir.Arg, depth int) {
		if (a.Kind == ir.ArgList || a.Kind == ir.ArgTuple || a.Kind == ir.ArgDict) && depth < 64 {
			for i := range a.Elems {
				walk(&a.Elems[i], depth+1)
			}
			return
		}
		leaves = append(leaves, *a)
	}
	walk(a, 0)
	return leaves, a.Kind == ir.ArgTuple
}

// Inputs returns the values of g's placeholders, in order.
func Inputs(g *ir.Graph) (names []string, vals []*ir.Value) {
	for _, id := range g.Placeholders() {
		names = append(names, g.Nodes[id].Name)
		vals = append(vals, g.Nodes[id].Val)
	}
	return names, vals
}
