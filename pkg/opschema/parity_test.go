package opschema

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The JSON files in testdata/schemas are written by
// python/tools/dump_schemas.py from what torch's own parser reports.

type dumpFile struct {
	Count        int          `json:"count"`
	TorchVersion string       `json:"torch_version"`
	Schemas      []dumpSchema `json:"schemas"`
	Rejected     []struct {
		Schema string `json:"schema"`
		Error  string `json:"error"`
	} `json:"rejected"`
}

type dumpSchema struct {
	Schema    string    `json:"schema"`
	Printed   string    `json:"printed"`
	Name      string    `json:"name"`
	Overload  string    `json:"overload"`
	IsMutable bool      `json:"is_mutable"`
	Arguments []dumpArg `json:"arguments"`
	Returns   []dumpArg `json:"returns"`
}

type dumpArg struct {
	Name      string     `json:"name"`
	Type      string     `json:"type"`
	N         *int       `json:"N"`
	AliasInfo *dumpAlias `json:"alias_info"`
	Default   *string    `json:"default"`
	KwargOnly bool       `json:"kwarg_only"`
	IsOut     bool       `json:"is_out"`
}

type dumpAlias struct {
	BeforeSet []string `json:"before_set"`
	AfterSet  []string `json:"after_set"`
	IsWrite   bool     `json:"is_write"`
}

const schemaDir = "../../testdata/schemas"

func loadDump(t testing.TB, path string) *dumpFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dumpFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.Count != len(d.Schemas) {
		t.Fatalf("%s: count %d but %d schemas", path, d.Count, len(d.Schemas))
	}
	return &d
}

func dumpFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(schemaDir, "torch-*-alias.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no torch-*-alias.json in %s (%v): run python/tools/dump_schemas.py", schemaDir, err)
	}
	return files
}

// TestParityWithTorch parses every schema torch dumped and compares, for
// every argument and return, what torch's parser reported: name, alias
// before/after sets, write flag, kwarg_only, is_out, fixed size N, default
// presence and value, and type; and for the schema its name, overload and
// is_mutable.
func TestParityWithTorch(t *testing.T) {
	for _, path := range dumpFiles(t) {
		d := loadDump(t, path)
		var nSchemas, nArgs, nRets, nAlias, nWrite, fails int
		for _, ds := range d.Schemas {
			s, err := Parse(ds.Schema)
			if err != nil {
				t.Errorf("%s: torch accepts %q but: %v", filepath.Base(path), ds.Schema, err)
				fails++
				continue
			}
			var diffs []string
			diff := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
			if s.QualifiedName() != ds.Name || s.Overload != ds.Overload {
				diff("name %q.%q, torch %q.%q", s.QualifiedName(), s.Overload, ds.Name, ds.Overload)
			}
			if s.IsMutable() != ds.IsMutable {
				diff("is_mutable %v, torch %v", s.IsMutable(), ds.IsMutable)
			}
			if len(s.Arguments) != len(ds.Arguments) || len(s.Returns) != len(ds.Returns) {
				diff("%d args %d returns, torch %d %d", len(s.Arguments), len(s.Returns), len(ds.Arguments), len(ds.Returns))
			} else {
				for i := range s.Arguments {
					a := &s.Arguments[i]
					compareSlot(diff, fmt.Sprintf("arg %d", i), ds.Arguments[i], a.Name, a.Type, a.Alias, a.KwargOnly, a.IsOut(), a.Default)
					nArgs++
					if a.Alias != nil {
						nAlias++
					}
					if a.IsWrite() {
						nWrite++
					}
				}
				for i := range s.Returns {
					r := &s.Returns[i]
					compareSlot(diff, fmt.Sprintf("return %d", i), ds.Returns[i], r.Name, r.Type, r.Alias, false, false, nil)
					nRets++
					if r.Alias != nil {
						nAlias++
					}
				}
			}
			if len(diffs) > 0 {
				fails++
				if fails <= 20 {
					t.Errorf("%s: %s:\n  %s", filepath.Base(path), ds.Schema, strings.Join(diffs, "\n  "))
				}
			}
			nSchemas++
		}
		for _, r := range d.Rejected {
			if _, err := Parse(r.Schema); err == nil {
				t.Errorf("%s: torch rejects %q (%s) but Parse accepts it", filepath.Base(path), r.Schema, r.Error)
				fails++
			}
		}
		if fails > 20 {
			t.Errorf("%s: %d schemas differ in all", filepath.Base(path), fails)
		}
		t.Logf("%s (torch %s): %d schemas, %d arguments, %d returns compared (%d annotated, %d written); %d rejections checked",
			filepath.Base(path), d.TorchVersion, nSchemas, nArgs, nRets, nAlias, nWrite, len(d.Rejected))
	}
}

