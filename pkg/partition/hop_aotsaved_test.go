package partition

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hopctl/hopctl/pkg/jointgraph"
)

// aotSaved is what the real-trace joint corpus records of AOTAutograd's
// min-cut on each program it differentiates (joint.json's
// "aot_mincut_saved", python/tools/hop_joint_corpus.py): aot_function
// with min_cut_rematerialization_partition on the traced program, the
// values its forward saves (tensors and symbolic ints) and their bytes
// at the inputs' sizes.
type aotSaved struct {
	Count  int      `json:"count"`
	Bytes  int64    `json:"bytes"`
	Values []string `json:"values"`
}

// TestMincutSavesNoMoreThanAOT: on every HOP program of the corpora
// (torch 2.14's, and the programs 2.6 differentiates traced by 2.6) that
// torch differentiates, hopctl's min-cut partition saves no more values
// than AOTAutograd's min-cut, and no more bytes where every value hopctl
// saves has a static size (a symbolic size has no byte count here:
// python/tests/test_hop_joint.py compares the bytes of every program at
// run time).
func TestMincutSavesNoMoreThanAOT(t *testing.T) {
	for dir, least := range map[string]int{jointCorpusDir: 20, jointCorpusDir26: 4} {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) { testMincutVsAOT(t, dir, least) })
	}
}

func testMincutVsAOT(t *testing.T, dir string, least int) {
	b, err := os.ReadFile(filepath.Join(dir, "joint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Programs map[string]struct {
			Test  string    `json:"pytorch_test"`
			Error *string   `json:"error"`
			AOT   *aotSaved `json:"aot_mincut_saved"`
		} `json:"programs"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, p := range c.Programs {
		if p.Error == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) < least {
		t.Fatalf("the corpus has %d programs torch differentiates, want at least %d", len(names), least)
	}
	for _, name := range names {
		p := c.Programs[name]
		t.Run(name, func(t *testing.T) {
			if p.AOT == nil {
				t.Fatal("joint.json records no aot_mincut_saved: regenerate the corpus (python/tools/hop_joint_corpus.py)")
			}
			part, err := Split(build(t, loadRealIn(t, dir, name), jointgraph.Options{File: name}), MinCut)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("hopctl's min-cut saves %d values (%d bytes of static size), AOTAutograd's %d (%d bytes)",
				len(part.Saved()), part.TotalBytes(), p.AOT.Count, p.AOT.Bytes)
			if len(part.Saved()) > p.AOT.Count {
				t.Errorf("%s (%s): hopctl's min-cut saves %d values, AOTAutograd's %d (%v)",
					name, p.Test, len(part.Saved()), p.AOT.Count, p.AOT.Values)
			}
			for _, s := range part.Saved() {
				if s.Bytes < 0 {
					return // symbolic: compared at run time only
				}
			}
			if got := part.TotalBytes(); got > p.AOT.Bytes {
				t.Errorf("%s (%s): hopctl's min-cut saves %d bytes, AOTAutograd's %d (%v)",
					name, p.Test, got, p.AOT.Bytes, p.AOT.Values)
			}
		})
	}
}
