package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomicKeepsDestinationOnFailure(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "out.pb")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A destination inside a missing directory cannot be written.
	if err := WriteFile(filepath.Join(dir, "missing", "out.pb"), []byte("new")); err == nil {
		t.Fatal("expected an error")
	}
	if err := WriteFile(dst, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	entries, _ := os.ReadDir(dir)
	if string(got) != "new" || len(entries) != 1 {
		t.Fatalf("got %q and %d entries", got, len(entries))
	}
}

func TestWriteFilesAtomicIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.pb")
	if err := os.WriteFile(a, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The second destination's directory does not exist: nothing is written.
	err := WriteFiles([]string{a, filepath.Join(dir, "missing", "b.pb")}, [][]byte{[]byte("new"), []byte("new")})
	if err == nil {
		t.Fatal("expected an error")
	}
	if got, _ := os.ReadFile(a); string(got) != "old" {
		t.Fatalf("first destination changed to %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %d entries", len(entries))
	}
	if err := WriteFiles([]string{a}, [][]byte{[]byte("new")}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(a)
	if got, _ := os.ReadFile(a); string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v", got, fi.Mode().Perm())
	}
}

func TestWriteFileAtomicKeepsModeAndLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.pb")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pb")
	if err := os.Symlink("target.pb", link); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	got, _ := os.ReadFile(target)
	fi, _ := os.Stat(target)
	if string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("target: %q, mode %v; want \"new\", 0600", got, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries left in the directory, want 2", len(entries))
	}
}
