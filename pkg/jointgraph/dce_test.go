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

// TestReferencesAfterDCE: index's backward passes the forward node's
// indices list on (index_put), and a dead node before the index tensor
// makes dce renumber it: every reference of the joint must still name the
// node at its index (a list the two nodes shared was renumbered twice),
// and the min-cut partition, which reads the indices, succeeds (it
// refused the graph: "output index_put cannot be computed from the
// graph's inputs"). The dtype is spelled as files spell it: hopctl knows
// no size of a "torch.int64" tensor, and the min-cut saves no value of
// unknown size, so with it the partition fails either way.
func TestReferencesAfterDCE(t *testing.T) {
	i64 := f32(false, 3).Clone()
	i64.Tensor.Dtype = "int64"
	g := &ir.Graph{Nodes: []ir.Node{
		{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 5)},
		{Name: "i", Op: ir.OpPlaceholder, Target: "i", Val: i64},
		{Name: "dead", Op: ir.OpCallFunction, Target: "aten.relu.default", Args: []ir.Arg{ref("x")}, Val: f32(true, 5)},
		{Name: "i2", Op: ir.OpCallFunction, Target: "aten.abs.default", Args: []ir.Arg{ref("i")}, Val: i64},
		{Name: "y", Op: ir.OpCallFunction, Target: "aten.index.Tensor", Val: f32(true, 3),
			Args: []ir.Arg{ref("x"), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ref("i2")})}},
		{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("y")})}},
	}}
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) { a.Ref, _ = g.Lookup(a.S) })
	}
	j, err := Build(&ir.Module{Graphs: []*ir.Graph{g}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	jg := j.Module.Root()
	if len(jg.Nodes) >= len(g.Nodes)+4 {
		t.Fatalf("the joint has %d nodes: the dead node was not removed", len(jg.Nodes))
	}
	for i := range jg.Nodes {
		jg.Nodes[i].WalkRefs(func(a *ir.Arg) {
			if a.Ref < 0 || int(a.Ref) >= len(jg.Nodes) || jg.Nodes[a.Ref].Name != a.S {
				t.Errorf("node %s: reference %q has index %d", jg.Nodes[i].Name, a.S, a.Ref)
			}
		})
	}
	if _, err := Split(j, PartitionMinCut); err != nil {
		t.Errorf("min-cut partition: %v", err)
	}
}
