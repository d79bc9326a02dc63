package startstack

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsNothing: the package is initialised before the libraries'
// initialisers (whose stack growth it saves) only while it imports
// nothing.
func TestImportsNothing(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			t.Errorf("%s imports %s: the package must import nothing to be initialised first", f, im.Path.Value)
		}
	}
}

// TestInitialisedFirst: in the hopctl binary, the package is initialised
// before every package that has initialisation work of its own but the
// runtime's and those the runtime needs (GODEBUG=inittrace=1 lists them in
// the order they run).
func TestInitialisedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hopctl binary")
	}
	bin := filepath.Join(t.TempDir(), "hopctl")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/hopctl")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hopctl version: %v\n%s", err, out)
	}
	var order []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			order = append(order, f[1])
		}
	}
	const self = "github.com/hopctl/hopctl/internal/startstack"
	for _, p := range order {
		if p == self {
			return
		}
		if !strings.HasPrefix(p, "runtime") && !strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "crypto/internal/fips140deps") {
			t.Fatalf("%s is initialised before %s: %v", p, self, order)
		}
	}
	t.Fatalf("%s not initialised (is it still imported by cmd/hopctl?): %v", self, order)
}
