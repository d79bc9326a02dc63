package joint

import (
	"encoding/json"
	"path/filepath"
	"regexp"
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

// TestJointOutputNamesPrimals: for every exported program in testdata/pt2
// the joint can differentiate, the summary and the saved-value report, in
// text and JSON, never show a primals_N without the name it stands for.
func TestJointOutputNamesPrimals(t *testing.T) {
	paths, _ := filepath.Glob("../../../testdata/pt2/*/*.pt2")
	bare := regexp.MustCompile(`\bprimals_\d+\b( \()?`)
	seen := 0
	for _, p := range paths {
		dir := t.TempDir()
		opts := func(format string) *Options {
			return &Options{In: p, Partition: "mincut", FwOut: filepath.Join(dir, "fw.pb"), BwOut: filepath.Join(dir, "bw.pb"),
				Report: format == "", Format: format}
		}
		text, err := run(t, opts(""))
		if err != nil {
			continue // a program the joint refuses: TestJointOfExportedPrograms
		}
		for _, m := range bare.FindAllStringSubmatch(text, -1) {
			seen++
			if m[1] != " (" {
				t.Errorf("%s: %q without its name in:\n%s", p, m[0], text)
				break
			}
		}
		js, err := run(t, opts("json"))
		if err != nil {
			t.Fatalf("%s: --format json: %v", p, err)
		}
		type named struct {
			Name        string `json:"name"`
			ProgramName string `json:"program_name"`
		}
		var doc struct {
			MutatedInputs []named `json:"mutated_inputs"`
			InPlaceInputs []named `json:"in_place_inputs"`
			Partition     *struct {
				Saved []named `json:"saved"`
			} `json:"partition"`
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		all := append(doc.MutatedInputs, doc.InPlaceInputs...)
		if doc.Partition != nil {
			all = append(all, doc.Partition.Saved...)
		}
		for _, v := range all {
			if strings.HasPrefix(v.Name, "primals_") && v.ProgramName == "" {
				t.Errorf("%s: JSON %s without program_name", p, v.Name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no primals_N in any output: the test proves nothing")
	}
}
