package cli_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad")

const dir = "../../testdata/bad"

// TestGenerate checks that testdata/bad holds exactly what Committed
// generates (with -update, writes it). README.md is kept.
func TestGenerate(t *testing.T) {
	cases, err := Committed("../../testdata/models", "../../testdata/hops")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, c := range cases {
		if _, dup := want[c.Name]; dup {
			t.Fatalf("duplicate case %s", c.Name)
		}
		want[c.Name] = c.Data
		want[c.Name+".want"] = c.WantFile()
	}
	if *update {
		old, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range old {
			if filepath.Base(p) != "README.md" {
				os.Remove(p)
			}
		}
		for name, data := range want {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		have = append(have, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[e.Name()]
		switch {
		case !ok:
			t.Errorf("%s: not generated (stale?)", e.Name())
		case !bytes.Equal(data, w):
			t.Errorf("%s: differs from what the generator writes", e.Name())
		}
	}
	for name := range want {
		if !slices.Contains(have, name) {
			t.Errorf("%s: missing", name)
		}
	}
	if t.Failed() {
		t.Log("run: go test ./internal/cli -run TestGenerate -update")
	}
}

func TestParseWant(t *testing.T) {
	c := Case{Doc: "d", Want: []string{"a b", "c"}}
	if got := ParseWant(c.WantFile()); !slices.Equal(got, c.Want) {
		t.Errorf("ParseWant = %q", got)
	}
	if strings.Count(string(c.WantFile()), "\n") != 3 {
		t.Errorf("WantFile = %q", c.WantFile())
	}
}

var dump = flag.String("dump", "", "write the large and stress cases to this directory (for running hopctl on them by hand)")

// TestDump writes the cases generated at test time to -dump DIR.
func TestDump(t *testing.T) {
	if *dump == "" {
		t.Skip("no -dump DIR")
	}
	for _, c := range append(Large(), Stress()...) {
		if err := os.WriteFile(filepath.Join(*dump, c.Name), c.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
