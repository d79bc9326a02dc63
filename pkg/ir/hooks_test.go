package ir

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestHooks: LoadFile runs the Input hook with the size of every regular
// file before decoding it, the Decoding hook around the decoding of a
// large (mapped) binary file only, and decoding and encoding report their
// nodes to the Nodes hook; without hooks nothing is called (the package
// sets no process policy of its own).
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	m := bigModule(t, 20000)
	bin, text := filepath.Join(dir, "big.pb"), filepath.Join(dir, "big.pbtxt")
	for _, p := range []string{bin, text} {
		if err := saveFile(p, m); err != nil {
			t.Fatal(err)
		}
	}
	var starts, ends, nodes, sized atomic.Int64
	defer SetHooks(SetHooks(Hooks{
		Input:    func(size int64) { sized.Add(size) },
		Decoding: func() func() { starts.Add(1); return func() { ends.Add(1) } },
		Nodes:    func(n int) { nodes.Add(int64(n)) },
	}))
	if _, err := LoadFile(bin); err != nil {
		t.Fatal(err)
	}
	if starts.Load() != 1 || ends.Load() != 1 {
		t.Errorf("large binary file: Decoding ran %d times, its end %d; want 1, 1", starts.Load(), ends.Load())
	}
	if n := nodes.Load(); n < 16000 || n > 20002 {
		t.Errorf("large binary file: %d nodes reported, want about 20,000", n)
	}
	if got, want := sized.Load(), fileSize(t, bin); got != want {
		t.Errorf("large binary file: Input hook saw %d bytes, want the file's %d", got, want)
	}
	starts.Store(0)
	sized.Store(0)
	if _, err := LoadFile(text); err != nil {
		t.Fatal(err)
	}
	if starts.Load() != 0 {
		t.Errorf("text file: Decoding ran %d times, want 0", starts.Load())
	}
	if got, want := sized.Load(), fileSize(t, text); got != want {
		t.Errorf("text file: Input hook saw %d bytes, want the file's %d", got, want)
	}
	nodes.Store(0)
	if _, err := Encode(m, Text); err != nil {
		t.Fatal(err)
	}
	if n := nodes.Load(); n < 16000 {
		t.Errorf("text encoding: %d nodes reported, want about 20,000", n)
	}
	SetHooks(Hooks{})
	nodes.Store(0)
	if _, err := LoadFile(bin); err != nil || nodes.Load() != 0 {
		t.Errorf("without hooks: %v, %d nodes reported", err, nodes.Load())
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
