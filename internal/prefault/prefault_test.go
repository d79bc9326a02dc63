package prefault

import (
	"go/build"
	"slices"
	"testing"
)

// TestImportsOnlySyscall: the package is initialised before the
// libraries' initialisers (whose heap it populates) only while it imports
// nothing that imports more than package syscall does.
func TestImportsOnlySyscall(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range pkg.Imports {
		if !slices.Contains([]string{"syscall", "unsafe"}, im) {
			t.Errorf("imports %s: the package must import only syscall and unsafe to be initialised early", im)
		}
	}
}
