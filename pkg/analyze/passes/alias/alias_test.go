package alias_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
	"github.com/hopctl/hopctl/pkg/report"
)

// expectation comments, as testdata/hops/README.md defines them.
var (
	expectRE = regexp.MustCompile(`^# expect graph=("")?(\S*) mutated_inputs=(\S+) inp_inp_alias=(\S+) inp_out_alias=(\S+) out_out_alias=(\S+)$`)
	wantRE   = regexp.MustCompile(`^# want graph=("")?(\S*) node=(\S+) "(.*)"$`)
)

type want struct {
	graph, node string
	re          *regexp.Regexp
	line        int
	matched     bool
}

func analyzeFile(t *testing.T, path string) (*ir.Module, *analyze.Result) {
	t.Helper()
	m, err := ir.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := opschema.NewRegistry(schemaTexts(m))
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.Run(m, path, reg, alias.Analyzer)
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

func schemaTexts(m *ir.Module) []opschema.FileSchema {
	var out []opschema.FileSchema
	for _, s := range m.Schemas {
		out = append(out, opschema.FileSchema{Name: s.Name, Schema: s.Schema})
	}
	return out
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

// TestHandWrittenHOPGraphs checks every testdata/hops graph against the
// expectations written in it: the four results of every graph, and that the
// findings are exactly the wanted ones.
func TestHandWrittenHOPGraphs(t *testing.T) {
	paths, _ := filepath.Glob("../../../../testdata/hops/*.pbtxt")
	if len(paths) < 10 {
		t.Fatalf("found only %d hand-written HOP graphs", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, res := analyzeFile(t, path)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var wants []*want
			expected := map[string]bool{}
			sc := bufio.NewScanner(f)
			for line := 1; sc.Scan(); line++ {
				text := sc.Text()
				if mm := expectRE.FindStringSubmatch(text); mm != nil {
					g := mm[2]
					expected[g] = true
					sum, ok := res.Results[alias.Analyzer][g].(*alias.Summary)
					if !ok {
						t.Errorf("line %d: no graph %q", line, g)
						continue
					}
					got := fmt.Sprintf("%s %s %s %s", fmtList(sum.MutatedInputs), fmtMap(sum.InpInpAlias), fmtMap(sum.InpOutAlias), fmtMap(sum.OutOutAlias))
					if exp := strings.Join(mm[3:], " "); got != exp {
						t.Errorf("line %d: graph %s: got %s, want %s", line, ir.DisplayName(g), got, exp)
					}
				} else if mm := wantRE.FindStringSubmatch(text); mm != nil {
					re, err := regexp.Compile(mm[4])
					if err != nil {
						t.Fatalf("line %d: %v", line, err)
					}
					wants = append(wants, &want{graph: mm[2], node: mm[3], re: re, line: line})
				} else if strings.HasPrefix(text, "# expect") || strings.HasPrefix(text, "# want") {
					t.Errorf("line %d: malformed directive %q", line, text)
				}
			}
			for _, g := range m.Graphs {
				if !expected[g.Name] {
					t.Errorf("no # expect line for graph %s", ir.DisplayName(g.Name))
				}
			}
		findings:
			for _, fd := range res.Findings {
				for _, w := range wants {
					if w.graph == fd.Graph && w.node == fd.Node && w.re.MatchString(fd.Message) {
						w.matched = true
						continue findings
					}
				}
				t.Errorf("unexpected finding: graph %s node %s: %s [%s]", ir.DisplayName(fd.Graph), fd.Node, fd.Message, fd.Rule)
			}
			for _, w := range wants {
				if !w.matched && !strings.Contains(w.re.String(), "metadata") && !strings.Contains(w.re.String(), "differ") {
					t.Errorf("line %d: no finding at graph %s node %s matching %q", w.line, ir.DisplayName(w.graph), w.node, w.re)
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
