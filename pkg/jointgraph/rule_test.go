package jointgraph

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
	"github.com/hopctl/hopctl/pkg/synth"
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

// TestParseName checks parseName's fast path for "base_N" against the
// general parse (splitSuffix, then the canonical-form test) on edge cases
// and random names over the characters that matter.
func TestParseName(t *testing.T) {
	general := func(s string) (string, int, bool) {
		base, num := splitSuffix(s)
		if num < 0 {
			return base, num, false
		}
		suf := s[len(base)+1:]
		return base, num, suf[0] != '+' && suf[0] != '-' && (suf[0] != '0' || len(suf) == 1) && num < maxSuffixBit
	}
	cases := []string{"", "_", "a_", "_1", "12", "view", "view_0", "view_7", "view_01", "view_12", "x_+5", "x_-5",
		"a__3", "a_b_3", "a_1_", "conv2d", "layer_norm2", "a_4194303", "a_4194304", "a_9999999", "a_12345678",
		"a_99999999999999999999", "_a_1"}
	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "ab_019+-"
	for range 20000 {
		b := make([]byte, rng.IntN(9))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		b1, n1, c1 := parseName(s)
		b2, n2, c2 := general(s)
		if b1 != b2 || n1 != n2 || c1 != c2 {
			t.Fatalf("parseName(%q) = %q, %d, %v; the general parse gives %q, %d, %v", s, b1, n1, c1, b2, n2, c2)
		}
	}
}

// TestReserveGraphAsync: names a large graph's reservation took on
// another goroutine hand out what a reservation in line does.
func TestReserveGraphAsync(t *testing.T) {
	g := mlpStack(1500).Root()
	if len(g.Nodes) < asyncNames {
		t.Fatalf("%d nodes: below asyncNames (%d), the reservation would not be asynchronous", len(g.Nodes), asyncNames)
	}
	async, inLine := newNames(), newNames()
	async.reserveGraphAsync(g, true)
	inLine.reserveGraph(g, true)
	for i := range g.Nodes {
		c := g.Nodes[i].Name
		if a, b := async.fresh(c), inLine.fresh(c); a != b {
			t.Fatalf("fresh(%q): %q after the asynchronous reservation, %q after the one in line", c, a, b)
		}
	}
}

// TestFreshEmptyName: an empty name or call target, whose address (nil)
// and length (0) are an unused addrMemo slot's, is not taken for a
// remembered one: fresh and freshOp give what they give a names whose
// memo never saw it.
func TestFreshEmptyName(t *testing.T) {
	if got, want := newNames().fresh(""), "_"; got != want {
		t.Errorf(`fresh("") = %q, want %q`, got, want)
	}
	if got, want := newNames().freshOp(""), newNames().fresh(opBaseName("")); got != want {
		t.Errorf(`freshOp("") = %q, want %q`, got, want)
	}
}

// TestBuildAsyncNames: the joints of graphs large enough for Build to take
// names, precheck, find the live nodes and run the later halves of the
// forward copy and of dce's renumbering on other goroutines (asyncNames,
// asyncPrecheck, asyncLive, asyncHalves), with and without HOPs, are byte
// for byte the joints built with all of it done in line. The graph without
// HOPs is built in place and has dead nodes, so both halves run.
func TestBuildAsyncNames(t *testing.T) {
	defer func(n, p, l, h int) { asyncNames, asyncPrecheck, asyncLive, asyncHalves = n, p, l, h }(asyncNames, asyncPrecheck, asyncLive, asyncHalves)
	for _, hops := range []bool{false, true} {
		m := synth.Generate(synth.Options{Nodes: 2 * asyncNames, Seed: 3, HOPs: hops})
		build := func(async int) []byte {
			asyncNames, asyncPrecheck, asyncLive, asyncHalves = async, async, async, async
			j, err := Build(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			data, err := ir.Encode(j.Module, ir.Binary)
			if err != nil {
				t.Fatal(err)
			}
			// The encoding names each reference: append the node
			// indices too (dce renumbers them).
			for _, g := range j.Module.Graphs {
				for i := range g.Nodes {
					g.Nodes[i].WalkRefs(func(a *ir.Arg) { data = strconv.AppendInt(data, int64(a.Ref), 10) })
				}
			}
			return data
		}
		async, inLine := build(1<<14), build(math.MaxInt)
		if !bytes.Equal(async, inLine) {
			t.Errorf("HOPs %v: the joint built with work on other goroutines differs from the one built in line", hops)
		}
	}
}

// appendDec writes what strconv.AppendInt does for non-negative numbers.
func TestAppendDec(t *testing.T) {
	for _, v := range []int{0, 1, 9, 10, 11, 99, 100, 12345, 4194303, 4194304, math.MaxInt} {
		if got, want := string(appendDec([]byte("x_"), v)), "x_"+strconv.Itoa(v); got != want {
			t.Errorf("appendDec(%d) = %q, want %q", v, got, want)
		}
	}
}
