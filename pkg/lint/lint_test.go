package lint_test

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
)

const testdata = "../../testdata"

func corpus(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		for _, pat := range []string{"*.pb", "*.pbtxt", "*.json"} {
			ps, err := filepath.Glob(filepath.Join(testdata, d, pat))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ps...)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no files in %v", dirs)
	}
	return out
}

// TestWantLines lints every hand-written graph (testdata/hops and
// testdata/lint) and matches the findings against the files' want lines,
// both ways. Every finding's rule is in the rule table, with the table's
// severity.
func TestWantLines(t *testing.T) {
	for _, p := range corpus(t, "hops", "lint") {
		if filepath.Ext(p) != ".pbtxt" {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			r := lint.File(p)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			wants, _, err := analysistest.Parse(p)
			if err != nil {
				t.Fatal(err)
			}
			analysistest.Check(t, p, wants, r.Findings)
			for _, f := range r.Findings {
				rule, ok := lint.LookupRule(f.Rule)
				if !ok {
					t.Errorf("finding of unknown rule %q: %s", f.Rule, f.Message)
				} else if rule.Severity != f.Severity {
					t.Errorf("rule %s: finding severity %s, rule table says %s", f.Rule, f.Severity, rule.Severity)
				}
				if rule.Invalid && !r.Invalid {
					t.Errorf("finding of rule %s, but the file is not marked invalid", f.Rule)
				}
			}
		})
	}
}

// TestEveryRuleHasATriggerAndANearMiss: testdata/lint/<rule>.pbtxt reports
// the rule, and testdata/lint/<rule>_ok.pbtxt, a near miss, reports
// nothing.
func TestEveryRuleHasATriggerAndANearMiss(t *testing.T) {
	for _, rule := range lint.Rules() {
		t.Run(rule.ID, func(t *testing.T) {
			trigger := filepath.Join(testdata, "lint", rule.ID+".pbtxt")
			r := lint.File(trigger)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			n := 0
			for _, f := range r.Findings {
				if f.Rule == rule.ID {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s reports no %s finding: %+v", trigger, rule.ID, r.Findings)
			}
			if r.Invalid != rule.Invalid {
				t.Errorf("%s: invalid = %v, want %v", trigger, r.Invalid, rule.Invalid)
			}
			near := filepath.Join(testdata, "lint", rule.ID+"_ok.pbtxt")
			r = lint.File(near)
			if r.Err != nil || r.Invalid || len(r.Findings) > 0 {
				t.Errorf("near miss %s: err %v, invalid %v, findings %+v", near, r.Err, r.Invalid, r.Findings)
			}
			if wants, _, err := analysistest.Parse(near); err != nil || len(wants) > 0 {
				t.Errorf("near miss %s has want lines (%v)", near, err)
			}
		})
	}
}

func TestRulesAreUniqueAndDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range lint.Rules() {
		if seen[r.ID] || r.ID == "" || r.Short == "" || r.Doc == "" || r.Category == "" {
			t.Errorf("rule %+v: duplicate or undocumented", r)
		}
		seen[r.ID] = true
	}
}

// TestSuppressionOverCorpus lints the whole corpus with and without a
// suppression of one rule: exactly that rule's findings disappear and are
// counted as suppressed.
func TestSuppressionOverCorpus(t *testing.T) {
	files := corpus(t, "models", "hops", "lint")
	all := lint.Run(files, lint.Options{})
	supp := lint.Run(files, lint.Options{Suppress: []lint.Suppression{{Rule: "hop-input-mutation"}}})
	hidden := 0
	for i := range all {
		if all[i].Path != files[i] || supp[i].Path != files[i] {
			t.Fatalf("result %d is for %s/%s, want %s", i, all[i].Path, supp[i].Path, files[i])
		}
		var want []analyze.Finding
		for _, f := range all[i].Findings {
			if f.Rule == "hop-input-mutation" {
				hidden++
				continue
			}
			want = append(want, f)
		}
		if !reflect.DeepEqual(supp[i].Findings, want) && !(len(want) == 0 && len(supp[i].Findings) == 0) {
			t.Errorf("%s: suppressed findings %+v, want %+v", files[i], supp[i].Findings, want)
		}
		if supp[i].Suppressed != len(all[i].Findings)-len(want) {
			t.Errorf("%s: suppressed %d, want %d", files[i], supp[i].Suppressed, len(all[i].Findings)-len(want))
		}
	}
	if hidden < 5 {
		t.Errorf("only %d hop-input-mutation findings in the corpus", hidden)
	}
}

