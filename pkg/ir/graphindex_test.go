package ir

import (
	"fmt"
	"slices"
	"testing"
)

// TestGraphIndex: Graph and Submodule on a module large enough to be
// indexed answer as a scan does, after the graph list grows, in a copy of
// the module with graphs of its own, and with a graph replaced in place
// under its name.
func TestGraphIndex(t *testing.T) {
	m := &Module{Graphs: []*Graph{{Name: ""}}}
	// Names out of sorted order, nested, with a prefix that is not a parent
	// ("a.b" vs "a.bc").
	for i := 40; i > 0; i-- {
		m.Graphs = append(m.Graphs, &Graph{Name: fmt.Sprintf("g%d", i)}, &Graph{Name: fmt.Sprintf("g%d.x", i)}, &Graph{Name: fmt.Sprintf("g%dx", i)})
	}
	scan := func(m *Module, q string) *Graph {
		for _, g := range m.Graphs {
			if g.Name == q {
				return g
			}
		}
		return nil
	}
	check := func(m *Module, names ...string) {
		t.Helper()
		for _, q := range names {
			if got, want := m.Graph(q), scan(m, q); got != want {
				t.Errorf("Graph(%q) = %v, want %v", q, got, want)
			}
		}
	}
	check(m, "", "g1", "g40.x", "g7x", "nope", "g1.")
	m.Graphs = append(m.Graphs, &Graph{Name: "late"})
	check(m, "late", "g3")
	c := *m
	c.Graphs = slices.Clone(m.Graphs[:10])
	check(&c, "late", "g40", "g39.x")
	check(m, "late")
	c.Graphs[3] = &Graph{Name: c.Graphs[3].Name}
	check(&c, c.Graphs[3].Name)

	sub, ok := m.Submodule("g12")
	if !ok {
		t.Fatal("no g12")
	}
	var names []string
	for _, g := range sub.Graphs {
		names = append(names, g.Name)
	}
	if want := []string{"", "x"}; !slices.Equal(names, want) {
		t.Errorf("Submodule(g12) graphs %q, want %q", names, want)
	}
	m.Graphs = append(m.Graphs, &Graph{Name: "g12.a"}, &Graph{Name: "g12.x.y"})
	sub, _ = m.Submodule("g12")
	names = names[:0]
	for _, g := range sub.Graphs {
		names = append(names, g.Name)
	}
	if want := []string{"", "x", "a", "x.y"}; !slices.Equal(names, want) {
		t.Errorf("Submodule(g12) after appending: graphs %q, want %q (the module's order)", names, want)
	}
}
