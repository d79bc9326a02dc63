package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterruptKeepsDirectory: an interrupt while the old content of a
// destination is being removed never removes a directory put at the
// destination since it was resolved (swapped out in its place), not even
// an empty one, as removeSwapped does not (TestReplaceDirectoryPutBack).
func TestInterruptKeepsDirectory(t *testing.T) {
	resetPendingTemps(t)
	realUnlink := unlink
	t.Cleanup(func() { unlink = realUnlink })
	dir := t.TempDir()
	dst := filepath.Join(dir, "out.pb")
	writeSentinel(t, dst)
	var swappedOut string
	unlink = func(a string) error {
		swappedOut = a
		RemovePendingTempFiles() // the interrupt, as the removal starts
		return realUnlink(a)
	}
	// The destination, resolved as a regular file, becomes a directory
	// while the new content is written.
	WriteFileFunc(dst, func(w io.Writer) error {
		if err := os.Remove(dst); err != nil {
			return err
		}
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		_, err := w.Write([]byte("new"))
		return err
	})
	if swappedOut == "" {
		t.Fatal("nothing was swapped out")
	}
	if fi, err := os.Stat(swappedOut); err != nil || !fi.IsDir() {
		if fi, err := os.Stat(dst); err != nil || !fi.IsDir() {
			t.Errorf("the directory put at the destination was removed (neither %s nor %s is one)", filepath.Base(swappedOut), filepath.Base(dst))
		}
	}
}

// TestInterruptRemovesFailedTemp: a temporary file whose rename into place
// failed is removed by an interrupt that comes while the old contents of
// the destinations before it are still being removed: it stays pending
// until the cleanup removes it.
func TestInterruptRemovesFailedTemp(t *testing.T) {
	resetPendingTemps(t)
	realUnlink := unlink
	t.Cleanup(func() { unlink = realUnlink })
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.pb"), filepath.Join(dir, "b.pb")
	writeSentinel(t, first)
	unlink = func(a string) error {
		// The writer goes on to the second destination, fails and
		// waits for this removal; then the interrupt comes.
		time.Sleep(200 * time.Millisecond)
		RemovePendingTempFiles()
		return realUnlink(a)
	}
	writes := []func(io.Writer) error{
		func(w io.Writer) error { _, err := w.Write([]byte("new")); return err },
		func(w io.Writer) error {
			// The second destination, resolved as a new file, becomes
			// a directory: the rename onto it fails.
			if err := os.Mkdir(second, 0o755); err != nil {
				return err
			}
			_, err := w.Write([]byte("new"))
			return err
		},
	}
	if err := WriteFilesFunc([]string{first, second}, writes); err == nil {
		t.Fatal("WriteFilesFunc succeeded, want the rename onto a directory to fail")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
