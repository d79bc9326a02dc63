package cli_test

import (
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
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
