package config

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hopctl/hopctl/pkg/ir"
	"go.yaml.in/yaml/v3"
)

// SchemaJSON is hopctl.schema.json: the configuration file format as a
// JSON Schema (draft 2020-12). TestSchemaMatchesConfig keeps it and Config
// in step.
//
//go:embed hopctl.schema.json
var SchemaJSON []byte

// SchemaURL is the schema's $id, for editors ("# yaml-language-server:
// $schema=…" in .hopctl.yaml).
const SchemaURL = "https://github.com/hopctl/hopctl/blob/main/internal/config/hopctl.schema.json"

// The validator is github.com/google/jsonschema-go, the one JSON Schema
// library of the configuration. The schema is parsed at the first
// CheckSchema, so only `hopctl config verify` reads it.
var schemaDoc = sync.OnceValue(func() *jsonschema.Schema {
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(SchemaJSON, s); err != nil {
		panic("hopctl.schema.json: " + err.Error())
	}
	return s
})

// CheckSchema validates a configuration file's YAML against
// hopctl.schema.json, every violation on its own line as
// "schema: at /json/pointer: problem" (control characters from the file
// escaped, as ir.Printable does).
func CheckSchema(data []byte) error {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if v == nil {
		v = map[string]any{}
	}
	// Through JSON, so the instance has JSON's types (YAML's map keys and
	// integers become strings and float64).
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("not a JSON-like document: %w", err)
	}
	var inst any
	if err := json.Unmarshal(js, &inst); err != nil {
		return err
	}
	var msgs []string
	if err := violations(schemaDoc(), inst, "", &msgs); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// violations appends every violation of schema s by the instance v at
// location loc (a JSON pointer). The library stops at the first violation
// and names schema paths, so the instance is walked here along the two
// applicators that descend into it, properties and items: each level is
// validated by the library against s with those subschemas replaced by the
// schema that accepts anything (every other keyword, additionalProperties
// included, stays and is checked at this level), then each property and
// item against its own subschema. Together that is exactly validation
// against s. The walk is needed because the library stops at the first
// violation, and a user fixing a file wants every one of them at once.
func violations(s *jsonschema.Schema, v any, loc string, msgs *[]string) error {
	level := *s
	if len(s.Properties) > 0 {
		level.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		for k := range s.Properties {
			level.Properties[k] = &jsonschema.Schema{}
		}
	}
	if s.Items != nil {
		level.Items = &jsonschema.Schema{}
	}
	r, err := level.Resolve(&jsonschema.ResolveOptions{BaseURI: SchemaURL})
	if err != nil {
		return fmt.Errorf("hopctl.schema.json: %w", err)
	}
	if err := r.Validate(v); err != nil {
		*msgs = append(*msgs, fmt.Sprintf("schema: at %s: %s", ir.Printable(pointer(loc)), ir.Printable(problem(err, s, v))))
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if ps := s.Properties[k]; ps != nil {
				if err := violations(ps, v[k], loc+"/"+escapePointer(k), msgs); err != nil {
					return err
				}
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range v {
				if err := violations(s.Items, e, loc+"/"+strconv.Itoa(i), msgs); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func pointer(loc string) string {
	if loc == "" {
		return "/"
	}
	return loc
}

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// problem is the library's message for a violation of s by v without its
// "validating SCHEMA: " prefixes (the caller gives the location). The
// library prints a number bound's value as a fraction and the bound with
// six decimals ("minimum: 0/1 is less than 1.000000"); those are said
// again with the numbers as the file and the schema write them.
func problem(err error, s *jsonschema.Schema, v any) string {
	m := err.Error()
	for {
		rest, ok := strings.CutPrefix(m, "validating ")
		if !ok {
			break
		}
		_, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		m = after
	}
	n, isNum := v.(float64)
	for _, b := range []struct {
		keyword, relation string
		bound             *float64
	}{
		{"minimum", "is less than", s.Minimum},
		{"maximum", "is greater than", s.Maximum},
		{"exclusiveMinimum", "is less than or equal to", s.ExclusiveMinimum},
		{"exclusiveMaximum", "is greater than or equal to", s.ExclusiveMaximum},
	} {
		if isNum && b.bound != nil && strings.HasPrefix(m, b.keyword+": ") {
			return fmt.Sprintf("%s: %s %s %s", b.keyword, number(n), b.relation, number(*b.bound))
		}
	}
	return m
}

func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
