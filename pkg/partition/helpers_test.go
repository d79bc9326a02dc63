package partition

import (
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
)

var corpusModels = []string{"attention", "convbn", "embedding", "inplace_views", "mlp", "resnet18", "shared_storage"}

// The HOP corpora: torch 2.14's, and the programs torch 2.6 differentiates,
// traced by 2.6.
const (
	jointCorpusDir   = "../../testdata/hops_real/joint"
	jointCorpusDir26 = "../../testdata/hops_real/torch2.6/joint"
)

func loadModel(t *testing.T, name string) *ir.Module {
	t.Helper()
	return loadRealIn(t, "../../testdata/models", name)
}

func loadRealIn(t *testing.T, dir, name string) *ir.Module {
	t.Helper()
	m, err := ir.Load(filepath.Join(dir, name+".pb"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// build is jointgraph.Build, failing the test on an error or a joint that
// does not verify.
func build(t *testing.T, m *ir.Module, opts jointgraph.Options) *jointgraph.Joint {
	t.Helper()
	j, err := jointgraph.Build(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(j.Module, "joint"); err != nil {
		t.Fatalf("joint graph does not verify: %v", err)
	}
	checkRefs(t, j.Module)
	return j
}

// checkRefs checks that every node reference names the node it points at
// (loaders resolve references by name).
func checkRefs(t *testing.T, m *ir.Module) {
	t.Helper()
	for _, g := range m.Graphs {
		for i := range g.Nodes {
			g.Nodes[i].WalkRefs(func(a *ir.Arg) {
				if a.Ref >= 0 && g.Nodes[a.Ref].Name != a.S {
					t.Errorf("graph %q node %s: reference %q points at %s", g.Name, g.Nodes[i].Name, a.S, g.Nodes[a.Ref].Name)
				}
			})
		}
	}
}

func placeholderNames(g *ir.Graph) []string {
	var out []string
	for _, id := range g.Placeholders() {
		out = append(out, g.Nodes[id].Name)
	}
	return out
}

func outputElems(g *ir.Graph) []ir.Arg { return g.Nodes[g.OutputNode()].Args[0].Elems() }

func f32(requiresGrad bool, shape ...int64) *ir.Value {
	m := &ir.TensorMeta{Dtype: "float32", Device: "cpu", Layout: "strided", MemoryFormat: "contiguous_format", RequiresGrad: requiresGrad}
	for _, s := range shape {
		m.Shape = append(m.Shape, ir.Dim{Val: s})
	}
	m.Stride = ir.ContiguousStrides(m.Shape)
	return &ir.Value{Kind: ir.ValTensor, Tensor: m}
}
