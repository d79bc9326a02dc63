package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteToFullFileSystem: an output on a full file system (a 64 KiB
// tmpfs, mounted where the test may: as root) fails with a message saying
// so, keeps the old file whole and leaves no temporary file; on /dev/full
// (written through) it fails the same way.
func TestWriteToFullFileSystem(t *testing.T) {
	sandbox(t)
	if r := runBounded(t, []string{"synth", "-n", "20000", "-o", "big.pb"}); r.code != 0 {
		t.Fatalf("synth: exit %d: %s", r.code, r.stderr)
	}
	if r := runBounded(t, []string{"convert", "big.pb", "/dev/full", "--to", "pbtxt"}); r.code == 0 || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("convert to /dev/full: exit %d: %s", r.code, r.stderr)
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(mnt, 0)
	out := filepath.Join(mnt, "out.pbtxt")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"convert", "big.pb", out},
		{"joint", "big.pb", "-o", out},
	} {
		r := runBounded(t, args)
		if r.code == 0 || !strings.Contains(r.stderr, "no space left on device") {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		if b, _ := os.ReadFile(out); string(b) != "old" {
			t.Errorf("%s: the old file was changed", strings.Join(args, " "))
		}
		entries, _ := os.ReadDir(mnt)
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: left behind %v", strings.Join(args, " "), names)
		}
	}
}
