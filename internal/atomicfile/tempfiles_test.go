package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestRemovePendingTempFiles checks the signal path: a temporary file of a
// write in progress is removed, a write that goes on afterwards fails
// without leaving one, and the destination is never touched.
func TestRemovePendingTempFiles(t *testing.T) {
	resetPendingTemps(t)
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.pb")
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	name, err := writeTemp(dest, nil, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err })
	if err != nil {
		t.Fatal(err)
	}
	if n := RemovePendingTempFiles(); n != 1 {
		t.Errorf("removed %d files, want 1", n)
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file still there: %v", err)
	}
	// The interrupted write's rename, and any later write, fail cleanly.
	if err := settleTemp(name, func() error { return os.Rename(name, dest) }); !errors.Is(err, os.ErrClosed) {
		t.Errorf("rename after shutdown: %v", err)
	}
	if err := WriteFile(dest, []byte("newer")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("write after shutdown: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.pb" {
		t.Errorf("directory holds %v, want only out.pb", entries)
	}
	if data, _ := os.ReadFile(dest); string(data) != "old" {
		t.Errorf("destination = %q, want it untouched", data)
	}
}

// resetPendingTemps undoes a test's RemovePendingTempFiles when it ends.
func resetPendingTemps(t *testing.T) {
	t.Cleanup(func() {
		pendingTemps.Lock()
		pendingTemps.closing, pendingTemps.names = false, nil
		pendingTemps.Unlock()
	})
}
