package pt2

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestVersionEdges: the schema major/minor edges this package accepts or
// refuses, on hand edits of testdata/pt2/hand/every_argument.json (schema
// 8.20). Real 8.2 (torch 2.6) and 8.20 (torch 2.14) programs are read in
// real_test.go.
func TestVersionEdges(t *testing.T) {
	base, err := os.ReadFile("../../testdata/pt2/hand/every_argument.json")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Decode(base, "base.json")
	if err != nil {
		t.Fatal(err)
	}
	refText := printed(t, ref)
	edit := func(data []byte, pairs ...string) []byte {
		for i := 0; i < len(pairs); i += 2 {
			if !bytes.Contains(data, []byte(pairs[i])) {
				t.Fatalf("edit %q does not apply", pairs[i])
			}
			data = bytes.ReplaceAll(data, []byte(pairs[i]), []byte(pairs[i+1]))
		}
		return data
	}
	cases := []struct {
		name string
		data []byte
		// refuse is a substring of the error; "" means the program reads
		// and prints as the 8.20 original does.
		refuse string
	}{
		{"8.1/8.2: as_none is an empty tuple, no Node.name or is_hop_single_tensor_return, a HOP's 1-tuple as one as_tensors",
			edit(base, `"as_none": true`, `"as_none": []`, `"minor": 20`, `"minor": 1`,
				`, "is_hop_single_tensor_return": null`, ``, `, "is_hop_single_tensor_return": false`, ``,
				`, "name": "every"}`, `}`, `, "name": "cond"}`, `}`, `, "name": "f"}`, `}`, `, "name": "sin"}`, `}`, `, "name": "cos"}`, `}`,
				`"outputs": [{"as_tensor": {"name": "getitem"}}], "metadata": {"stack_trace"`, `"outputs": [{"as_tensors": [{"name": "getitem"}]}], "metadata": {"stack_trace"`), ""},
		{"8.2: bare NaN/Infinity tokens (Python's json default)",
			edit(base, `"NaN"`, `NaN`, `"Infinity"`, `Infinity`, `"minor": 20`, `"minor": 2`), ""},
		{"a newer minor (8.99) with fields this package does not know",
			edit(base, `"minor": 20}`, `"minor": 99}, "future_field": {"x": [1]}`, `"is_single_tensor_return": false`, `"is_single_tensor_return": false, "future_graph_field": 1`), ""},
		{"enums spelled by member name",
			edit(base, `"dtype": 7`, `"dtype": "FLOAT"`, `"layout": 7`, `"layout": "Strided"`, `"kind": 2`, `"kind": "KEYWORD"`), ""},
		{"major 7 (torch 2.1–2.4 wrote majors below 8)", edit(base, `"major": 8`, `"major": 7`), "schema version 7.20 is older than this hopctl reads"},
		{"major 9", edit(base, `"major": 8`, `"major": 9`), "schema version 9.20 is newer than this hopctl reads"},
		{"no schema_version", edit(base, `"schema_version": {"major": 8, "minor": 20}, `, ``), "no schema_version"},
		{"ScalarType UNKNOWN", edit(base, `"p": {"dtype": 12`, `"p": {"dtype": 0`), "dtype is UNKNOWN (0)"},
		{"a ScalarType newer than 8.20", edit(base, `"p": {"dtype": 12`, `"p": {"dtype": 36`), "unknown dtype 36"},
		{"ArgumentKind UNKNOWN", edit(base, `"kind": 2`, `"kind": 0`), "argument kind 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.data, "edge.json")
			if c.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("want an error containing %q, got %v", c.refuse, err)
				}
				if _, ok := err.(ir.InputError); !ok {
					t.Errorf("error %T is not an input error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m, "edge.json"); err != nil {
				t.Fatal(err)
			}
			got := printed(t, m)
			// Without Node.name (before 8.16) a call with no single output
			// is named as torch 2.6 named it, after its OpOverload.
			got = strings.ReplaceAll(got, "every_default", "every")
			if got != refText {
				t.Errorf("reads differently from the 8.20 original:\n%s\n--- original:\n%s", got, refText)
			}
		})
	}
}

func printed(t *testing.T, m *ir.Module) string {
	t.Helper()
	var b strings.Builder
	if err := ir.PrintReadable(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
