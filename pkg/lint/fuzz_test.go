package lint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
)

// FuzzLint runs every check (structure, schema table, every analyzer,
// metadata comparison) over mutated text-format graphs: nothing may panic.
func FuzzLint(f *testing.F) {
	for _, dir := range []string{"hops", "lint"} {
		paths, _ := filepath.Glob(filepath.Join(testdata, dir, "*.pbtxt"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ir.Decode(data, ir.Text, "fuzz.pbtxt")
		if err != nil {
			return
		}
		r := lint.Module(m, "fuzz.pbtxt")
		for _, fd := range r.Findings {
			if _, ok := lint.LookupRule(fd.Rule); !ok {
				t.Errorf("finding of unknown rule %q", fd.Rule)
			}
		}
	})
}