func TestSuppressionMatches(t *testing.T) {
	f := analyze.Finding{Rule: "hop-input-mutation", Graph: "true_graph_0", Node: "add_1"}
	root := analyze.Finding{Rule: "unknown-op", Node: "frob"}
	tests := []struct {
		s    lint.Suppression
		file string
		f    analyze.Finding
		want bool
	}{
		{lint.Suppression{Rule: "hop-input-mutation"}, "a.pb", f, true},
		{lint.Suppression{Rule: "hop-*"}, "a.pb", f, true},
		{lint.Suppression{Rule: "hop-input-alias"}, "a.pb", f, false},
		{lint.Suppression{Rule: "*", Path: "models/*.pb"}, "models/a.pb", f, true},
		{lint.Suppression{Rule: "*", Path: "models/*.pb"}, "./models/a.pb", f, true},
		{lint.Suppression{Rule: "*", Path: "models/*.pb"}, "other/a.pb", f, false},
		{lint.Suppression{Rule: "*", Path: "a.pb"}, "deep/dir/a.pb", f, true},
		{lint.Suppression{Rule: "*", Graph: "true_graph_*"}, "a.pb", f, true},
		{lint.Suppression{Rule: "*", Graph: "<root>"}, "a.pb", f, false},
		{lint.Suppression{Rule: "*", Graph: "<root>"}, "a.pb", root, true},
		{lint.Suppression{Rule: "*", Node: "add_*"}, "a.pb", f, true},
		{lint.Suppression{Rule: "*", Node: "add_*"}, "a.pb", root, false},
		{lint.Suppression{Rule: "hop-input-mutation", Path: "*.pb", Graph: "true_graph_0", Node: "add_1"}, "x/a.pb", f, true},
		{lint.Suppression{Rule: "hop-input-mutation", Path: "*.pb", Graph: "true_graph_0", Node: "add_2"}, "x/a.pb", f, false},
	}
	for _, tt := range tests {
		if got := tt.s.Matches(tt.file, tt.f); got != tt.want {
			t.Errorf("%+v.Matches(%s, %s/%s) = %v", tt.s, tt.file, tt.f.Graph, tt.f.Node, got)
		}
	}
	if err := (lint.Suppression{Rule: "x", Node: "["}).Validate(); err == nil {
		t.Error("bad node glob validated")
	}
}

// TestRunIsDeterministic: any number of workers gives the same results in
// argument order.
func TestRunIsDeterministic(t *testing.T) {
	files := corpus(t, "hops", "lint")
	files = append(files, files[0]) // a file twice
	one := lint.Run(files, lint.Options{Jobs: 1})
	for _, jobs := range []int{0, 3, 100} {
		got := lint.Run(files, lint.Options{Jobs: jobs})
		if !reflect.DeepEqual(got, one) {
			t.Errorf("Jobs %d gives other results than Jobs 1", jobs)
		}
	}
}

func TestUnreadableFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junk.pb")
	if err := os.WriteFile(p, []byte("\xff\xff not a graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := lint.Run([]string{p, filepath.Join(testdata, "lint", "cycle_ok.pbtxt"), p + ".missing"}, lint.Options{})
	var ie ir.InputError
	if rs[0].Err == nil || !asInputError(rs[0].Err, &ie) || rs[2].Err == nil || rs[1].Err != nil {
		t.Errorf("errors: %v / %v / %v", rs[0].Err, rs[1].Err, rs[2].Err)
	}
	if !strings.Contains(rs[0].Err.Error(), p) {
		t.Errorf("error does not name the file: %v", rs[0].Err)
	}
}

func asInputError(err error, target *ir.InputError) bool {
	e, ok := err.(ir.InputError)
	if ok {
		*target = e
	}
	return ok
}

// TestStructureRule: every kind of ir.Verify problem has its own rule,
// documented in the table; the checks' problems (ir.ProblemCall) carry
// their rule id in the message instead.
func TestStructureRule(t *testing.T) {
	seen := map[string]ir.ProblemKind{}
	for k := ir.ProblemMalformed; k < ir.ProblemCall; k++ {
		r := lint.StructureRule(ir.Problem{Kind: k})
		if prev, dup := seen[r]; dup {
			t.Errorf("kinds %d and %d share rule %s", prev, k, r)
		}
		seen[r] = k
		if rule, ok := lint.LookupRule(r); !ok || rule.Category != "structure" || !rule.Invalid {
			t.Errorf("kind %d: rule %s is not a structure rule of the table", k, r)
		}
	}
}

// TestVerifyDefectsHaveRules builds the module-level defects testdata/lint
// does not cover and checks the rule ir.Verify's problems get.
func TestVerifyDefectsHaveRules(t *testing.T) {
	graph := func(name string, extra ...ir.Node) *ir.Graph {
		g := &ir.Graph{Name: name, Nodes: []ir.Node{{Name: "x", Op: ir.OpPlaceholder, Target: "x"}}}
		g.Nodes = append(g.Nodes, extra...)
		g.Nodes = append(g.Nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.NodeArg(0, "x")}})
		return g
	}
	tests := []struct {
		name string
		m    *ir.Module
		want string
	}{
		{"duplicate submodule", &ir.Module{Graphs: []*ir.Graph{graph(""), graph("sub"), graph("sub")}}, lint.RuleDuplicateName},
		{"duplicate attribute", &ir.Module{Graphs: []*ir.Graph{graph("")}, Attributes: []ir.Attribute{{Name: "w"}, {Name: "w"}}}, lint.RuleDuplicateName},
		{"missing call_module target", &ir.Module{Graphs: []*ir.Graph{graph("", ir.Node{Name: "m", Op: ir.OpCallModule, Target: "nope"})}}, lint.RuleMissingAttr},
		{"empty submodule name", &ir.Module{Graphs: []*ir.Graph{graph(""), graph("")}}, lint.RuleMalformedNode},
		{"no root graph", &ir.Module{}, lint.RuleMalformedNode},
		{"negative size", &ir.Module{Graphs: []*ir.Graph{graph("", ir.Node{Name: "v", Op: ir.OpCallFunction, Target: "aten.relu.default",
			Args: []ir.Arg{ir.NodeArg(0, "x")}, Val: &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: 2}, {Val: -1}}}}})}}, lint.RuleBadShape},
		{"overflowing attribute", &ir.Module{Graphs: []*ir.Graph{graph("")},
			Attributes: []ir.Attribute{{Name: "w", Meta: ir.TensorMeta{Shape: []ir.Dim{{Val: 1 << 32}, {Val: 1 << 32}}}}}}, lint.RuleBadShape},
		{"nesting", deepModule(ir.MaxNesting + 1), lint.RuleMalformedNode},
	}
	for _, tt := range tests {
		err := ir.Verify(tt.m, "f.pb")
		ve, ok := err.(*ir.VerifyError)
		if !ok || len(ve.Problems) == 0 {
			t.Errorf("%s: Verify = %v", tt.name, err)
			continue
		}
		for _, p := range ve.Problems {
			if got := lint.StructureRule(p); got != tt.want {
				t.Errorf("%s: problem %q is %s, want %s", tt.name, p.Msg, got, tt.want)
			}
		}
	}
}

