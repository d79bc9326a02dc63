package opschema

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strconv"
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

// atenSchemas214 is torch 2.14's table, dumped the same way in the torch
// 2.14 chroot (scripts/torch.sh 2.14 -- python3 python/tools/dump_schemas.py
// --table pkg/opschema/aten_schemas_2.14.txt).
//
//go:embed aten_schemas_2.14.txt
var atenSchemas214 string

// Table is a set of parsed schemas keyed by operator overload. It is
// immutable once built.
type Table struct {
	version string
	schemas []*Schema // sorted by OpName.Compare
	byName  map[OpName]*Schema
	errs    []error
	// lazy is set for a table that parses each schema on first Lookup
	// (the built-in one: a command needs a few dozen of its thousands of
	// schemas).
	lazy *lazyTable
}

// lazyTable holds the unparsed lines of a lazily parsed table; its mutex
// guards the Table's byName, schemas and errs as well.
type lazyTable struct {
	mu        sync.Mutex
	file      string
	text      string
	pending   map[OpName]string // the first line of each overload not yet parsed
	completed bool              // every line parsed: schemas and errs are final
	// sorted is set for a text whose schema lines are sorted bytewise with
	// distinct operator names, after at most a header of comments (the
	// built-in one; TestBuiltinTextSorted): lines are then found by binary
	// search in the text (sortedLine), and pending stays empty.
	sorted bool
}

var (
	builtinOnce     sync.Once
	builtinTable    *Table
	builtin214Once  sync.Once
	builtin214Table *Table
)

// BuiltinTable returns the built-in table of torch's registered schemas
// (aten, prim, prims, quantized, ...), parsing the embedded text on first use.
// It is safe for concurrent use.
func BuiltinTable() *Table {
	builtinOnce.Do(func() { builtinTable = newSortedLazyTable("aten_schemas.txt", atenSchemas) })
	return builtinTable
}

// BuiltinTableFor returns the built-in table for a file's recorded torch
// version (File.torch_version): torch 2.14's for torch 2.x ("2.6.0",
// "2.14.1+debian", "<=2.4": ops such as _native_batch_norm_legit and the SymBool
// schemas exist only there), torch 1.13's for 1.x and for a version that is
// unknown or not torch's ("", "synthetic"). Files carry the schemas of the
// ops they call, so the table only fills in what a file leaves out.
func BuiltinTableFor(torchVersion string) *Table {
	// A bound such as "<=2.4" (schema.yaml's default torch_version) names
	// the major it bounds.
	major, _, _ := strings.Cut(strings.TrimLeft(torchVersion, "<>=~ "), ".")
	if n, err := strconv.Atoi(major); err != nil || n < 2 {
		return BuiltinTable()
	}
	builtin214Once.Do(func() { builtin214Table = newSortedLazyTable("aten_schemas_2.14.txt", atenSchemas214) })
	return builtin214Table
}

// ParseTable parses a schema table: one schema per line; blank lines and
// lines starting with '#' are skipped, and a first header line of the form
// "# torch VERSION: ..." gives the torch version. Lines that do not parse,
// and repeated overloads (the first one wins), are reported by Errors, each
// naming file and line; the table holds every other schema.
func ParseTable(file, text string) *Table {
	t := &Table{byName: make(map[OpName]*Schema)}
	var buf []token
	t.version = schemaLines(text, func(lineNo int, line string) bool {
		s, err := parseWith(line, &buf)
		if err != nil {
			t.errs = append(t.errs, fmt.Errorf("%s:%d: %w", file, lineNo, err))
			return true
		}
		name := s.OpName()
		if _, dup := t.byName[name]; dup {
			t.errs = append(t.errs, fmt.Errorf("%s:%d: second schema for %s ignored", file, lineNo, name))
			return true
		}
		t.byName[name] = s
		t.schemas = append(t.schemas, s)
		return true
	})
	slices.SortFunc(t.schemas, func(a, b *Schema) int { return a.OpName().Compare(b.OpName()) })
	return t
}

// schemaLines calls fn with each schema line of a table's text (not blank,
// not a '#' comment) and its 1-based number, until fn returns false, and
// returns the torch version of a "# torch VERSION: ..." first line.
func schemaLines(text string, fn func(lineNo int, line string) bool) (version string) {
	lineNo := 0
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
					version, _, _ = strings.Cut(v, ":")
				}
			}
			continue
		}
		if !fn(lineNo, line) {
			break
		}
	}
	return version
}

