package joint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	_ "github.com/hopctl/hopctl/pkg/pt2"
)

// TestPrimalNamesFollowTheSignature: for every exported program in
// testdata/pt2, each primal the summary names is labelled with the
// state_dict key the joint's own signature gives it (parameters and
// buffers), or with the forward's placeholder name (user inputs, tokens); no primal is left
// without a name.
func TestPrimalNamesFollowTheSignature(t *testing.T) {
	paths, _ := filepath.Glob("../../../testdata/pt2/*/*.pt2")
	checked := 0
	for _, p := range paths {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		names := newPrimalNames(m)
		var fwd []string // the forward's placeholders, by index
		for _, sp := range m.Signature.Inputs {
			fwd = append(fwd, sp.Name)
		}
		j, err := jointgraph.Build(m, jointgraph.Options{File: p})
		if err != nil {
			continue // HOPs the joint does not differentiate: TestJointOfExportedPrograms
		}
		for i, sp := range j.Module.Signature.Inputs {
			if !strings.HasPrefix(sp.Name, "primals_") {
				continue
			}
			checked++
			want := sp.Target
			if want == "" && i < len(fwd) {
				want = fwd[i] // a user input, an effect token
			}
			if got := names.of(sp.Name); got != want || want == "" {
				t.Errorf("%s: %s is labelled %q, its signature says %q", p, sp.Name, got, want)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d primals checked", checked)
	}
}
