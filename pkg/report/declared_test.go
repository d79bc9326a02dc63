package report_test

import (
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// TestDeclaredMutations: a torch.export program after run_decompositions
// is functional, and its buffer writes live only in the graph signature
// (buffers_to_mutate); analyze names those buffers as mutated, with the
// signature output as provenance. The training-IR export of the same
// program writes them in the graph: the same mutated inputs, none declared.
func TestDeclaredMutations(t *testing.T) {
	doc := func(path string) report.AnalyzeGraph {
		t.Helper()
		f, res, err := load.Analyze(path, alias.Analyzer)
		if err != nil {
			t.Fatal(err)
		}
		return report.NewAnalyzeFile(path, f.Module, res).Graphs[0]
	}
	const dir = "../../testdata/pt2/2.14/"
	aten, train := doc(dir+"buffer_update.aten.pt2"), doc(dir+"buffer_update.train.pt2")
	if got := aten.MutatedInputs; len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("aten: mutated inputs %v, want [2 3] (b_running, b_steps)", got)
	}
	if d := aten.DeclaredMutations; len(d) != 2 || d[0].Name != "b_running" || d[0].Output != 0 || d[0].Kind != "BUFFER_MUTATION" || d[1].Name != "b_steps" {
		t.Errorf("aten: declared %+v", d)
	}
	if len(train.DeclaredMutations) != 0 || len(train.MutatedInputs) != 2 {
		t.Errorf("train: mutated %v, declared %+v; want the graph's writes, none declared", train.MutatedInputs, train.DeclaredMutations)
	}
	// Per input, each write with its provenance: the node in the training
	// IR, the signature output after run_decompositions.
	for _, tc := range []struct {
		g    report.AnalyzeGraph
		want []string
	}{
		{train, []string{"b_running: node add_", "b_steps: node add__1"}},
		{aten, []string{"b_running: declared by the graph signature, output 0 (BUFFER_MUTATION)", "b_steps: declared by the graph signature, output 1 (BUFFER_MUTATION)"}},
	} {
		var got []string
		for _, mu := range tc.g.Mutations {
			got = append(got, mu.Name+": "+mu.Provenance())
		}
		if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
			t.Errorf("mutations %q, want %q", got, tc.want)
		}
	}
	var b strings.Builder
	if err := report.WriteAnalyzeText(&b, &report.AnalyzeDoc{Files: []report.AnalyzeFile{{Path: "x.pt2", Graphs: []report.AnalyzeGraph{aten}}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mutated_inputs: [2 (buffer running), 3 (buffer steps)]", "      2 (buffer running): declared by the graph signature, output 0 (BUFFER_MUTATION)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
