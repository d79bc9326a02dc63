package alias_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopstruct"
	"github.com/hopctl/hopctl/pkg/load"
)

// realVerdicts is testdata/hops_real/verdicts.json, written by
// python/tools/hop_corpus.py from real torch 2.x traces.
type realVerdicts struct {
	TorchVersion string `json:"torch_version"`
	Programs     map[string]struct {
		PyTorchTest   string                          `json:"pytorch_test"`
		Subgraphs     map[string]map[string]any       `json:"subgraphs"`
		Functionalize json.RawMessage                 `json:"functionalize"`
		Trace         *struct{ Type, Message string } `json:"trace"`
		Graft         bool                            `json:"graft"`
	} `json:"programs"`
}

func loadRealVerdicts(t *testing.T) (string, *realVerdicts) {
	t.Helper()
	dir := "../../../../testdata/hops_real"
	data, err := os.ReadFile(filepath.Join(dir, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v realVerdicts
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Programs) < 20 {
		t.Fatalf("only %d programs in %s", len(v.Programs), dir)
	}
	return dir, &v
}

// canon renders one of torch's four results (a JSON map or list) the way
// fmtMap / fmtList render hopctl's.
func canon(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			var a, b int
			fmt.Sscan(keys[i], &a)
			fmt.Sscan(keys[j], &b)
			return a < b
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s:%v", k, x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

// deliberateDifferences are the subgraphs where hopctl's four results
// differ from torch's static checker on purpose (package doc): torch looks
// only at the ops of the graph itself, hopctl also at writes inside the HOPs
// it calls.
var deliberateDifferences = map[string]string{
	"nested_mutate/true_graph_0": "the while_loop body writes the cond operand x: hopctl sees the write through the nested HOP",
}

// TestRealHOPCorpusFourResults requires hopctl's four results on every HOP
// subgraph of the real-trace corpus to equal what torch's own
// check_input_alias_and_mutation_return_outputs computed on the same
// subgraph (mutated_inputs with torch's repeats: one entry per write).
func TestRealHOPCorpusFourResults(t *testing.T) {
	dir, v := loadRealVerdicts(t)
	names := make([]string, 0, len(v.Programs))
	for n := range v.Programs {
		names = append(names, n)
	}
	slices.Sort(names)
	checked, agree := 0, 0
	for _, name := range names {
		p := v.Programs[name]
		if p.Trace != nil && !p.Graft {
			continue // torch refused to trace it at all
		}
		t.Run(name, func(t *testing.T) {
			// Every command loads what torch wrote (torch 2.14's
			// mutated_arg_indices keyword included).
			if _, err := load.Open(filepath.Join(dir, name+".pb"), load.Strict); err != nil {
				t.Fatalf("refused: %v", err)
			}
			_, res := analyzeFile(t, filepath.Join(dir, name+".pb"))
			for q, want := range p.Subgraphs {
				checked++
				sum, ok := res.Results[alias.Analyzer][q].(*alias.Summary)
				if !ok {
					t.Errorf("%s: hopctl has no graph %s", name, q)
					continue
				}
				got := fmt.Sprintf("mutated_inputs=%s inp_inp_alias=%s inp_out_alias=%s out_out_alias=%s",
					fmtList(sum.MutatedInputs), fmtMap(sum.InpInpAlias), fmtMap(sum.InpOutAlias), fmtMap(sum.OutOutAlias))
				exp := fmt.Sprintf("mutated_inputs=%s inp_inp_alias=%s inp_out_alias=%s out_out_alias=%s",
					canon(want["mutated_inputs"]), canon(want["inp_inp_alias"]), canon(want["inp_out_alias"]), canon(want["out_out_alias"]))
				if why, ok := deliberateDifferences[name+"/"+q]; ok {
					if got == exp {
						t.Errorf("%s: graph %s agrees with torch now; drop the deliberate difference (%s)", name, q, why)
					}
					continue
				}
				if got != exp {
					t.Errorf("%s: graph %s (%s):\n  hopctl %s\n  torch  %s", name, q, p.PyTorchTest, got, exp)
					continue
				}
				agree++
			}
		})
	}
	t.Logf("torch %s: hopctl equals check_input_alias_and_mutation on %d of %d HOP subgraphs", v.TorchVersion, agree, checked)
}

// TestRealHOPCorpusFindings requires hopctl's HOP findings to appear where
// torch's functionalizing trace raises for aliasing or mutation, with a
// message torch's contains, and nowhere else.
func TestRealHOPCorpusFindings(t *testing.T) {
	dir, v := loadRealVerdicts(t)
	for name, p := range v.Programs {
		if p.Trace != nil || p.Graft {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var verdict struct{ Type, Message string }
			ok := string(p.Functionalize) == `"ok"`
			if !ok {
				if err := json.Unmarshal(p.Functionalize, &verdict); err != nil {
					t.Fatalf("functionalize verdict %s: %v", p.Functionalize, err)
				}
			}
			_, res := analyzeFile(t, filepath.Join(dir, name+".pb"))
			var hop []string
			for _, f := range res.Findings {
				if f.Rule == alias.RuleHOPMutation || f.Rule == alias.RuleHOPAlias {
					hop = append(hop, f.Message)
				}
			}
			switch {
			case ok && len(hop) > 0:
				t.Errorf("torch traces it, hopctl reports %q", hop)
			case !ok && isAliasMutation(verdict.Message) && !slices.ContainsFunc(hop, func(m string) bool { return sameRule(m, verdict.Message) }):
				t.Errorf("torch raises %q, hopctl reports %q", verdict.Message, hop)
			}
		})
	}
}

// isAliasMutation reports whether torch's message is one of its HOP
// alias/mutation refusals (at the make_fx level or at Dynamo's).
func isAliasMutation(msg string) bool {
	return strings.Contains(msg, "might be") || strings.Contains(msg, "aliasing during higher order op") ||
		strings.Contains(msg, " mutates ")
}

// sameRule reports whether hopctl's message m states torch's refusal msg:
// the same text (make_fx level), or the same kind for Dynamo's wording.
func sameRule(m, msg string) bool {
	switch {
	case strings.Contains(msg, "might be"):
		return m == msg
	case strings.Contains(msg, "aliasing"):
		return strings.Contains(m, "aliasing")
	default:
		return strings.Contains(m, "modifying")
	}
}

// TestRealHOPCorpusStructure requires a hop-structure finding exactly on
// the programs torch refuses for their structure (the corpus carries the
// graph torch would have written, grafted), with torch's message where
// torch words it at the make_fx level; and none on the others.
func TestRealHOPCorpusStructure(t *testing.T) {
	dir, v := loadRealVerdicts(t)
	grafts := 0
	for name, p := range v.Programs {
		if p.Trace != nil && !p.Graft {
			continue
		}
		t.Run(name, func(t *testing.T) {
			_, res, err := load.Analyze(filepath.Join(dir, name+".pb"), passes.All()...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				if f.Rule == hopstruct.RuleStructure {
					got = append(got, f.Message)
				}
			}
			if !p.Graft {
				if len(got) > 0 {
					t.Errorf("torch traces it, hopctl reports %q", got)
				}
				return
			}
			grafts++
			switch {
			case len(got) == 0:
				t.Errorf("torch refuses it (%q), hopctl reports nothing", p.Trace.Message)
			case !strings.HasPrefix(p.Trace.Message, "Explanation:") && !slices.Contains(got, p.Trace.Message):
				t.Errorf("torch says %q, hopctl %q", p.Trace.Message, got)
			}
		})
	}
	if grafts < 3 {
		t.Errorf("only %d structural triggers in the corpus", grafts)
	}
}
