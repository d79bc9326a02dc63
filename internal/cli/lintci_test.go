package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/hopctl/hopctl/internal/cli"
)

// copyFile copies src to dst, creating dst's directory.
func copyFile(t *testing.T, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	return cmdtest.WriteFile(t, dst, string(data))
}

// testdataDir is the repository's testdata, found before tests change
// directory.
var testdataDir, _ = filepath.Abs("../../testdata")

// testdata is the absolute path of a file of the repository's testdata.
func testdata(t *testing.T, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{testdataDir}, parts...)...)
}

type lintJSON struct {
	Files []struct {
		Path     string `json:"path"`
		Findings []struct {
			Rule        string `json:"rule"`
			Fingerprint string `json:"fingerprint"`
			InBaseline  bool   `json:"in_baseline"`
		} `json:"findings"`
		SuppressedFindings []struct {
			Rule        string `json:"rule"`
			Suppression struct {
				Reason string `json:"reason"`
			} `json:"suppression"`
		} `json:"suppressed_findings"`
	} `json:"files"`
	Summary struct {
		Findings, Failing, Baselined, Suppressed int
	} `json:"summary"`
	Unmatched []struct {
		Index int    `json:"index"`
		Rule  string `json:"rule"`
	} `json:"unmatched_suppressions"`
}

func lintDoc(t *testing.T, wantCode int, args ...string) (lintJSON, string) {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"lint", "--format", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("lint %v: exit %d, want %d: %s", args, code, wantCode, stderr)
	}
	var doc lintJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("lint %v: %v\n%s", args, err, stdout)
	}
	return doc, stderr
}

func (d lintJSON) paths() []string {
	var out []string
	for _, f := range d.Files {
		out = append(out, filepath.ToSlash(f.Path))
	}
	return out
}

// TestLintWalk: DIR is the graph files in DIR, DIR/... and ./... every
// graph file below, skipping hidden directories, node_modules and JSON
// that is no hopctl graph; a directory without graph files is a usage
// error.
func TestLintWalk(t *testing.T) {
	dir := sandbox(t)
	copyFile(t, testdata(t, "lint", "hop-input-mutation.pbtxt"), "tree/a.pbtxt")
	copyFile(t, testdata(t, "lint", "cycle_ok.pbtxt"), "tree/sub/b.pbtxt")
	copyFile(t, testdata(t, "models", "mlp.pb"), "tree/sub/deep/c.pb")
	copyFile(t, testdata(t, "lint", "cycle.pbtxt"), "tree/.hidden/d.pbtxt")
	copyFile(t, testdata(t, "lint", "cycle.pbtxt"), "tree/node_modules/e.pbtxt")
	copyFile(t, testdata(t, "pt2", "2.14", "cond.aten.pt2"), "tree/sub/deep/e.pt2")
	cmdtest.WriteFile(t, "tree/sub/package.json", `{"name": "not a graph"}`)
	cmdtest.WriteFile(t, "tree/notes.txt", "not a graph")
	if code, _, stderr := run(t, "convert", "tree/sub/b.pbtxt", "tree/sub/g.json"); code != cli.ExitOK {
		t.Fatalf("convert: %s", stderr)
	}
	doc, _ := lintDoc(t, cli.ExitFindings, "tree")
	if got, want := doc.paths(), []string{"tree/a.pbtxt"}; !slices.Equal(got, want) {
		t.Errorf("lint tree: %q, want %q", got, want)
	}
	all := []string{"tree/a.pbtxt", "tree/sub/b.pbtxt", "tree/sub/deep/c.pb", "tree/sub/deep/e.pt2", "tree/sub/g.json"}
	doc, _ = lintDoc(t, cli.ExitFindings, "tree/...")
	if got := doc.paths(); !slices.Equal(got, all) {
		t.Errorf("lint tree/...: %q, want %q", got, all)
	}
	t.Chdir(filepath.Join(dir, "tree"))
	doc, _ = lintDoc(t, cli.ExitFindings, "./...")
	if got := doc.paths(); !slices.Equal(got, []string{"a.pbtxt", "sub/b.pbtxt", "sub/deep/c.pb", "sub/deep/e.pt2", "sub/g.json"}) {
		t.Errorf("lint ./...: %q", got)
	}
	// Files and directories mix, without repeats, in argument order.
	doc, _ = lintDoc(t, cli.ExitOK, "sub/b.pbtxt", "sub/...")
	if got := doc.paths(); !slices.Equal(got, []string{"sub/b.pbtxt", "sub/deep/c.pb", "sub/deep/e.pt2", "sub/g.json"}) {
		t.Errorf("lint sub/b.pbtxt sub/...: %q", got)
	}
	if code, _, stderr := run(t, "lint", "node_modules/.."+"/sub/deep/../../.hidden"); code != cli.ExitInput {
		// A directory given explicitly is walked even if hidden.
		t.Errorf("explicit hidden dir: exit %d: %s", code, stderr)
	}
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "lint", "empty/..."); code != cli.ExitUsage || !strings.Contains(stderr, "no graph files") {
		t.Errorf("empty dir: exit %d: %s", code, stderr)
	}
}

