package pt2_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/load"
	_ "github.com/hopctl/hopctl/pkg/pt2"
	"github.com/hopctl/hopctl/pkg/report"
)

// expectation is one archive's record in testdata/pt2/<torch>/expect.json,
// written by python/tools/make_pt2.py from what torch reports.
type expectation struct {
	Signature struct {
		Inputs []struct {
			Kind, Name, Target string
			Persistent         bool
		}
		Outputs []struct{ Kind, Name, Target string }
	}
	Mutated []string
	// RootInpInpAlias: root placeholders sharing a storage, from the real
	// tensors behind them.
	RootInpInpAlias map[string]int `json:"root_inp_inp_alias"`
	// Printed is str() of the program torch.export.load rebuilt.
	Printed string
	// Nodes: call_function nodes per graph of the program torch.export.load
	// rebuilt, or {"error": …} when torch could not load the archive.
	Nodes map[string]any
	Hops  map[string]struct {
		InpInpAlias   map[string]int `json:"inp_inp_alias"`
		InpOutAlias   map[string]int `json:"inp_out_alias"`
		OutOutAlias   map[string]int `json:"out_out_alias"`
		MutatedInputs []int          `json:"mutated_inputs"`
		Error         string
	}
}

func loadExpectations(t *testing.T) map[string]expectation {
	t.Helper()
	out := map[string]expectation{}
	dirs, _ := filepath.Glob("../../testdata/pt2/2.*")
	if len(dirs) < 2 {
		t.Fatalf("want archives of torch 2.6 and 2.14 in testdata/pt2, found %v", dirs)
	}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]expectation
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		for name, x := range e {
			out[filepath.Join(dir, name+".pt2")] = x
		}
	}
	return out
}

