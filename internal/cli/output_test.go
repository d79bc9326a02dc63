package cli_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// writers are command lines that write files, with OUT standing for their
// one or several outputs (each a separate placeholder: OUT1, OUT2, ...).
var writers = []struct {
	name string
	args []string // IN is the input
}{
	{"convert", []string{"convert", "IN", "OUT1", "--to", "pb"}},
	{"joint", []string{"joint", "IN", "-o", "OUT1"}},
	{"joint partition", []string{"joint", "IN", "-o", "OUT1", "--partition", "mincut", "--fw-out", "OUT2", "--bw-out", "OUT3"}},
	{"synth", []string{"synth", "-n", "50", "-o", "OUT1"}},
	{"report", []string{"report", "IN", "-o", "OUT1"}},
	{"print overlay", []string{"print", "IN", "--format", "model-explorer", "--overlay", "OUT1"}},
	{"lint", []string{"lint", "IN", "--write-baseline", "OUT1", "--format", "json=OUT2", "--format", "sarif=OUT3"}},
	{"lint rules", []string{"lint", "--list-rules", "--format", "json=OUT1", "--format", "sarif=OUT2"}},
}

func fill(args []string, in string, outs ...string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch k := outIndex(a); {
		case a == "IN":
			out[i] = in
		case k >= 0:
			out[i] = a[:strings.Index(a, "OUT")] + outs[k] // OUTn or FORMAT=OUTn
		default:
			out[i] = a
		}
	}
	return out
}

// outIndex returns n-1 for an argument OUTn or FORMAT=OUTn, else -1.
func outIndex(a string) int {
	i := strings.Index(a, "OUT")
	if i < 0 || i+4 != len(a) || (i > 0 && a[i-1] != '=') {
		return -1
	}
	return int(a[i+3] - '1')
}

func nOuts(args []string) int {
	n := 0
	for _, a := range args {
		if outIndex(a) >= 0 {
			n++
		}
	}
	return n
}

// readsInput reports whether a writers command line reads IN.
func readsInput(args []string) bool { return slices.Contains(args, "IN") }

// TestOutputSafety runs every command that writes files against the
// destinations that used to lose data (README, Reliability): a device
// (a null device made with mknod) and a FIFO are written through, a
// dangling symbolic link is followed, a directory among several outputs
// leaves every output untouched, and an output that is the input or
// another output under another spelling is refused.
func TestOutputSafety(t *testing.T) {
	data, err := os.ReadFile("../../testdata/models/mlp.pb")
	dir := sandbox(t)
	in := filepath.Join(dir, "in.pb")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null")
	haveNull := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3) == nil
	for _, w := range writers {
		n := nOuts(w.args)
		ext := func(i int) string {
			if w.name == "report" {
				return ".html"
			}
			return []string{".pb", ".pbtxt", ".json"}[i%3]
		}
		t.Run(w.name, func(t *testing.T) {
			out := t.TempDir()
			fresh := func(tag string) []string {
				var ps []string
				for i := range n {
					ps = append(ps, filepath.Join(out, tag+string(rune('a'+i))+ext(i)))
				}
				return ps
			}
			if haveNull {
				outs := fresh("null")
				outs[0] = null
				if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitOK {
					t.Errorf("to a null device: exit %d: %s", r.code, r.stderr)
				}
				if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					t.Fatalf("the null device was replaced")
				}
			}
			// A FIFO, read by another goroutine.
			outs := fresh("fifo")
			if err := syscall.Mkfifo(outs[0], 0o600); err != nil {
				t.Fatal(err)
			}
			got := make(chan int, 1)
			go func() {
				f, err := os.Open(outs[0])
				if err != nil {
					got <- -1
					return
				}
				b, _ := io.ReadAll(f)
				f.Close()
				got <- len(b)
			}()
			if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitOK {
				t.Errorf("to a FIFO: exit %d: %s", r.code, r.stderr)
			}
			if n := <-got; n <= 0 {
				t.Errorf("the FIFO's reader got %d bytes", n)
			}
			// A dangling symbolic link.
			outs = fresh("link")
			target := outs[0] + ".target"
			if err := os.Symlink(filepath.Base(target), outs[0]); err != nil {
				t.Fatal(err)
			}
			if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitOK {
				t.Errorf("to a dangling link: exit %d: %s", r.code, r.stderr)
			}
			if fi, err := os.Lstat(outs[0]); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced")
			}
			if fi, err := os.Stat(target); err != nil || fi.Size() == 0 {
				t.Errorf("the link's target was not written: %v", err)
			}
			// The last output a directory: nothing is replaced.
			outs = fresh("dir")
			for _, o := range outs[:n-1] {
				if err := os.WriteFile(o, []byte(sentinel), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(outs[n-1], 0o755); err != nil {
				t.Fatal(err)
			}
			if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "is a directory") {
				t.Errorf("to a directory: exit %d: %s", r.code, r.stderr)
			}
			for _, o := range outs[:n-1] {
				if b, _ := os.ReadFile(o); string(b) != sentinel {
					t.Errorf("%s was replaced although another output failed", o)
				}
			}
			// The input under another spelling, and two outputs that are one.
			if readsInput(w.args) {
				outs = fresh("same")
				outs[0] = filepath.Join(dir, ".", "in.pb")
				if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitInput || !strings.Contains(r.stderr, "is the input") {
					t.Errorf("output = input: exit %d: %s", r.code, r.stderr)
				}
			}
			if n > 1 {
				outs = fresh("twice")
				if err := os.Symlink(filepath.Base(outs[0]), outs[1]+".link"); err != nil {
					t.Fatal(err)
				}
				outs[1] += ".link"
				if r := runBounded(t, fill(w.args, in, outs...)); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "are the same file") {
					t.Errorf("two outputs, one file: exit %d: %s", r.code, r.stderr)
				}
			}
			if b, _ := os.ReadFile(in); string(b) != string(data) {
				t.Fatalf("the input was changed")
			}
		})
	}
}

