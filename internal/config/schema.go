package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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

var schema = func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		panic("hopctl.schema.json: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		panic("hopctl.schema.json: " + err.Error())
	}
	return c.MustCompile(SchemaURL)
}()

var english = message.NewPrinter(language.English)

// CheckSchema validates a configuration file's YAML against
// hopctl.schema.json, every violation on its own line.
func CheckSchema(data []byte) error {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if v == nil {
		v = map[string]any{}
	}
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("not a JSON-like document: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	err = schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var leaves func(e *jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			msgs = append(msgs, fmt.Sprintf("schema: at %s: %s", loc, e.ErrorKind.LocalizedString(english)))
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(ve)
	return errors.New(strings.Join(msgs, "\n"))
}
