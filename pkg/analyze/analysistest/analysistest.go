// Package analysistest runs analyzers over hand-written graph files and
// checks their findings against expectations written in the files, as
// golang.org/x/tools/go/analysis/analysistest does with `// want` comments.
//
// A test file (pbtxt) carries directive comments, each on its own line:
//
//	# want graph=GRAPH node=NODE [rule=RULE] "REGEXP"
//	# expect graph=GRAPH key=value key=value ...
//
// GRAPH is "" for the root graph or a qualified submodule name; NODE is a
// node name, or "" for a finding about a whole graph or file. REGEXP is
// everything between the first quote after the node (or rule) and the last
// quote on the line, taken literally, in Go (RE2) syntax, unanchored,
// matched against the full message. testdata/hops/README.md defines the
// grammar this extends (rule= and node="" are additions).
//
// Findings and want lines must match both ways: every want line needs a
// finding at its graph and node (and rule, when given) whose message
// matches; every finding needs a want line. One finding may satisfy several
// want lines. Expect lines are parsed and handed to the caller, which knows
// what the keys mean (the alias analyzer's four results).
//
// A graph that cannot carry comments (a real trace: a binary .pb, a .pt2
// archive) takes its want lines from a .want file beside the test, whose
// line
//
//	# graph PATH
//
// names the graph, relative to the .want file ([Test]).
package analysistest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// Want is one `# want` line.
type Want struct {
	Graph, Node, Rule string
	RE                *regexp.Regexp
	Line              int
}

// Expect is one `# expect` line: the graph and its key=value fields in order.
type Expect struct {
	Graph  string
	Keys   []string
	Values []string
	Line   int
}

var (
	wantRE   = regexp.MustCompile(`^# want graph=("")?(\S*) node=("")?(\S*)(?: rule=(\S+))? "(.*)"$`)
	expectRE = regexp.MustCompile(`^# expect graph=("")?(\S*)((?: \S+=\S+)*)$`)
)

// Parse reads the directives of a test file.
func Parse(path string) (wants []*Want, expects []*Expect, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "# want "):
			m := wantRE.FindStringSubmatch(text)
			if m == nil {
				return nil, nil, fmt.Errorf("%s:%d: malformed want line %q", path, line, text)
			}
			re, err := regexp.Compile(m[6])
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			wants = append(wants, &Want{Graph: m[2], Node: m[4], Rule: m[5], RE: re, Line: line})
		case strings.HasPrefix(text, "# expect "):
			m := expectRE.FindStringSubmatch(text)
			if m == nil {
				return nil, nil, fmt.Errorf("%s:%d: malformed expect line %q", path, line, text)
			}
			e := &Expect{Graph: m[2], Line: line}
			for _, kv := range strings.Fields(m[3]) {
				k, v, _ := strings.Cut(kv, "=")
				e.Keys = append(e.Keys, k)
				e.Values = append(e.Values, v)
			}
			expects = append(expects, e)
		}
	}
	return wants, expects, sc.Err()
}

// Check matches findings against want lines both ways and reports every
// mismatch as a test error naming the file and line.
func Check(t testing.TB, path string, wants []*Want, findings []analyze.Finding) {
	t.Helper()
	matched := make([]bool, len(wants))
	for _, fd := range findings {
		ok := false
		for i, w := range wants {
			if w.Graph == fd.Graph && w.Node == fd.Node && (w.Rule == "" || w.Rule == fd.Rule) && w.RE.MatchString(fd.Message) {
				matched[i] = true
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: unexpected finding: graph %s node %q [%s]: %s", filepath.Base(path), ir.DisplayName(fd.Graph), fd.Node, fd.Rule, fd.Message)
		}
	}
	for i, w := range wants {
		if !matched[i] {
			rule := ""
			if w.Rule != "" {
				rule = " rule " + w.Rule
			}
			t.Errorf("%s:%d: no finding at graph %s node %q%s matching %q", filepath.Base(path), w.Line, ir.DisplayName(w.Graph), w.Node, rule, w.RE)
		}
	}
}

// Run loads and verifies the file, runs the analyzers (and what they
// require) over it, checks the findings against the file's want lines, and
// returns the module, the result and the expect lines.
func Run(t testing.TB, path string, analyzers ...*analyze.Analyzer) (*ir.Module, *analyze.Result, []*Expect) {
	t.Helper()
	f, err := load.Open(path, load.Lenient)
	if err != nil {
		t.Fatal(err)
	}
	if f.Invalid() {
		t.Fatalf("%s: %v", path, &ir.VerifyError{Problems: f.Problems})
	}
	m := f.Module
	res, err := analyze.Run(m, path, f.Registry, analyzers...)
	if err != nil {
		t.Fatal(err)
	}
	wants, expects, err := Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	Check(t, path, wants, res.Findings)
	return m, res, expects
}

// RuleMessages analyses the file at path with opts (its torch release:
// "" is the file's own) and the analyzers, and returns the messages of
// the findings of rule, in the result's order.
func RuleMessages(t testing.TB, path string, opts analyze.Options, rule string, analyzers ...*analyze.Analyzer) []string {
	t.Helper()
	_, res, err := load.AnalyzeWith(path, opts, analyzers...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Rule == rule {
			got = append(got, f.Message)
		}
	}
	return got
}

// Test runs analyzer a (and what it requires) over each file, as
// golang.org/x/tools/go/analysis/analysistest.Run does for one analyzer,
// and matches the findings of a's rules against the file's want lines of
// a's rules, both ways: findings of the analyzers a requires, and want
// lines of other rules, belong to other tests. A file is a graph with its
// own want lines (.pbtxt), or a .want file naming a graph (# graph PATH)
// whose want lines need not say rule=. A file with no want lines of a's
// rules is a near miss: any finding of them fails the test.
func Test(t *testing.T, a *analyze.Analyzer, paths ...string) {
	t.Helper()
	if len(paths) == 0 {
		t.Fatal("no test files")
	}
	own := map[string]bool{}
	for _, r := range a.Rules {
		own[r.ID] = true
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			graph, sidecar := path, filepath.Ext(path) == ".want"
			if sidecar {
				graph = graphLine(t, path)
			}
			f, err := load.Open(graph, load.Lenient)
			if err != nil {
				t.Fatal(err)
			}
			if f.Invalid() {
				t.Fatalf("%s: %v", graph, &ir.VerifyError{Problems: f.Problems})
			}
			res, err := analyze.Run(f.Module, graph, f.Registry, a)
			if err != nil {
				t.Fatal(err)
			}
			all, _, err := Parse(path)
			if err != nil {
				t.Fatal(err)
			}
			var wants []*Want
			for _, w := range all {
				if own[w.Rule] || sidecar && w.Rule == "" {
					wants = append(wants, w)
				}
			}
			var findings []analyze.Finding
			for _, fd := range res.Findings {
				if own[fd.Rule] {
					findings = append(findings, fd)
				}
			}
			Check(t, path, wants, findings)
		})
	}
}

// graphLine returns the graph a .want file names, relative to the file.
func graphLine(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if g, ok := strings.CutPrefix(line, "# graph "); ok {
			return filepath.Join(filepath.Dir(path), strings.TrimSpace(g))
		}
	}
	t.Fatalf("%s: no # graph line", path)
	return ""
}
