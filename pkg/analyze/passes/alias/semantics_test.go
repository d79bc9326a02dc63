package alias_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
)

// TestRealOpSemantics: ops whose schema does not spell out their runtime
// meaning (set_ leaves self on source's storage), traced by torch 2.14
// with torch's check_input_alias_and_mutation as the oracle
// (python/tools/make_op_semantics.py): set_return and set_then_write are
// the triggers, add_return the near miss.
func TestRealOpSemantics(t *testing.T) {
	dir := "../../../../testdata/semantics"
	raw, err := os.ReadFile(filepath.Join(dir, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Programs map[string]struct {
			Subgraphs map[string]map[string]any `json:"subgraphs"`
		} `json:"programs"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Programs) < 3 {
		t.Fatalf("%d programs", len(v.Programs))
	}
	for name, p := range v.Programs {
		_, res := analyzeFile(t, filepath.Join(dir, name+".pb"))
		for q, want := range p.Subgraphs {
			sum, ok := res.Results[alias.Analyzer][q].(*alias.Summary)
			if !ok {
				t.Errorf("%s: no graph %q", name, q)
				continue
			}
			got := fmt.Sprintf("mutated_inputs=%s inp_inp_alias=%s inp_out_alias=%s out_out_alias=%s",
				fmtList(sum.MutatedInputs), fmtMap(sum.InpInpAlias), fmtMap(sum.InpOutAlias), fmtMap(sum.OutOutAlias))
			exp := fmt.Sprintf("mutated_inputs=%s inp_inp_alias=%s inp_out_alias=%s out_out_alias=%s",
				canon(want["mutated_inputs"]), canon(want["inp_inp_alias"]), canon(want["inp_out_alias"]), canon(want["out_out_alias"]))
			if got != exp {
				t.Errorf("%s graph %q:\n  hopctl %s\n  torch  %s", name, q, got, exp)
			}
		}
	}
}