func compareSlot(diff func(string, ...any), where string, want dumpArg, name string, ty *Type, alias *AliasInfo, kw, isOut bool, def *Value) {
	if name != want.Name {
		diff("%s: name %q, torch %q", where, name, want.Name)
	}
	if kw != want.KwargOnly {
		diff("%s: kwarg_only %v, torch %v", where, kw, want.KwargOnly)
	}
	if isOut != want.IsOut {
		diff("%s: is_out %v, torch %v", where, isOut, want.IsOut)
	}
	switch {
	case (alias == nil) != (want.AliasInfo == nil):
		diff("%s: alias info %s, torch %+v", where, aliasDesc(alias), want.AliasInfo)
	case alias != nil:
		if got := sortedCopy(alias.BeforeSets); !slices.Equal(got, sortedCopy(want.AliasInfo.BeforeSet)) {
			diff("%s: before set %v, torch %v", where, got, want.AliasInfo.BeforeSet)
		}
		if got := sortedCopy(alias.AfterSets); !slices.Equal(got, sortedCopy(want.AliasInfo.AfterSet)) {
			diff("%s: after set %v, torch %v", where, got, want.AliasInfo.AfterSet)
		}
		if alias.IsWrite != want.AliasInfo.IsWrite {
			diff("%s: is_write %v, torch %v", where, alias.IsWrite, want.AliasInfo.IsWrite)
		}
	}
	var n *int
	if l := ty.Unwrap(); l.Kind == KindList && l.Sized {
		n = &l.N
	}
	if (n == nil) != (want.N == nil) || (n != nil && *n != *want.N) {
		diff("%s: N %v, torch %v", where, fmtIntPtr(n), fmtIntPtr(want.N))
	}
	if got := torch113TypeStr(ty); got != "" && got != want.Type {
		diff("%s: type %q (%s), torch %q", where, got, ty.Spelling, want.Type)
	}
	if (def == nil) != (want.Default == nil) {
		diff("%s: default %v, torch %v", where, def, fmtStrPtr(want.Default))
	} else if def != nil {
		if got := pyDefaultRepr(def, ty); got != *want.Default {
			diff("%s: default %s reads as %s, torch %s", where, def, got, *want.Default)
		}
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	if c == nil {
		c = []string{}
	}
	return c
}

func fmtIntPtr(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

func fmtStrPtr(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

// torch113TypeStr renders a type the way torch 1.13's Python str(Type) does
// for a schema argument (its "fake" type: SymInt, ScalarType, Layout and
// MemoryFormat read as int, Dimname as str, Scalar as number), and 2.14's,
// which also reads SymBool as bool. It returns ""
// for Union, whose members torch reorders.
func torch113TypeStr(t *Type) string {
	sub := func(ts ...*Type) string {
		parts := make([]string, len(ts))
		for i, e := range ts {
			parts[i] = torch113TypeStr(e)
			if parts[i] == "" {
				return ""
			}
		}
		return strings.Join(parts, ", ")
	}
	wrap := func(name string, ts ...*Type) string {
		if s := sub(ts...); s != "" {
			return name + "[" + s + "]"
		}
		return ""
	}
	switch t.Kind {
	case KindInt, KindSymInt, KindScalarType, KindLayout, KindMemoryFormat, KindConstQuantizerPtr:
		return "int"
	case KindDimname, KindStr:
		return "str"
	case KindSymBool: // torch 2.x schemas: fake type bool, as SymInt's is int
		return "bool"
	case KindScalar:
		return "number"
	case KindNone:
		return "NoneType"
	case KindTypeVar, KindClass:
		return t.Name
	case KindList:
		return wrap("List", t.Elem)
	case KindOptional:
		return wrap("Optional", t.Elem)
	case KindTuple:
		return wrap("Tuple", t.Elems...)
	case KindDict:
		return wrap("Dict", t.Elems...)
	case KindFuture:
		return wrap("Future", t.Elem)
	case KindRRef:
		return wrap("RRef", t.Elem)
	case KindUnion, KindAwait:
		return ""
	}
	return t.Kind.String()
}

// pyDefaultRepr renders a default the way Python's repr shows torch 1.13's
// parsed default_value, applying torch's type-directed conversions: named
// constants become enum numbers, numbers become floats for float arguments,
// and a fixed-size list's scalar default is repeated N times.
func pyDefaultRepr(v *Value, t *Type) string {
	kind := t.Kind
	switch kind {
	case KindSymInt, KindScalarType, KindLayout, KindMemoryFormat:
		kind = KindInt // torch 1.13's fake type
	case KindDevice:
		if v.Kind == ValueStr {
			return fmt.Sprintf("device(type=%s)", pyStrRepr(v.Str))
		}
	case KindList:
		elem := t.Elem.Kind
		if elem == KindSymInt {
			elem = KindInt
		}
		if v.Kind != ValueList && t.Sized {
			one := pySingleRepr(*v, elem)
			return "[" + strings.TrimSuffix(strings.Repeat(one+", ", t.N), ", ") + "]"
		}
		if v.Kind == ValueList {
			parts := make([]string, len(v.List))
			for i, e := range v.List {
				parts[i] = pySingleRepr(e, elem)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
	}
	return pySingleRepr(*v, kind)
}

func pySingleRepr(v Value, kind Kind) string {
	switch v.Kind {
	case ValueNone:
		return "None"
	case ValueBool:
		if kind == KindFloat {
			return pyFloatRepr(map[bool]float64{false: 0, true: 1}[v.Bool])
		}
		if v.Bool {
			return "True"
		}
		return "False"
	case ValueInt:
		if kind == KindFloat {
			return pyFloatRepr(float64(v.Int))
		}
		return strconv.FormatInt(v.Int, 10)
	case ValueFloat:
		return pyFloatRepr(v.Float)
	case ValueComplex:
		// Python prints 1j, 1.5j: no ".0" on an integral imaginary part.
		return strings.TrimSuffix(pyFloatRepr(v.Float), ".0") + "j"
	case ValueStr:
		return pyStrRepr(v.Str)
	case ValueIdent:
		enum := map[string]int{"long": 4, "float": 6, "complex": 9, "strided": 0, "Mean": 1, "contiguous_format": 0}
		if n, ok := enum[v.Str]; ok {
			return strconv.Itoa(n)
		}
		return v.Str
	}
	return "?"
}

// pyFloatRepr is Python's repr of a float.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyStrRepr is Python's repr of a str (for the characters schemas use).
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// TestBuiltinTableMatchesDump checks that the embedded table and the JSON
// dump of the same torch version list the same schemas, and that every line
// of the table parses and prints back to itself.
func TestBuiltinTableMatchesDump(t *testing.T) {
	tab := BuiltinTable()
	if errs := tab.Errors(); len(errs) > 0 {
		t.Fatalf("built-in table: %d errors, first: %v", len(errs), errs[0])
	}
	if tab.TorchVersion() == "" {
		t.Fatal("built-in table names no torch version in its header")
	}
	path := filepath.Join(schemaDir, "torch-"+tab.TorchVersion()+"-alias.json")
	d := loadDump(t, path)
	if d.TorchVersion != tab.TorchVersion() {
		t.Errorf("dump is for torch %s, table for %s", d.TorchVersion, tab.TorchVersion())
	}
	var fromDump []string
	for _, s := range d.Schemas {
		fromDump = append(fromDump, s.Schema)
	}
	var fromTable []string
	for _, s := range tab.Schemas() {
		fromTable = append(fromTable, s.Text)
		if s.String() != s.Text {
			t.Errorf("table line does not print back to itself:\n %s\n %s", s.Text, s.String())
		}
	}
	slices.Sort(fromDump)
	slices.Sort(fromTable)
	if !slices.Equal(fromDump, fromTable) {
		for _, s := range fromDump {
			if _, ok := slices.BinarySearch(fromTable, s); !ok {
				t.Errorf("in dump, not in table: %s", s)
			}
		}
		for _, s := range fromTable {
			if _, ok := slices.BinarySearch(fromDump, s); !ok {
				t.Errorf("in table, not in dump: %s", s)
			}
		}
	}
	// The header's count is the number of schema lines.
	header, _, _ := strings.Cut(atenSchemas, "\n")
	if want := fmt.Sprintf(": %d schemas", tab.Len()); !strings.Contains(header, want) {
		t.Errorf("header %q does not say %q", header, want)
	}
	t.Logf("built-in table: torch %s, %d schemas, same as %s", tab.TorchVersion(), tab.Len(), filepath.Base(path))
}
