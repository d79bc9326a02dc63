package opschema

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParseTable(t *testing.T) {
	text := "# torch 9.9: 3 schemas\n" +
		"\n" +
		"aten::b(Tensor x) -> Tensor\n" +
		"aten::a.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\r\n" +
		"# a comment\n" +
		"aten::broken(Tensor x -> Tensor\n" +
		"aten::b(Tensor y) -> Tensor\n"
	tab := ParseTable("t.txt", text)
	if tab.TorchVersion() != "9.9" {
		t.Errorf("version %q", tab.TorchVersion())
	}
	if tab.Len() != 2 {
		t.Fatalf("Len = %d", tab.Len())
	}
	s := tab.Schemas()
	if s[0].OpName().Key() != "aten::a.out" || s[1].OpName().Key() != "aten::b" {
		t.Errorf("not sorted: %s, %s", s[0].OpName(), s[1].OpName())
	}
	if b, _ := tab.Lookup(OpName{"aten", "b", ""}); b.Arguments[0].Name != "x" {
		t.Error("first schema for an overload should win")
	}
	errs := tab.Errors()
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "t.txt:6: ") || !strings.Contains(errs[1].Error(), "t.txt:7: second schema for aten::b") {
		t.Errorf("errors = %v", errs)
	}
}

// TestLazyTableEqualsParseTable checks the lazily parsed table against
// ParseTable: on the built-in text, every overload looks up to an equal
// schema, from many goroutines at once (run with -race), and Schemas, Len
// and Errors agree afterwards, keeping the schemas already handed out; on
// TestParseTable's text (a broken line, a repeated overload) it agrees too.
func TestLazyTableEqualsParseTable(t *testing.T) {
	for _, tc := range []struct{ file, text string }{
		{"aten_schemas.txt", atenSchemas},
		{"t.txt", "# torch 9.9: x\naten::b(Tensor x) -> Tensor\naten::broken(Tensor x -> Tensor\naten::b(Tensor y) -> Tensor\n"},
		{"u.txt", "aten::bad(Tensor x -> Tensor\naten::bad(Tensor y) -> Tensor\nnot a schema\n"},
	} {
		eager := ParseTable(tc.file, tc.text)
		lazy := newLazyTable(tc.file, tc.text)
		if tc.file == "aten_schemas.txt" {
			lazy = newSortedLazyTable(tc.file, tc.text) // as BuiltinTable builds it
		}
		if tc.file == "aten_schemas.txt" && lazy.lazy.completed {
			t.Fatal("the built-in table was parsed whole: a line's operator name could not be read")
		}

		names := []OpName{{"aten", "no_such_op", ""}, {"aten", "bad", ""}}
		for _, s := range eager.schemas {
			names = append(names, s.OpName())
		}
		got := make([]*Schema, len(names))
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < len(names); i += 4 {
					got[i], _ = lazy.Lookup(names[i])
				}
			})
		}
		wg.Wait()
		if tc.file == "aten_schemas.txt" && (lazy.lazy.completed || len(lazy.lazy.pending) != 0) {
			t.Error("the built-in table's lookups parsed it whole or built a map of its lines")
		}
		for i, n := range names {
			want, _ := eager.Lookup(n)
			if (want == nil) != (got[i] == nil) || want != nil && want.String() != got[i].String() {
				t.Fatalf("%s: Lookup(%s) = %v, want %v", tc.file, n, got[i], want)
			}
		}
		if lazy.Len() != eager.Len() || lazy.TorchVersion() != eager.TorchVersion() || fmt.Sprint(lazy.Errors()) != fmt.Sprint(eager.Errors()) {
			t.Errorf("%s: lazy table: %d schemas, version %q, errors %v; want %d, %q, %v", tc.file,
				lazy.Len(), lazy.TorchVersion(), lazy.Errors(), eager.Len(), eager.TorchVersion(), eager.Errors())
		}
		for i, s := range lazy.Schemas() {
			if got[i+2] != nil && got[i+2] != s {
				t.Fatalf("%s: %s: Schemas returns another schema than Lookup did", tc.file, s.OpName())
			}
		}
	}
}

func TestBuiltinTableConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	tabs := make([]*Table, 8)
	for i := range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tabs[i] = BuiltinTable()
		}()
	}
	wg.Wait()
	for _, tab := range tabs {
		if tab != tabs[0] {
			t.Fatal("BuiltinTable built more than once")
		}
	}
}

