package alias_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
	"github.com/hopctl/hopctl/pkg/report"
)

func analyzeFile(t *testing.T, path string) (*ir.Module, *analyze.Result) {
	t.Helper()
	m, err := ir.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := opschema.NewRegistryForModule(m) // the HOPs the file records as BaseHOPs included
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.Run(m, path, reg, alias.Analyzer)
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

func fmtList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func fmtMap(ps []alias.Pair) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d:%d", p.From, p.To)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// expectKeys are the keys of an expect line, in order (testdata/hops/README.md).
var expectKeys = []string{"mutated_inputs", "inp_inp_alias", "inp_out_alias", "out_out_alias"}

// TestHandWrittenHOPGraphs checks every testdata/hops graph against the
// expectations written in it: the four results of every graph (expect
// lines), and — running every analyzer, as hopctl lint does — that the
// findings are exactly the wanted ones (want lines, checked by
// analysistest).
func TestHandWrittenHOPGraphs(t *testing.T) {
	paths, _ := filepath.Glob("../../../../testdata/hops/*.pbtxt")
	if len(paths) < 10 {
		t.Fatalf("found only %d hand-written HOP graphs", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, res, expects := analysistest.Run(t, path, passes.All()...)
			expected := map[string]bool{}
			for _, e := range expects {
				if strings.Join(e.Keys, " ") != strings.Join(expectKeys, " ") {
					t.Errorf("line %d: expect keys %v, want %v", e.Line, e.Keys, expectKeys)
					continue
				}
				expected[e.Graph] = true
				sum, ok := res.Results[alias.Analyzer][e.Graph].(*alias.Summary)
				if !ok {
					t.Errorf("line %d: no graph %q", e.Line, e.Graph)
					continue
				}
				got := fmt.Sprintf("%s %s %s %s", fmtList(sum.MutatedInputs), fmtMap(sum.InpInpAlias), fmtMap(sum.InpOutAlias), fmtMap(sum.OutOutAlias))
				if exp := strings.Join(e.Values, " "); got != exp {
					t.Errorf("line %d: graph %s: got %s, want %s", e.Line, ir.DisplayName(e.Graph), got, exp)
				}
			}
			for _, g := range m.Graphs {
				if !expected[g.Name] {
					t.Errorf("no # expect line for graph %s", ir.DisplayName(g.Name))
				}
			}
		})
	}
}

// TestProvenanceThreeDeep checks the full path of a mutation three HOPs deep.
func TestProvenanceThreeDeep(t *testing.T) {
	_, res := analyzeFile(t, "../../../../testdata/hops/nested3_mutation.pbtxt")
	var root *analyze.Finding
	for i := range res.Findings {
		if res.Findings[i].Graph == "" && res.Findings[i].Rule == alias.RuleHOPMutation {
			root = &res.Findings[i]
		}
	}
	if root == nil || root.Provenance == nil {
		t.Fatalf("no mutation finding with provenance at the root: %+v", res.Findings)
	}
	p := root.Provenance
	path := strings.Join(p.Path, " → ")
	for _, part := range []string{"cond", "true_graph_0", "while_loop", "scan", "mul_"} {
		if !strings.Contains(path, part) {
			t.Errorf("path %q lacks %q", path, part)
		}
	}
	if p.Input == "" || p.InputIndex < 0 || p.StackTrace == "" || p.Node != "mul_" {
		t.Errorf("incomplete provenance: %+v", p)
	}
	var b strings.Builder
	if err := report.WriteAnalyzeText(&b, &report.AnalyzeDoc{Files: []report.AnalyzeFile{report.NewAnalyzeFile("x", mustLoad(t), res)}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mul_") {
		t.Errorf("text report lacks the writing node:\n%s", b.String())
	}
}

func mustLoad(t *testing.T) *ir.Module {
	m, err := ir.Load("../../../../testdata/hops/nested3_mutation.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
