package opschema

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// aliasDesc renders alias info compactly for hand-checked expectations:
// "-" for none, else "before>after", "!" when written, and contained infos in
// brackets: Tensor(a!)[] is ">![a>a!]", Tensor(a -> *) is "a>*", Tensor! is
// "$0>!".
func aliasDesc(a *AliasInfo) string {
	if a == nil {
		return "-"
	}
	s := strings.Join(a.BeforeSets, "|") + ">" + strings.Join(a.AfterSets, "|")
	if a.IsWrite {
		s += "!"
	}
	if len(a.Contained) > 0 {
		parts := make([]string, len(a.Contained))
		for i, c := range a.Contained {
			parts[i] = aliasDesc(c)
		}
		s += "[" + strings.Join(parts, ",") + "]"
	}
	return s
}

// slot is the expected shape of one argument or return.
type slot struct {
	name  string
	typ   string // Type.String()
	alias string // aliasDesc
	kw    bool   // keyword-only (arguments)
	def   string // default as written; "" for none
}

func TestParseGrammar(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		ns, op   string
		overload string
		args     []slot
		rets     []slot
		vararg   bool
		varret   bool
	}{
		{
			name: "inplace with kwarg-only default",
			in:   "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
			ns:   "aten", op: "add_", overload: "Tensor",
			args: []slot{
				{name: "self", typ: "Tensor", alias: "a>a!"},
				{name: "other", typ: "Tensor", alias: "-"},
				{name: "alpha", typ: "Scalar", alias: "-", kw: true, def: "1"},
			},
			rets: []slot{{typ: "Tensor", alias: "a>a!"}},
		},
		{
			name: "default overload",
			in:   "aten::relu(Tensor self) -> Tensor",
			ns:   "aten", op: "relu",
			args: []slot{{name: "self", typ: "Tensor", alias: "-"}},
			rets: []slot{{typ: "Tensor", alias: "-"}},
		},
		{
			name: "no namespace",
			in:   "foo(int x) -> int",
			op:   "foo",
			args: []slot{{name: "x", typ: "int", alias: "-"}},
			rets: []slot{{typ: "int", alias: "-"}},
		},
		{
			name: "wildcard transition and list of views",
			in:   "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
			ns:   "aten", op: "chunk",
			args: []slot{
				{name: "self", typ: "Tensor", alias: "a>*"},
				{name: "chunks", typ: "int", alias: "-"},
				{name: "dim", typ: "int", alias: "-", def: "0"},
			},
			rets: []slot{{typ: "Tensor[]", alias: ">[a>a]"}},
		},
		{
			name: "write with explicit after set and alternatives",
			in:   "f(Tensor(a! -> a|b) x, Tensor(b|c) y) -> Tensor(*)",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor", alias: "a>a|b!"},
				{name: "y", typ: "Tensor", alias: "b|c>b|c"},
			},
			rets: []slot{{typ: "Tensor", alias: "*>*"}},
		},
		{
			name: "duplicate and wildcard sets",
			in:   "f(Tensor(a|a) x, Tensor(a|*) y, Tensor(*|*) z, Tensor(a -> a|*) w) -> ()",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor", alias: "a>a"},
				{name: "y", typ: "Tensor", alias: "a|*>a|*"},
				{name: "z", typ: "Tensor", alias: "*>*"},
				{name: "w", typ: "Tensor", alias: "a>a|*"},
			},
		},
		{
			name: "bang shorthand: fresh sets, empty after set",
			in:   "f(Tensor! x, Tensor!? y) -> Tensor!",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor", alias: "$0>!"},
				{name: "y", typ: "Tensor?", alias: "$1>!"},
			},
			rets: []slot{{typ: "Tensor", alias: "$2>!"}},
		},
		{
			name: "written list: container copies the element's write flag",
			in:   "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
			ns:   "aten", op: "_foreach_add_", overload: "Scalar",
			args: []slot{
				{name: "self", typ: "Tensor[]", alias: ">![a>a!]"},
				{name: "scalar", typ: "Scalar", alias: "-"},
			},
		},
		{
			name: "annotated container",
			in:   "f(Tensor(a)[](b) x, Tensor(a!)[](b) y, t[](c!) z, Tensor[]! w) -> ()",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor[]", alias: "b>b[a>a]"},
				{name: "y", typ: "Tensor[]", alias: "b>b[a>a!]"},
				{name: "z", typ: "t[]", alias: "c>c!"},
				{name: "w", typ: "Tensor[]", alias: "$0>!"},
			},
		},
		{
			name: "nested lists and optionals",
			in:   "f(Tensor(a!)[][] x, Tensor(a)?[] y, Tensor(a!)[]? z, Tensor?[] w, int[]? v=None) -> ()",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor[][]", alias: ">![>![a>a!]]"},
				{name: "y", typ: "Tensor?[]", alias: ">[a>a]"},
				{name: "z", typ: "Tensor[]?", alias: ">![a>a!]"},
				{name: "w", typ: "Tensor?[]", alias: "-"},
				{name: "v", typ: "int[]?", alias: "-", def: "None"},
			},
		},
		{
			name: "fixed-size lists",
			in:   "f(int[2] a, SymInt[3] b=1, bool[3] c=[True, False, True], Tensor(a!)[2] d, Tensor(a)[2](b)? e=None) -> ()",
			op:   "f",
			args: []slot{
				{name: "a", typ: "int[2]", alias: "-"},
				{name: "b", typ: "SymInt[3]", alias: "-", def: "1"},
				{name: "c", typ: "bool[3]", alias: "-", def: "[True, False, True]"},
				{name: "d", typ: "Tensor[2]", alias: ">![a>a!]"},
				{name: "e", typ: "Tensor[2]?", alias: "b>b[a>a]", def: "None"},
			},
		},
		{
			name: "dict, union, future, rref, tuple, type variables",
			in:   "f(Dict(str, Tensor(a))(b!) d, Union(int, Tensor) u, Future(t) fu, RRef(t) r, (int, Tensor(a)) tu, t(c -> *) v) -> t(*)?",
			op:   "f",
			args: []slot{
				{name: "d", typ: "Dict(str, Tensor)", alias: "b>b!"},
				{name: "u", typ: "Union(int, Tensor)", alias: "-"},
				{name: "fu", typ: "Future(t)", alias: "-"},
				{name: "r", typ: "RRef(t)", alias: "-"},
				{name: "tu", typ: "(int, Tensor)", alias: "-"},
				{name: "v", typ: "t", alias: "c>*"},
			},
			rets: []slot{{typ: "t?", alias: "*>*"}},
		},
		{
			name: "varargs and varret",
			in:   "aten::format(str self, ...) -> ...",
			ns:   "aten", op: "format",
			args:   []slot{{name: "self", typ: "str", alias: "-"}},
			vararg: true, varret: true,
		},
		{
			name:   "only varargs, returns then varret",
			in:     "prim::f(...) -> (Tensor, ...)",
			ns:     "prim",
			op:     "f",
			rets:   []slot{{typ: "Tensor", alias: "-"}},
			vararg: true, varret: true,
		},
		{
			name: "defaults",
			in: `f(str s="\"\'\\", str r='a\nb', int[] l=[0,1], float lo=-inf, float e=1e-05, ` +
				`MemoryFormat m=contiguous_format, ScalarType d=long, bool b=False, Device dev="cpu", float h=5., complex c=2j, int n=-3) -> ()`,
			op: "f",
			args: []slot{
				{name: "s", typ: "str", alias: "-", def: `"\"\'\\"`},
				{name: "r", typ: "str", alias: "-", def: `'a\nb'`},
				{name: "l", typ: "int[]", alias: "-", def: "[0,1]"},
				{name: "lo", typ: "float", alias: "-", def: "-inf"},
				{name: "e", typ: "float", alias: "-", def: "1e-05"},
				{name: "m", typ: "MemoryFormat", alias: "-", def: "contiguous_format"},
				{name: "d", typ: "ScalarType", alias: "-", def: "long"},
				{name: "b", typ: "bool", alias: "-", def: "False"},
				{name: "dev", typ: "Device", alias: "-", def: `"cpu"`},
				{name: "h", typ: "float", alias: "-", def: "5."},
				{name: "c", typ: "complex", alias: "-", def: "2j"},
				{name: "n", typ: "int", alias: "-", def: "-3"},
			},
		},
		{
			name: "named returns, out variant",
			in:   "aten::topk.values(Tensor self, int k, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
			ns:   "aten", op: "topk", overload: "values",
			args: []slot{
				{name: "self", typ: "Tensor", alias: "-"},
				{name: "k", typ: "int", alias: "-"},
				{name: "values", typ: "Tensor", alias: "a>a!", kw: true},
				{name: "indices", typ: "Tensor", alias: "b>b!", kw: true},
			},
			rets: []slot{
				{name: "values", typ: "Tensor", alias: "a>a!"},
				{name: "indices", typ: "Tensor", alias: "b>b!"},
			},
		},
		{
			name: "two returns, not a tuple",
			in:   "f(Tensor x) -> (Tensor, Tensor)",
			op:   "f",
			args: []slot{{name: "x", typ: "Tensor", alias: "-"}},
			rets: []slot{{typ: "Tensor", alias: "-"}, {typ: "Tensor", alias: "-"}},
		},
		{
			name: "one tuple return; one parenthesised return",
			in:   "f(Tensor x) -> ((int, int) pair)",
			op:   "f",
			args: []slot{{name: "x", typ: "Tensor", alias: "-"}},
			rets: []slot{{name: "pair", typ: "(int, int)", alias: "-"}},
		},
		{
			name: "bare star, repeated star, whitespace and comment",
			in:   "f( Tensor( a ! )x , * , * ,Tensor y)->Tensor # trailing comment",
			op:   "f",
			args: []slot{
				{name: "x", typ: "Tensor", alias: "a>a!"},
				{name: "y", typ: "Tensor", alias: "-", kw: true},
			},
			rets: []slot{{typ: "Tensor", alias: "-"}},
		},
		{
			name: "custom class, None type, lists after a default",
			in:   "f(__torch__.torch.classes.quantized.Conv2dPackedParamsBase p, int k=1, int[] s, None n=None) -> NoneType",
			op:   "f",
			args: []slot{
				{name: "p", typ: "__torch__.torch.classes.quantized.Conv2dPackedParamsBase", alias: "-"},
				{name: "k", typ: "int", alias: "-", def: "1"},
				{name: "s", typ: "int[]", alias: "-"},
				{name: "n", typ: "NoneType", alias: "-", def: "None"},
			},
			rets: []slot{{typ: "NoneType", alias: "-"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if s.Namespace != tc.ns || s.Name != tc.op || s.Overload != tc.overload {
				t.Errorf("name = %q %q %q, want %q %q %q", s.Namespace, s.Name, s.Overload, tc.ns, tc.op, tc.overload)
			}
			if s.IsVararg != tc.vararg || s.IsVarret != tc.varret {
				t.Errorf("vararg, varret = %v, %v; want %v, %v", s.IsVararg, s.IsVarret, tc.vararg, tc.varret)
			}
			if len(s.Arguments) != len(tc.args) {
				t.Fatalf("%d arguments, want %d", len(s.Arguments), len(tc.args))
			}
			for i, w := range tc.args {
				a := s.Arguments[i]
				def := ""
				if a.Default != nil {
					def = a.Default.String()
				}
				got := slot{name: a.Name, typ: a.Type.String(), alias: aliasDesc(a.Alias), kw: a.KwargOnly, def: def}
				if got != w {
					t.Errorf("argument %d = %+v, want %+v", i, got, w)
				}
			}
			if len(s.Returns) != len(tc.rets) {
				t.Fatalf("%d returns, want %d", len(s.Returns), len(tc.rets))
			}
			for i, w := range tc.rets {
				r := s.Returns[i]
				got := slot{name: r.Name, typ: r.Type.String(), alias: aliasDesc(r.Alias)}
				if got != w {
					t.Errorf("return %d = %+v, want %+v", i, got, w)
				}
			}
			// Printing and re-parsing gives the same schema.
			again, err := Parse(s.String())
			if err != nil {
				t.Fatalf("re-parse of %q: %v", s.String(), err)
			}
			if again.String() != s.String() {
				t.Errorf("print/parse not stable:\n %s\n %s", s.String(), again.String())
			}
		})
	}
}

