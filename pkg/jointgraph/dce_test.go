package jointgraph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestLiveNodesReachability: liveNodes' pass from the last node to the
// first marks what a search from the roots reaches, on random graphs
// whose references go to earlier and later nodes, in lists and keyword
// arguments too.
func TestLiveNodesReachability(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + rng.IntN(40)
		g := &ir.Graph{Nodes: make([]ir.Node, n)}
		r := func() ir.Arg { return ir.Arg{Kind: ir.ArgNode, Ref: ir.NodeID(rng.IntN(n+1) - 1)} } // -1: unresolved
		effect := map[ir.NodeID]bool{}
		var outputs []V
		for i := range g.Nodes {
			nd := &g.Nodes[i]
			nd.Op = ir.OpCallFunction
			switch rng.IntN(8) {
			case 0:
				nd.Op = ir.OpOutput
			case 1:
				effect[ir.NodeID(i)] = true
			case 2:
				outputs = append(outputs, nodeV(ir.NodeID(i), nil))
			}
			for range rng.IntN(3) {
				nd.Args = append(nd.Args, r())
			}
			if rng.IntN(3) == 0 {
				nd.Args = append(nd.Args, ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{r(), ir.IntArg(1), r()}))
			}
			if rng.IntN(4) == 0 {
				nd.Kwargs = []ir.Kwarg{{Name: "k", Value: r()}}
			}
		}
		want := make([]bool, n)
		var stack []ir.NodeID
		push := func(id ir.NodeID) {
			if id >= 0 && int(id) < n && !want[id] {
				want[id] = true
				stack = append(stack, id)
			}
		}
		for i := range g.Nodes {
			if g.Nodes[i].Op == ir.OpOutput || effect[ir.NodeID(i)] {
				push(ir.NodeID(i))
			}
		}
		for _, v := range outputs {
			push(v.id)
		}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g.Nodes[id].WalkRefs(func(a *ir.Arg) { push(a.Ref) })
		}
		if got := liveNodes(g, effect, outputs); !slices.Equal(got, want) {
			t.Fatalf("graph of %d nodes: live %v, want %v", n, got, want)
		}
	}
}