// newLazyTable is ParseTable, parsing each schema when it is first looked
// up. It reads each line's operator name from the text before '('; when a
// line does not have that shape it parses the whole table at once.
func newLazyTable(file, text string) *Table {
	t := &Table{byName: map[OpName]*Schema{}, lazy: &lazyTable{file: file, text: text, pending: map[OpName]string{}}}
	quick := true
	t.version = schemaLines(text, func(_ int, line string) bool {
		n, ok := lineOpName(strings.TrimSpace(line))
		if !ok {
			quick = false
			return false
		}
		if _, dup := t.lazy.pending[n]; !dup {
			t.lazy.pending[n] = line
		}
		return true
	})
	if !quick {
		t.lazy.complete(t)
	}
	return t
}

// newSortedLazyTable is newLazyTable for a text whose schema lines are
// sorted bytewise and name distinct overloads: it reads nothing before the
// first Lookup.
func newSortedLazyTable(file, text string) *Table {
	t := &Table{byName: map[OpName]*Schema{}, lazy: &lazyTable{file: file, text: text, sorted: true}}
	first, _, _ := strings.Cut(text, "\n")
	t.version = schemaLines(first, func(int, string) bool { return false })
	return t
}

// sortedLine returns the line of a sorted text that starts with key (an
// operator name and its '('), by binary search over the text's bytes: the
// line holding a byte is found around it, and lines are in order (the
// header's comments, '#', sort before every operator name). Each lookup
// reads a few kilobytes, where an index of the line starts would read
// the whole text. Called with mu held.
func (l *lazyTable) sortedLine(key string) (string, bool) {
	text := l.text
	lineAt := func(off int) string {
		start := strings.LastIndexByte(text[:off], '\n') + 1
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		return strings.TrimRight(text[start:end], "\r")
	}
	off := sort.Search(len(text), func(off int) bool { return lineAt(off) >= key })
	if off < len(text) {
		if ln := lineAt(off); strings.HasPrefix(ln, key) {
			return ln, true
		}
	}
	return "", false
}

// lineOpName reads the operator name of a schema line, "ns::name.overload(".
func lineOpName(line string) (OpName, bool) {
	head, _, ok := strings.Cut(line, "(")
	if !ok {
		return OpName{}, false
	}
	ns, rest, ok := strings.Cut(head, "::")
	if !ok || ns == "" || rest == "" || strings.ContainsAny(head, " \t") {
		return OpName{}, false
	}
	name, overload, _ := strings.Cut(rest, ".")
	return OpName{Namespace: ns, Name: name, Overload: overload}, name != ""
}

// complete parses every line, keeping the schemas already handed out, so
// the table equals ParseTable's. Called with mu held (or before sharing).
func (l *lazyTable) complete(t *Table) {
	if l.completed {
		return
	}
	full := ParseTable(l.file, l.text)
	for i, s := range full.schemas {
		if old, ok := t.byName[s.OpName()]; ok {
			full.schemas[i] = old
			full.byName[s.OpName()] = old
		}
	}
	t.schemas, t.byName, t.errs = full.schemas, full.byName, full.errs
	l.pending, l.completed = nil, true
}

// Lookup returns the schema of the named overload.
func (t *Table) Lookup(n OpName) (*Schema, bool) {
	if t == nil {
		return nil, false
	}
	if t.lazy == nil {
		s, ok := t.byName[n]
		return s, ok
	}
	l := t.lazy
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := t.byName[n]; ok || l.completed {
		return s, ok
	}
	var line string
	var ok bool
	if l.sorted {
		line, ok = l.sortedLine(n.Key() + "(")
	} else {
		line, ok = l.pending[n]
	}
	if !ok {
		return nil, false
	}
	s, err := parseShared(line)
	if err != nil || s.OpName() != n {
		// Not what the quick read promised: let the full parse decide.
		l.complete(t)
		s, ok := t.byName[n]
		return s, ok
	}
	delete(l.pending, n)
	t.byName[n] = s
	return s, true
}

// full returns t with every line parsed.
func (t *Table) full() *Table {
	if t.lazy != nil {
		t.lazy.mu.Lock()
		t.lazy.complete(t)
		t.lazy.mu.Unlock()
	}
	return t
}

// Schemas returns every schema of the table, sorted by namespace, name and
// overload (OpName.Compare). The slice is a copy; the schemas are shared.
func (t *Table) Schemas() []*Schema { return slices.Clone(t.full().schemas) }

// Len returns the number of schemas in the table.
func (t *Table) Len() int { return len(t.full().schemas) }

// TorchVersion returns the torch version named by the table's header, or "".
func (t *Table) TorchVersion() string { return t.version }

// Errors returns the problems found while parsing the table, in line order.
func (t *Table) Errors() []error { return slices.Clone(t.full().errs) }
