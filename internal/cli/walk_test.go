package cli_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
)

// TestWalkAccountsForEveryFile: `lint DIR/...` over a directory of hostile
// entries lists every graph file in its JSON report, in path order, as
// checked, skipped with a reason or an error, and never blocks: a FIFO
// (reading it would wait for a writer), a socket, links to /dev/zero, to
// /proc files (/proc/kmsg blocks on read) and to a directory above (a
// loop), a link to itself, a dangling link, a 200-deep tree and 10,000
// files. Before, the FIFO was neither listed nor counted and the link to
// /dev/zero was read.
func TestWalkAccountsForEveryFile(t *testing.T) {
	graph, err := os.ReadFile("../../testdata/hops/cond.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	dir := sandbox(t)
	root := filepath.Join(dir, "models")
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, graph, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{} // path under models → status
	write(filepath.Join(root, "a.pbtxt"))
	want["a.pbtxt"] = "ok"
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.pb"), 0o644); err != nil {
		t.Fatal(err)
	}
	want["fifo.pb"] = "skipped"
	if l, err := net.Listen("unix", filepath.Join(root, "sock.pb")); err == nil {
		defer l.Close()
		want["sock.pb"] = "skipped"
	}
	link("/dev/zero", filepath.Join(root, "zero.pb"))
	want["zero.pb"] = "skipped"
	link("/proc/self/status", filepath.Join(root, "status.pbtxt"))
	want["status.pbtxt"] = "skipped"
	if _, err := os.Stat("/proc/kmsg"); err == nil {
		link("/proc/kmsg", filepath.Join(root, "kmsg.pb"))
		want["kmsg.pb"] = "skipped"
	}
	link("..", filepath.Join(root, "loop"))
	want["loop"] = "skipped"
	link("self.pb", filepath.Join(root, "self.pb"))
	want["self.pb"] = "unreadable"
	link("missing.pb", filepath.Join(root, "dangling.pb"))
	want["dangling.pb"] = "unreadable"
	deep := root
	for range 200 {
		deep = filepath.Join(deep, "d")
	}
	write(filepath.Join(deep, "deep.pbtxt"))
	want[strings.Repeat("d/", 200)+"deep.pbtxt"] = "ok"
	for i := range 10000 {
		p := filepath.Join("many", strconv.Itoa(i)+".pbtxt")
		write(filepath.Join(root, p))
		want[filepath.ToSlash(p)] = "ok"
	}

	r := runBounded(t, []string{"lint", "--format", "json=report.json", "models/..."})
	if r.code != cli.ExitInput {
		t.Errorf("exit %d, want %d (the unreadable links); stderr %s", r.code, cli.ExitInput, r.stderr)
	}
	var doc struct {
		Files []struct {
			Path, Status, Reason, Error string
		}
		Summary struct {
			Files, Skipped int
			InvalidFiles   int `json:"invalid_files"`
		}
	}
	data, err := os.ReadFile("report.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v: %.300s", err, data)
	}
	var paths []string
	got := map[string]string{}
	for _, f := range doc.Files {
		rel := strings.TrimPrefix(f.Path, "models/")
		paths = append(paths, f.Path)
		got[rel] = f.Status
		if f.Status == "skipped" && f.Reason == "" || f.Status == "unreadable" && f.Error == "" {
			t.Errorf("%s: %s without saying why", f.Path, f.Status)
		}
	}
	if !slices.IsSorted(paths) {
		t.Errorf("files not in path order")
	}
	for p, s := range want {
		if got[p] != s {
			t.Errorf("%s: status %q, want %q", p, got[p], s)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: listed, but not a graph file of the tree", p)
		}
	}
	skipped := 0
	for _, s := range want {
		if s == "skipped" {
			skipped++
		}
	}
	if doc.Summary.Skipped != skipped || doc.Summary.Files != len(want)-skipped || doc.Summary.InvalidFiles != 2 {
		t.Errorf("summary %+v, want %d skipped of %d", doc.Summary, skipped, len(want))
	}
	if n := strings.Count(r.stderr, "warning: skipped:"); n != skipped {
		t.Errorf("%d skipped warnings on stderr, want %d:\n%s", n, skipped, r.stderr)
	}

	// A directory that does not exist is an error of that path (exit 3), as a
	// missing file is.
	if r := runBounded(t, []string{"lint", "missing/..."}); r.code != cli.ExitInput || !strings.Contains(r.stderr, "missing") {
		t.Errorf("lint missing/...: exit %d, stderr %s", r.code, r.stderr)
	}
}
