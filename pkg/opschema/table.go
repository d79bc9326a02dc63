package opschema

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// atenSchemas is the built-in schema table: every schema torch 1.13
// registers (torch._C._jit_get_all_schemas()), one str(schema) per line,
// sorted, after a '#' header naming the torch version. Regenerate it with
//
//	/usr/bin/python3 python/tools/dump_schemas.py
//
//go:embed aten_schemas.txt
var atenSchemas string

// Table is a set of parsed schemas keyed by operator overload. It is
// immutable once built.
type Table struct {
	version string
	schemas []*Schema // sorted by OpName.Compare
	byName  map[OpName]*Schema
	errs    []error
}

var (
	builtinOnce  sync.Once
	builtinTable *Table
)

// BuiltinTable returns the built-in table of torch's registered schemas
// (aten, prim, prims, quantized, ...), parsing the embedded text on first use.
// It is safe for concurrent use.
func BuiltinTable() *Table {
	builtinOnce.Do(func() { builtinTable = ParseTable("aten_schemas.txt", atenSchemas) })
	return builtinTable
}

// ParseTable parses a schema table: one schema per line; blank lines and
// lines starting with '#' are skipped, and a first header line of the form
// "# torch VERSION: ..." gives the torch version. Lines that do not parse,
// and repeated overloads (the first one wins), are reported by Errors, each
// naming file and line; the table holds every other schema.
func ParseTable(file, text string) *Table {
	t := &Table{byName: make(map[OpName]*Schema)}
	lineNo := 0
	var buf []token
	for line := range strings.Lines(text) {
		lineNo++
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			if lineNo == 1 {
				if v, ok := strings.CutPrefix(trimmed, "# torch "); ok {
					t.version, _, _ = strings.Cut(v, ":")
				}
			}
			continue
		}
		s, err := parseWith(line, &buf)
		if err != nil {
			t.errs = append(t.errs, fmt.Errorf("%s:%d: %w", file, lineNo, err))
			continue
		}
		name := s.OpName()
		if _, dup := t.byName[name]; dup {
			t.errs = append(t.errs, fmt.Errorf("%s:%d: second schema for %s ignored", file, lineNo, name))
			continue
		}
		t.byName[name] = s
		t.schemas = append(t.schemas, s)
	}
	slices.SortFunc(t.schemas, func(a, b *Schema) int { return a.OpName().Compare(b.OpName()) })
	return t
}

// Lookup returns the schema of the named overload.
func (t *Table) Lookup(n OpName) (*Schema, bool) {
	if t == nil {
		return nil, false
	}
	s, ok := t.byName[n]
	return s, ok
}

// Schemas returns every schema of the table, sorted by namespace, name and
// overload (OpName.Compare). The slice is a copy; the schemas are shared.
func (t *Table) Schemas() []*Schema { return slices.Clone(t.schemas) }

// Len returns the number of schemas in the table.
func (t *Table) Len() int { return len(t.schemas) }

// TorchVersion returns the torch version named by the table's header, or "".
func (t *Table) TorchVersion() string { return t.version }

// Errors returns the problems found while parsing the table, in line order.
func (t *Table) Errors() []error { return slices.Clone(t.errs) }
