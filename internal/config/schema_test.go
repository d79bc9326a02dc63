package config

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestSchemaMatchesConfig keeps hopctl.schema.json and the Config types in
// step: at every level the schema's properties are exactly the yaml keys of
// the type, objects forbid other keys, and the fail-on enum is
// FailOnLevels.
func TestSchemaMatchesConfig(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	var check func(path string, node map[string]any, typ reflect.Type)
	check = func(path string, node map[string]any, typ reflect.Type) {
		props, _ := node["properties"].(map[string]any)
		if node["additionalProperties"] != false {
			t.Errorf("%s: the schema allows unknown keys", path)
		}
		var keys, want []string
		for k := range props {
			keys = append(keys, k)
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if k == "" || k == "-" {
				continue
			}
			want = append(want, k)
			sub, _ := props[k].(map[string]any)
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				sub, _ = sub["items"].(map[string]any)
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && sub != nil {
				check(path+"."+k, sub, ft)
			}
		}
		sort.Strings(keys)
		sort.Strings(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: schema properties %v, Config keys %v", path, keys, want)
		}
	}
	check("", s, reflect.TypeFor[Config]())
	lint := s["properties"].(map[string]any)["lint"].(map[string]any)["properties"].(map[string]any)
	var levels []string
	for _, l := range lint["fail-on"].(map[string]any)["enum"].([]any) {
		levels = append(levels, l.(string))
	}
	if !slices.Equal(levels, FailOnLevels) {
		t.Errorf("fail-on enum %v, FailOnLevels %v", levels, FailOnLevels)
	}
	for _, c := range []struct {
		yaml string
		ok   bool
	}{
		{"version: 1\n", true},
		{"version: 1\nlint:\n  suppress:\n    - rule: x\n      reason: y\n", true},
		{"version: 2\n", false},
		{"lint: {}\n", false},
		{"version: 1\nlint:\n  suppress:\n    - rule: x\n      reason: \"  \"\n", false},
	} {
		if err := CheckSchema([]byte(c.yaml)); (err == nil) != c.ok {
			t.Errorf("%q: CheckSchema = %v, want ok %v", c.yaml, err, c.ok)
		}
	}
}
