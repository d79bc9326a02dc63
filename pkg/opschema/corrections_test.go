package opschema

import (
	"strings"
	"testing"
)

// TestAliasCorrections checks that every alias correction applies to torch's
// schema of the op and gives it the annotation of its view sibling: the
// corrected schema's returns alias the argument exactly as split's do, and
// the corrected schema equals the annotated text parsed.
func TestAliasCorrections(t *testing.T) {
	reg, err := NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	split, _, _ := reg.Lookup("aten::split.Tensor")
	want := split.ReturnAliases()
	for _, c := range AliasCorrections() {
		name := c.Op
		if c.Overload != "" {
			name += "." + c.Overload
		}
		raw, ok := BuiltinTable().Lookup(mustName(t, name))
		if !ok {
			t.Errorf("%s: not in the built-in table", name)
			continue
		}
		if raw.IsView() {
			t.Errorf("%s: torch's schema is already a view (%s); drop the correction", name, raw)
		}
		s, _, ok := reg.Lookup(name)
		if !ok || !s.IsView() {
			t.Errorf("%s: corrected schema %v is not a view", name, s)
			continue
		}
		got := s.ReturnAliases()
		list := s.Returns[0].Type.Kind == KindList
		if len(got) != 1 || got[0].Arg != s.Argument(c.Argument) || got[0].Contained != (list && want[0].Contained) {
			t.Errorf("%s: return aliases %+v, want one alias of %s (contained like split's %+v for a list)", name, got, c.Argument, want)
		}
		text := s.String()
		if list && (!strings.Contains(text, "Tensor(a -> *) "+c.Argument) || !strings.HasSuffix(text, "-> Tensor(a)[]")) ||
			!list && (!strings.Contains(text, "Tensor(a) "+c.Argument) || !strings.HasSuffix(text, "-> Tensor(a)")) {
			t.Errorf("%s: corrected schema prints as %s", name, text)
		}
		reparsed, err := Parse(text)
		if err != nil || reparsed.String() != text || !reparsed.IsView() {
			t.Errorf("%s: corrected schema %s does not round-trip: %v", name, text, err)
		}
		// The file's schema (what the bridge records) is corrected too.
		freg, err := NewRegistry([]FileSchema{{Schema: raw.String()}})
		if err != nil {
			t.Fatal(err)
		}
		if fs, src, _ := freg.Lookup(name); src != SourceFile || !fs.IsView() {
			t.Errorf("%s: the file's schema is not corrected (%s, %v)", name, src, fs)
		}
	}
}

func mustName(t *testing.T, s string) OpName {
	t.Helper()
	n, err := ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
