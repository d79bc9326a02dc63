package lint_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/report"
)

// run runs hopctl in-process.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cmdtest.Main(t, cli.Main, args...)
}

// TestExitCodes checks that every format exits the same way, and that json
// and sarif print a well-formed document whenever lint ran.
func TestExitCodes(t *testing.T) {
	td := cmdtest.Sandbox(t, "")
	l := func(name string) string { return filepath.Join(td, "lint", name) }
	junk := cmdtest.WriteFile(t, "junk.pb", "\xff\xffjunk")
	tests := []struct {
		name string
		args []string
		want int
		ran  bool // lint ran and printed a report
	}{
		{"clean", []string{l("cycle_ok.pbtxt")}, cli.ExitOK, true},
		{"clean corpus", []string{filepath.Join(td, "models", "mlp.pb"), filepath.Join(td, "hops", "cond.pbtxt")}, cli.ExitOK, true},
		{"error finding", []string{l("hop-input-mutation.pbtxt")}, cli.ExitFindings, true},
		{"warning below fail-on", []string{l("unknown-op.pbtxt")}, cli.ExitOK, true},
		{"warning at fail-on", []string{"--fail-on", "warning", l("unknown-op.pbtxt")}, cli.ExitFindings, true},
		{"warning above fail-on info", []string{"--fail-on=info", l("unknown-op.pbtxt")}, cli.ExitFindings, true},
		{"fail-on note", []string{"--fail-on=note", l("unknown-op.pbtxt")}, cli.ExitFindings, true},
		{"fail-on none", []string{"--fail-on=none", l("hop-input-mutation.pbtxt")}, cli.ExitOK, true},
		{"invalid file", []string{l("cycle.pbtxt")}, cli.ExitInput, true},
		{"invalid file, fail-on none", []string{"--fail-on=none", l("cycle.pbtxt"), l("cycle_ok.pbtxt")}, cli.ExitInput, true},
		{"invalid beats findings", []string{l("hop-input-mutation.pbtxt"), l("missing-output.pbtxt")}, cli.ExitInput, true},
		{"unreadable file", []string{junk, l("cycle_ok.pbtxt")}, cli.ExitInput, true},
		{"missing file", []string{"nope.pb"}, cli.ExitInput, true},
		{"no files", nil, cli.ExitUsage, false},
		{"bad fail-on", []string{"--fail-on=loud", l("cycle_ok.pbtxt")}, cli.ExitUsage, false},
		{"bad jobs", []string{"-j", "-1", l("cycle_ok.pbtxt")}, cli.ExitUsage, false},
		{"unknown flag", []string{"--nope", l("cycle_ok.pbtxt")}, cli.ExitUsage, false},
	}
	for _, format := range []string{"text", "json", "sarif"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				args := append([]string{"lint", "--format", format}, tt.args...)
				code, stdout, stderr := run(t, args...)
				if code != tt.want {
					t.Fatalf("hopctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, tt.want, stdout, stderr)
				}
				if tt.ran && format != "text" && !json.Valid([]byte(stdout)) {
					t.Errorf("stdout is not JSON:\n%s", stdout)
				}
				if !tt.ran && stdout != "" {
					t.Errorf("usage error printed a report:\n%s", stdout)
				}
				if code != cli.ExitOK && !strings.HasPrefix(stderr, "hopctl: ") {
					t.Errorf("stderr %q", stderr)
				}
			})
		}
	}
	if code, _, _ := run(t, "lint", "--format", "xml", l("cycle_ok.pbtxt")); code != cli.ExitUsage {
		t.Errorf("--format xml: exit %d", code)
	}
}

// TestFailOnPrecedence: lint.fail-on in the file < HOPCTL_LINT_FAIL_ON <
// --fail-on, seen through the exit code on a file with one warning.
func TestFailOnPrecedence(t *testing.T) {
	dir := t.TempDir()
	td := cmdtest.Sandbox(t, dir)
	file := filepath.Join(td, "lint", "unknown-op.pbtxt")
	cmdtest.WriteFile(t, filepath.Join(dir, ".hopctl.yaml"), "version: 1\nlint:\n  fail-on: error\n")
	if code, _, _ := run(t, "lint", file); code != cli.ExitOK {
		t.Errorf("file (error): exit %d, want 0", code)
	}
	t.Setenv("HOPCTL_LINT_FAIL_ON", "warning")
	if code, _, _ := run(t, "lint", file); code != cli.ExitFindings {
		t.Errorf("file (error) + env (warning): exit %d, want 1", code)
	}
	if code, _, _ := run(t, "lint", "--fail-on", "error", file); code != cli.ExitOK {
		t.Errorf("file + env + flag (error): exit %d, want 0", code)
	}
	t.Setenv("HOPCTL_LINT_FAIL_ON", "")
	cmdtest.WriteFile(t, filepath.Join(dir, ".hopctl.yaml"), "version: 1\nlint:\n  fail-on: warning\n")
	if code, _, _ := run(t, "lint", file); code != cli.ExitFindings {
		t.Errorf("file (warning): exit %d, want 1", code)
	}
	other := cmdtest.WriteFile(t, filepath.Join(dir, "other.yaml"), "version: 1\nlint:\n  fail-on: none\n")
	if code, _, _ := run(t, "lint", "--config", other, file); code != cli.ExitOK {
		t.Errorf("--config other.yaml (none): exit %d, want 0", code)
	}
}