// TestOutputToStdout: commands that write one output write it to standard
// output for "-".
func TestOutputToStdout(t *testing.T) {
	in, _ := filepath.Abs("../../testdata/models/mlp.pb")
	sandbox(t)
	for _, args := range [][]string{
		{"joint", in, "-o", "-"},
		{"convert", in, "-", "--to", "pb"},
		{"synth", "-n", "50", "-o", "-"},
	} {
		r := runBounded(t, args)
		if r.code != cli.ExitOK || len(r.stdout) < 100 || r.stdout[0] != 0x0a {
			t.Errorf("hopctl %s: exit %d, %d bytes of stdout, stderr %s", strings.Join(args, " "), r.code, len(r.stdout), r.stderr)
		}
		if entries, _ := os.ReadDir("."); len(entries) > 0 {
			t.Errorf("hopctl %s wrote %v", strings.Join(args, " "), entries)
		}
	}
}

// TestOutputIsStandardOutput: a file output that is the file standard
// output is redirected to (`print --overlay o.json > o.json`) is refused
// before anything is written, in every command that writes files and
// standard output; a different file is not.
func TestOutputIsStandardOutput(t *testing.T) {
	in, _ := filepath.Abs("../../testdata/models/mlp.pb")
	dir := sandbox(t)
	for _, args := range [][]string{
		{"print", in, "--format", "model-explorer", "--overlay", "OUT"},
		{"joint", in, "-o", "OUT"},
		{"joint", in, "--partition", "default", "--fw-out", "fw.pb", "--bw-out", "OUT"},
		{"lint", in, "--write-baseline", "OUT"},
		{"lint", in, "--format", "json=OUT", "--format", "text"},
	} {
		for _, same := range []bool{true, false} {
			stdout, out := filepath.Join(dir, "stdout.txt"), filepath.Join(dir, "out.json")
			if same {
				// standard output under another name: a hard link.
				out = filepath.Join(dir, "link.json")
			}
			os.Remove(out)
			f, err := os.Create(stdout)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(sentinel)
			if same {
				if err := os.Link(stdout, out); err != nil {
					t.Fatal(err)
				}
			}
			var errOut bytes.Buffer
			argv := slices.Clone(args)
			for i, a := range argv {
				argv[i] = strings.ReplaceAll(a, "OUT", out)
			}
			code := cli.Main(argv, &iostreams.IOStreams{In: &bytes.Buffer{}, Out: f, ErrOut: &errOut})
			f.Close()
			got, _ := os.ReadFile(stdout)
			desc := "hopctl " + strings.Join(argv, " ")
			switch {
			case same && (code != cli.ExitUsage || !strings.Contains(errOut.String(), "where standard output goes")):
				t.Errorf("%s > (the same file): exit %d, stderr %s", desc, code, errOut.String())
			case same && string(got) != sentinel:
				t.Errorf("%s > (the same file): the file was changed", desc)
			case !same && code != cli.ExitOK:
				t.Errorf("%s > another file: exit %d, stderr %s", desc, code, errOut.String())
			}
			os.Remove(stdout)
			os.Remove(filepath.Join(dir, "fw.pb"))
		}
	}
}

// TestLintBaselineFiles: a report may not replace the --baseline file it
// read, nor a graph file however spelled; --write-baseline may update the
// --baseline file.
func TestLintBaselineFiles(t *testing.T) {
	data, err := os.ReadFile("../../testdata/lint/hop-input-alias.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	dir := sandbox(t)
	if err := os.WriteFile("m.pbtxt", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBounded(t, []string{"lint", "m.pbtxt", "--write-baseline", "base.json"}); r.code != cli.ExitOK {
		t.Fatalf("writing the baseline: exit %d: %s", r.code, r.stderr)
	}
	base, _ := os.ReadFile("base.json")
	// A graph file as an output is invalid input (exit 3); the baseline
	// as a report file, and two outputs that are one file, usage errors.
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"lint", "m.pbtxt", "--baseline", "base.json", "--format", "json=./base.json"}, "is the input", cli.ExitUsage},
		{[]string{"lint", "m.pbtxt", "--format", "sarif=" + filepath.Join(dir, "m.pbtxt")}, "is the input", cli.ExitInput},
		{[]string{"lint", ".", "--write-baseline", "./m.pbtxt"}, "is the input", cli.ExitInput},
		{[]string{"lint", "m.pbtxt", "--write-baseline", "b2.json", "--format", "json=" + filepath.Join(dir, "b2.json")}, "are the same file", cli.ExitUsage},
	} {
		r := runBounded(t, c.args)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("hopctl %s: exit %d, stderr %s (want %q)", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
		if b, _ := os.ReadFile("base.json"); !bytes.Equal(b, base) {
			t.Fatalf("hopctl %s changed the baseline", strings.Join(c.args, " "))
		}
		if b, _ := os.ReadFile("m.pbtxt"); !bytes.Equal(b, data) {
			t.Fatalf("hopctl %s changed the input", strings.Join(c.args, " "))
		}
		if _, err := os.Stat("b2.json"); err == nil {
			t.Fatalf("hopctl %s wrote b2.json", strings.Join(c.args, " "))
		}
	}
	args := []string{"lint", "m.pbtxt", "--baseline", "base.json", "--write-baseline", "./base.json"}
	if r := runBounded(t, args); r.code != cli.ExitOK {
		t.Errorf("hopctl %s (updating the baseline): exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
}
