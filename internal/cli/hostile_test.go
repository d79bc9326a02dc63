package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/pkg/ir"
)

// TestControlCharactersInPaths: a path with a newline and an escape
// sequence (a missing input, a missing configuration file) is printed
// escaped in every command's message: it cannot clear the screen or forge
// a "hopctl:" line. (The os error's own copy of the path was printed raw.)
func TestControlCharactersInPaths(t *testing.T) {
	sandbox(t)
	const bad = "a\x1b[2Jb\nhopctl: FORGED.pb"
	check := func(args []string, want int) {
		t.Helper()
		r := runBounded(t, args)
		desc := "hopctl " + strings.Join(args, " ")
		if r.code != want {
			t.Errorf("%q: exit %d, want %d; stderr %q", desc, r.code, want, r.stderr)
		}
		if strings.Contains(r.stderr, "\x1b") || strings.Contains(r.stderr, "\nhopctl: FORGED") || !strings.Contains(r.stderr, `a\x1b[2Jb\nhopctl: FORGED.pb`) {
			t.Errorf("%q: the path is not escaped: stderr %q", desc, r.stderr)
		}
	}
	for _, c := range commands(t) {
		for _, inv := range invocations[c] {
			check(inv.args(bad, t.TempDir()), cli.ExitInput)
		}
	}
	check([]string{"--config", bad, "analyze", "x.pb"}, cli.ExitUsage)
}

// TestDashInput: "-" as an input (which names standard output among
// outputs) is refused saying how to read standard input, in every command.
func TestDashInput(t *testing.T) {
	sandbox(t)
	for _, c := range commands(t) {
		for _, inv := range invocations[c] {
			args := inv.args("-", t.TempDir())
			r := runBounded(t, args)
			if r.code != cli.ExitInput || !strings.Contains(r.stderr, "for standard input give /dev/stdin") {
				t.Errorf("hopctl %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
			}
		}
	}
}

// TestJointNeedsRecordedValues: a file the format allows but joint cannot
// differentiate — the real mlp with one node's recorded value dropped —
// is read by every other command, and refused by joint as invalid input
// (exit 3, never an internal error: joint's precheck) naming the file,
// graph and node, with nothing written. FuzzJointEdits found this class
// making the derivative formulas panic.
func TestJointNeedsRecordedValues(t *testing.T) {
	m, err := ir.LoadFile("../../testdata/models/mlp.pb")
	if err != nil {
		t.Fatal(err)
	}
	dir := sandbox(t)
	g := m.Root()
	node := ""
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Target == "aten.addmm.default" {
			n.Val, node = nil, n.Name
			break
		}
	}
	data, err := ir.Encode(m, ir.Binary)
	if node == "" || err != nil {
		t.Fatalf("mlp has no addmm (%v)", err)
	}
	if err := os.WriteFile("novalue.pb", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBounded(t, []string{"analyze", "novalue.pb"}); r.code > cli.ExitFindings {
		t.Errorf("analyze: exit %d, want the file read; stderr %q", r.code, r.stderr)
	}
	r := runBounded(t, []string{"joint", "novalue.pb", "-o", "j.pb"})
	if want := "novalue.pb: graph <root>: node " + node + ": has no recorded value"; r.code != cli.ExitInput || !strings.Contains(r.stderr, want) {
		t.Errorf("joint: exit %d, stderr %q; want %d and %q", r.code, r.stderr, cli.ExitInput, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "j.pb")); !os.IsNotExist(err) {
		t.Errorf("joint wrote j.pb (%v)", err)
	}
}

// TestInjectedTarget: an op target holding a line break, a CR, an escape
// sequence and a bidi override (the real mlp, its aten.t target edited)
// reaches no output raw: no line of any command's stdout or stderr starts a
// GitHub workflow command (but the annotations of --format github), and no
// ESC, CR or U+202E is written. The line break was missed in analyze's and
// lint's text (a forged "::error::" line), and in joint's message.
func TestInjectedTarget(t *testing.T) {
	m, err := ir.LoadFile("../../testdata/models/mlp.pb")
	if err != nil {
		t.Fatal(err)
	}
	sandbox(t)
	found := false
	g := m.Root()
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Target == "aten.t.default" {
			n.Target, found = "aten.t\n::error::pwned\r\x1b[31m\u202e.default", true
		}
	}
	data, err := ir.Encode(m, ir.Binary)
	if !found || err != nil {
		t.Fatalf("mlp has no aten.t (%v)", err)
	}
	if err := os.WriteFile("inj.pb", data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", "inj.pb"}, {"lint", "inj.pb"}, {"lint", "--format", "github", "inj.pb"},
		{"lint", "--format", "junit", "inj.pb"}, {"lint", "--format", "sarif", "inj.pb"}, {"print", "inj.pb"},
		{"print", "--format", "dot", "inj.pb"}, {"joint", "inj.pb", "-o", "j.pb"}} {
		r := runBounded(t, args)
		for _, out := range []string{r.stdout, r.stderr} {
			if strings.ContainsAny(out, "\x1b\r\u202e") {
				t.Errorf("hopctl %s: a raw control character in %q", strings.Join(args, " "), out)
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "::") && !(args[1] == "--format" && args[2] == "github" && strings.HasPrefix(l, "::warning ")) {
					t.Errorf("hopctl %s: a line starts a workflow command: %q", strings.Join(args, " "), l)
				}
			}
		}
	}
}
