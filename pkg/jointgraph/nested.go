package jointgraph

import (
	"sort"

	"github.com/hopctl/hopctl/pkg/ir"
)

// The backward of a HOP subgraph is a joint module of its own, installed
// in the module of the joint that calls it under a fresh name
// (true_graph_0, body_graph_0, ...). A backward of nested HOPs holds the
// backwards of the levels below it, so copying each installed module's
// graphs under its new name made every level rename its whole subtree:
// names of length O(depth) made O(depth²) times, cubic in the nesting.
// Installed backwards are kept by reference
// instead — a module names the modules installed in it (nestedModule),
// each naming its own — and the tree is flattened into qualified graph
// names once, by the top-level Build: O(the output's size).

// nestedModule is a backward module installed under name (one component,
// no dot) in the module that holds it. m's graphs are named relative to
// it (its root ""); nested are the modules installed in m, in turn. m's
// schema table covers the calls of its own graphs and of nested's.
type nestedModule struct {
	name   string
	m      *ir.Module
	nested []nestedModule
}

// registerNested records that module m (a backward handed to a HOP rule)
// has the installed modules nested, for addGraphs.
func (c *subJoints) registerNested(m *ir.Module, nested []nestedModule) {
	if len(nested) == 0 {
		return
	}
	if c.nested == nil {
		c.nested = map[*ir.Module][]nestedModule{}
	}
	c.nested[m] = nested
}

// nestedOf returns the modules installed in m (registerNested).
func (c *subJoints) nestedOf(m *ir.Module) []nestedModule {
	if c == nil {
		return nil
	}
	return c.nested[m]
}

// nestedFor returns the installed modules that get_attr nodes with the
// given targets read.
func nestedFor(all []nestedModule, targets []string) []nestedModule {
	if len(all) == 0 || len(targets) == 0 {
		return nil
	}
	want := make(map[string]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	var out []nestedModule
	for _, n := range all {
		if want[n.name] {
			out = append(out, n)
			want[n.name] = false // once, as graphsForTargets does
		}
	}
	return out
}

// mergeSchemas adds the schema tables of the nested modules to table
// (sorted by name; the first entry of a name wins).
func mergeSchemas(table []ir.SchemaText, nested []nestedModule) []ir.SchemaText {
	if len(nested) == 0 {
		return table
	}
	seen := make(map[string]bool, len(table))
	for _, s := range table {
		seen[s.Name] = true
	}
	out := table
	for _, n := range nested {
		for _, s := range n.m.Schemas {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// flattenNested appends the graphs and attributes of the nested modules,
// and of theirs, to m under their qualified names, and sorts m's subgraphs by name (as
// assembleModule does). The depth of the tree is the input's HOP nesting
// (at most ir.MaxNesting levels).
func flattenNested(m *ir.Module, nested []nestedModule) {
	if len(nested) == 0 {
		return
	}
	var add func(prefix string, ns []nestedModule)
	add = func(prefix string, ns []nestedModule) {
		for _, n := range ns {
			name := prefix + n.name
			for _, g := range n.m.Graphs {
				q := name
				if g.Name != "" {
					q = name + "." + g.Name
				}
				m.Graphs = append(m.Graphs, &ir.Graph{Name: q, Nodes: g.Nodes})
			}
			for _, a := range n.m.Attributes {
				a.Name = name + "." + a.Name
				m.Attributes = append(m.Attributes, a)
			}
			add(name+".", n.nested)
		}
	}
	add("", nested)
	subs := m.Graphs[1:]
	sort.Slice(subs, func(a, b int) bool { return subs[a].Name < subs[b].Name })
	sort.Slice(m.Attributes, func(a, b int) bool { return m.Attributes[a].Name < m.Attributes[b].Name })
}
