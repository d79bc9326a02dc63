package viz

import (
	_ "github.com/hopctl/hopctl/pkg/pt2" // .pt2 archives
	"slices"
	"testing"
)

// TestDeclaredMutationsDrawn: after run_decompositions() a torch.export
// program's buffer writes live only in its graph signature; the HTML
// report flags those buffers as mutated and shows the signature output as
// the provenance, as the training-IR archive of the same program shows the
// writing nodes.
func TestDeclaredMutationsDrawn(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"../../testdata/pt2/2.14/buffer_update.aten.pt2", []string{"declared by the graph signature, output 0 (BUFFER_MUTATION)", "declared by the graph signature, output 1 (BUFFER_MUTATION)"}},
		{"../../testdata/pt2/2.14/buffer_update.train.pt2", []string{"node add_", "node add__1"}},
	} {
		m, _, f := loadFile(t, tc.path)
		gr := f.Graphs[0]
		if !slices.Equal(gr.MutatedInputs, []int{2, 3}) {
			t.Errorf("%s: mutated_inputs %v, want [2 3]", tc.path, gr.MutatedInputs)
		}
		var got []string
		for _, mu := range gr.Mutations {
			got = append(got, mu.Provenance)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: provenance %q, want %q", tc.path, got, tc.want)
		}
		for _, i := range []int{2, 3} {
			id, _ := m.Graphs[0].Lookup(gr.Inputs[i])
			if f.Nodes.Flags[firstNode(&f, 0)+int32(id)]&FlagMutatedInput == 0 {
				t.Errorf("%s: input %s not flagged mutated", tc.path, gr.Inputs[i])
			}
		}
	}
}
