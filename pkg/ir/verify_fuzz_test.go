package ir

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzVerify checks that Verify never panics on whatever decodes, that it
// is deterministic, that every problem names the file, and that a module
// it accepts prints (print_readable, DOT, the one-line node form) without
// panicking, the same way twice. Seeds: the shipped graphs (binary) and
// the adversarial corpus.
func FuzzVerify(f *testing.F) {
	addCorpusSeeds(f, Binary)
	bad, _ := filepath.Glob("../../testdata/bad/*")
	for _, p := range bad {
		if filepath.Ext(p) == ".want" || filepath.Ext(p) == ".md" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 1<<16 {
			continue
		}
		if m, err := LoadFile(p); err == nil {
			if b, err := Encode(m, Binary); err == nil {
				f.Add(b)
			}
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Binary, "fuzz.pb")
		if err != nil {
			return
		}
		err1, err2 := Verify(m, "fuzz.pb"), Verify(m, "fuzz.pb")
		if !reflect.DeepEqual(err1, err2) {
			t.Fatalf("Verify is not deterministic:\n%v\n---\n%v", err1, err2)
		}
		if err1 != nil {
			ve, ok := err1.(*VerifyError)
			if !ok || len(ve.Problems) == 0 {
				t.Fatalf("Verify error %T %v is not a non-empty *VerifyError", err1, err1)
			}
			for _, p := range ve.Problems {
				if p.Loc.File != "fuzz.pb" {
					t.Fatalf("problem does not name the file: %v", p)
				}
			}
			return
		}
		var a, b bytes.Buffer
		for _, buf := range []*bytes.Buffer{&a, &b} {
			if err := PrintReadable(buf, m); err != nil {
				t.Fatal(err)
			}
			if err := WriteDOT(buf, m); err != nil {
				t.Fatal(err)
			}
			for _, g := range m.Graphs {
				for i := range g.Nodes {
					buf.WriteString(FormatNode(g, NodeID(i)))
				}
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatal("printing is not deterministic")
		}
	})
}
