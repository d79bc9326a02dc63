package analyze

import (
	"reflect"
	"testing"
)

func TestReleasesSummary(t *testing.T) {
	for _, c := range []struct {
		r    Releases
		sev  Severity
		want string
	}{
		{Releases{Reported: []string{"2.14"}, Quiet: []string{"2.6"}}, Error, "refused by 2.14, accepted by 2.6"},
		{Releases{Reported: []string{"2.6", "2.14"}}, Error, "refused by 2.6–2.14"},
		{Releases{Reported: []string{"2.14"}, Quiet: []string{"1.13", "2.0", "2.6"}}, Warning, "reported by 2.14, not by 1.13–2.6"},
		{Releases{Reported: []string{"1.13", "2.14"}, Quiet: []string{"2.6"}}, Error, "refused by 1.13, 2.14, accepted by 2.6"},
	} {
		if got := c.r.Summary(c.sev); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

func TestMergeReleases(t *testing.T) {
	prov := func(in, node string) *Provenance {
		return &Provenance{Input: in, InputIndex: 0, Node: node, Path: []string{"cond", "g", node}}
	}
	// 2.6 words the same finding otherwise; 2.14 adds one and drops one.
	runs := [][]Finding{
		{
			{Rule: "hop-input-mutation", Severity: Error, Node: "cond", Message: "2.6 words", Provenance: prov("x", "add_")},
			{Rule: "hop-structure", Severity: Error, Node: "scan", Message: "zero length"},
		},
		{
			{Rule: "hop-input-mutation", Severity: Error, Node: "cond", Message: "2.14 words", Provenance: prov("x", "add_")},
			{Rule: "hop-input-alias", Severity: Error, Node: "cond", Message: "aliasing", Provenance: prov("x", "view")},
		},
	}
	got := MergeReleases(nil, []string{"2.6", "2.14"}, runs)
	type row struct {
		msg             string
		reported, quiet []string
	}
	var rows []row
	for _, f := range got {
		rows = append(rows, row{f.Message, f.Releases.Reported, f.Releases.Quiet})
	}
	want := []row{
		{"2.14 words", []string{"2.6", "2.14"}, nil},
		{"aliasing", []string{"2.14"}, []string{"2.6"}},
		{"zero length", []string{"2.6"}, []string{"2.14"}},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("MergeReleases:\n got %+v\nwant %+v", rows, want)
	}
	if r := got[1].Releases.Rows; !reflect.DeepEqual(r, []string{"alias-input-output-only", "invoke-subgraph-grad-2.6", "scan-alias-2.6"}) {
		// No module: every HOP's rows, the Dynamo and export ones left out.
		t.Errorf("rows %v", r)
	}
	// Two findings of one key in one run stay two.
	dup := []Finding{{Rule: "r", Node: "n", Message: "a"}, {Rule: "r", Node: "n", Message: "a"}}
	if got := MergeReleases(nil, []string{"2.6", "2.14"}, [][]Finding{dup, dup}); len(got) != 2 || len(got[1].Releases.Reported) != 2 {
		t.Errorf("duplicates: %+v", got)
	}
}
