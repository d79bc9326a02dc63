package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run2 runs one invocation twice in the same directory (so paths in the
// output are equal) and fails on any difference in exit code, stdout,
// stderr or the bytes of a written file.
func run2(t *testing.T, desc string, args []string, dir string, outputs []string) {
	t.Helper()
	type snapshot struct {
		res   result
		files map[string][]byte
	}
	var snaps [2]snapshot
	for i := range snaps {
		for _, o := range outputs {
			os.Remove(filepath.Join(dir, o))
		}
		r := runBounded(t, args)
		if r.panicked != nil {
			t.Fatalf("%s: panic: %v\n%s", desc, r.panicked, r.stack)
		}
		snaps[i] = snapshot{res: r, files: map[string][]byte{}}
		for _, o := range outputs {
			if data, err := os.ReadFile(filepath.Join(dir, o)); err == nil {
				snaps[i].files[o] = data
			}
		}
	}
	a, b := snaps[0], snaps[1]
	if a.res.code != b.res.code {
		t.Errorf("%s: exit %d, then %d", desc, a.res.code, b.res.code)
	}
	if a.res.stdout != b.res.stdout {
		t.Errorf("%s: stdout differs between two runs:\n%s", desc, firstDiff(a.res.stdout, b.res.stdout))
	}
	if a.res.stderr != b.res.stderr {
		t.Errorf("%s: stderr differs between two runs:\n%s", desc, firstDiff(a.res.stderr, b.res.stderr))
	}
	for _, o := range outputs {
		x, okx := a.files[o]
		y, oky := b.files[o]
		switch {
		case okx != oky:
			t.Errorf("%s: %s written by one run only", desc, o)
		case !bytes.Equal(x, y):
			t.Errorf("%s: %s differs between two runs:\n%s", desc, o, firstDiff(string(x), string(y)))
		}
	}
}

// firstDiff shows where two outputs start to differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return "first run:  …" + strings.ToValidUTF8(a[lo:min(len(a), i+80)], "?") + "\nsecond run: …" + strings.ToValidUTF8(b[lo:min(len(b), i+80)], "?")
}

// TestDeterministicOutput runs every invocation of every command that reads
// files twice over the shipped corpus (real models, hand-written HOP
// graphs, and a synthetic graph large enough to decode on all cores), and
// `hopctl synth` twice: the same input must give byte-identical output.
func TestDeterministicOutput(t *testing.T) {
	var corpus []string
	for _, glob := range []string{"../../testdata/models/*.pb", "../../testdata/hops/*.pbtxt",
		// torch.export archives of both layouts and a bare program JSON.
		"../../testdata/pt2/2.6/buffer_update.train.pt2", "../../testdata/pt2/2.14/cond.aten.pt2", "../../testdata/pt2/hand/every_argument.json"} {
		paths, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				t.Fatal(err)
			}
			corpus = append(corpus, abs)
		}
	}
	if len(corpus) == 0 {
		t.Fatal("no corpus")
	}
	sandbox(t)
	cmds := commands(t)
	dir := t.TempDir()

	// synth, twice; its output joins the corpus (22,000 nodes: above the
	// size where the binary decoder splits nodes between cores).
	synthArgs := []string{"synth", "-n", "22000", "--hops", "-o", filepath.Join(dir, "synth.pb")}
	run2(t, "hopctl synth", synthArgs, dir, []string{"synth.pb"})
	if !testing.Short() {
		corpus = append(corpus, filepath.Join(dir, "synth.pb"))
	}

	for _, in := range corpus {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out := t.TempDir()
			for _, c := range cmds {
				for _, inv := range invocations[c] {
					args := inv.args(in, out)
					run2(t, "hopctl "+strings.Join(args, " "), args, out, inv.outputs)
				}
			}
		})
	}
}
