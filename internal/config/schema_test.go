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

// schemaCorpus: configuration files valid and invalid in every way the
// schema can reject, several problems per file included.
var schemaCorpus = []string{
	"",
	"version: 1\n",
	"version: 2\n",
	"version: 1.5\n",
	"version: \"1\"\n",
	"lint: {}\n",
	"- 1\n",
	"42\n",
	"version: 1\nlint: 3\n",
	"version: 1\nx: 1\ny: [1]\n",
	"version: 1\nlint:\n  failon: error\n  fail-on: loud\n",
	"version: 1\nlint:\n  fail-on: none\n  suppress: []\n",
	"version: 1\nlint:\n  suppress: {}\n",
	"version: 1\nlint:\n  suppress:\n    - rule: cycle\n",
	"version: 1\nlint:\n  suppress:\n    - rule: cycle\n    - rule: ''\n      reason: ' '\n      node: 3\n    - 7\n",
	"version: 1\nlint:\n  suppress:\n    - {rule: x, reason: y, path: '**/a', graph: '<root>', node: n, extra: 1}\n",
	"version: 1\ninput:\n  max-size: 0\n",
	"version: 1\ninput:\n  max-size: 12\n",
	"version: 1\ninput:\n  max-size: 1.5\n",
	"version: 1\ninput:\n  max-size: ' 64 MiB '\n",
	"version: 1\ninput:\n  max-size: 1XB\n  torch-version: true\n",
	"version: 1\ninput:\n  torch-version: '2.14'\n",
	"version: 1\ninput:\n  torch-version: '2.x'\n  other: null\n",
	"version: 1\ninput: null\nlint: []\n",
	"version: 1\n\"a/b~c\": 1\n",
}

// TestCheckSchemaMessages: CheckSchema names every violation's instance
// location and what is wrong there.
func TestCheckSchemaMessages(t *testing.T) {
	invalid := 0
	for _, doc := range schemaCorpus {
		if checkFormat(t, []byte(doc)) {
			invalid++
		}
	}
	if invalid < len(schemaCorpus)/2 {
		t.Errorf("only %d of %d corpus files invalid", invalid, len(schemaCorpus))
	}
	for doc, want := range map[string]string{
		"version: 1\nlint:\n  suppress:\n    - rule: cycle\n": `schema: at /lint/suppress/0: required: missing properties: ["reason"]`,
		"version: 1\nlint:\n  failon: error\n":                `schema: at /lint: unexpected additional properties ["failon"]`,
		"version: 1\ninput:\n  max-size: 0\n":                 `schema: at /input/max-size: minimum: 0 is less than 1`,
		"lint: {}\n":                                          `schema: at /: required: missing properties: ["version"]`,
		"version: 1\nlint:\n  suppress:\n    - rule: cycle\n    - 7\ninput:\n  max-size: 0\n": "schema: at /input/max-size: minimum: 0 is less than 1\n" +
			`schema: at /lint/suppress/0: required: missing properties: ["reason"]` + "\n" +
			"schema: at /lint/suppress/1: type: 7 has type \"integer\", want \"object\"",
	} {
		if err := CheckSchema([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", doc, err, want)
		}
	}
}

func FuzzCheckSchema(f *testing.F) {
	for _, doc := range schemaCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFormat(t, data) })
}

// checkFormat reports whether data violates the schema, failing t when a
// message is not "schema: at LOC: problem" or holds a control character.
func checkFormat(t *testing.T, data []byte) bool {
	t.Helper()
	err := CheckSchema(data)
	if err == nil {
		return false
	}
	for line := range strings.Lines(err.Error()) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, "schema: at ") {
			return false // a YAML error, not a violation
		}
		if _, _, ok := strings.Cut(strings.TrimPrefix(line, "schema: at "), ": "); !ok {
			t.Fatalf("%q: message %q is not \"schema: at LOC: problem\"", data, line)
		}
		if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("%q: message %q holds a control character", data, line)
		}
	}
	return true
}
