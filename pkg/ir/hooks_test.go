package ir

import (
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestHooks: decoding and encoding report their nodes to the Nodes hook;
// without hooks nothing is called.
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	m := bigModule(t, 20000)
	bin, text := filepath.Join(dir, "big.pb"), filepath.Join(dir, "big.pbtxt")
	for _, p := range []string{bin, text} {
		if err := saveFile(p, m); err != nil {
			t.Fatal(err)
		}
	}
	var nodes atomic.Int64
	defer SetHooks(SetHooks(Hooks{Nodes: func(n int) { nodes.Add(int64(n)) }}))
	if _, err := LoadFile(bin); err != nil {
		t.Fatal(err)
	}
	if n := nodes.Load(); n < 16000 || n > 20002 {
		t.Errorf("large binary file: %d nodes reported, want about 20,000", n)
	}
	if _, err := LoadFile(text); err != nil {
		t.Fatal(err)
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
