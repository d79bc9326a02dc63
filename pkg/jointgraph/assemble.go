package jointgraph

import (
	"slices"
	"sort"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// graphRefs is what assembling a module reads from its root graph: the
// distinct call_function targets and the get_attr targets (in node order).
type graphRefs struct {
	calls    []string
	getAttrs []string
}

// scanGraphRefs collects g's graphRefs in one pass.
func scanGraphRefs(g *ir.Graph) graphRefs {
	var r graphRefs
	seen := map[string]bool{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		switch n.Op {
		case ir.OpCallFunction:
			if !seen[n.Target] {
				seen[n.Target] = true
				r.calls = append(r.calls, n.Target)
			}
		case ir.OpGetAttr:
			r.getAttrs = append(r.getAttrs, n.Target)
		}
	}
	return r
}

// assembleModule wraps root graph g (whose graphRefs are refs) into a
// module: the subgraphs of all that g reads, src's attributes that g and
// those subgraphs read,
// the schemas of the ops all of them call (from schemaSrc when it has
// them), and src's annotations.
func assembleModule(src *ir.Module, g *ir.Graph, refs graphRefs, all []*ir.Graph, schemaSrc []ir.SchemaText) *ir.Module {
	subs := graphsForTargets(all, refs.getAttrs)
	graphs := append([]*ir.Graph{g}, subs...)
	calls, getAttrs := refs.calls, refs.getAttrs
	if len(subs) > 0 {
		calls, getAttrs = slices.Clone(calls), slices.Clone(getAttrs)
		for _, h := range subs {
			r := scanGraphRefs(h)
			calls = append(calls, r.calls...)
			// a subgraph's get_attr reads the attribute qualified by
			// its graph's name (true_graph_0.c): carry those too
			for _, t := range r.getAttrs {
				getAttrs = append(getAttrs, ir.Qualify(h, t))
			}
		}
	}
	return &ir.Module{
		FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor,
		Producer: "hopctl joint", TorchVersion: src.TorchVersion,
		Graphs:      graphs,
		Attributes:  attributesFor(src, getAttrs),
		Schemas:     schemasForTargets(schemaSrc, calls),
		Annotations: slices.Clone(src.Annotations),
	}
}

// ModuleFor returns a module around root graph g, a graph cut from the
// joint's (a partition's forward or backward) that calls the targets calls
// and reads the get_attr targets getAttrs: the joint's subgraphs,
// attributes and schemas g reads, and the joint's annotations.
func (j *Joint) ModuleFor(g *ir.Graph, calls, getAttrs []string) *ir.Module {
	src := j.Module
	return assembleModule(src, g, graphRefs{calls, getAttrs}, src.Graphs, src.Schemas)
}

// graphsForTargets returns the graphs of all that get_attr nodes with the
// given targets read, with the graphs nested under them, sorted by name.
func graphsForTargets(all []*ir.Graph, targets []string) []*ir.Graph {
	if len(targets) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, t := range targets {
		want[t] = true
	}
	var out []*ir.Graph
	seen := map[string]bool{}
	for _, h := range all {
		if h.Name == "" || seen[h.Name] {
			continue
		}
		top, _, _ := strings.Cut(h.Name, ".")
		if want[h.Name] || want[top] {
			seen[h.Name] = true
			out = append(out, h)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// attributesFor returns src's attributes that get_attr nodes with the
// given targets read.
func attributesFor(src *ir.Module, getAttrs []string) []ir.Attribute {
	var out []ir.Attribute
	for _, t := range getAttrs {
		if a := src.Attribute(t); a != nil {
			out = append(out, *a)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return slices.CompactFunc(out, func(a, b ir.Attribute) bool { return a.Name == b.Name })
}

// schemasForTargets returns the schema table of the given call targets:
// the source file's entry when it has one, else torch 1.13's from the
// built-in table; deduplicated and sorted, as the exporter writes them.
func schemasForTargets(file []ir.SchemaText, targets []string) []ir.SchemaText {
	have := map[string]string{}
	for _, s := range file {
		have[s.Name] = s.Schema
	}
	seen := map[string]bool{}
	var out []ir.SchemaText
	for _, t := range targets {
		name, ok := ir.SchemaName(t)
		if !ok || seen[name] || !strings.HasPrefix(t, "aten.") {
			continue
		}
		seen[name] = true
		if s, ok := have[name]; ok {
			out = append(out, ir.SchemaText{Name: name, Schema: s})
		} else if s, ok := builtinSchema(t); ok {
			out = append(out, ir.SchemaText{Name: name, Schema: s.Text})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
