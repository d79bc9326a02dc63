package explain_test

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/cmd/explain"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/lint"
)

func run(args ...string) (code int, stdout, stderr string) {
	ios, _, out, errOut := iostreams.Test()
	code = cli.Main(args, ios)
	return code, out.String(), errOut.String()
}

// TestEveryRule walks the rule table: `hopctl explain ID` prints every
// rule's doc, the PyTorch check it mirrors, a trigger and a fix.
func TestEveryRule(t *testing.T) {
	for _, r := range lint.Rules() {
		code, out, stderr := run("explain", r.ID)
		if code != cli.ExitOK || stderr != "" {
			t.Errorf("explain %s: exit %d, stderr %q", r.ID, code, stderr)
			continue
		}
		if r.Fix == "" || strings.Contains(r.Example, "Fix:") || strings.Contains(r.Fix, "\n") {
			t.Errorf("%s: the fix must be one line in Rule.Fix, not in the example: fix %q, example:\n%s", r.ID, r.Fix, r.Example)
		}
		sections := map[string]string{}
		head, rest, _ := strings.Cut(out, "\n## ")
		for _, s := range strings.Split(rest, "\n## ") {
			name, body, _ := strings.Cut(s, "\n")
			sections[name] = strings.TrimSpace(body)
		}
		if !strings.HasPrefix(head, "# "+r.ID+" ("+r.Name+"): ") || !strings.Contains(head, r.Doc) {
			t.Errorf("%s: heading and doc missing:\n%s", r.ID, head)
		}
		for _, name := range []string{"PyTorch", "Trigger", "Fix"} {
			if len(sections[name]) < 20 {
				t.Errorf("%s: section %q is %q", r.ID, name, sections[name])
			}
		}
		if !strings.Contains(sections["PyTorch"], "torch") {
			t.Errorf("%s: the PyTorch section names no torch source: %q", r.ID, sections["PyTorch"])
		}
		if !strings.Contains(out, r.HelpURI()) {
			t.Errorf("%s: no link to %s", r.ID, r.HelpURI())
		}
	}
}