// TestRealArchives reads every archive torch 2.6 (legacy layout) and 2.14
// (pt2_archive layout) wrote and checks it against torch: the signature
// torch reports, the graphs torch.export.load rebuilds (call_function
// nodes per graph), the inputs a run of ep.module() mutates, and torch's
// check_input_alias_and_mutation on every HOP subgraph.
func TestRealArchives(t *testing.T) {
	exp := loadExpectations(t)
	paths := make([]string, 0, len(exp))
	for p := range exp {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	layouts := map[string]bool{}
	for _, path := range paths {
		want := exp[path]
		t.Run(strings.TrimPrefix(path, "../../testdata/pt2/"), func(t *testing.T) {
			lf, res, err := load.Analyze(path, alias.Analyzer)
			if err != nil {
				t.Fatalf("hopctl refuses what torch wrote: %v", err)
			}
			m := lf.Module
			layout, _ := m.Annotation("torch.export.archive_layout")
			layouts[layout] = true
			// The signature, spec by spec.
			sig := m.Signature
			if sig == nil {
				t.Fatal("no signature")
			}
			if len(sig.Inputs) != len(want.Signature.Inputs) || len(sig.Outputs) != len(want.Signature.Outputs) {
				t.Fatalf("signature has %d/%d specs, torch %d/%d", len(sig.Inputs), len(sig.Outputs), len(want.Signature.Inputs), len(want.Signature.Outputs))
			}
			for i, w := range want.Signature.Inputs {
				g := sig.Inputs[i]
				if g.Kind.String() != w.Kind || g.Name != w.Name || g.Target != w.Target || (w.Kind == "BUFFER" && g.Persistent != w.Persistent) {
					t.Errorf("input %d: got %s %s %q persistent=%v, torch %s %s %q persistent=%v", i, g.Name, g.Kind, g.Target, g.Persistent, w.Name, w.Kind, w.Target, w.Persistent)
				}
			}
			for j, w := range want.Signature.Outputs {
				g := sig.Outputs[j]
				if g.Kind.String() != w.Kind || g.Name != w.Name || g.Target != w.Target {
					t.Errorf("output %d: got %s %s %q, torch %s %s %q", j, g.Name, g.Kind, g.Target, w.Name, w.Kind, w.Target)
				}
			}
			// The graphs torch rebuilds from the archive.
			if _, failed := want.Nodes["error"]; !failed {
				for q, n := range want.Nodes {
					g := m.Graph(q)
					if g == nil {
						t.Errorf("torch has graph %q, hopctl not", q)
						continue
					}
					calls := 0
					for i := range g.Nodes {
						if g.Nodes[i].Op == ir.OpCallFunction {
							calls++
						}
					}
					if float64(calls) != n.(float64) {
						t.Errorf("graph %q: %d call_function nodes, torch.export.load %v", q, calls, n)
					}
				}
				if len(m.Graphs) != len(want.Nodes) {
					t.Errorf("%d graphs, torch.export.load %d", len(m.Graphs), len(want.Nodes))
				}
			}
			// Mutated inputs: what the program writes — in place (the
			// alias analysis of the root graph) or through mutation
			// output specs — is what a run of ep.module() changes.
			sums := res.Results[alias.Analyzer]
			root := sums[""].(*alias.Summary)
			var got []string
			inPlace := map[string]bool{}
			for _, i := range root.MutatedInputs {
				got = append(got, root.Inputs[i])
				inPlace[root.Inputs[i]] = true
			}
			for _, o := range sig.Outputs {
				switch o.Kind {
				case ir.OutputBufferMutation, ir.OutputParameterMutation:
					for _, in := range sig.Inputs {
						if in.Target == o.Target && (in.Kind == ir.InputBuffer || in.Kind == ir.InputParameter) && !inPlace[in.Name] {
							got = append(got, in.Name)
						}
					}
				case ir.OutputUserInputMutation:
					if !inPlace[o.Target] {
						got = append(got, o.Target)
					}
				}
			}
			slices.Sort(got)
			got = slices.Compact(got)
			wantMut := append([]string{}, want.Mutated...)
			if opaque := hasUnknownWriter(m); opaque != "" {
				// A custom op's schema is not in the archive: in training
				// IR its writes are invisible (reported as unknown-op).
				for _, g := range got {
					if !slices.Contains(wantMut, g) {
						t.Errorf("hopctl says %s is mutated, torch's run does not", g)
					}
				}
				if !strings.Contains(fmt.Sprint(res.Findings), "unknown-op") {
					t.Errorf("the writes of %s are invisible, yet no unknown-op finding", opaque)
				}
			} else if !slices.Equal(got, wantMut) {
				t.Errorf("mutated inputs %v, a run of ep.module() mutates %v", got, wantMut)
			}
			// Placeholders that lift one state_dict entry twice alias.
			gotAlias := map[string]int{}
			for _, p := range root.InpInpAlias {
				gotAlias[fmt.Sprint(p.From)] = p.To
			}
			if fmt.Sprint(gotAlias) != fmt.Sprint(want.RootInpInpAlias) && !(len(gotAlias) == 0 && len(want.RootInpInpAlias) == 0) {
				t.Errorf("root inp_inp_alias %v, torch's tensors %v", gotAlias, want.RootInpInpAlias)
			}
			// analyze names inputs by torch's kinds and state_dict keys.
			af := report.NewAnalyzeFile(path, m, res)
			rg := af.Graphs[0]
			if len(rg.InputTargets) != len(rg.Inputs) {
				t.Fatalf("analyze report: %d input targets for %d inputs", len(rg.InputTargets), len(rg.Inputs))
			}
			for i, name := range rg.Inputs {
				for _, w := range want.Signature.Inputs {
					if w.Name == name && (rg.InputTargets[i] != w.Target || rg.InputKinds[i] != w.Kind) {
						t.Errorf("analyze names input %s %s %q, torch %s %q", name, rg.InputKinds[i], rg.InputTargets[i], w.Kind, w.Target)
					}
				}
			}
			// print: as torch 2.14 prints an ExportedProgram, byte for byte
			// (torch 2.6 printed the signature as a dataclass repr; hopctl
			// prints the current form).
			if strings.Contains(path, "/2.14/") && want.Printed != "" {
				var b strings.Builder
				if err := ir.PrintExportedProgram(&b, m); err != nil {
					t.Fatal(err)
				}
				if b.String() != want.Printed {
					t.Errorf("print differs from torch's str(ep):\n%s\n--- torch:\n%s", b.String(), want.Printed)
				}
			}
			// torch 2.6 printed the graph the same way, statement for
			// statement, but for the calls hopctl rewrites into the current
			// conventions (scan, invoke_subgraph) and its indentation.
			if strings.Contains(path, "/2.6/") && want.Printed != "" {
				var b strings.Builder
				if err := ir.PrintExportedProgram(&b, m); err != nil {
					t.Fatal(err)
				}
				got, wantLines := statements(b.String()), statements(want.Printed)
				if !slices.Equal(got, wantLines) && !strings.Contains(path, "/scan.") && !strings.Contains(path, "/invoke_subgraph.") {
					t.Errorf("graph statements differ from torch 2.6's str(ep):\n%s\n--- torch:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
				}
			}
			// torch's own programs never lie about their mutations.
			for _, f := range lint.File(path).Findings {
				if f.Rule == sigmut.Rule {
					t.Errorf("%s on a program torch wrote: %s", f.Rule, f.Message)
				}
			}
			// HOP subgraphs: torch's check_input_alias_and_mutation.
			for q, h := range want.Hops {
				if h.Error != "" {
					continue
				}
				s, ok := sums[q].(*alias.Summary)
				if !ok {
					t.Errorf("no analysis of subgraph %q", q)
					continue
				}
				gotMut := append([]int{}, s.MutatedInputs...)
				if len(gotMut) == 0 {
					gotMut = nil
				}
				wantM := h.MutatedInputs
				if len(wantM) == 0 {
					wantM = nil
				}
				if !slices.Equal(gotMut, wantM) || len(s.InpInpAlias) != len(h.InpInpAlias) || len(s.InpOutAlias) != len(h.InpOutAlias) || len(s.OutOutAlias) != len(h.OutOutAlias) {
					t.Errorf("subgraph %s: mutated %v aliases %d/%d/%d, torch %v %v/%v/%v", q, gotMut, len(s.InpInpAlias), len(s.InpOutAlias), len(s.OutOutAlias), wantM, h.InpInpAlias, h.InpOutAlias, h.OutOutAlias)
				}
			}
		})
	}
	if !layouts["legacy"] || !layouts["pt2_archive"] {
		t.Errorf("layouts read: %v; want both legacy (torch 2.6) and pt2_archive (torch 2.14)", layouts)
	}
}

// hasUnknownWriter names a root call of an op outside the hopctl_test
// namespace's schema-less custom ops, or "".
func hasUnknownWriter(m *ir.Module) string {
	for _, n := range m.Root().Nodes {
		if strings.HasPrefix(n.Target, "hopctl_test.") {
			return n.Target
		}
	}
	return ""
}

// statements are the graph part of a printed program, one trimmed line
// per statement, without comments and blank lines.
func statements(printed string) []string {
	graph, _, _ := strings.Cut(printed, "Graph signature")
	var out []string
	for _, l := range strings.Split(graph, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
