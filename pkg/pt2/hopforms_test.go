package pt2

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestTorch26FormsRefused: torch 2.6 archives of scans the current scan
// form cannot express (over dim 1; reversed), exported by torch 2.6
// (python/tools/make_pt2_refused.py), are refused as invalid input naming
// the node; torch 2.6's dim-0 scan and invoke_subgraph are read in
// real_test.go (testdata/pt2/2.6).
func TestTorch26FormsRefused(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/torch2.6_scan_dim1.pt2":    "scan over dim 1 with reverse=False (torch 2.6's form)",
		"testdata/torch2.6_scan_reverse.pt2": "scan over dim 0 with reverse=True (torch 2.6's form)",
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode(data, file)
		var in ir.InputError
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "scan") || !errors.As(err, &in) {
			t.Errorf("%s: %v (%T), want an input error containing %q", file, err, err, want)
		}
	}
}

// TestTorch26FormsNamedByTable: every old form names a HOP of the table
// and only arguments the current form has or its check reads.
func TestTorch26FormsNamedByTable(t *testing.T) {
	if len(oldForms) != len(torch26Forms) {
		t.Fatalf("%d old forms resolved of %d", len(oldForms), len(torch26Forms))
	}
	for target, f := range oldForms {
		for _, p := range f.cur.Arguments {
			if !p.KwargOnly && f.old.Argument(p.Name) < 0 {
				t.Errorf("%s: the current form's argument %s is not in torch 2.6's form", target, p.Name)
			}
		}
	}
}
