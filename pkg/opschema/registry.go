package opschema

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Source says which layer of a [Registry] a schema came from.
type Source int

// The registry's layers, in lookup order.
const (
	SourceNone    Source = iota // not found
	SourceFile                  // the graph file's own schema table
	SourceBuiltin               // the built-in table generated from torch (BuiltinTable)
	SourceHOP                   // hopctl's definitions of the higher-order operators (HOPs)
)

// String returns "none", "file", "builtin" or "hop".
func (s Source) String() string {
	switch s {
	case SourceFile:
		return "file"
	case SourceBuiltin:
		return "builtin"
	case SourceHOP:
		return "hop"
	}
	return "none"
}

// FileSchema is one entry of a graph file's schema table.
type FileSchema struct {
	// Name is the overload the entry is for, "aten::add.Tensor" (a target
	// spelling such as "aten.add.Tensor" is accepted too). When set, it must
	// name the schema's own overload. It may be empty.
	Name string
	// Schema is the schema string, as str(torch.FunctionSchema) prints it.
	Schema string
}

// SchemaError reports a file schema that could not be used.
type SchemaError struct {
	Index  int    // position in the list given to NewRegistry
	Name   string // the entry's Name
	Schema string // the entry's Schema
	Err    error  // a *ParseError, or what else is wrong
}