func TestParseDefaultValues(t *testing.T) {
	s, err := Parse(`f(str s="\"\'\\\n\x41\101", int[] l=[0, -1], float lo=-inf, float e=1e-05, ScalarType d=long, ` +
		`bool b=True, Tensor? t=None, complex c=-2.5j, float n=nan, float i=3) -> ()`)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) *Value { return s.Arguments[s.Argument(name)].Default }
	if v := get("s"); v.Kind != ValueStr || v.Str != "\"'\\\nAA" {
		t.Errorf("s = %v %q", v.Kind, v.Str)
	}
	if v := get("l"); v.Kind != ValueList || len(v.List) != 2 || v.List[0].Int != 0 || v.List[1].Int != -1 || v.List[1].Kind != ValueInt {
		t.Errorf("l = %+v", v)
	}
	if v := get("lo"); v.Kind != ValueFloat || !math.IsInf(v.Float, -1) {
		t.Errorf("lo = %+v", v)
	}
	if v := get("e"); v.Kind != ValueFloat || v.Float != 1e-05 {
		t.Errorf("e = %+v", v)
	}
	if v := get("d"); v.Kind != ValueIdent || v.Str != "long" {
		t.Errorf("d = %+v", v)
	}
	if v := get("b"); v.Kind != ValueBool || !v.Bool {
		t.Errorf("b = %+v", v)
	}
	if v := get("t"); v.Kind != ValueNone {
		t.Errorf("t = %+v", v)
	}
	if v := get("c"); v.Kind != ValueComplex || v.Float != -2.5 {
		t.Errorf("c = %+v", v)
	}
	if v := get("n"); v.Kind != ValueFloat || !math.IsNaN(v.Float) {
		t.Errorf("n = %+v", v)
	}
	if v := get("i"); v.Kind != ValueInt || v.Int != 3 {
		t.Errorf("i = %+v", v)
	}
}

