package pt2

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestTorch26FormsRefused: torch 2.6 archives of scans the current scan
// form cannot express (over dim 1; reversed), exported by torch 2.6
// (python/tools/make_pt2_refused.py), are refused as invalid input naming
// the node; torch 2.6's dim-0 scan and invoke_subgraph are read in
// real_test.go (testdata/pt2/2.6).
func TestTorch26FormsRefused(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/torch2.6_scan_dim1.pt2":    "scan with dim=1 (an older torch's form): hopctl reads this form only with dim=0, reverse=False",
		"testdata/torch2.6_scan_reverse.pt2": "scan with reverse=True (an older torch's form)",
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

// TestOldFormsFromTable: pt2 rewrites exactly the table's older forms
// (opschema.HOP.OlderForms) plus listForms, and restates none of the
// table's: a list form is one only the rewrite can express (the current
// form is variadic). Every old form has every argument of the current form.
func TestOldFormsFromTable(t *testing.T) {
	table := 0
	for _, h := range opschema.HOPs() {
		for _, f := range h.OlderForms {
			table++
			found := false
			for _, o := range oldForms()[h.Target()] {
				found = found || o.old.String() == mustParse(t, f.Schema).String()
			}
			if !found {
				t.Errorf("%s: the table's older form %s is not rewritten", h.Name, f.Schema)
			}
		}
	}
	for _, f := range listForms {
		h, ok := opschema.LookupHOP(f.hop)
		if !ok {
			t.Fatalf("%s: no row", f.hop)
		}
		if !h.ParsedSchema().IsVararg {
			t.Errorf("%s: a list form of a HOP whose current form is not variadic belongs in the table (OlderForms)", f.hop)
		}
		for _, o := range h.OlderForms {
			if mustParse(t, o.Schema).String() == mustParse(t, f.schema).String() {
				t.Errorf("%s: list form %s restates the table's", f.hop, f.schema)
			}
		}
	}
	n := 0
	for target, fs := range oldForms() {
		n += len(fs)
		for _, f := range fs {
			for _, p := range f.cur.Arguments {
				if !p.KwargOnly && f.old.Argument(p.Name) < 0 {
					t.Errorf("%s: the current form's argument %s is not in the old form", target, p.Name)
				}
			}
		}
	}
	if n != table+len(listForms) || table == 0 {
		t.Errorf("%d old forms, want the table's %d (at least one) + %d list forms", n, table, len(listForms))
	}
}

func mustParse(t *testing.T, schema string) *opschema.Schema {
	t.Helper()
	s, err := opschema.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
