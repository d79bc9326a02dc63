package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// TestProgramMutationsMatchTorch: for every torch.export archive of
// testdata/pt2 (torch 2.6 and 2.14, training IR and after
// run_decompositions, BatchNorm1d in training mode with a step counter
// among them), the root inputs analyze names as mutated are the ones a
// run of ep.module() changed (expect.json's "mutated", recorded by
// python/tools/make_pt2.py), and each has a provenance: a node of the
// training IR, the signature in the functional IR.
func TestProgramMutationsMatchTorch(t *testing.T) {
	n := 0
	for _, v := range []string{"2.6", "2.14"} {
		dir := filepath.Join("../../testdata/pt2", v)
		raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		var expect map[string]struct {
			Mutated []string `json:"mutated"`
		}
		if err := json.Unmarshal(raw, &expect); err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(expect))
		for k := range expect {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			path := filepath.Join(dir, name+".pt2")
			f, res, err := load.Analyze(path, alias.Analyzer)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			g := report.NewAnalyzeFile(path, f.Module, res).Graphs[0]
			var got, withProv []string
			for _, i := range g.MutatedInputs {
				if !slices.Contains(got, g.Inputs[i]) {
					got = append(got, g.Inputs[i])
				}
			}
			for _, mu := range g.Mutations {
				if !slices.Contains(withProv, mu.Name) {
					withProv = append(withProv, mu.Name)
				}
			}
			sort.Strings(got)
			sort.Strings(withProv)
			want := expect[name].Mutated
			if name == "custom_op.train" {
				// The archive does not carry the custom op's schema
				// (mutates_args): its writes are unknown, which lint
				// reports as unknown-op, not as no writes.
				want = nil
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s: mutated %v, torch changed %v", path, got, want)
			}
			if !slices.Equal(got, withProv) {
				t.Errorf("%s: mutated %v but provenance for %v", path, got, withProv)
			}
			n++
		}
	}
	if n < 40 {
		t.Fatalf("checked %d archives", n)
	}
}