// TestSuppressionOverCorpus lints all of testdata with a configuration that
// suppresses hop-input-mutation under hops/: those findings disappear
// (and are counted), the same rule still fires in lint/.
func TestSuppressionOverCorpus(t *testing.T) {
	cfgDir := t.TempDir()
	td := cmdtest.Sandbox(t, "")
	t.Chdir(td)
	cfg := cmdtest.WriteFile(t, filepath.Join(cfgDir, "hopctl.yaml"),
		"version: 1\nlint:\n  suppress:\n    - rule: hop-input-mutation\n      path: \"hops/*\"\n      reason: hand-written examples\n")
	var files []string
	for _, d := range []string{"models/*.pb", "hops/*.pbtxt", "lint/*.pbtxt"} {
		fs, _ := filepath.Glob(d)
		files = append(files, fs...)
	}
	lintJSON := func(args ...string) (*report.LintDoc, int) {
		t.Helper()
		code, stdout, stderr := run(t, append(append([]string{"lint", "--format", "json"}, args...), files...)...)
		var doc report.LintDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		return &doc, code
	}
	count := func(doc *report.LintDoc, dir string) int {
		n := 0
		for _, f := range doc.Files {
			for _, fd := range f.Findings {
				if fd.Rule == "hop-input-mutation" && strings.HasPrefix(f.Path, dir) {
					n++
				}
			}
		}
		return n
	}
	plain, code := lintJSON()
	if code != cli.ExitInput {
		t.Errorf("exit %d, want %d (testdata/lint has invalid files)", code, cli.ExitInput)
	}
	supp, _ := lintJSON("--config", cfg)
	if n := count(plain, "hops/"); n < 5 {
		t.Fatalf("only %d hop-input-mutation findings under hops/ without suppression", n)
	}
	if n := count(supp, "hops/"); n != 0 {
		t.Errorf("%d hop-input-mutation findings under hops/ despite the suppression", n)
	}
	if count(supp, "lint/") == 0 || count(supp, "lint/") != count(plain, "lint/") {
		t.Errorf("lint/: %d findings with the suppression, %d without", count(supp, "lint/"), count(plain, "lint/"))
	}
	if supp.Summary.Suppressed != count(plain, "hops/") || supp.Summary.Findings != plain.Summary.Findings-supp.Summary.Suppressed {
		t.Errorf("summary with suppression %+v, without %+v", supp.Summary, plain.Summary)
	}

	bad := cmdtest.WriteFile(t, filepath.Join(cfgDir, "bad.yaml"), "version: 1\nlint:\n  suppress:\n    - rule: hop-input-mutaton\n      reason: typo\n")
	code, _, stderr := run(t, "lint", "--config", bad, "hops/cond.pbtxt")
	if code != cli.ExitUsage || !strings.Contains(stderr, `unknown rule "hop-input-mutaton"`) {
		t.Errorf("misspelt rule: exit %d, stderr %q", code, stderr)
	}
}

func TestListRules(t *testing.T) {
	cmdtest.Sandbox(t, "")
	code, stdout, _ := run(t, "lint", "--list-rules")
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, r := range lint.Rules() {
		if !strings.Contains(stdout, r.ID+" ") || !strings.Contains(stdout, r.Short) {
			t.Errorf("--list-rules lacks %s", r.ID)
		}
	}
	code, stdout, _ = run(t, "lint", "--list-rules", "--format", "json")
	var rules []report.RuleDoc
	if err := json.Unmarshal([]byte(stdout), &rules); code != cli.ExitOK || err != nil || len(rules) != len(lint.Rules()) {
		t.Errorf("json: exit %d, %v, %d rules", code, err, len(rules))
	}
}

// TestTorchVersionSelectsRules: torch 2.6's trace of a while_loop whose
// body_fn returns three values for two carries (2.6 traces it, 2.14 refuses
// it) is clean under the version the file records, and refused with torch
// 2.14's words when --torch-version or HOPCTL_INPUT_TORCH_VERSION selects
// 2.14.
func TestTorchVersionSelectsRules(t *testing.T) {
	td := cmdtest.Sandbox(t, "")
	t.Setenv("HOPCTL_INPUT_TORCH_VERSION", "")
	file := filepath.Join(td, "hops_real", "torch2.6", "while_count.pb")
	const want = "Expected carried_inputs and body_output to have same number of outputs"
	if code, out, errOut := run(t, "lint", file); code != 0 || strings.Contains(out, want) {
		t.Errorf("file's own version (2.6): exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "lint", "--torch-version", "2.14", file); code != 1 || !strings.Contains(out, want) {
		t.Errorf("--torch-version 2.14: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("HOPCTL_INPUT_TORCH_VERSION", "2.14")
	if code, out, errOut := run(t, "lint", file); code != 1 || !strings.Contains(out, want) {
		t.Errorf("HOPCTL_INPUT_TORCH_VERSION=2.14: exit %d\n%s%s", code, out, errOut)
	}
}
