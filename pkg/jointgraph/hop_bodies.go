package jointgraph

import (
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Forward HOP subgraphs are functionalized in the joint, as AOTAutograd's
// functionalization of a HOP call does (the py_functionalize_impl of cond,
// while_loop, map, scan: ctx.functionalize of each subgraph, then re-traced):
// an in-place op on a value the subgraph makes (y = x.clone(); y.add_(1))
// becomes its functional variant, so no in-place op remains in a subgraph
// of the joint where PyTorch's joint has none. The backward subgraphs are
// functional already (each is a joint, built from a functionalized graph).
// A subgraph that writes its own inputs (torch 2.14's mutated_arg_indices,
// invoke_subgraph) keeps its writes, as PyTorch's keeps them: it is left as
// it is.

// functionalBodies returns src's graphs with every subgraph that the get_attr
// targets read (with the graphs nested under them) functionalized
// (functionalBody).
func (j *jointBuilder) functionalBodies(src *ir.Module, getAttrs []string) []*ir.Graph {
	want := make(map[string]bool, len(getAttrs))
	for _, t := range getAttrs {
		want[t] = true
	}
	out := make([]*ir.Graph, len(src.Graphs))
	for i, g := range src.Graphs {
		out[i] = g
		if i == 0 || g.Name == "" {
			continue
		}
		if top, _, _ := strings.Cut(g.Name, "."); want[top] {
			out[i] = j.functionalBody(g)
		}
	}
	return out
}

// functionalBody returns subgraph g of the module being differentiated
// functionalized, or g itself when it has no in-place op, writes its
// inputs, or cannot be functionalized (then it stays as written: hopctl
// analyze judges it). Results are cached per subgraph (by its nodes): a
// nested subgraph is seen by the build of every level above it.
func (j *jointBuilder) functionalBody(g *ir.Graph) *ir.Graph {
	if len(g.Nodes) == 0 || !j.hasInPlace(g) {
		return g
	}
	c := j.opts.cache
	key := &g.Nodes[0]
	if c != nil {
		if fg, ok := c.bodies[key]; ok {
			// the cached body was named where it was first seen (relative
			// to a backward's submodule, or qualified in the top-level
			// module): it goes under g's name here
			return &ir.Graph{Name: g.Name, Nodes: fg.Nodes}
		}
	}
	fg := j.functionalizeBody(g)
	if c != nil {
		if c.bodies == nil {
			c.bodies = map[*ir.Node]*ir.Graph{}
		}
		c.bodies[key] = fg
	}
	return fg
}

// hasInPlace reports whether g calls an op that writes one of its
// arguments.
func (j *jointBuilder) hasInPlace(g *ir.Graph) bool {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpCallFunction {
			continue
		}
		if _, ok := functionalOverload[n.Target]; ok || len(j.f.ops.get(n.Target).muts) > 0 {
			return true
		}
	}
	return false
}

func (j *jointBuilder) functionalizeBody(g *ir.Graph) *ir.Graph {
	sub, ok := subModule(j.src, g.Name)
	if !ok {
		return g
	}
	var at *ir.Node
	f, err := functionalize(sub, j.file, j.f.reg, &at, 0)
	if err != nil || len(f.epilogue) > 0 || len(f.inPlace) > 0 {
		return g
	}
	on := g.OutputNode()
	if on == ir.NoNode {
		return g
	}
	o := g.Nodes[on]
	ok = true
	args := make([]ir.Arg, len(o.Args))
	for k, a := range o.Args {
		args[k] = ir.MapRefs(a, nil, func(x ir.Arg) ir.Arg {
			if x.Ref < 0 {
				ok = false
				return x
			}
			if _, isTuple := f.tupleOf(x.Ref); isTuple {
				ok = false
				return x
			}
			v := f.get(x.Ref)
			if !v.ok {
				ok = false
				return x
			}
			return f.b.ref(v.id)
		})
	}
	if !ok {
		return g
	}
	f.b.append(ir.Node{Name: f.b.names.fresh(o.Name), Op: ir.OpOutput, Target: o.Target, Args: args, Meta: o.Meta})
	// The functional graph shares the source's argument lists where they
	// map to themselves (mapArgs), and dce renumbers references where they
	// are: with a dead node in the body it renumbered the input module's
	// subgraph too, which the backward builds read again
	// (TestFunctionalBodyLeavesSource). The nodes get lists of their own
	// first (builder.own), as the joint's forward copy does.
	for i := range f.b.g.Nodes {
		n := &f.b.g.Nodes[i]
		if !f.ownsArgs(ir.NodeID(i)) {
			args := f.b.argList(len(n.Args))
			for k := range n.Args {
				args[k] = f.b.own(n.Args[k])
			}
			n.Args = args
		}
		if n.Kwargs != nil {
			// mapArgs shares the source's keyword arguments too
			n.Kwargs = slices.Clone(n.Kwargs)
			for k := range n.Kwargs {
				n.Kwargs[k].Value = f.b.own(n.Kwargs[k].Value)
			}
		}
	}
	out, _ := dce(f.b.g, f.effect)
	out.Name = g.Name
	return out
}
