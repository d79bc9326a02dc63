package opschema

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// freshSet matches the names of the `!` shorthand's fresh sets. Their numbers
// are not preserved by printing: a `!` inside a tuple member consumes a
// number (as in torch) but the tuple drops the annotation, so re-parsing the
// printed schema numbers later sets differently. Only their uniqueness
// matters.
var freshSet = regexp.MustCompile(`\$[0-9]+`)

func freshDesc(a *AliasInfo) string { return freshSet.ReplaceAllString(aliasDesc(a), "$$") }

// FuzzParse checks that Parse never panics, that errors are *ParseErrors
// pointing into the input, and that a parsed schema prints to a string that
// parses to the same schema.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
		"aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
		"aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
		"f(Tensor(a)[](b) x, Tensor! y, Tensor(a! -> a|b) z, Tensor(*) w) -> (Tensor, Tensor)",
		"f(int[2] a=1, int[]? b=None, float c=-inf, str d=\"\\\"x\", MemoryFormat m=contiguous_format) -> ...",
		"f(Dict(str, Tensor)(a!) d, Union(int, Tensor) u, Future(t) f, (int, int) t2, ...) -> t(*)?",
		"f(__torch__.torch.classes.quantized.Conv2dPackedParamsBase p) -> ((int, int)[])",
		"f(Tensor(a|*|b) x) -> ()",
		"f(Tensor x",
		"f(str s='abc",
		"f(Tensor" + strings.Repeat("[]", 50) + " x) -> ()",
		"f(" + strings.Repeat("(", 50) + "int" + strings.Repeat(")", 50) + " x) -> ()",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	// A sample of the built-in table.
	for i, s := range BuiltinTable().Schemas() {
		if i%97 == 0 {
			f.Add(s.Text)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			if pe.Offset < 0 || pe.Offset > len(in) || pe.Line < 1 || pe.Column < 1 || pe.Msg == "" {
				t.Fatalf("bad error position %+v", pe)
			}
			_ = pe.Error()
			_ = pe.Caret()
			return
		}
		printed := s.String()
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("%q parses, but its printed form %q does not: %v", in, printed, err)
		}
		if p2 := again.String(); p2 != printed {
			t.Fatalf("print not stable:\n %q\n %q", printed, p2)
		}
		if len(s.Arguments) != len(again.Arguments) || len(s.Returns) != len(again.Returns) {
			t.Fatalf("re-parse changed arity: %q", printed)
		}
		for i := range s.Arguments {
			a, b := &s.Arguments[i], &again.Arguments[i]
			if freshDesc(a.Alias) != freshDesc(b.Alias) {
				t.Fatalf("arg %d alias %s became %s via %q", i, aliasDesc(a.Alias), aliasDesc(b.Alias), printed)
			}
			if a.Name != b.Name || a.KwargOnly != b.KwargOnly || a.Type.String() != b.Type.String() {
				t.Fatalf("arg %d changed via %q", i, printed)
			}
		}
		for i := range s.Returns {
			if freshDesc(s.Returns[i].Alias) != freshDesc(again.Returns[i].Alias) {
				t.Fatalf("return %d alias changed via %q", i, printed)
			}
		}
		_ = s.ReturnAliases()
		_ = s.IsView()
		_ = s.IsInplace()
		_ = ConditionalWrites(s)
	})
}