// deepModule is a root graph and a chain of subgraphs depth levels deep
// (sub, sub.sub, ...), each reading the next with get_attr.
func deepModule(depth int) *ir.Module {
	m := &ir.Module{}
	name := ""
	for d := 0; d <= depth; d++ {
		g := &ir.Graph{Name: name, Nodes: []ir.Node{{Name: "x", Op: ir.OpPlaceholder, Target: "x"}}}
		if d < depth {
			g.Nodes = append(g.Nodes, ir.Node{Name: "sub", Op: ir.OpGetAttr, Target: "sub"})
		}
		g.Nodes = append(g.Nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.NodeArg(0, "x")}})
		m.Graphs = append(m.Graphs, g)
		if name == "" {
			name = "sub"
		} else {
			name += ".sub"
		}
	}
	return m
}

// TestRulesAssembledFromAnalyzers: the rule table is every analyzer's
// rules plus lint's own, each id once, in listing order (by category,
// invalid-input rules after the others within one).
func TestRulesAssembledFromAnalyzers(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range lint.Rules() {
		if seen[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
		if r.Short == "" || r.Doc == "" || r.Category == "" {
			t.Errorf("rule %s is not documented: %+v", r.ID, r)
		}
	}
	for _, a := range passes.All() {
		if len(a.Rules) == 0 {
			t.Errorf("analyzer %s declares no rules", a.Name)
		}
		for _, r := range a.Rules {
			if got, ok := lint.LookupRule(r.ID); !ok || got != r {
				t.Errorf("analyzer %s's rule %s is not in lint's table as declared: %+v", a.Name, r.ID, got)
			}
		}
	}
	rules := lint.Rules()
	for i := 1; i < len(rules); i++ {
		a, b := rules[i-1], rules[i]
		if a.Category == b.Category && a.Invalid && !b.Invalid {
			t.Errorf("%s (invalid input) listed before %s", a.ID, b.ID)
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/lint-rules.md")

// TestRulesMarkdown keeps docs/lint-rules.md, the page every SARIF rule's
// helpUri points into, equal to the rule table; -update rewrites it.
func TestRulesMarkdown(t *testing.T) {
	p := filepath.Join("..", "..", "docs", "lint-rules.md")
	want := lint.RulesMarkdown()
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the rule table; run go test ./pkg/lint -run TestRulesMarkdown -update", p)
	}
	for _, r := range lint.Rules() {
		if r.Name == "" || strings.EqualFold(r.Name, r.ID) || r.Example == "" {
			t.Errorf("rule %s: name %q (must differ from the id), example %q", r.ID, r.Name, r.Example)
		}
		if !strings.Contains(string(got), "\n## "+r.ID+"\n") {
			t.Errorf("rule %s: no section in %s (its helpUri anchor)", r.ID, p)
		}
	}
}

// TestRelTo: paths relative to a root, also when one of them is reached
// through a symbolic link.
func TestRelTo(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root, file, want string
		ok               bool
	}{
		{real, filepath.Join(real, "sub", "g.pb"), "sub/g.pb", true},
		{real, filepath.Join(link, "sub", "g.pb"), "sub/g.pb", true},
		{link, filepath.Join(real, "sub", "g.pb"), "sub/g.pb", true},
		{filepath.Join(real, "sub"), filepath.Join(real, "g.pb"), "", false},
	} {
		got, ok := lint.RelTo(c.root, c.file)
		if got != c.want || ok != c.ok {
			t.Errorf("RelTo(%s, %s) = %q, %v; want %q, %v", c.root, c.file, got, ok, c.want, c.ok)
		}
	}
	if got := lint.RelPath(filepath.Join(real, "sub"), "x/../g.pb"); got != "g.pb" {
		t.Errorf("RelPath outside the root = %q, want the path as given, cleaned", got)
	}
}
