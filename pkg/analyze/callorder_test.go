package analyze

import (
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/graph/simple"

	"github.com/hopctl/hopctl/pkg/ir"
)

// callOrderSimple is CallOrder on gonum's simple.DirectedGraph, as it was
// before ir.Digraph: the oracle.
func callOrderSimple(m *ir.Module) ([]*ir.Graph, error) {
	g := simple.NewDirectedGraph()
	for i := range m.Graphs {
		g.AddNode(simple.Node(i))
	}
	callEdges(m, func(callee, caller ir.NodeID) {
		g.SetEdge(simple.Edge{F: simple.Node(callee), T: simple.Node(caller)})
	})
	return sortGraphs(m, g)
}

// TestCallOrderAgreesWithSimpleGraph: on random modules of graphs that
// reference each other (nested names, repeated and duplicate names, self
// references, missing targets), CallOrder gives the order that the same
// sort on gonum's simple.DirectedGraph gave. (Qualified names only grow
// along a reference, so modules have no cycle.)
func TestCallOrderAgreesWithSimpleGraph(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"", "a", "b", "a.b", "a.c", "b.a", "a.b.c", "a.b.a", "b.a.b"}
	reordered := 0
	for trial := range 3000 {
		m := &ir.Module{}
		for range 1 + rng.Intn(8) {
			m.Graphs = append(m.Graphs, &ir.Graph{Name: names[rng.Intn(len(names))]})
		}
		for _, g := range m.Graphs {
			for range rng.Intn(5) {
				op := ir.OpGetAttr
				if rng.Intn(2) == 0 {
					op = ir.OpCallModule
				}
				g.Nodes = append(g.Nodes, ir.Node{Op: op, Target: []string{"a", "b", "c", "a.b", "x"}[rng.Intn(5)]})
			}
		}
		got, gotErr := CallOrder(m)
		want, wantErr := callOrderSimple(m)
		if gotErr != nil || wantErr != nil {
			t.Fatalf("trial %d: error %v, simple graph's %v", trial, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d graphs, simple graph's %d", trial, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("trial %d: position %d is %q, simple graph's %q", trial, i, got[i].Name, want[i].Name)
			}
			if got[i] != m.Graphs[i] {
				reordered++
			}
		}
	}
	if reordered == 0 {
		t.Fatal("no module was reordered: the test does not check the sort")
	}
}