func TestParseErrors(t *testing.T) {
	deepTuple := "f(" + strings.Repeat("(", MaxTypeDepth+5) + "int" + strings.Repeat(")", MaxTypeDepth+5) + " x) -> ()"
	tests := []struct {
		in        string
		line, col int
		msg       string // substring of the message
	}{
		{"", 1, 1, "expected operator name but found end of schema"},
		{"foo", 1, 4, "expected '(' and the argument list"},
		{"foo(Tensor x)", 1, 14, "expected '->' and the returns but found end of schema"},
		{"foo(Tensor) -> ()", 1, 11, "expected argument name but found ')'"},
		{"foo(Tensor x,) -> ()", 1, 14, "expected a type but found ')'"},
		{"foo(Tensor x) -> (Tensor y=1)", 1, 27, "expected ',' or ')' in the return list but found '='"},
		{"foo(Tensor(a|*|b) x) -> ()", 1, 16, `alias set "b" follows the wildcard`},
		{"foo(Tensor(a -> *|b) x) -> ()", 1, 19, `alias set "b" follows the wildcard`},
		{"foo(Tensor(a! x) -> ()", 1, 15, "expected '|', '!', '->' or ')' in the alias annotation but found identifier \"x\""},
		{"foo(Tensor(!) x) -> ()", 1, 12, "expected alias set name or '*' but found '!'"},
		{"foo(Tensor() x) -> ()", 1, 12, "expected alias set name or '*' but found ')'"},
		{"foo(Tensor(a -> ) x) -> ()", 1, 17, "expected alias set name or '*'"},
		{"foo(Tensor(a)! x) -> ()", 1, 14, "expected argument name but found '!'"},
		{"foo(Tensor?(a) x) -> ()", 1, 12, "expected argument name but found '('"},
		{"foo(..., Tensor x) -> ()", 1, 10, "... must be the last element of the argument list"},
		{"foo(Tensor x) -> (..., Tensor)", 1, 24, "... must be the last element of the return list"},
		{"foo(Foo x) -> ()", 1, 5, `unknown type specifier "Foo"`},
		{"aten:foo(Tensor x) -> ()", 1, 6, "expected ':' (the namespace separator is '::')"},
		{"aten::foo..bar(Tensor x) -> ()", 1, 11, "expected overload name after '.'"},
		{"aten::foo.default(Tensor x) -> ()", 1, 11, `"default" is not a legal overload name`},
		{"foo(int[1.5] x) -> ()", 1, 9, "list size 1.5 is not an integer"},
		{"foo(int[-1] x) -> ()", 1, 9, "expected list size or ']' but found '-'"},
		{"foo(Tensor[2][] x) -> ()", 1, 14, "expected argument name but found '['"},
		{"foo(Tensor x, int y=1, float z) -> ()", 1, 24, `non-default positional argument "z" follows an argument with a default`},
		{"foo(int x=--1) -> ()", 1, 12, "expected a number after '-' but found '-'"},
		{"foo(int x=+1) -> ()", 1, 11, `unexpected character "+"`},
		{"foo(int x=99999999999999999999) -> ()", 1, 11, "out of range"},
		{`foo(str s="abc) -> ()`, 1, 11, "unterminated string literal"},
		{`foo(str s="\q") -> ()`, 1, 11, `bad string literal: unknown escape sequence \q`},
		{"foo(Tensor x) -> Tensor y, int z", 1, 26, "expected end of schema but found ','"},
		{"foo(Tensor x) -> ()()", 1, 20, "expected end of schema but found '('"},
		// Newlines are plain whitespace: "bar" names the return.
		{"foo(Tensor x) -> Tensor\nbar(Tensor y) -> Tensor", 2, 4, "expected end of schema but found '('"},
		{"foo(Tensor x,\n    Bar y) -> ()", 2, 5, `unknown type specifier "Bar"`},
		{"foo(Tensor x) -> Tensor é", 1, 25, `unexpected character "é"`},
		{"fé(Tensor x) -> ()", 1, 2, `unexpected character "é"`},
		{"foo(Dict(str Tensor) x) -> ()", 1, 14, "expected ',' but found identifier \"Tensor\""},
		{"foo(Union(int Tensor) x) -> ()", 1, 15, "expected ',' or ')' in the Union type"},
		{"foo(__torch__.torch.klasses.a.b x) -> ()", 1, 21, `expected "classes" in custom class path`},
		{deepTuple, 1, 3 + MaxTypeDepth + 1, "type nested more than 1000 levels deep"},
		{"f(Tensor" + strings.Repeat("[]", MaxTypeDepth+1) + " x) -> ()", 1, 9 + 2*MaxTypeDepth, "type nested more than 1000 levels deep"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want a *ParseError", truncate(tc.in, 60), err)
			continue
		}
		if pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("Parse(%q) = line %d col %d %q;\n want line %d col %d containing %q", truncate(tc.in, 60), pe.Line, pe.Column, pe.Msg, tc.line, tc.col, tc.msg)
		}
		if !strings.Contains(pe.Error(), "column") || pe.Schema != tc.in {
			t.Errorf("Error() = %q", pe.Error())
		}
	}
}

