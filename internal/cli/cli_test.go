package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

// run runs hopctl in-process and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cmdtest.Main(t, cli.Main, args...)
}

// sandbox runs the test in an empty directory with no HOPCTL_* settings
// from the environment, and returns the directory.
func sandbox(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmdtest.Sandbox(t, dir)
	return dir
}

func ref(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name, Ref: ir.NoNode} }

func f32(dims ...int64) *ir.Value {
	t := &ir.TensorMeta{Dtype: "float32", Device: "cpu"}
	for _, d := range dims {
		t.Shape = append(t.Shape, ir.Dim{Val: d})
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: t}
}

// condModule builds a small module with a cond HOP and two branch graphs.
func condModule() *ir.Module {
	branch := func(name, op string) *ir.Graph {
		return &ir.Graph{Name: name, Nodes: []ir.Node{
			{Name: "arg0_1", Op: ir.OpPlaceholder, Target: "arg0_1", Val: f32(4, 8)},
			{Name: "r", Op: ir.OpCallFunction, Target: op, Args: []ir.Arg{ref("arg0_1")}, Val: f32(4, 8),
				Meta: &ir.Meta{StackTrace: "  File \"m.py\", line 3, in f\n    return x.sin()\n"}},
			{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("r")})}},
		}}
	}
	root := &ir.Graph{Nodes: []ir.Node{
		{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(4, 8)},
		{Name: "pred", Op: ir.OpPlaceholder, Target: "pred", Val: &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "bool"}}},
		{Name: "true_graph_0", Op: ir.OpGetAttr, Target: "true_graph_0"},
		{Name: "false_graph_0", Op: ir.OpGetAttr, Target: "false_graph_0"},
		{Name: "cond", Op: ir.OpCallFunction, Target: "higher_order.cond",
			Args: []ir.Arg{ref("pred"), ref("true_graph_0"), ref("false_graph_0"), ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("x")})},
			Val:  &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*f32(4, 8)}}},
		{Name: "getitem", Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{ref("cond"), ir.IntArg(0)}, Val: f32(4, 8)},
		{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("getitem")})}},
	}}
	return &ir.Module{
		FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "cli_test",
		Graphs:  []*ir.Graph{root, branch("true_graph_0", "aten.sin.default"), branch("false_graph_0", "aten.cos.default")},
		Schemas: []ir.SchemaText{{Name: "aten::sin", Schema: "aten::sin(Tensor self) -> Tensor"}},
	}
}

