package alias_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
)

// TestDynamoPythonOperators: Dynamo records tensor arithmetic as Python
// operators (operator.add, operator.iadd, operator.setitem); the analysis
// reads each by the ATen op its Tensor dunder runs. The graphs are torch
// 2.14's Dynamo traces and the oracle is which arguments an eager run of
// each program changes (python/tools/make_dynamo_operator_traces.py): the
// augmented assignments and t[i] = v are the triggers, the functional
// operators and a scalar on the left (s = 1; s += buf) the near misses.
func TestDynamoPythonOperators(t *testing.T) {
	dir := "../../../../testdata/level"
	raw, err := os.ReadFile(filepath.Join(dir, "dynamo_operators.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle struct {
		MutatedInputs map[string][]string `json:"mutated_inputs"`
	}
	if err := json.Unmarshal(raw, &oracle); err != nil {
		t.Fatal(err)
	}
	if len(oracle.MutatedInputs) < 6 {
		t.Fatalf("oracle has %d programs", len(oracle.MutatedInputs))
	}
	writes := 0
	for name, want := range oracle.MutatedInputs {
		t.Run(name, func(t *testing.T) {
			_, res := analyzeFile(t, filepath.Join(dir, name+".pb"))
			for _, f := range res.Findings {
				t.Errorf("finding %s at %s: %s", f.Rule, f.Node, f.Message)
			}
			sum := res.Results[alias.Analyzer][""].(*alias.Summary)
			var got []string
			for _, i := range sum.MutatedInputs {
				// Dynamo names the placeholder of argument buf l_buf_.
				if n := sum.Inputs[i]; !slices.Contains(got, n[2:len(n)-1]) {
					got = append(got, n[2:len(n)-1])
				}
			}
			slices.Sort(got)
			want = slices.Clone(want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("mutated inputs %v, an eager run writes %v", got, want)
			}
			writes += len(want)
		})
	}
	if writes == 0 {
		t.Fatal("no program of the corpus writes an input: no trigger")
	}
}
