package analyze

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// gonumCallOrder is CallOrder as it was written before its own search:
// gonum's stabilised sort of the whole call graph, the oracle.
func gonumCallOrder(m *ir.Module) ([]*ir.Graph, error) {
	index := make(map[string]int64, len(m.Graphs))
	g := simple.NewDirectedGraph()
	for i, gr := range m.Graphs {
		index[gr.Name] = int64(i)
		g.AddNode(simple.Node(i))
	}
	for i, gr := range m.Graphs {
		for j := range gr.Nodes {
			n := &gr.Nodes[j]
			if n.Op != ir.OpGetAttr && n.Op != ir.OpCallModule {
				continue
			}
			callee, ok := index[ir.Qualify(gr, n.Target)]
			if !ok || callee == int64(i) {
				continue
			}
			g.SetEdge(simple.Edge{F: simple.Node(callee), T: simple.Node(i)})
		}
	}
	sorted, err := topo.SortStabilized(g, func(ns []graph.Node) {
		sort.Slice(ns, func(a, b int) bool { return ns[a].ID() < ns[b].ID() })
	})
	if err != nil {
		return nil, fmt.Errorf("subgraphs call each other in a cycle: %w", err)
	}
	out := make([]*ir.Graph, len(sorted))
	for i, n := range sorted {
		out[i] = m.Graphs[n.ID()]
	}
	return out, nil
}

func checkCallOrder(t *testing.T, name string, m *ir.Module) {
	t.Helper()
	got, gotErr := CallOrder(m)
	want, wantErr := gonumCallOrder(m)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
		t.Fatalf("%s: CallOrder = %v, %v; gonum's sort: %v, %v", name, graphIndexes(m, got), gotErr, graphIndexes(m, want), wantErr)
	}
}

func graphIndexes(m *ir.Module, gs []*ir.Graph) []int {
	var out []int
	for _, g := range gs {
		out = append(out, slices.Index(m.Graphs, g))
	}
	return out
}

// TestCallOrderMatchesGonum: CallOrder orders every corpus module and
// random call graphs (nested names, some repeated or empty; repeated
// calls, calls of the graph itself and of missing graphs) as gonum's
// stabilised sort does. No call graph has a cycle (CallOrder says why):
// the oracle would fail, and so would the comparison.
func TestCallOrderMatchesGonum(t *testing.T) {
	var paths []string
	for _, glob := range []string{"models/*.pb", "hops/*.pb*", "hops_real/*/*.pb*", "hops_real/*.pb*"} {
		p, _ := filepath.Glob(filepath.Join("..", "..", "testdata", glob))
		paths = append(paths, p...)
	}
	subgraphs := 0
	for _, p := range paths {
		m, err := ir.Load(p)
		if err != nil {
			continue
		}
		subgraphs += len(m.Graphs) - 1
		checkCallOrder(t, p, m)
	}
	if subgraphs < 20 {
		t.Fatalf("the corpus has only %d subgraphs", subgraphs)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + r.IntN(9)
		m := &ir.Module{}
		for i := range n {
			// Nested names (a subgraph can call its descendants), some
			// repeated and some empty.
			name := ""
			if i > 0 && r.IntN(8) > 0 {
				parent := m.Graphs[r.IntN(i)].Name
				name = fmt.Sprintf("c%d", r.IntN(n))
				if parent != "" {
					name = parent + "." + name
				}
			}
			m.Graphs = append(m.Graphs, &ir.Graph{Name: name})
		}
		for _, g := range m.Graphs {
			for range r.IntN(4) {
				callee := m.Graphs[r.IntN(n)].Name
				target, ok := strings.CutPrefix(callee, g.Name+".")
				switch {
				case g.Name == "":
					target = callee
				case !ok:
					target = "missing"
				}
				op := ir.OpGetAttr
				if r.IntN(2) == 0 {
					op = ir.OpCallModule
				}
				g.Nodes = append(g.Nodes, ir.Node{Name: fmt.Sprintf("n%d", len(g.Nodes)), Op: op, Target: target})
			}
		}
		checkCallOrder(t, fmt.Sprintf("trial %d", trial), m)
	}
}
