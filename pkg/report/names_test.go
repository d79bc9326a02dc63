package report_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// TestTextNamesEveryIndex: on every exported program in testdata/pt2 and
// every real model, the text report writes each input and output index it
// prints with the program's name beside it ("1 (y)"), PyTorch's indices
// kept; only AOTAutograd's index into its own list of intermediate bases
// (base_idx=) stands alone. The files must show each kind of line, or this
// proves little.
func TestTextNamesEveryIndex(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/pt2/*/*.pt2")
	models, _ := filepath.Glob("../../testdata/models/*.pb")
	paths = append(paths, models...)
	bare := regexp.MustCompile(`(^|[\[{,:] |input |output )(\d+)($|[,:}\]]| [^(])`)
	seen := map[string]int{}
	for _, p := range paths {
		f, res, err := load.Analyze(p, alias.Analyzer)
		if err != nil {
			continue // archives the loader refuses are load's tests
		}
		var b strings.Builder
		if err := report.WriteAnalyzeText(&b, &report.AnalyzeDoc{Files: []report.AnalyzeFile{report.NewAnalyzeFile(p, f.Module, res)}}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			l := strings.TrimSpace(line)
			kind := ""
			for _, k := range []string{"mutated_inputs:", "inp_inp_alias:", "aot input", "aot output"} {
				if strings.HasPrefix(l, k) {
					kind = k
				}
			}
			if kind == "" {
				continue
			}
			l = regexp.MustCompile(`base_idx=\d+|\(\d+ inputs, \d+ outputs\)`).ReplaceAllString(l, "")
			if m := bare.FindStringSubmatch(l); m != nil {
				t.Errorf("%s: index %s without its name: %s", p, m[2], strings.TrimSpace(line))
			}
			if strings.Contains(l, "(") {
				seen[kind]++
			}
		}
	}
	for _, k := range []string{"mutated_inputs:", "inp_inp_alias:", "aot input", "aot output"} {
		if seen[k] == 0 {
			t.Errorf("no file shows a named %q line", k)
		}
	}
}

// TestJSONNamesEveryIndex: in the JSON document of the same files, every
// pair of the three alias maps is in aliases with both names, and every
// mutated input has its writes, named, in mutations.
func TestJSONNamesEveryIndex(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/pt2/*/*.pt2")
	models, _ := filepath.Glob("../../testdata/models/*.pb")
	paths = append(paths, models...)
	pairs := 0
	for _, p := range paths {
		f, res, err := load.Analyze(p, alias.Analyzer)
		if err != nil {
			continue
		}
		for _, g := range report.NewAnalyzeFile(p, f.Module, res).Graphs {
			named := map[[3]int]report.NamedAlias{}
			for _, a := range g.Aliases {
				k := map[string]int{"inp_inp_alias": 0, "inp_out_alias": 1, "out_out_alias": 2}[a.Map]
				named[[3]int{k, a.From, a.To}] = a
			}
			for k, m := range []report.IndexMap{g.InpInpAlias, g.InpOutAlias, g.OutOutAlias} {
				for _, pr := range m {
					pairs++
					a, ok := named[[3]int{k, pr.From, pr.To}]
					if !ok || a.FromName == "" || a.ToName == "" {
						t.Errorf("%s: graph %q: alias %d→%d of map %d without its names (%+v)", p, g.Name, pr.From, pr.To, k, a)
					}
				}
			}
			for _, in := range g.MutatedInputs {
				found := false
				for _, mu := range g.Mutations {
					found = found || mu.Input == in && mu.Name != ""
				}
				if !found {
					t.Errorf("%s: graph %q: mutated input %d has no named write", p, g.Name, in)
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no alias pair in the files: the test proves nothing")
	}
}
