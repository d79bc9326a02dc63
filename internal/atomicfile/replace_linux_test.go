package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// replace is what WriteFilesFunc does with one temporary file: swapIn,
// removeSwapped when it swapped, and putBack when that failed.
func replace(tmp, dst string, exists bool) (tmpIntact bool, err error) {
	swapped, err := swapIn(tmp, dst, exists)
	if !swapped {
		return true, err
	}
	if uerr := removeSwapped(tmp); uerr != nil {
		return putBack(tmp, dst, uerr)
	}
	return false, nil
}

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

// TestReplaceSteps follows replace's system calls: an existing
// destination is exchanged and the old content unlinked (no rename); a
// failed exchange falls back to the rename; an old name gone after the
// exchange (a file system that renamed instead) is success; a failed
// unlink swaps back and renames; and when swapping back fails too, the
// temporary name is reported as not the caller's to remove.
func TestReplaceSteps(t *testing.T) {
	realExchange, realUnlink := exchange, unlink
	t.Cleanup(func() { exchange, unlink = realExchange, realUnlink })
	eio := syscall.EIO
	for _, tc := range []struct {
		name       string
		exchange   func(n int, a, b string) error // n: the call's number, from 1
		unlink     func(a string) error
		steps      string
		dst, tmp   string // contents after, "" for gone
		intact, ok bool
	}{
		{"exchanged", nil, nil, "xu", "new", "", false, true},
		{"no exchange", func(int, string, string) error { return syscall.EINVAL }, nil, "x", "new", "", true, true},
		{"renamed instead", func(_ int, a, b string) error { return os.Rename(a, b) }, nil, "xu", "new", "", false, true},
		{"unlink fails", nil, func(string) error { return eio }, "xux", "new", "", true, true},
		{"swap back fails", func(n int, a, b string) error {
			if n == 2 {
				return eio
			}
			return realExchange(a, b)
		}, func(string) error { return eio }, "xux", "new", "old", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dst, tmp := filepath.Join(dir, "dst"), filepath.Join(dir, ".dst.tmp1")
			writeSentinel(t, dst)
			if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
			var steps string
			exchanges := 0
			exchange = func(a, b string) error {
				steps += "x"
				exchanges++
				if tc.exchange != nil {
					return tc.exchange(exchanges, a, b)
				}
				return realExchange(a, b)
			}
			unlink = func(a string) error {
				steps += "u"
				if tc.unlink != nil {
					return tc.unlink(a)
				}
				return realUnlink(a)
			}
			intact, err := replace(tmp, dst, true)
			if (err == nil) != tc.ok || (!tc.ok && intact != tc.intact) || steps != tc.steps {
				t.Errorf("replace: steps %q, intact %v, %v; want steps %q, intact %v, ok %v", steps, intact, err, tc.steps, tc.intact, tc.ok)
			}
			for path, want := range map[string]string{dst: tc.dst, tmp: tc.tmp} {
				got, err := os.ReadFile(path)
				if want == "" && !os.IsNotExist(err) || want != "" && string(got) != want {
					t.Errorf("%s: %q, %v; want %q", filepath.Base(path), got, err, want)
				}
			}
		})
	}
}

// TestWriteFilesRemovesAtOnce: the old contents of several destinations
// are removed at the same time (every removal starts before any ends),
// each stays a pending temporary file until its removal ends (an
// interrupt then would remove it), and nothing but the destinations is
// left.
func TestWriteFilesRemovesAtOnce(t *testing.T) {
	realUnlink := unlink
	t.Cleanup(func() { unlink = realUnlink })
	dir := t.TempDir()
	var paths []string
	var datas [][]byte
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("out%d.pb", i))
		writeSentinel(t, p)
		paths, datas = append(paths, p), append(datas, []byte("new"))
	}
	all := make(chan struct{}) // closed when every removal has started
	var mu sync.Mutex
	var pending []bool // per removal: its file was still pending
	alone := 0         // removals that waited for the others in vain
	unlink = func(a string) error {
		pendingTemps.Lock()
		_, tracked := pendingTemps.names[a]
		pendingTemps.Unlock()
		mu.Lock()
		pending = append(pending, tracked)
		if len(pending) == len(paths) {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(2 * time.Second):
			mu.Lock()
			alone++
			mu.Unlock()
		}
		return realUnlink(a)
	}
	if err := WriteFiles(paths, datas); err != nil {
		t.Fatal(err)
	}
	if len(pending) != len(paths) || alone > 0 {
		t.Fatalf("%d removals, %d of them one after another; want %d, all at once", len(pending), alone, len(paths))
	}
	for i, tracked := range pending {
		if !tracked {
			t.Errorf("removal %d: the swapped-out file was not a pending temporary file", i)
		}
	}
	pendingTemps.Lock()
	left := len(pendingTemps.names)
	pendingTemps.Unlock()
	if left != 0 {
		t.Errorf("%d temporary files still pending", left)
	}
	for _, p := range paths {
		if got := readString(t, p); got != "new" {
			t.Errorf("%s = %q, want \"new\"", filepath.Base(p), got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(paths) {
		t.Errorf("%d entries left in the directory, want %d", len(entries), len(paths))
	}
}

// TestWriteFilesPutsBack: when the old content cannot be removed, the new
// file is put in place by a rename all the same (putBack), and nothing is
// left beside the destinations.
func TestWriteFilesPutsBack(t *testing.T) {
	realUnlink := unlink
	t.Cleanup(func() { unlink = realUnlink })
	unlink = func(string) error { return syscall.EIO }
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a.pb"), filepath.Join(dir, "b.pb")}
	for _, p := range paths {
		writeSentinel(t, p)
	}
	if err := WriteFiles(paths, [][]byte{[]byte("new"), []byte("new")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if got := readString(t, p); got != "new" {
			t.Errorf("%s = %q, want \"new\"", filepath.Base(p), got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(paths) {
		t.Errorf("%d entries left in the directory, want %d", len(entries), len(paths))
	}
	pendingTemps.Lock()
	left := len(pendingTemps.names)
	pendingTemps.Unlock()
	if left != 0 {
		t.Errorf("%d temporary files still pending", left)
	}
}