// writeModule saves m to dir/name in the encoding name's extension names.
func writeModule(t *testing.T, dir, name string, m *ir.Module) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := cmdutil.SaveModule(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// inputFiles writes one valid graph file and the three kinds of bad input.
type inputFiles struct {
	good, missing, corrupt, truncated, wrongMajor, invalid string
}

func makeInputs(t *testing.T, dir string) inputFiles {
	t.Helper()
	var in inputFiles
	in.good = writeModule(t, dir, "good.pb", condModule())
	in.missing = filepath.Join(dir, "missing.pb")
	in.corrupt = cmdtest.WriteFile(t, filepath.Join(dir, "corrupt.pb"), "\xff\xff\xff\xff garbage")
	data, err := os.ReadFile(in.good)
	if err != nil {
		t.Fatal(err)
	}
	in.truncated = cmdtest.WriteFile(t, filepath.Join(dir, "truncated.pb"), string(data[:len(data)/2]))
	newer := condModule()
	newer.FormatMajor = ir.FormatMajor + 1
	in.wrongMajor = writeModule(t, dir, "newer.pbtxt", newer)
	bad := condModule()
	bad.Graphs[1].Nodes[1].Args[0] = ref("ghost") // dangling reference in true_graph_0
	in.invalid = writeModule(t, dir, "invalid.pbtxt", bad)
	return in
}

func TestExitCodes(t *testing.T) {
	dir := sandbox(t)
	in := makeInputs(t, dir)
	badConfig := cmdtest.WriteFile(t, filepath.Join(dir, "bad.yaml"), "version: 1\nbogus: true\n")
	tests := []struct {
		name string
		args []string
		code int
		// stderr must contain each of these; "" expects empty stderr.
		stderr []string
	}{
		{"no arguments prints help", nil, cli.ExitOK, nil},
		{"help", []string{"help"}, cli.ExitOK, nil},
		{"print", []string{"print", in.good}, cli.ExitOK, nil},
		{"version", []string{"version"}, cli.ExitOK, nil},
		{"unknown flag", []string{"--bogus"}, cli.ExitUsage, []string{"unknown flag: --bogus"}},
		{"unknown subcommand flag", []string{"print", "--bogus", in.good}, cli.ExitUsage, []string{"unknown flag: --bogus", "hopctl print --help"}},
		{"unknown flag near a flag", []string{"print", "--fromat", "json", in.good}, cli.ExitUsage, []string{"unknown flag: --fromat, did you mean --format? (see 'hopctl print --help')"}},
		{"unknown flag near a global flag", []string{"print", "--qiuet", in.good}, cli.ExitUsage, []string{"unknown flag: --qiuet, did you mean --quiet?"}},
		{"abbreviated flag", []string{"joint", in.good, "--part", "mincut"}, cli.ExitUsage, []string{"unknown flag: --part, did you mean --partition?"}},
		{"long flag with one dash", []string{"print", "-format", "json", in.good}, cli.ExitUsage, []string{"in -format, did you mean --format?"}},
		{"unknown flag near nothing", []string{"print", "--zzzzzz", in.good}, cli.ExitUsage, []string{"unknown flag: --zzzzzz (see"}},
		{"unknown command", []string{"prnt", in.good}, cli.ExitUsage, []string{`unknown command "prnt"`, `did you mean "print"?`}},
		{"missing argument", []string{"print"}, cli.ExitUsage, []string{"missing FILE"}},
		{"extra argument", []string{"convert", in.good, "a.pb", "b.pb"}, cli.ExitUsage, []string{"too many arguments"}},
		{"bad flag value", []string{"print", in.good, "--format", "yaml"}, cli.ExitUsage, []string{`invalid value "yaml" for --format`}},
		{"bad flag type", []string{"version", "--format"}, cli.ExitUsage, []string{"flag needs an argument"}},
		{"no such graph", []string{"print", in.good, "--graph", "nope"}, cli.ExitUsage, []string{in.good, `no graph "nope"`, "true_graph_0"}},
		{"bad config", []string{"print", in.good, "--config", badConfig}, cli.ExitUsage, []string{badConfig, "bogus"}},
		{"missing config", []string{"print", in.good, "--config", filepath.Join(dir, "nope.yaml")}, cli.ExitUsage, []string{"nope.yaml"}},
		{"bad --to", []string{"convert", in.good, "out.pb", "--to", "xml"}, cli.ExitUsage, []string{`invalid value "xml" for --to`}},
		{"missing file", []string{"print", in.missing}, cli.ExitInput, []string{in.missing, "no such file"}},
		{"corrupt file", []string{"print", in.corrupt}, cli.ExitInput, []string{in.corrupt, "cannot decode"}},
		{"truncated file", []string{"print", in.truncated}, cli.ExitInput, []string{in.truncated}},
		{"newer format", []string{"print", in.wrongMajor}, cli.ExitInput, []string{in.wrongMajor, "newer"}},
		{"fails verify", []string{"print", in.invalid}, cli.ExitInput, []string{in.invalid, "graph true_graph_0", "node r", `"ghost"`}},
		{"convert fails verify", []string{"convert", in.invalid, filepath.Join(dir, "out.pb")}, cli.ExitInput, []string{in.invalid, "node r"}},
		{"convert missing", []string{"convert", in.missing, filepath.Join(dir, "out.pb")}, cli.ExitInput, []string{in.missing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("hopctl %s: exit %d, want %d; stderr:\n%s", strings.Join(tt.args, " "), code, tt.code, stderr)
			}
			if tt.stderr == nil {
				if stderr != "" {
					t.Errorf("unexpected stderr:\n%s", stderr)
				}
				return
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not mention %q:\n%s", want, stderr)
				}
			}
			for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				if !strings.HasPrefix(line, "hopctl: ") {
					t.Errorf("stderr line without the hopctl: prefix: %q", line)
				}
			}
			if strings.Contains(stderr, "Usage:") {
				t.Errorf("usage printed on error:\n%s", stderr)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	findings := &cmdutil.FindingsError{Count: 2, Threshold: "warning"}
	input := &ir.DecodeError{Loc: ir.Location{File: "a.pb"}, Err: errors.New("bad")}
	tests := []struct {
		err  error
		want int
	}{
		{nil, cli.ExitOK},
		{findings, cli.ExitFindings},
		{fmt.Errorf("lint: %w", findings), cli.ExitFindings},
		{input, cli.ExitInput},
		{&ir.VerifyError{Problems: []ir.Problem{{Msg: "x"}}}, cli.ExitInput},
		{fmt.Errorf("load: %w", input), cli.ExitInput},
		{errors.Join(findings, input), cli.ExitInput},
		{cmdutil.FlagErrorf("bad flag"), cli.ExitUsage},
		{errors.New("anything else"), cli.ExitUsage},
		// A bug wins over everything, even when it wraps an input error.
		{&ir.InternalError{Phase: "joint", Err: errors.New("index out of range")}, cli.ExitInternal},
		{&ir.InternalError{Phase: "verify output", Err: &ir.VerifyError{Problems: []ir.Problem{{Msg: "x"}}}}, cli.ExitInternal},
		{errors.Join(input, findings, fmt.Errorf("b.pb: %w", &ir.InternalError{Err: errors.New("bug")})), cli.ExitInternal},
	}
	for _, tt := range tests {
		if got := cli.ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if got := findings.Error(); got != "2 findings at or above warning" {
		t.Errorf("FindingsError = %q", got)
	}
}

// TestFindingsExitCode runs a command that reports findings through the
// same path as Main.
func TestFindingsExitCode(t *testing.T) {
	sandbox(t)
	ios, _, out, errOut := iostreams.Test()
	root := cli.NewCmdRoot(cli.NewFactory(ios))
	root.AddCommand(&cobra.Command{
		Use: "fake",
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "a.pb: graph <root>: node add_: finding")
			return &cmdutil.FindingsError{Count: 1, Threshold: "error"}
		},
	})
	root.SetArgs([]string{"fake"})
	if code := cli.Execute(root, ios.ErrOut); code != cli.ExitFindings {
		t.Errorf("exit %d, want %d", code, cli.ExitFindings)
	}
	if out.String() != "a.pb: graph <root>: node add_: finding\n" || errOut.String() != "hopctl: 1 finding at or above error\n" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
}

// TestInternalErrorExitCode: a command that panics, or returns an internal
// error, exits 4 with the error and the stack on stderr, through the same
// path as Main.
func TestInternalErrorExitCode(t *testing.T) {
	sandbox(t)
	for name, fn := range map[string]func() error{
		"panics": func() error { var m map[string]int; m["x"] = 1; return nil },
		"returns": func() error {
			return &ir.InternalError{Phase: "joint", Loc: ir.At("a.pb", "", "mul"), Err: errors.New("rule bug"), Stack: []byte("goroutine 1 [running]:\nmain.f()")}
		},
	} {
		ios, _, _, errOut := iostreams.Test()
		root := cli.NewCmdRoot(cli.NewFactory(ios))
		root.AddCommand(&cobra.Command{Use: "fake", RunE: func(*cobra.Command, []string) error { return fn() }})
		root.SetArgs([]string{"fake"})
		if code := cli.Execute(root, ios.ErrOut); code != cli.ExitInternal {
			t.Errorf("%s: exit %d, want %d", name, code, cli.ExitInternal)
		}
		lines := strings.Split(errOut.String(), "\n")
		if !strings.HasPrefix(lines[0], "hopctl: internal error (a bug in hopctl, please report it) in ") || len(lines) < 3 ||
			!strings.HasPrefix(lines[1], "hopctl:     goroutine ") {
			t.Errorf("%s: stderr %q", name, errOut)
		}
	}
}

// TestVerifyErrorLines checks that every verification problem is its own
// "hopctl: file: graph g: node n: ..." line.
func TestVerifyErrorLines(t *testing.T) {
	dir := sandbox(t)
	bad := condModule()
	bad.Graphs[0].Nodes[5].Args[0] = ref("nope")  // getitem
	bad.Graphs[2].Nodes[1].Args[0] = ref("nope2") // false_graph_0.r
	path := writeModule(t, dir, "bad.json", bad)
	code, _, stderr := run(t, "print", path)
	if code != cli.ExitInput {
		t.Fatalf("exit %d, want %d", code, cli.ExitInput)
	}
	want := []string{
		fmt.Sprintf(`hopctl: %s: graph <root>: node getitem: dangling reference to "nope": no such node in this graph`, path),
		fmt.Sprintf(`hopctl: %s: graph false_graph_0: node r: dangling reference to "nope2": no such node in this graph`, path),
	}
	if got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); !cmp.Equal(got, want) {
		t.Errorf("stderr lines (-got +want):\n%s", cmp.Diff(got, want))
	}
}

