package ir

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestCorpusRoundTrip loads every shipped graph (real exported models and
// hand-written HOP graphs), verifies it, saves it in each encoding, and
// checks the three files load to equal modules.
func TestCorpusRoundTrip(t *testing.T) {
	models, _ := filepath.Glob("../../testdata/models/*.pb")
	hops, _ := filepath.Glob("../../testdata/hops/*.pbtxt")
	if len(models) < 7 || len(hops) < 10 {
		t.Fatalf("corpus incomplete: %d models, %d HOP graphs", len(models), len(hops))
	}
	for _, path := range append(models, hops...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want := ToProto(m)
			dir := t.TempDir()
			for _, ext := range []string{".pb", ".json", ".pbtxt"} {
				out := filepath.Join(dir, "g"+ext)
				if err := saveFile(out, m); err != nil {
					t.Fatal(err)
				}
				m2, err := Load(out)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, ToProto(m2), protocmp.Transform()); d != "" {
					t.Errorf("%s: round trip differs (-want +got):\n%s", ext, d)
				}
			}
		})
	}
}
