package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceExchanges: an existing destination is replaced by the
// temporary file's inode (not rewritten in place), a hard link to the old
// file keeps the old content as after a rename, and nothing but the
// destination and the link is left in the directory.
func TestReplaceExchanges(t *testing.T) {
	dir := t.TempDir()
	dst, tmp, hard := filepath.Join(dir, "dst"), filepath.Join(dir, ".dst.tmp1"), filepath.Join(dir, "hard")
	writeSentinel(t, dst)
	if err := os.Link(dst, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpFI, _ := os.Stat(tmp)
	if _, err := replace(tmp, dst, true); err != nil {
		t.Fatalf("replace: %v", err)
	}
	dstFI, _ := os.Stat(dst)
	if got := readString(t, dst); got != "new" || !os.SameFile(tmpFI, dstFI) {
		t.Errorf("dst = %q (the temporary file's inode: %v), want \"new\", true", got, os.SameFile(tmpFI, dstFI))
	}
	if got := readString(t, hard); got != "old" {
		t.Errorf("the hard link reads %q, want the old content", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries left in the directory, want 2 (dst, hard)", len(entries))
	}
}

// TestReplaceDirectoryPutBack: a directory put where a regular file was
// resolved is exchanged back, never removed (not even empty), and the
// replacement fails as the rename would, leaving the temporary file for
// the caller to remove; a destination gone since falls back to the rename.
func TestReplaceDirectoryPutBack(t *testing.T) {
	dir := t.TempDir()
	dst, tmp := filepath.Join(dir, "dst"), filepath.Join(dir, ".dst.tmp1")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	intact, err := replace(tmp, dst, true)
	if err == nil || !intact {
		t.Fatalf("replace over a directory: intact %v, %v; want an error, intact", intact, err)
	}
	if fi, err := os.Stat(dst); err != nil || !fi.IsDir() {
		t.Errorf("the directory is not where it was: %v, %v", fi, err)
	}
	if got := readString(t, tmp); got != "new" {
		t.Errorf("the temporary file reads %q", got)
	}

	gone := filepath.Join(dir, "gone")
	if _, err := replace(tmp, gone, true); err != nil {
		t.Fatalf("replace of a destination gone since: %v", err)
	}
	if got := readString(t, gone); got != "new" {
		t.Errorf("gone = %q, want \"new\"", got)
	}
	if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
}
