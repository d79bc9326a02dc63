package partition

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
)

func ref(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name} }

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
	j, err := jointgraph.Build(&ir.Module{Graphs: []*ir.Graph{g}}, jointgraph.Options{})
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
	if _, err := Split(j, MinCut); err != nil {
		t.Errorf("min-cut partition: %v", err)
	}
}
