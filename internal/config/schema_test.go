package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
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

// TestCheckSchemaAgreesWithOracle: CheckSchema (google/jsonschema-go,
// walked level by level) and santhosh-tekuri/jsonschema (an independent
// draft 2020-12 implementation, linked into tests only) find violations at
// the same instance locations, and CheckSchema says what each is.
func TestCheckSchemaAgreesWithOracle(t *testing.T) {
	invalid := 0
	for _, doc := range schemaCorpus {
		if compareWithOracle(t, []byte(doc)) {
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
	f.Fuzz(func(t *testing.T, data []byte) { compareWithOracle(t, data) })
}

var oracle = sync.OnceValue(func() *santhosh.Schema {
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		panic(err)
	}
	c := santhosh.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		panic(err)
	}
	return c.MustCompile(SchemaURL)
})

// compareWithOracle reports whether data is a YAML document that violates
// the schema, failing t when CheckSchema and the oracle disagree on where.
func compareWithOracle(t *testing.T, data []byte) bool {
	t.Helper()
	var v any
	if yaml.Unmarshal(data, &v) != nil {
		return false
	}
	if v == nil {
		v = map[string]any{}
	}
	js, err := json.Marshal(v)
	if err != nil {
		return false
	}
	inst, err := santhosh.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	var ve *santhosh.ValidationError
	if errors.As(oracle().Validate(inst), &ve) {
		var leaves func(e *santhosh.ValidationError)
		leaves = func(e *santhosh.ValidationError) {
			if len(e.Causes) == 0 {
				want = append(want, ir.Printable("/"+strings.Join(e.InstanceLocation, "/")))
			}
			for _, c := range e.Causes {
				leaves(c)
			}
		}
		leaves(ve)
	}
	var got []string
	if err := CheckSchema(data); err != nil {
		for line := range strings.Lines(err.Error()) {
			rest, ok := strings.CutPrefix(line, "schema: at ")
			loc, _, ok2 := strings.Cut(rest, ": ")
			if !ok || !ok2 {
				t.Fatalf("%q: message %q is not \"schema: at LOC: problem\"", data, line)
			}
			got = append(got, loc)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("%q: CheckSchema finds violations at %q, the oracle at %q (%v)", data, got, want, CheckSchema(data))
	}
	return len(want) > 0
}