// TestLintBaseline: --write-baseline records the findings by fingerprint
// and the run passes; --baseline then fails only on new findings, in every
// format's exit code; SARIF marks results new or unchanged.
func TestLintBaseline(t *testing.T) {
	sandbox(t)
	old := copyFile(t, testdata(t, "lint", "hop-input-mutation.pbtxt"), "m/old.pbtxt")
	doc, _ := lintDoc(t, cli.ExitOK, "--write-baseline", "base.json", "m/...")
	if doc.Summary.Findings == 0 || doc.Summary.Baselined != doc.Summary.Findings || doc.Summary.Failing != 0 {
		t.Errorf("write-baseline run: summary %+v", doc.Summary)
	}
	var base struct {
		Version  int `json:"version"`
		Findings []struct {
			Fingerprint, Rule, Path string
		} `json:"findings"`
	}
	if err := json.Unmarshal(mustRead(t, "base.json"), &base); err != nil {
		t.Fatal(err)
	}
	if base.Version != 1 || len(base.Findings) != doc.Summary.Findings || base.Findings[0].Path != "m/old.pbtxt" || base.Findings[0].Fingerprint != doc.Files[0].Findings[0].Fingerprint {
		t.Errorf("baseline %+v", base)
	}
	// Without the baseline the finding fails; with it, not.
	lintDoc(t, cli.ExitFindings, old)
	for _, format := range []string{"text", "json", "sarif", "github", "junit"} {
		if code, stdout, stderr := run(t, "lint", "--baseline", "base.json", "--format", format, old); code != cli.ExitOK {
			t.Errorf("--baseline --format %s: exit %d: %s", format, code, stderr)
		} else if format == "text" && (!strings.Contains(stdout, "in the baseline") || strings.Contains(stdout, "[hop-input-mutation]")) {
			t.Errorf("--baseline text shows the baselined finding or hides the count:\n%s", stdout)
		}
	}
	// A new finding fails, the old one still does not.
	copyFile(t, testdata(t, "lint", "hop-input-alias.pbtxt"), "m/new.pbtxt")
	doc, _ = lintDoc(t, cli.ExitFindings, "--baseline", "base.json", "m/...")
	for _, f := range doc.Files {
		for _, fd := range f.Findings {
			if fd.InBaseline != (f.Path == old || filepath.ToSlash(f.Path) == "m/old.pbtxt") {
				t.Errorf("%s %s: in_baseline %v", f.Path, fd.Rule, fd.InBaseline)
			}
		}
	}
	if doc.Summary.Failing == 0 || doc.Summary.Failing != doc.Summary.Findings-doc.Summary.Baselined {
		t.Errorf("summary %+v", doc.Summary)
	}
	code, stdout, _ := run(t, "lint", "--baseline", "base.json", "--format", "sarif", "m/...")
	if code != cli.ExitFindings {
		t.Errorf("sarif exit %d", code)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID        string `json:"ruleId"`
				BaselineState string `json:"baselineState"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, r := range log.Runs[0].Results {
		states[r.RuleID] = r.BaselineState
	}
	if states["hop-input-mutation"] != "unchanged" || states["hop-input-alias"] != "new" {
		t.Errorf("baselineState %v", states)
	}
	// A baseline that is not one is a usage/configuration error.
	cmdtest.WriteFile(t, "bad.json", `{"version": 7}`)
	for _, b := range []string{"bad.json", "missing.json"} {
		if code, _, stderr := run(t, "lint", "--baseline", b, old); code != cli.ExitUsage || !strings.Contains(stderr, b) {
			t.Errorf("--baseline %s: exit %d: %s", b, code, stderr)
		}
	}
}

func git(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestLintNewFromRev: only graph files changed since the revision (edited,
// added, untracked) are linted; an unknown revision or no checkout is a
// usage error. In a checkout, SARIF names the repository.
func TestLintNewFromRev(t *testing.T) {
	sandbox(t)
	git(t, "init", "-q", ".")
	git(t, "remote", "add", "origin", "git@github.com:example/models.git")
	copyFile(t, testdata(t, "lint", "hop-input-mutation.pbtxt"), "old.pbtxt")
	copyFile(t, testdata(t, "lint", "cycle_ok.pbtxt"), "edited.pbtxt")
	git(t, "add", ".")
	git(t, "commit", "-q", "-m", "first")
	// Nothing changed: nothing to lint, success.
	doc, _ := lintDoc(t, cli.ExitOK, "--new-from-rev", "HEAD", "./...")
	if len(doc.Files) != 0 {
		t.Errorf("unchanged checkout: linted %q", doc.paths())
	}
	copyFile(t, testdata(t, "lint", "hop-input-alias.pbtxt"), "edited.pbtxt")
	copyFile(t, testdata(t, "lint", "unknown-op.pbtxt"), "sub/untracked.pbtxt")
	// A suppression for a file the run leaves out is not "unmatched".
	cmdtest.WriteFile(t, "cfg.yaml", "version: 1\nlint:\n  suppress:\n    - rule: hop-input-mutation\n      path: old.pbtxt\n      reason: known\n")
	doc, stderr := lintDoc(t, cli.ExitFindings, "--config", "cfg.yaml", "--new-from-rev", "HEAD", "./...")
	if got, want := doc.paths(), []string{"edited.pbtxt", "sub/untracked.pbtxt"}; !slices.Equal(got, want) {
		t.Errorf("--new-from-rev HEAD: %q, want %q", got, want)
	}
	if strings.Contains(stderr, "matched no finding") || len(doc.Unmatched) > 0 {
		t.Errorf("--new-from-rev reports unmatched suppressions: %s", stderr)
	}
	if _, stderr := lintDoc(t, cli.ExitFindings, "--config", "cfg.yaml", "./..."); strings.Contains(stderr, "matched no finding") {
		t.Errorf("the suppression matches old.pbtxt in a full run: %s", stderr)
	}
	if err := os.Remove("cfg.yaml"); err != nil {
		t.Fatal(err)
	}
	git(t, "add", ".")
	git(t, "commit", "-q", "-m", "second")
	doc, _ = lintDoc(t, cli.ExitFindings, "--new-from-rev", "HEAD~1", "./...")
	if got, want := doc.paths(), []string{"edited.pbtxt", "sub/untracked.pbtxt"}; !slices.Equal(got, want) {
		t.Errorf("--new-from-rev HEAD~1: %q, want %q", got, want)
	}
	code, stdout, _ := run(t, "lint", "--format", "sarif", "old.pbtxt")
	if code != cli.ExitFindings || !strings.Contains(stdout, `"repositoryUri": "https://github.com/example/models"`) || !strings.Contains(stdout, `"branch": "main"`) {
		t.Errorf("SARIF in a checkout lacks versionControlProvenance (exit %d)", code)
	}
	if code, _, stderr := run(t, "lint", "--new-from-rev", "nope", "./..."); code != cli.ExitUsage || !strings.Contains(stderr, `unknown revision "nope"`) {
		t.Errorf("unknown revision: exit %d: %s", code, stderr)
	}
	outside := t.TempDir()
	t.Chdir(outside)
	copyFile(t, testdata(t, "lint", "cycle_ok.pbtxt"), "x.pbtxt")
	if os.Getenv("GIT_DIR") == "" {
		if code, _, stderr := run(t, "lint", "--new-from-rev", "HEAD", "x.pbtxt"); code != cli.ExitUsage {
			t.Errorf("outside a checkout: exit %d: %s", code, stderr)
		}
	}
}

// TestLintFormats: several --format X=FILE outputs in one run, each well
// formed and saying the same; at most one on stdout.
func TestLintFormats(t *testing.T) {
	sandbox(t)
	bad := copyFile(t, testdata(t, "hops", "nested3_mutation.pbtxt"), "nested.pbtxt")
	clean := copyFile(t, testdata(t, "lint", "cycle_ok.pbtxt"), "clean.pbtxt")
	// A destination that cannot be written fails the run, naming it.
	if code, _, stderr := run(t, "lint", "--format", "json=out/r.json", bad); code == cli.ExitOK || code == cli.ExitFindings || !strings.Contains(stderr, "out/r.json") {
		t.Errorf("unwritable destination: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "lint", "--format", "text", "--format", "json=r.json", "--format", "sarif=r.sarif",
		"--format", "github=gh.txt", "--format", "junit=junit.xml", bad, clean)
	if code != cli.ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// text: the finding with its provenance chain and source line, as
	// analyze prints them.
	for _, w := range []string{
		"nested.pbtxt: graph <root>: node cond: error: cond_true might be modifying the input! [hop-input-mutation]\n",
		"    via input xs_1 (index 3) → cond → true_graph_0 → while_loop → ",
		"    |     x.mul_(2)\n",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("text lacks %q:\n%s", w, stdout)
		}
	}
	var doc lintJSON
	if err := json.Unmarshal(mustRead(t, "r.json"), &doc); err != nil || len(doc.Files) != 2 || doc.Summary.Findings == 0 {
		t.Errorf("r.json: %v %+v", err, doc.Summary)
	}
	var log struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(mustRead(t, "r.sarif"), &log); err != nil || len(log.Runs[0].Results) != doc.Summary.Findings {
		t.Errorf("r.sarif: %v, %d results for %d findings", err, len(log.Runs[0].Results), doc.Summary.Findings)
	}
	gh := string(mustRead(t, "gh.txt"))
	lines := strings.Split(strings.TrimSuffix(gh, "\n"), "\n")
	if len(lines) != doc.Summary.Findings {
		t.Errorf("gh.txt: %d lines for %d findings:\n%s", len(lines), doc.Summary.Findings, gh)
	}
	condLine, _ := lineOf(t, bad, `name: "cond"`)
	if w := fmt.Sprintf("::error file=nested.pbtxt,line=%d,title=hopctl hop-input-mutation::cond_true might be modifying the input!%%0Anested.pbtxt: graph <root>: node cond%%0Avia input xs_1 (index 3)", condLine); !strings.HasPrefix(lines[0], w) {
		t.Errorf("gh.txt line 1:\n%s\nwant prefix\n%s", lines[0], w)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(mustRead(t, "junit.xml"), &junit); err != nil {
		t.Fatal(err)
	}
	if junit.Failures != doc.Summary.Findings || junit.Tests != doc.Summary.Findings+1 || len(junit.Suites) != 2 ||
		junit.Suites[1].Cases[0].Name != "lint" || junit.Suites[1].Cases[0].Failure != nil ||
		junit.Suites[0].Cases[0].Failure == nil || junit.Suites[0].Cases[0].Failure.Type != "hop-input-mutation" ||
		!strings.Contains(junit.Suites[0].Cases[0].Failure.Text, "x.mul_(2)") {
		t.Errorf("junit.xml: %+v", junit)
	}
	// A source line inside the source root is the annotation's file and line
	// (the file and line the writing node's stack trace names).
	src, line := writeNodeSource(t, bad, `x.mul_(2)`)
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	cmdtest.WriteFile(t, src, strings.Repeat("\n", line-1)+"    x.mul_(2)\n")
	if code, stdout, _ := run(t, "lint", "--format", "github", "--source-root", ".", "--path-prefix", "ml", bad); code != cli.ExitFindings ||
		!strings.HasPrefix(stdout, fmt.Sprintf("::error file=ml/%s,line=%d,title=hopctl hop-input-mutation::", src, line)) {
		t.Errorf("github with a source file: exit %d:\n%s", code, stdout)
	}
	for _, args := range [][]string{
		{"--format", "text", "--format", "json"},
		{"--format", "json=x", "--format", "sarif=x"},
		{"--format", "yaml"},
		{"--format", "sarif="},
	} {
		if code, _, stderr := run(t, append(append([]string{"lint"}, args...), clean)...); code != cli.ExitUsage {
			t.Errorf("lint %v: exit %d, want usage error: %s", args, code, stderr)
		}
	}
}

// TestLintConfigDiscovery: .hopctl.yaml is found from the working
// directory up to the repository's root, not above it; suppressions need
// a reason, match ** globs relative to the file, and those that matched
// nothing are reported.
func TestLintConfigDiscovery(t *testing.T) {
	dir := sandbox(t)
	cmdtest.WriteFile(t, ".hopctl.yaml", "version: 1\nlint:\n  fail-on: none\n") // above the repository: ignored
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmdtest.WriteFile(t, filepath.Join(repo, ".hopctl.yaml"), `version: 1
lint:
  suppress:
    - rule: hop-input-mutation
      path: "models/**/*.pbtxt"
      reason: the branch writes a scratch buffer on purpose
    - rule: cycle
      reason: nothing matches this one
`)
	copyFile(t, testdata(t, "lint", "hop-input-mutation.pbtxt"), filepath.Join(repo, "models", "v1", "deep", "m.pbtxt"))
	sub := filepath.Join(repo, "models", "v1")
	t.Chdir(sub)
	doc, stderr := lintDoc(t, cli.ExitOK, "./...")
	if doc.Summary.Suppressed == 0 || doc.Summary.Findings != 0 || len(doc.Files[0].SuppressedFindings) == 0 ||
		doc.Files[0].SuppressedFindings[0].Suppression.Reason != "the branch writes a scratch buffer on purpose" {
		t.Errorf("the repository's config was not applied from %s: %+v", sub, doc)
	}
	if len(doc.Unmatched) != 1 || doc.Unmatched[0].Index != 1 || doc.Unmatched[0].Rule != "cycle" {
		t.Errorf("unmatched suppressions %+v", doc.Unmatched)
	}
	if want := "warning: lint.suppress[1] (rule cycle) matched no finding"; !strings.Contains(stderr, want) || !strings.Contains(stderr, filepath.Join("..", "..", ".hopctl.yaml")) {
		t.Errorf("stderr %q lacks %q and the file", stderr, want)
	}
	code, stdout, _ := run(t, "lint", "--format", "sarif", "./...")
	if code != cli.ExitOK || !strings.Contains(stdout, `"kind": "external"`) || !strings.Contains(stdout, `"justification": "the branch writes a scratch buffer on purpose"`) ||
		!strings.Contains(stdout, "toolConfigurationNotifications") {
		t.Errorf("SARIF lacks the suppression or the unmatched one (exit %d)", code)
	}
	// Outside the repository, the parent's file is not read.
	t.Chdir(repo)
	if err := os.Remove(".hopctl.yaml"); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	lintDoc(t, cli.ExitFindings, "./...")
}

// TestConfigVerify: `hopctl config verify` checks a file against the JSON
// Schema and hopctl's own rules; exit 2 names every problem.
func TestConfigVerify(t *testing.T) {
	sandbox(t)
	good := cmdtest.WriteFile(t, "good.yaml", "version: 1\nlint:\n  fail-on: warning\n  suppress:\n    - rule: hop-*\n      path: \"a/**\"\n      reason: why\n")
	if code, stdout, stderr := run(t, "config", "verify", good); code != cli.ExitOK || !strings.Contains(stdout, "good.yaml: valid (version 1, 1 suppression)") {
		t.Errorf("valid file: exit %d: %s%s", code, stdout, stderr)
	}
	for name, c := range map[string]struct{ content, want string }{
		"no reason":    {"version: 1\nlint:\n  suppress:\n    - rule: cycle\n", `schema: at /lint/suppress/0: required: missing properties: ["reason"]`},
		"unknown key":  {"version: 1\nlint:\n  failon: error\n", `schema: at /lint: unexpected additional properties ["failon"]`},
		"bad level":    {"version: 1\nlint:\n  fail-on: loud\n", `schema: at /lint/fail-on: enum: loud does not equal any of: [error warning info note none supported]`},
		"unknown rule": {"version: 1\nlint:\n  suppress:\n    - rule: cylce\n      reason: r\n", `unknown rule "cylce"`},
	} {
		p := cmdtest.WriteFile(t, strings.ReplaceAll(name, " ", "_")+".yaml", c.content)
		if code, _, stderr := run(t, "config", "verify", p); code != cli.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, stderr, c.want)
		}
	}
	// Without FILE: the file hopctl would read; a broken one is reported,
	// not refused before verify runs.
	cmdtest.WriteFile(t, ".hopctl.yaml", "version: 1\nlint:\n  suppress:\n    - rule: cycle\n")
	if code, _, stderr := run(t, "config", "verify"); code != cli.ExitUsage || !strings.Contains(stderr, `.hopctl.yaml: schema: at /lint/suppress/0: required: missing properties: ["reason"]`) {
		t.Errorf("verify of .hopctl.yaml: exit %d: %s", code, stderr)
	}
}

// writeNodeSource returns the file and line of the innermost stack-trace
// frame of a graph file whose source line is code.
func writeNodeSource(t *testing.T, file, code string) (string, int) {
	t.Helper()
	re := regexp.MustCompile(`File \\"([^"\\]+)\\", line (\d+), in \w+\\n +` + regexp.QuoteMeta(code) + `"`)
	m := re.FindSubmatch(mustRead(t, file))
	if m == nil {
		t.Fatalf("%s: no stack trace ends in %q", file, code)
	}
	n, _ := strconv.Atoi(string(m[2]))
	return string(m[1]), n
}