// effectiveFailOn runs `hopctl config` and returns lint.fail-on from its
// output.
func effectiveFailOn(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"config"}, args...)...)
	if code != cli.ExitOK {
		t.Fatalf("hopctl config %v: exit %d: %s", args, code, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "fail-on: "); ok {
			return v
		}
	}
	t.Fatalf("no fail-on in:\n%s", stdout)
	return ""
}

func TestConfigPrecedence(t *testing.T) {
	dir := sandbox(t)
	if got := effectiveFailOn(t); got != "error" {
		t.Errorf("default fail-on = %q, want error", got)
	}
	// .hopctl.yaml in the current directory.
	cmdtest.WriteFile(t, filepath.Join(dir, ".hopctl.yaml"), "version: 1\nlint:\n  fail-on: warning\n")
	if got := effectiveFailOn(t); got != "warning" {
		t.Errorf("file: fail-on = %q, want warning", got)
	}
	// The environment overrides the file.
	t.Setenv("HOPCTL_LINT_FAIL_ON", "note")
	if got := effectiveFailOn(t); got != "note" {
		t.Errorf("file+env: fail-on = %q, want note", got)
	}
	// A flag overrides both.
	if got := effectiveFailOn(t, "--fail-on", "none"); got != "none" {
		t.Errorf("file+env+flag: fail-on = %q, want none", got)
	}
	// --config names another file; the environment still wins over it.
	other := cmdtest.WriteFile(t, filepath.Join(dir, "other.yaml"), "version: 1\nlint:\n  fail-on: none\n")
	t.Setenv("HOPCTL_LINT_FAIL_ON", "")
	if got := effectiveFailOn(t, "--config", other); got != "none" {
		t.Errorf("--config: fail-on = %q, want none", got)
	}
	// HOPCTL_CONFIG names the file too.
	t.Setenv("HOPCTL_CONFIG", other)
	if got := effectiveFailOn(t); got != "none" {
		t.Errorf("HOPCTL_CONFIG: fail-on = %q, want none", got)
	}
	// An environment variable applies without any file.
	t.Setenv("HOPCTL_CONFIG", "")
	if err := os.Remove(filepath.Join(dir, ".hopctl.yaml")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOPCTL_LINT_FAIL_ON", "warning")
	if got := effectiveFailOn(t); got != "warning" {
		t.Errorf("env only: fail-on = %q, want warning", got)
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := sandbox(t)
	in := writeModule(t, dir, "good.pbtxt", condModule())
	tests := []struct {
		name, content string
		want          []string
	}{
		{"unknown key", "version: 1\nlnt: {}\n", []string{`line 2: unknown key "lnt" (want version, lint, input)`}},
		{"unknown nested key", "version: 1\nlint:\n  fail_on: error\n", []string{`line 3: unknown key "fail_on" (want fail-on, suppress)`}},
		{"unknown suppression key", "version: 1\nlint:\n  suppress:\n    - rule: r\n      file: x\n", []string{`line 5: unknown key "file" (want rule, path, graph, node, reason)`}},
		{"missing version", "lint:\n  fail-on: error\n", []string{"missing version"}},
		{"newer version", "version: 2\n", []string{"config version 2 is newer"}},
		{"version not a number", "version: one\n", []string{"line 1: cannot unmarshal !!str `one` into int"}},
		{"bad fail-on", "version: 1\nlint:\n  fail-on: sometimes\n", []string{`lint.fail-on: invalid level "sometimes"`}},
		{"suppression without rule", "version: 1\nlint:\n  suppress:\n    - node: add\n      reason: r\n", []string{"lint.suppress[0]: missing rule"}},
		{"suppression without reason", "version: 1\nlint:\n  suppress:\n    - rule: cycle\n", []string{"lint.suppress[0]: missing reason"}},
		{"bad glob", "version: 1\nlint:\n  suppress:\n    - rule: r\n      path: \"[\"\n      reason: r\n", []string{"invalid path glob"}},
		{"not yaml", "version: [1\n", []string{"line 1: did not find expected"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmdtest.WriteFile(t, filepath.Join(dir, ".hopctl.yaml"), tt.content)
			for _, args := range [][]string{{"config"}, {"print", in}, {"convert", in, filepath.Join(dir, "o.pb")}} {
				code, _, stderr := run(t, args...)
				if code != cli.ExitUsage {
					t.Errorf("hopctl %v: exit %d, want %d", args, code, cli.ExitUsage)
				}
				for _, w := range append([]string{"hopctl: .hopctl.yaml: "}, tt.want...) {
					if !strings.Contains(stderr, w) {
						t.Errorf("hopctl %v: stderr does not mention %q:\n%s", args, w, stderr)
					}
				}
				if strings.Count(stderr, "\n") != 1 {
					t.Errorf("hopctl %v: want one line on stderr:\n%s", args, stderr)
				}
			}
			// Commands that do not need the configuration still work.
			for _, args := range [][]string{{"version"}, {"completion", "bash"}, {"help"}} {
				if code, _, stderr := run(t, args...); code != cli.ExitOK {
					t.Errorf("hopctl %v with a broken config: exit %d: %s", args, code, stderr)
				}
			}
		})
	}
	t.Run("bad environment value", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, ".hopctl.yaml")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("HOPCTL_LINT_FAIL_ON", "loud")
		code, _, stderr := run(t, "config")
		if code != cli.ExitUsage || !strings.Contains(stderr, `invalid level "loud"`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("valid suppressions", func(t *testing.T) {
		t.Setenv("HOPCTL_LINT_FAIL_ON", "")
		cmdtest.WriteFile(t, filepath.Join(dir, ".hopctl.yaml"),
			"version: 1\nlint:\n  suppress:\n    - rule: hop-input-mutation\n      path: \"models/*.pb\"\n      graph: true_graph_0\n      node: add_1\n      reason: on purpose\n")
		code, stdout, stderr := run(t, "config")
		if code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, w := range []string{"rule: hop-input-mutation", "path: models/*.pb", "graph: true_graph_0", "node: add_1", "reason: on purpose"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("config output lacks %q:\n%s", w, stdout)
			}
		}
	})
}

// loadProto loads path and returns its protobuf form, for comparison with
// protocmp.
func loadProto(t *testing.T, path string) any {
	t.Helper()
	m, err := ir.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ir.ToProto(m)
}

func TestConvertRoundTrip(t *testing.T) {
	dir := sandbox(t)
	src := writeModule(t, dir, "src.pbtxt", condModule())
	want := loadProto(t, src)
	prev := src
	// src.pbtxt → a.pb → a.json → a.pbtxt → b.pb: every step equal.
	for _, name := range []string{"a.pb", "a.json", "a.pbtxt", "b.pb"} {
		out := filepath.Join(dir, name)
		code, stdout, stderr := run(t, "convert", prev, out)
		if code != cli.ExitOK || stdout != "" || stderr != "" {
			t.Fatalf("convert %s %s: exit %d\nstdout: %s\nstderr: %s", prev, out, code, stdout, stderr)
		}
		if got := loadProto(t, out); !cmp.Equal(got, want, protocmp.Transform()) {
			t.Errorf("%s differs from the source (-got +want):\n%s", name, cmp.Diff(got, want, protocmp.Transform()))
		}
		if enc := ir.SniffEncoding(mustRead(t, out)); enc != ir.EncodingForPath(out) {
			t.Errorf("%s is encoded as %v", name, enc)
		}
		prev = out
	}
	// --to overrides the extension; "-" writes to stdout.
	for _, to := range []string{"pb", "json", "pbtxt"} {
		out := filepath.Join(dir, "forced.bin")
		if code, _, stderr := run(t, "convert", src, out, "--to", to); code != cli.ExitOK {
			t.Fatalf("--to %s: exit %d: %s", to, code, stderr)
		}
		enc, _ := ir.ParseEncoding(to)
		m, err := ir.Decode(mustRead(t, out), enc, out)
		if err != nil {
			t.Fatalf("--to %s: %v", to, err)
		}
		if got := ir.ToProto(m); !cmp.Equal(got, want, protocmp.Transform()) {
			t.Errorf("--to %s differs (-got +want):\n%s", to, cmp.Diff(got, want, protocmp.Transform()))
		}
		code, stdout, stderr := run(t, "convert", src, "-", "--to", to)
		if code != cli.ExitOK {
			t.Fatalf("convert - --to %s: exit %d: %s", to, code, stderr)
		}
		if stdout != string(mustRead(t, out)) {
			t.Errorf("convert - --to %s wrote other bytes than to a file", to)
		}
	}
	if code, _, stderr := run(t, "convert", src, "-"); code != cli.ExitUsage || !strings.Contains(stderr, "needs --to") {
		t.Errorf("convert to - without --to: exit %d, %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", src, filepath.Join(dir, "out.txt")); code != cli.ExitUsage || !strings.Contains(stderr, "out.txt") {
		t.Errorf("convert to unknown extension: exit %d, %s", code, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConvertFailureKeepsDestination checks that a failed conversion leaves
// an existing OUT as it was, and no temporary files behind.
func TestConvertFailureKeepsDestination(t *testing.T) {
	dir := sandbox(t)
	in := makeInputs(t, dir)
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := cmdtest.WriteFile(t, filepath.Join(outDir, "dest.pb"), "precious")
	for _, bad := range []string{in.invalid, in.corrupt, in.truncated, in.missing} {
		if code, _, _ := run(t, "convert", bad, dest); code != cli.ExitInput {
			t.Errorf("convert %s: exit %d, want %d", bad, code, cli.ExitInput)
		}
	}
	// A destination that cannot be replaced: a non-empty directory.
	blocked := filepath.Join(outDir, "blocked.pb")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "convert", in.good, blocked)
	if code != cli.ExitUsage || !strings.Contains(stderr, "cannot write "+blocked) {
		t.Errorf("convert onto a directory: exit %d, stderr %q", code, stderr)
	}
	// A destination in a directory that does not exist.
	code, _, stderr = run(t, "convert", in.good, filepath.Join(dest, "x.pb"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "cannot write") {
		t.Errorf("convert under a file: exit %d, stderr %q", code, stderr)
	}
	if got := string(mustRead(t, dest)); got != "precious" {
		t.Errorf("destination changed to %q", got)
	}
	entries, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"blocked.pb", "dest.pb"}; !cmp.Equal(names, want) {
		t.Errorf("files left in %s: %v, want %v", outDir, names, want)
	}
}

// TestConvertReadOnlyDir checks a destination directory without write
// permission (meaningless as root, who may write anyway).
func TestConvertReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 || runtime.GOOS == "windows" {
		t.Skip("root ignores directory permissions")
	}
	dir := sandbox(t)
	in := writeModule(t, dir, "in.pb", condModule())
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := cmdtest.WriteFile(t, filepath.Join(ro, "dest.pbtxt"), "precious")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	code, _, stderr := run(t, "convert", in, dest)
	if code != cli.ExitUsage || !strings.Contains(stderr, dest) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if got := string(mustRead(t, dest)); got != "precious" {
		t.Errorf("destination changed to %q", got)
	}
}

func TestVersion(t *testing.T) {
	sandbox(t)
	code, stdout, _ := run(t, "version")
	want := fmt.Sprintf("hopctl %s\ngraph format %d.%d\n%s %s/%s\n", build.Version, ir.FormatMajor, ir.FormatMinor, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if code != cli.ExitOK || stdout != want {
		t.Errorf("hopctl version: exit %d\n got %q\nwant %q", code, stdout, want)
	}
	code, stdout, _ = run(t, "version", "--format", "json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	wantJSON := map[string]string{
		"version":        build.Version,
		"format_version": fmt.Sprintf("%d.%d", ir.FormatMajor, ir.FormatMinor),
		"go_version":     runtime.Version(),
		"platform":       runtime.GOOS + "/" + runtime.GOARCH,
	}
	if !cmp.Equal(got, wantJSON) {
		t.Errorf("version JSON (-got +want):\n%s", cmp.Diff(got, wantJSON))
	}
	if code, stdout, _ := run(t, "--version"); code != cli.ExitOK || stdout != "hopctl version "+build.Version+"\n" {
		t.Errorf("hopctl --version: exit %d, %q", code, stdout)
	}
}

func TestPrint(t *testing.T) {
	dir := sandbox(t)
	path := writeModule(t, dir, "m.pbtxt", condModule())
	code, stdout, _ := run(t, "print", path)
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	m, err := ir.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := ir.PrintReadable(&want, m); err != nil {
		t.Fatal(err)
	}
	if stdout != want.String() {
		t.Errorf("print differs from ir.PrintReadable:\n%s", stdout)
	}
	for _, w := range []string{
		"class GraphModule(torch.nn.Module):",
		`    def forward(self, x: "f32[4, 8]", pred: "b8[]"):`,
		`        getitem: "f32[4, 8]" = cond[0];  cond = None`,
		"    class true_graph_0(torch.nn.Module):",
		"            # File: m.py:3 in f, code: return x.sin()",
	} {
		if !strings.Contains(stdout, w+"\n") {
			t.Errorf("print output lacks %q:\n%s", w, stdout)
		}
	}

	// --graph prints the subgraph as a module of its own.
	code, stdout, _ = run(t, "print", path, "--graph", "false_graph_0")
	wantSub := "class GraphModule(torch.nn.Module):\n" +
		"    def forward(self, arg0_1: \"f32[4, 8]\"):\n" +
		"        # File: m.py:3 in f, code: return x.sin()\n" +
		"        r: \"f32[4, 8]\" = torch.ops.aten.cos.default(arg0_1);  arg0_1 = None\n" +
		"        return (r,)\n"
	if code != cli.ExitOK || stdout != wantSub {
		t.Errorf("print --graph false_graph_0: exit %d\n%s\nwant\n%s", code, stdout, wantSub)
	}

	code, stdout, _ = run(t, "print", path, "--format", "dot")
	if code != cli.ExitOK || !strings.HasPrefix(stdout, "digraph hopctl {\n") || !strings.Contains(stdout, `label="true_graph_0"`) {
		t.Errorf("print --format dot: exit %d\n%s", code, stdout)
	}

	code, stdout, _ = run(t, "print", path, "--format", "json")
	if code != cli.ExitOK {
		t.Fatalf("print --format json: exit %d", code)
	}
	back, err := ir.Decode([]byte(stdout), ir.JSON, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ir.ToProto(back), ir.ToProto(m); !cmp.Equal(got, want, protocmp.Transform()) {
		t.Errorf("print --format json does not decode to the file (-got +want):\n%s", cmp.Diff(got, want, protocmp.Transform()))
	}
	// Deterministic: the same bytes every time.
	for _, format := range []string{"fx", "dot", "json"} {
		_, a, _ := run(t, "print", path, "--format", format)
		_, b, _ := run(t, "print", path, "--format", format)
		if a != b {
			t.Errorf("print --format %s is not deterministic", format)
		}
	}
}

func TestCompletionAndHelp(t *testing.T) {
	sandbox(t)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := run(t, "completion", shell)
		if code != cli.ExitOK || !strings.Contains(stdout, "hopctl") || stderr != "" {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(stdout), stderr)
		}
	}
	if code, _, _ := run(t, "completion", "tcsh"); code != cli.ExitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, cli.ExitUsage)
	}
	code, stdout, _ := run(t, "--help")
	if code != cli.ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for _, c := range []string{"print", "convert", "version", "completion", "config", "Exit codes"} {
		if !strings.Contains(stdout, c) {
			t.Errorf("help does not mention %q:\n%s", c, stdout)
		}
	}
	if code, stdout, _ := run(t, "help", "convert"); code != cli.ExitOK || !strings.Contains(stdout, "hopctl convert IN OUT") {
		t.Errorf("help convert: exit %d\n%s", code, stdout)
	}
	if _, stdout, _ := run(t, "config", "--help"); strings.Contains(stdout, "--fail-on") {
		t.Errorf("hidden flag shown in help:\n%s", stdout)
	}
}
