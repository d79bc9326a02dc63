package opschema

import (
	"reflect"
	"testing"
)

func TestParseTorchReleases(t *testing.T) {
	table := TableReleases()
	if !reflect.DeepEqual(table, []string{"1.13", "2.0", "2.6", "2.14"}) {
		t.Fatalf("TableReleases() = %v", table)
	}
	for _, c := range []struct {
		spec, supported string
		want            []string
	}{
		{"", "", nil},
		{"2.6", "", []string{"2.6"}},
		{"2.6.0", "", []string{"2.6"}},
		{"2.14,2.6", "", []string{"2.6", "2.14"}},
		{"2.6, 2.6 ,2.14.1", "", []string{"2.6", "2.14"}},
		{"2.6..2.14", "", []string{"2.6", "2.14"}},
		{"1.13..2.6", "", []string{"1.13", "2.0", "2.6"}},
		{"2.7..2.9", "", []string{"2.7", "2.9"}},
		{"2.6..2.6", "", []string{"2.6"}},
		{"supported", "", table},
		{"supported", "2.6..2.14", []string{"2.6", "2.14"}},
		{"supported,1.13", "2.6", []string{"1.13", "2.6"}},
	} {
		got, err := ParseTorchReleases(c.spec, c.supported)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTorchReleases(%q, %q) = %v, %v; want %v", c.spec, c.supported, got, err, c.want)
		}
	}
	for _, c := range []struct{ spec, supported string }{
		{"2", ""}, {"2.x", ""}, {"2.14..2.6", ""}, {"2.6..", ""}, {"..2.6", ""}, {"2.6,,2.14", ""},
		{"latest", ""}, {"supported", "supported"}, {"supported", "2.6..x"}, {"2.6.0.1", ""}, {"-2.6", ""},
	} {
		if got, err := ParseTorchReleases(c.spec, c.supported); err == nil {
			t.Errorf("ParseTorchReleases(%q, %q) = %v, want an error", c.spec, c.supported, got)
		}
	}
}

func TestDifferingRows(t *testing.T) {
	if rows := DifferingRows([]string{"2.14"}); len(rows) != 0 {
		t.Errorf("one release: %d rows differ", len(rows))
	}
	ids := map[string]bool{}
	for _, d := range DifferingRows([]string{"2.6", "2.14"}) {
		ids[d.ID] = true
	}
	if !ids[DiffAliasInputOnly] || !ids[DiffDynamoUnchecked26] || ids[DiffMinCutRecompute113] {
		t.Errorf("2.6, 2.14: rows %v", ids)
	}
}
