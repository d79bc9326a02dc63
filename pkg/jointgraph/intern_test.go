package jointgraph

import (
	"sync"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/synth"
)

// tensorMetas returns the tensor metadata pointers of g's node values.
func tensorMetas(g *ir.Graph) map[*ir.TensorMeta]bool {
	out := map[*ir.TensorMeta]bool{}
	var add func(v *ir.Value)
	add = func(v *ir.Value) {
		if v == nil {
			return
		}
		if v.Tensor != nil {
			out[v.Tensor] = true
		}
		for i := range v.Elems {
			add(&v.Elems[i])
		}
	}
	for i := range g.Nodes {
		add(g.Nodes[i].Val)
	}
	return out
}

// Metadata is interned per build: the nodes of one joint share metadata
// (equal shapes, one pointer), two builds — here concurrent, as under
// `go test -race` — share none of what they made (the forward's own
// metadata, copied into both joints, aside).
func TestMetadataInternedPerBuild(t *testing.T) {
	m := synth.MLPStack(50)
	fwd := tensorMetas(m.Root())
	var joints [2]*Joint
	var wg sync.WaitGroup
	for i := range joints {
		wg.Go(func() {
			j, err := Build(m, Options{})
			if err != nil {
				t.Error(err)
				return
			}
			joints[i] = j
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	made := [2]map[*ir.TensorMeta]bool{}
	for i, j := range joints {
		made[i] = map[*ir.TensorMeta]bool{}
		for p := range tensorMetas(j.Module.Root()) {
			if !fwd[p] {
				made[i][p] = true
			}
		}
	}
	if len(made[0]) == 0 {
		t.Fatal("the joint made no metadata of its own")
	}
	// Shared within a build: the 50 layers' backward nodes carry a few
	// distinct shapes, not one metadata per node.
	nodes := len(joints[0].Module.Root().Nodes)
	if len(made[0]) > nodes/10 {
		t.Errorf("one build made %d distinct metadata for %d nodes: not interned", len(made[0]), nodes)
	}
	for p := range made[0] {
		if made[1][p] {
			t.Fatalf("two builds share metadata %v: interning is not per build", *p)
		}
	}
}
