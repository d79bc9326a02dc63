package opschema

import "strings"

// ValueKind classifies a default [Value].
type ValueKind int

// The kinds of default values.
const (
	ValueNone    ValueKind = iota // None
	ValueBool                     // True, False
	ValueInt                      // 1, -3
	ValueFloat                    // 1.5, 1e-05, 1., -inf, nan
	ValueComplex                  // 2j (imaginary part in Float)
	ValueStr                      // "mean", 'a\nb' (unescaped text in Str)
	ValueIdent                    // a named constant: long, float, strided, contiguous_format, Mean, ...
	ValueList                     // [0, 1], []
)

var valueKindNames = [...]string{"None", "bool", "int", "float", "complex", "str", "ident", "list"}

// String returns a short name of the kind.
func (k ValueKind) String() string {
	if k >= 0 && int(k) < len(valueKindNames) {
		return valueKindNames[k]
	}
	return "ValueKind(?)"
}

// Value is an argument's default value as written in the schema. The parser
// checks its syntax, not that it suits the argument's type.
//
// Named constants are kept by name (ValueIdent) rather than converted to
// torch's enum numbers: torch 1.13 maps long to 4, float to 6, strided to 0,
// Mean to 1 and contiguous_format to 0, but the name is what a reader wants.
// A fixed-size list with a scalar default (int[2] x=1) keeps the scalar; torch
// repeats it N times.
type Value struct {
	Kind  ValueKind
	Bool  bool
	Int   int64
	Float float64 // ValueFloat; the imaginary part of ValueComplex
	Str   string  // ValueStr's text, or ValueIdent's name
	List  []Value
	Text  string // the default as written, e.g. "[0, 1]", "1e-05", "\"mean\""
}

// String returns the default as written in the schema.
func (v *Value) String() string {
	if v == nil {
		return ""
	}
	if v.Text != "" {
		return v.Text
	}
	switch v.Kind {
	case ValueList:
		parts := make([]string, len(v.List))
		for i := range v.List {
			parts[i] = v.List[i].String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case ValueNone:
		return "None"
	}
	return ""
}
