package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func writeSentinel(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestWriteThroughSpecialFiles: a character device (a /dev/null made with
// mknod in a temporary directory) and a FIFO are written through, never
// replaced by a regular file.
func TestWriteThroughSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		if err := WriteFiles([]string{null, null}, [][]byte{[]byte("a"), []byte("b")}); err != nil {
			t.Errorf("write to a null device: %v", err)
		}
		if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("the device was replaced: %v %v", fi.Mode(), err)
		}
	} else {
		t.Logf("mknod: %v (not root?): the device case is not covered", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		data, _ := io.ReadAll(f)
		f.Close()
		got <- string(data)
	}()
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// TestWriteThroughDanglingSymlink: a symbolic link to a file that does not
// exist yet stays a link, and its target is created.
func TestWriteThroughDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out.pb")
	if err := os.Symlink("sub/target.pb", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if s := readString(t, filepath.Join(dir, "sub", "target.pb")); s != "new" {
		t.Errorf("target = %q", s)
	}
}

// TestWriteFilesAllOrNothing: when one destination cannot be written (a
// directory, a directory that does not exist), none is replaced.
func TestWriteFilesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pb"), filepath.Join(dir, "b.pb")
	writeSentinel(t, a)
	writeSentinel(t, b)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{sub, filepath.Join(dir, "missing", "c.pb")} {
		err := WriteFiles([]string{a, b, bad}, [][]byte{[]byte("new"), []byte("new"), []byte("new")})
		if err == nil {
			t.Errorf("%s: no error", bad)
		}
		if readString(t, a) != "old" || readString(t, b) != "old" {
			t.Errorf("%s: an output was replaced although another failed", bad)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestSameFileUnderOtherNames: outputs, and an input and an output, that
// are one file under different spellings are refused.
func TestSameFileUnderOtherNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeSentinel(t, "j.pb")
	if err := os.Symlink("j.pb", "link.pb"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link("j.pb", "hard.pb"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("d", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{"j.pb", "./j.pb"}, {"j.pb", "link.pb"}, {"j.pb", "hard.pb"}, {"new.pb", "d/../new.pb"}, {"new.pb", filepath.Join(dir, "new.pb")}} {
		var se *SameFileError
		if err := CheckOutputs(nil, pair[:]); !errors.As(err, &se) {
			t.Errorf("outputs %v: %v, want a SameFileError", pair, err)
		}
		if err := WriteFiles(pair[:], [][]byte{[]byte("x"), []byte("y")}); !errors.As(err, &se) {
			t.Errorf("WriteFiles %v: %v, want a SameFileError", pair, err)
		}
		if _, err := os.Stat("new.pb"); err == nil {
			t.Fatalf("%v: written", pair)
		}
	}
	for _, out := range []string{"./j.pb", "link.pb", "hard.pb"} {
		var se *SameFileError
		if err := CheckOutputs([]string{"j.pb"}, []string{out}); !errors.As(err, &se) || !se.Input {
			t.Errorf("input j.pb, output %s: %v", out, err)
		}
	}
	if err := CheckOutputs([]string{"j.pb"}, []string{"other.pb", "d/other.pb"}); err != nil {
		t.Errorf("distinct files: %v", err)
	}
	if err := CheckOutputs(nil, []string{"d"}); err == nil {
		t.Errorf("a directory output: no error")
	}
	if readString(t, "j.pb") != "old" {
		t.Errorf("j.pb was written")
	}
}
