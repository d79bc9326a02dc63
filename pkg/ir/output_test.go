package ir

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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
		if err := WriteFilesAtomic([]string{null, null}, [][]byte{[]byte("a"), []byte("b")}); err != nil {
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
	if err := WriteFileAtomic(fifo, []byte("through the pipe")); err != nil {
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
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
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
		err := WriteFilesAtomic([]string{a, b, bad}, [][]byte{[]byte("new"), []byte("new"), []byte("new")})
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
		if err := WriteFilesAtomic(pair[:], [][]byte{[]byte("x"), []byte("y")}); !errors.As(err, &se) {
			t.Errorf("WriteFilesAtomic %v: %v, want a SameFileError", pair, err)
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

// TestTextOutputLinearInDepth: a file nesting an output tuple 4,990 deep
// (34 KB in binary) encodes to text and JSON in size proportional to its
// own (it was 199 MB of .pbtxt and 449 MB of .json: indentation grew with
// the depth), and the output decodes back to the same module.
func TestTextOutputLinearInDepth(t *testing.T) {
	a := Arg{Kind: ArgNode, S: "x", Ref: NoNode}
	for range 4990 {
		a = Arg{Kind: ArgTuple, Elems: []Arg{a}}
	}
	m := &Module{FormatMajor: FormatMajor, Graphs: []*Graph{{Nodes: []Node{
		{Name: "x", Op: OpPlaceholder, Target: "x"},
		{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{a}},
	}}}}
	bin, err := Encode(m, Binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []Encoding{Text, JSON} {
		out, err := Encode(m, enc)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 100*len(bin) {
			t.Errorf("%s: %d bytes for %d bytes of binary", enc, len(out), len(bin))
		}
		back, err := Decode(out, enc, "t")
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := Encode(back, Binary); !bytes.Equal(again, bin) {
			t.Errorf("%s: does not decode to the same module", enc)
		}
	}
}

// TestPrintableEscapesControlCharacters: names from files reach terminals
// escaped, so they cannot forge lines or send escape sequences.
func TestPrintableEscapesControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"add_1":                         "add_1",
		"été":                           "été",
		"a\nhopctl: FORGED: 0 findings": `a\nhopctl: FORGED: 0 findings`,
		"x\x1b[2J":                      `x\x1b[2J`,
		"rtl\u202eevil":                 `rtl\u202eevil`,
		"bad\xffutf8":                   `bad\xffutf8`,
		`back\slash` + "\x07":           `back\\slash\a`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	loc := At("f\n.pb", "g\x1b", "n\r")
	if s := loc.String(); strings.ContainsAny(s, "\n\r\x1b") {
		t.Errorf("Location.String() = %q", s)
	}
	g := &Graph{Nodes: []Node{
		{Name: "x\nFORGED", Op: OpPlaceholder, Target: "x\nFORGED"},
		{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{{Kind: ArgNode, S: "x\nFORGED", Ref: 0}}},
	}}
	def, body := ReadableForward(g)
	for _, l := range append(body, def) {
		if strings.ContainsAny(l, "\n\x1b") {
			t.Errorf("ReadableForward line %q", l)
		}
	}
}
