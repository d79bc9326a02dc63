package jointgraph

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

var update = flag.Bool("update", false, "rewrite COVERAGE.md")

// TestRuleTable checks the rule table's invariants: one rule per op, every
// rule and non-differentiable entry names an overload torch 1.13 or 2.14 has, every
// formula names arguments the schema has, output lists fit the schema, and
// no op is both differentiated and declared non-differentiable.
func TestRuleTable(t *testing.T) {
	for _, p := range builtinRules().problems {
		t.Error(p)
	}
	for _, r := range Rules() {
		s, ok := builtinSchema(r.Op)
		if !ok {
			t.Errorf("rule for %s: neither torch 1.13 nor 2.14 has such an overload", r.Op)
			continue
		}
		if IsNonDifferentiable(r.Op) {
			t.Errorf("%s has a rule and is in the non-differentiable list", r.Op)
		}
		if len(r.Grads) == 0 {
			t.Errorf("rule for %s has no formula", r.Op)
		}
		seen := map[string]bool{}
		for _, g := range r.Grads {
			for _, a := range g.Args {
				i := s.Argument(a)
				if i < 0 {
					t.Errorf("rule for %s: no argument %q in %s", r.Op, a, s.Text)
					continue
				}
				if seen[a] {
					t.Errorf("rule for %s: two formulas for %q", r.Op, a)
				}
				seen[a] = true
				if !s.Arguments[i].Type.IsTensorLike() {
					t.Errorf("rule for %s: argument %q is not a tensor", r.Op, a)
				}
			}
		}
		if r.Outputs != nil && len(r.Outputs) != len(s.Returns) {
			t.Errorf("rule for %s: %d output flags, %d returns", r.Op, len(r.Outputs), len(s.Returns))
		}
	}
	for _, n := range nonDifferentiable {
		if _, ok := builtinSchema(n.Op); !ok && n.Op != "aten.sym_size" {
			t.Errorf("non-differentiable %s: torch 1.13 has no such overload", n.Op)
		}
		if n.Reason == "" {
			t.Errorf("non-differentiable %s: no reason", n.Op)
		}
	}
}

// TestNoInPlaceRules: in-place overloads are functionalized first, so the
// table holds functional overloads only.
func TestNoInPlaceRules(t *testing.T) {
	for _, op := range RuleTargets() {
		n, _ := opschema.ParseTarget(op)
		if strings.HasSuffix(n.Name, "_") && !strings.HasSuffix(n.Name, "__") {
			t.Errorf("rule for in-place overload %s", op)
		}
	}
}

func corpusOps(t *testing.T) []string {
	t.Helper()
	paths, _ := filepath.Glob("../../testdata/models/*.pb")
	if len(paths) < 7 {
		t.Fatalf("corpus incomplete: %d models", len(paths))
	}
	seen := map[string]bool{}
	for _, p := range paths {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.Root().Nodes {
			if n.Op == ir.OpCallFunction && n.Target != "_operator.getitem" {
				seen[n.Target] = true
			}
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestCorpusOpsCovered: every op a corpus model uses has a rule, is
// non-differentiable, or is an in-place op whose functional variant has a
// rule.
func TestCorpusOpsCovered(t *testing.T) {
	for _, op := range corpusOps(t) {
		if _, ok := LookupRule(op); ok || IsNonDifferentiable(op) {
			continue
		}
		if f := functionalVariant(op); f != "" {
			if _, ok := LookupRule(f); ok {
				continue
			}
		}
		t.Errorf("corpus op %s has no rule and is not in the non-differentiable list", op)
	}
}

// TestCoreATenClassified: every Core ATen op is accounted for in the
// coverage table.
func TestCoreATenClassified(t *testing.T) {
	rows := Coverage(nil)
	byOp := map[string]CoverageRow{}
	for _, r := range rows {
		byOp[r.Op] = r
	}
	for _, op := range CoreATen {
		if byOp[op].Status == "" {
			t.Errorf("core op %s has no coverage status", op)
		}
	}
}

// TestCoverageFile keeps COVERAGE.md in step with the rule table
// (go test ./pkg/jointgraph -run TestCoverageFile -update rewrites it).
func TestCoverageFile(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCoverage(&b, Coverage(corpusOps(t))); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("COVERAGE.md", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("COVERAGE.md")
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/jointgraph -run TestCoverageFile -update)", err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("COVERAGE.md is stale: run go test ./pkg/jointgraph -run TestCoverageFile -update")
	}
}

func TestNames(t *testing.T) {
	n := newNames()
	n.reserve("view")
	got := []string{n.fresh("view"), n.fresh("view"), n.fresh("sum"), n.fresh("sum"), n.fresh("slice"),
		n.fresh("getitem"), n.fresh("getitem"), n.fresh("x_1"), n.fresh("x_1"), n.fresh("copy_"), n.fresh("a-b")}
	want := []string{"view_1", "view_2", "sum_1", "sum_2", "slice_1", "getitem", "getitem_1", "x_1", "x_2", "copy_", "a_b"}
	if !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

// TestFreshEmptyName: an empty name or call target gets FX's "_".
func TestFreshEmptyName(t *testing.T) {
	if got, want := newNames().fresh(""), "_"; got != want {
		t.Errorf(`fresh("") = %q, want %q`, got, want)
	}
	if got, want := newNames().freshOp(""), newNames().fresh(opBaseName("")); got != want {
		t.Errorf(`freshOp("") = %q, want %q`, got, want)
	}
}