func TestParseDepthLimitAccepts(t *testing.T) {
	// Just inside the limit parses.
	in := "f(Tensor" + strings.Repeat("[]", MaxTypeDepth) + " x) -> ()"
	s, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for ty := s.Arguments[0].Type; ty.Kind == KindList; ty = ty.Elem {
		depth++
	}
	if depth != MaxTypeDepth {
		t.Errorf("depth %d, want %d", depth, MaxTypeDepth)
	}
}

func TestParseErrorCaret(t *testing.T) {
	_, err := Parse("foo(Tensor x,\n    Bar y) -> ()")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	want := "    Bar y) -> ()\n    ^"
	if got := pe.Caret(); got != want {
		t.Errorf("Caret() = %q, want %q", got, want)
	}
	if !strings.Contains(pe.Error(), "line 2, column 5") {
		t.Errorf("Error() = %q", pe.Error())
	}
}

func TestTypeSpellingAndKinds(t *testing.T) {
	s, err := Parse("f(Tensor(a!)[] a, int[2]? b, Dict(str, Tensor) c, t(a) d, SymInt e) -> ()")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		spelling string
		kind     Kind
	}{
		{"Tensor(a!)[]", KindList},
		{"int[2]?", KindOptional},
		{"Dict(str, Tensor)", KindDict},
		{"t(a)", KindTypeVar},
		{"SymInt", KindSymInt},
	}
	for i, w := range want {
		ty := s.Arguments[i].Type
		if ty.Spelling != w.spelling || ty.Kind != w.kind {
			t.Errorf("arg %d: spelling %q kind %v, want %q %v", i, ty.Spelling, ty.Kind, w.spelling, w.kind)
		}
	}
	b := s.Arguments[1].Type
	if l := b.Unwrap(); l.Kind != KindList || !l.Sized || l.N != 2 || l.Elem.Kind != KindInt {
		t.Errorf("int[2]? = %+v", l)
	}
	if !s.Arguments[0].Type.IsTensorLike() || s.Arguments[1].Type.IsTensorLike() {
		t.Error("IsTensorLike wrong")
	}
	if KindSymInt.String() != "SymInt" || KindList.String() != "List" {
		t.Error("Kind.String wrong")
	}
}

