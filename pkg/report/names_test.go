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