// TestEmittedRules runs the linter over the repository's graph files and
// checks that every rule id it emits has an explanation, and that every
// rule of the table is emitted by testdata/lint/<id>.pbtxt (so the table is
// what the linter can emit).
func TestEmittedRules(t *testing.T) {
	var files []string
	for _, dir := range []string{"lint", "bad", "hops", "sarif", "models"} {
		fs, err := lint.Expand([]string{filepath.Join("..", "..", "..", "testdata", dir) + "/..."})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	emitted := map[string][]string{} // rule → files
	for _, r := range lint.Run(files, lint.Options{}) {
		for _, f := range r.Findings {
			emitted[f.Rule] = append(emitted[f.Rule], filepath.Base(r.Path))
		}
	}
	for id, fs := range emitted {
		if code, _, stderr := run("explain", id); code != cli.ExitOK {
			t.Errorf("lint emits %s (%s) but explain refuses it: %s", id, fs[0], stderr)
		}
	}
	for _, r := range lint.Rules() {
		if !slices.Contains(emitted[r.ID], r.ID+".pbtxt") {
			t.Errorf("testdata/lint/%s.pbtxt does not trigger %s (files that do: %v)", r.ID, r.ID, emitted[r.ID])
		}
	}
}

// sarifRule is what TestHelpLine reads of a SARIF reportingDescriptor.
type sarifRule struct {
	ID   string `json:"id"`
	Help struct {
		Text string `json:"text"`
	} `json:"help"`
}

// explainFix is the Fix section of `hopctl explain id`.
func explainFix(t *testing.T, id string) string {
	t.Helper()
	_, out, _ := run("explain", id)
	_, fix, _ := strings.Cut(out, "\n## Fix\n\n")
	fix, _, _ = strings.Cut(fix, "\n\nMore: ")
	return fix
}

// TestHelpLine lints testdata/lint/<id>.pbtxt, which triggers rule id, for
// every rule: each of its findings is followed by a "help:" line in the
// text output (after the provenance, before the next finding), the GitHub
// annotation and the JUnit failure carry the same line, SARIF's rule help
// ends with it, analyze's text has it too, and the fix is the one
// `hopctl explain` prints.
func TestHelpLine(t *testing.T) {
	dir := t.TempDir()
	for _, r := range lint.Rules() {
		file := filepath.Join("..", "..", "..", "testdata", "lint", r.ID+".pbtxt")
		gh, junit, sarif := filepath.Join(dir, r.ID+".gh"), filepath.Join(dir, r.ID+".xml"), filepath.Join(dir, r.ID+".sarif")
		code, out, stderr := run("lint", "--fail-on", "none", "--format", "text", "--format", "github="+gh, "--format", "junit="+junit,
			"--format", "sarif="+sarif, file)
		if code != cli.ExitOK && code != cli.ExitInput {
			t.Errorf("lint %s: exit %d: %s", file, code, stderr)
			continue
		}
		findings := 0
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if !strings.HasSuffix(l, " ["+r.ID+"]") {
				continue
			}
			findings++
			help := ""
			for _, next := range lines[i+1:] {
				if !strings.HasPrefix(next, "    ") {
					break // the next finding or the summary
				}
				if h, ok := strings.CutPrefix(next, "    help: "); ok {
					help = h
				}
			}
			if help != r.Fix {
				t.Errorf("%s: finding %q has help %q, want %q:\n%s", r.ID, l, help, r.Fix, out)
				continue
			}
			if fix := explainFix(t, r.ID); !strings.EqualFold(fix[:1], help[:1]) || fix[1:] != help[1:] {
				t.Errorf("%s: explain's fix %q differs from the help line %q", r.ID, fix, help)
			}
		}
		if findings == 0 {
			t.Errorf("%s: no finding of %s in the text output:\n%s", file, r.ID, out)
		}
		ghText, _ := os.ReadFile(gh)
		if want := "%0Ahelp: " + r.Fix; !strings.Contains(string(ghText), want) {
			t.Errorf("%s: GitHub annotations lack %q:\n%s", r.ID, want, ghText)
		}
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []sarifRule `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
			} `json:"runs"`
		}
		sarifText, _ := os.ReadFile(sarif)
		if err := json.Unmarshal(sarifText, &log); err != nil || len(log.Runs) != 1 {
			t.Errorf("%s: SARIF: %v", r.ID, err)
		} else if rules := log.Runs[0].Tool.Driver.Rules; !slices.ContainsFunc(rules, func(sr sarifRule) bool {
			return sr.ID == r.ID && strings.HasSuffix(sr.Help.Text, "\nFix: "+r.Fix)
		}) {
			t.Errorf("%s: SARIF's rule help does not end with the fix %q", r.ID, r.Fix)
		}
		// analyze prints the findings of its own analyzers (alias and
		// unknown-op) with the same line.
		if _, out, _ := run("analyze", file); strings.Contains(out, " ["+r.ID+"]\n") != strings.Contains(out, "\n      help: "+r.Fix+"\n") {
			t.Errorf("%s: analyze's text has the finding without the help line %q or the reverse:\n%s", r.ID, r.Fix, out)
		} else if slices.Contains([]string{"hop-input-mutation", "hop-input-alias", "unknown-op"}, r.ID) && !strings.Contains(out, " ["+r.ID+"]\n") {
			t.Errorf("%s: analyze reports no finding of it:\n%s", r.ID, out)
		}
		junitText, _ := os.ReadFile(junit)
		if want := "  help: " + html.EscapeString(r.Fix); !strings.Contains(string(junitText), want) {
			t.Errorf("%s: JUnit lacks %q:\n%s", r.ID, want, junitText)
		}
	}
}

func TestUnknownRule(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"hop-input-mutaton", `unknown rule "hop-input-mutaton" (did you mean "hop-input-mutation"?)`},
		{"HOP-CALL", `(did you mean "hop-call"?)`},
		{"cylce", `(did you mean "cycle"?)`},
		{"no-such-thing", `unknown rule "no-such-thing"; 'hopctl lint --list-rules' lists the rules`},
	} {
		code, out, stderr := run("explain", tc.arg)
		if code != cli.ExitUsage || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("explain %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.arg, code, out, stderr, tc.want)
		}
	}
	if code, _, stderr := run("explain"); code != cli.ExitUsage {
		t.Errorf("explain without a rule: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := run("explain", "cycle", "hop-call"); code != cli.ExitUsage {
		t.Errorf("explain with two rules: exit %d, stderr %q", code, stderr)
	}
}

// TestMirrorsAreRules keeps the PyTorch table to the rule table's ids.
func TestMirrorsAreRules(t *testing.T) {
	for _, id := range explain.MirroredRules() {
		if _, ok := lint.LookupRule(id); !ok {
			t.Errorf("explain has a PyTorch check for %q, which is no rule", id)
		}
	}
}