func TestSchemaHelpers(t *testing.T) {
	tests := []struct {
		in                      string
		mutable, inplace, out   bool
		view                    bool
		mutated                 []int
		aliases                 []ReturnAlias
		target                  string
		aliasedByReturn0        []int
		firstArgWrite, firstOut bool
	}{
		{
			in:      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
			mutable: true, inplace: true, mutated: []int{0},
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a", Write: true}},
			target:           "aten.add_.Tensor",
			aliasedByReturn0: []int{0},
			firstArgWrite:    true,
		},
		{
			in:      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
			mutable: true, out: true, mutated: []int{3},
			aliases:          []ReturnAlias{{Return: 0, Arg: 3, Set: "a", Write: true}},
			target:           "aten.add.out",
			aliasedByReturn0: []int{3},
		},
		{
			in:               "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
			view:             true,
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a"}},
			target:           "aten.transpose.int",
			aliasedByReturn0: []int{0},
		},
		{
			in:               "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
			view:             true,
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a", Contained: true}},
			target:           "aten.chunk.default",
			aliasedByReturn0: []int{0},
		},
		{
			in:               "aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)",
			view:             true,
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a"}},
			target:           "aten.as_tensor.default",
			aliasedByReturn0: []int{0},
		},
		{
			in:     "aten::relu(Tensor self) -> Tensor",
			target: "aten.relu.default",
		},
		{
			in:      "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
			mutable: true, inplace: true, mutated: []int{0},
			target:        "aten._foreach_add_.Scalar",
			firstArgWrite: true,
		},
		{
			in:      "aten::__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
			mutable: true, inplace: true, mutated: []int{0},
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a", Write: true}},
			target:           "aten.__iand__.Tensor",
			aliasedByReturn0: []int{0},
			firstArgWrite:    true,
		},
		{
			// Mutates a list but is not an in-place variant by name.
			in:      "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
			mutable: true, mutated: []int{0},
			aliases:          []ReturnAlias{{Return: 0, Arg: 0, Set: "a", Write: true}},
			target:           "aten.append.t",
			aliasedByReturn0: []int{0},
			firstArgWrite:    true,
		},
		{
			// A wildcard return pairs with nothing by name.
			in:     "aten::__getitem__.t(t[](a) list, int idx) -> t(*)",
			target: "aten.__getitem__.t",
		},
	}
	for _, tc := range tests {
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if s.IsMutable() != tc.mutable || s.IsInplace() != tc.inplace || s.IsOut() != tc.out || s.IsView() != tc.view {
			t.Errorf("%s: mutable/inplace/out/view = %v/%v/%v/%v, want %v/%v/%v/%v", tc.in,
				s.IsMutable(), s.IsInplace(), s.IsOut(), s.IsView(), tc.mutable, tc.inplace, tc.out, tc.view)
		}
		if got := s.MutatedArguments(); !slices.Equal(got, tc.mutated) {
			t.Errorf("%s: MutatedArguments = %v, want %v", tc.in, got, tc.mutated)
		}
		if got := s.ReturnAliases(); !slices.Equal(got, tc.aliases) {
			t.Errorf("%s: ReturnAliases = %+v, want %+v", tc.in, got, tc.aliases)
		}
		if len(s.Returns) > 0 {
			if got := s.AliasedArguments(0); !slices.Equal(got, tc.aliasedByReturn0) {
				t.Errorf("%s: AliasedArguments(0) = %v, want %v", tc.in, got, tc.aliasedByReturn0)
			}
		}
		if s.Target() != tc.target {
			t.Errorf("%s: Target = %q, want %q", tc.in, s.Target(), tc.target)
		}
		if got := s.Arguments[0].IsWrite(); got != tc.firstArgWrite {
			t.Errorf("%s: Arguments[0].IsWrite = %v", tc.in, got)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want OpName
		bad  bool
	}{
		{in: "aten.add_.Tensor", want: OpName{"aten", "add_", "Tensor"}},
		{in: "aten.relu.default", want: OpName{"aten", "relu", ""}},
		{in: "torch.ops.aten.relu.default", want: OpName{"aten", "relu", ""}},
		{in: "prims.convert_element_type.default", want: OpName{"prims", "convert_element_type", ""}},
		{in: "quantized.conv2d.new", want: OpName{"quantized", "conv2d", "new"}},
		{in: "higher_order.cond", want: OpName{"higher_order", "cond", ""}},
		{in: "torch.ops.higher_order.cond", want: OpName{"higher_order", "cond", ""}},
		{in: "aten::add_.Tensor", want: OpName{"aten", "add_", "Tensor"}},
		{in: "aten::relu", want: OpName{"aten", "relu", ""}},
		{in: "aten.add", bad: true},
		{in: "_operator.getitem", bad: true},
		{in: "aten..x", bad: true},
		{in: "a.b.c.d", bad: true},
		{in: "", bad: true},
		{in: "aten::", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseTarget(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseTarget(%q) = %+v, want error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, n := range []OpName{{"aten", "relu", ""}, {"aten", "add_", "Tensor"}, {"higher_order", "cond", ""}} {
		back, err := ParseTarget(n.Target())
		if err != nil || back != n {
			t.Errorf("round trip of %s: %+v %v", n.Target(), back, err)
		}
		back, err = ParseTarget(n.Key())
		if err != nil || back != n {
			t.Errorf("round trip of %s: %+v %v", n.Key(), back, err)
		}
	}
}
