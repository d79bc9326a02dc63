package analyze

import (
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestLevelSymIntArithmetic: make_fx's symbolic traces (torch 2.14,
// python/tools/make_level_traces.py) compute with sizes through operator
// calls on SymInts (operator.sub, operator.mul, operator.add) beside ATen
// ops: they are make_fx-level, while Dynamo's traces
// (testdata/hops_real/dynamo, python/tools/hop_corpus_dynamo.py) are
// torch-level.
func TestLevelSymIntArithmetic(t *testing.T) {
	load := func(path string) *ir.Module {
		t.Helper()
		m, err := ir.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, name := range []string{"cond_sub", "cond_symint"} {
		m := load(filepath.Join("../../testdata/level", name+".pb"))
		sym := false
		for i := range m.Root().Nodes {
			if n := &m.Root().Nodes[i]; n.Op == ir.OpCallFunction && !IsGetitem(n.Target) && n.Val != nil && n.Val.Kind == ir.ValSym {
				if _, isOp := symArith[n.Target]; isOp {
					sym = true
				}
			}
		}
		if !sym {
			t.Errorf("%s: the trace has no SymInt arithmetic", name)
		}
		if DynamoLevel(m) {
			t.Errorf("%s: a symbolic make_fx trace is taken as Dynamo-level", name)
		}
	}
	dyn, err := filepath.Glob("../../testdata/hops_real/dynamo/*.pb")
	if err != nil || len(dyn) < 5 {
		t.Fatalf("dynamo corpus: %v (%d files)", err, len(dyn))
	}
	for _, f := range dyn {
		if !DynamoLevel(load(f)) {
			t.Errorf("%s: a Dynamo trace is not taken as Dynamo-level", f)
		}
	}
}

// TestLevelWithoutOps: a module whose graphs call nothing but HOPs and
// getitem (a BaseHOP whose subgraph returns its operand) has nodes of
// neither level; Dynamo's trace of it (inputs named after their source,
// L_x_) is Dynamo-level, make_fx's (x_1) is not. torch 2.14's traces of
// the program at both levels (python/tools/hop_corpus_dynamo.py,
// python/tools/hop_corpus.py).
func TestLevelWithoutOps(t *testing.T) {
	for path, want := range map[string]bool{
		"../../testdata/hops_real/dynamo/basehop_alias_grad.pb": true,
		"../../testdata/hops_real/basehop_alias.pb":             false,
	} {
		m, err := ir.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range m.Graphs {
			if TorchLevelGraph(g) {
				t.Fatalf("%s: graph %s has a torch-level node: not a test of the rule", path, g.Name)
			}
		}
		if got := DynamoLevel(m); got != want {
			t.Errorf("%s: DynamoLevel = %v, want %v", path, got, want)
		}
	}
}