func (e *SchemaError) Error() string {
	name := e.Name
	if name == "" {
		name = truncate(e.Schema, 80)
	}
	return fmt.Sprintf("file schema %d (%s): %v", e.Index, name, e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Registry resolves FX call targets to schemas. It consults, in order:
//
//  1. the schemas carried by the graph file (SourceFile),
//  2. the built-in table of torch's schemas (SourceBuiltin, see BuiltinTable),
//  3. the HOP convention table (SourceHOP, see HOP): rows added by
//     WithHOPs, then the built-in rows (HOPs).
//
// A Registry is immutable and safe for concurrent use.
type Registry struct {
	builtin *Table // BuiltinTableFor the file's torch version
	file    map[OpName]*Schema
	names   []OpName // keys of file, sorted by OpName.Compare
	// hops are HOP rows added by WithHOPs, sorted by name, consulted
	// before the built-in table.
	hops []*HOP
	// lookups memoizes Lookup by target string: a graph calls few distinct
	// ops many times, and parsing the target each time dominated large runs.
	lookups sync.Map // string → lookupResult
}

type lookupResult struct {
	s   *Schema
	src Source
	ok  bool
}

// NewRegistry builds a registry over the graph file's schema table. Entries
// that do not parse, whose Name disagrees with the schema, or that repeat an
// overload with a different schema are left out and reported, in input
// order, as *SchemaError values joined into the returned error; the registry
// is usable either way and holds every other entry.
func NewRegistry(file []FileSchema) (*Registry, error) {
	return NewRegistryForTorch("", file)
}

// NewRegistryForTorch is NewRegistry whose built-in layer is the table of
// the torch version the file records (BuiltinTableFor).
func NewRegistryForTorch(torchVersion string, file []FileSchema) (*Registry, error) {
	r := &Registry{builtin: BuiltinTableFor(torchVersion), file: make(map[OpName]*Schema, len(file))}
	var errs []error
	for i, fs := range file {
		fail := func(err error) {
			errs = append(errs, &SchemaError{Index: i, Name: fs.Name, Schema: fs.Schema, Err: err})
		}
		s, err := parseShared(fs.Schema)
		if err != nil {
			fail(err)
			continue
		}
		name := s.OpName()
		if fs.Name != "" {
			n, err := ParseTarget(fs.Name)
			if err != nil {
				fail(err)
				continue
			}
			if n != name {
				fail(fmt.Errorf("entry is named %s but the schema is for %s", fs.Name, name))
				continue
			}
		}
		if prev, dup := r.file[name]; dup {
			if prev.String() != s.String() {
				fail(fmt.Errorf("second, different schema for %s", name))
			}
			continue
		}
		r.file[name] = s
		r.names = append(r.names, name)
	}
	slices.SortFunc(r.names, OpName.Compare)
	return r, errors.Join(errs...)
}

// NewRegistryForModule is NewRegistryForTorch over a module's torch
// version and schema table that also knows the HOPs its file records as
// derived from BaseHOP (Registry.WithHOPClasses).
func NewRegistryForModule(m *ir.Module) (*Registry, error) {
	file := make([]FileSchema, len(m.Schemas))
	for i, s := range m.Schemas {
		file[i] = FileSchema{Name: s.Name, Schema: s.Schema}
	}
	r, err := NewRegistryForTorch(m.TorchVersion, file)
	return r.WithHOPClasses(m.HOPClasses), err
}

// Lookup resolves a target (aten.add_.Tensor, aten.relu.default,
// higher_order.cond, or the schema spelling aten::add_.Tensor; see
// ParseTarget) to its schema and the layer that supplied it. It returns
// false for a target no layer knows, and for a malformed target.
//
// For a higher-order operator the schema is hopctl's calling-convention
// schema (see HOP); use Registry.HOP for its subgraph arguments.
func (r *Registry) Lookup(target string) (*Schema, Source, bool) {
	if r != nil {
		if v, ok := r.lookups.Load(target); ok {
			res := v.(lookupResult)
			return res.s, res.src, res.ok
		}
	}
	var res lookupResult
	if n, err := ParseTarget(target); err == nil {
		res.s, res.src, res.ok = r.LookupName(n)
	}
	if r != nil {
		r.lookups.Store(target, res)
	}
	return res.s, res.src, res.ok
}

// LookupName is Lookup for an already parsed name.
//
// An op of the alias corrections table (AliasCorrections) gets its corrected
// schema, from the layer that knows the op.
func (r *Registry) LookupName(n OpName) (*Schema, Source, bool) {
	s, src, ok := r.lookupName(n)
	return AliasCorrected(s), src, ok
}

func (r *Registry) lookupName(n OpName) (*Schema, Source, bool) {
	if r != nil {
		if s, ok := r.file[n]; ok {
			return s, SourceFile, true
		}
	}
	if s, ok := r.builtinTable().Lookup(n); ok {
		return s, SourceBuiltin, true
	}
	if n.Namespace == HigherOrderNamespace && n.Overload == "" {
		if h, ok := r.lookupHOP(n.Name); ok && h.schema != nil {
			return h.schema, SourceHOP, true
		}
	}
	return nil, SourceNone, false
}

// HOP returns the convention table row of the higher-order operator a
// target names (higher_order.cond, or torch.ops.higher_order.cond): a row
// added by WithHOPs, else the built-in table's.
func (r *Registry) HOP(target string) (*HOP, bool) {
	if name, ok := HOPName(target); ok {
		return r.lookupHOP(name) // the canonical spelling, without parsing
	}
	n, err := ParseTarget(target)
	if err != nil || n.Namespace != HigherOrderNamespace || n.Overload != "" {
		return nil, false
	}
	return r.lookupHOP(n.Name)
}

// lookupHOP finds a HOP row by name, in the rows WithHOPs added, then in
// the built-in table.
func (r *Registry) lookupHOP(name string) (*HOP, bool) {
	if r != nil && len(r.hops) > 0 {
		if h, ok := findHOP(r.hops, name); ok {
			return h, true
		}
	}
	return LookupHOP(name)
}

// ConditionalWrites returns the writes that schema s does not annotate but
// the op performs (see the corrections table, Corrections).
func (r *Registry) ConditionalWrites(s *Schema) []ConditionalWrite {
	return ConditionalWrites(s)
}

// FileSchemas returns the schemas taken from the graph file, sorted by
// namespace, name and overload (OpName.Compare).
func (r *Registry) FileSchemas() []*Schema {
	out := make([]*Schema, len(r.names))
	for i, n := range r.names {
		out[i] = r.file[n]
	}
	return out
}

// String summarises the registry for debugging.
func (r *Registry) String() string {
	return fmt.Sprintf("opschema.Registry{file: %d, builtin: torch %s}", len(r.names), r.builtinTable().TorchVersion())
}

// builtinTable is the registry's built-in layer (torch 1.13's for a nil
// registry).
func (r *Registry) builtinTable() *Table {
	if r == nil || r.builtin == nil {
		return BuiltinTable()
	}
	return r.builtin
}