// BenchmarkBuiltinTable measures parsing the whole embedded table, the cost
// the first Lookup of a process pays once.
func BenchmarkBuiltinTable(b *testing.B) {
	b.SetBytes(int64(len(atenSchemas)))
	for b.Loop() {
		tab := ParseTable("aten_schemas.txt", atenSchemas)
		if tab.Len() == 0 {
			b.Fatal("empty")
		}
	}
}

// BenchmarkLookup measures resolving a target once the table is built.
func BenchmarkLookup(b *testing.B) {
	r, _ := NewRegistry(nil)
	BuiltinTable()
	for b.Loop() {
		if _, _, ok := r.Lookup("aten.add_.Tensor"); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkParse measures parsing one typical schema.
func BenchmarkParse(b *testing.B) {
	const s = "aten::native_batch_norm.out(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuiltinTableFor: a file's recorded torch version picks the table, and
// each table holds what its torch registers (the 2.14 table has the ops torch
// 2.x's make_fx decomposes to; 1.13's does not).
func TestBuiltinTableFor(t *testing.T) {
	legit := OpName{Namespace: "aten", Name: "_native_batch_norm_legit_no_training"}
	for _, tc := range []struct {
		version, want string
		hasLegit      bool
	}{
		{"1.13.0a0", "1.13.0a0", false},
		{"", "1.13.0a0", false},
		{"synthetic", "1.13.0a0", false},
		{"2.6.0+debian", "2.14.1+debian", true},
		{"2.14.1+debian", "2.14.1+debian", true},
	} {
		tab := BuiltinTableFor(tc.version)
		if got := tab.TorchVersion(); got != tc.want {
			t.Errorf("BuiltinTableFor(%q) is torch %s's table, want %s's", tc.version, got, tc.want)
		}
		if _, ok := tab.Lookup(legit); ok != tc.hasLegit {
			t.Errorf("BuiltinTableFor(%q): %s found %v, want %v", tc.version, legit, ok, tc.hasLegit)
		}
		reg, err := NewRegistryForTorch(tc.version, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, src, ok := reg.Lookup("aten._native_batch_norm_legit_no_training.default"); ok != tc.hasLegit || ok && src != SourceBuiltin {
			t.Errorf("registry for %q: found %v from %v", tc.version, ok, src)
		}
	}
}

// TestBuiltinTextSorted checks what the built-in tables' binary search
// relies on (newSortedLazyTable, sortedLine): their schema lines are
// sorted bytewise, each names a distinct overload before its '(', and
// comments and blank lines come only before the first of them.
// python/tools/dump_schemas.py writes them so. sortedLine finds every
// line by its operator name, and no name that is not a line's.
func TestBuiltinTextSorted(t *testing.T) {
	for file, text := range map[string]string{"aten_schemas.txt": atenSchemas, "aten_schemas_2.14.txt": atenSchemas214} {
		prev := ""
		var heads []string
		schemaLines(text, func(lineNo int, line string) bool {
			head, _, ok := strings.Cut(line, "(")
			if !ok {
				t.Fatalf("%s:%d: no '('", file, lineNo)
			}
			if line != strings.TrimSpace(line) {
				t.Fatalf("%s:%d: surrounding white space", file, lineNo)
			}
			if head+"(" <= prev {
				t.Fatalf("%s:%d: %s( is not after %s", file, lineNo, head, prev)
			}
			prev = head + "("
			heads = append(heads, head)
			return true
		})
		if prev == "" {
			t.Fatalf("%s: no schema lines", file)
		}
		schema := false
		for line := range strings.Lines(text) {
			blankOrComment := strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")
			if schema && blankOrComment {
				t.Fatalf("%s: %q after the first schema line", file, line)
			}
			schema = schema || !blankOrComment
		}
		l := &lazyTable{text: text, sorted: true}
		for _, h := range heads {
			if ln, ok := l.sortedLine(h + "("); !ok || !strings.HasPrefix(ln, h+"(") {
				t.Fatalf("%s: sortedLine(%q) = %q, %v", file, h+"(", ln, ok)
			}
			for _, absent := range []string{h + "_(", h + ".zz(", h[:len(h)-1] + "("} {
				if slices.Contains(heads, strings.TrimSuffix(absent, "(")) {
					continue
				}
				if ln, ok := l.sortedLine(absent); ok {
					t.Fatalf("%s: sortedLine(%q) found %q", file, absent, ln)
				}
			}
		}
	}
}
