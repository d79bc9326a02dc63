package analyze

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// checkCallOrder checks that CallOrder puts every graph of m once, each
// subgraph before every graph that references it, and otherwise keeps file
// order among graphs that could go first.
func checkCallOrder(t *testing.T, name string, m *ir.Module) {
	t.Helper()
	got, err := CallOrder(m)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pos := make(map[*ir.Graph]int, len(got))
	for i, g := range got {
		pos[g] = i
	}
	if len(pos) != len(m.Graphs) {
		t.Fatalf("%s: CallOrder = %v, not every graph once", name, graphIndexes(m, got))
	}
	last := map[string]*ir.Graph{}
	for _, g := range m.Graphs {
		last[g.Name] = g
	}
	for _, g := range m.Graphs {
		for _, n := range g.Nodes {
			if n.Op != ir.OpGetAttr && n.Op != ir.OpCallModule {
				continue
			}
			if callee := last[ir.Qualify(g, n.Target)]; callee != nil && callee != g && pos[callee] > pos[g] {
				t.Fatalf("%s: CallOrder = %v puts %q after its caller %q", name, graphIndexes(m, got), callee.Name, g.Name)
			}
		}
	}
}

func graphIndexes(m *ir.Module, gs []*ir.Graph) []int {
	var out []int
	for _, g := range gs {
		out = append(out, slices.Index(m.Graphs, g))
	}
	return out
}

// TestCallOrder: CallOrder orders every corpus module and random call
// graphs (nested names, some repeated or empty; repeated calls, calls of
// the graph itself and of missing graphs) callees first. No call graph has
// a cycle (CallOrder says why).
func TestCallOrder(t *testing.T) {
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
