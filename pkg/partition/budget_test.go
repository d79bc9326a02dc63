package partition

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
)

// The real models' budgets against AOTAutograd's are the Python test's
// (test_joint.py, torch 2.14); this checks the budget's ends and its
// knapsack.
func TestMemoryBudget(t *testing.T) {
	for _, name := range corpusModels {
		t.Run(name, func(t *testing.T) {
			j := build(t, loadModel(t, name), jointgraph.Options{})
			mc, err := SplitLazy(j, MinCut)
			if err != nil {
				t.Fatal(err)
			}
			one, err := SplitBudget(j, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(one.Saved()), names(mc.Saved())) {
				t.Errorf("budget 1 saves %v, min-cut %v", names(one.Saved()), names(mc.Saved()))
			}
			zero, err := SplitBudget(j, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Budget 0 saves the inputs, and only what cannot be
			// recomputed beside them (a side-effecting or random op's
			// results).
			for _, s := range zero.Saved() {
				if s.Source != "input" && !savedForEffect(j, s.Name) {
					t.Errorf("budget 0 saves %s, neither an input nor a side-effecting or random op's result", s.Name)
				}
			}
			// Budget 0 may save more than min-cut (the inputs can be larger
			// than what min-cut saves: AOTAutograd's too, on embedding).
			for _, b := range []float64{0.1, 0.5, 1} {
				p, err := SplitBudget(j, b)
				if err != nil {
					t.Fatalf("budget %v: %v", b, err)
				}
				if p.TotalBytes() > mc.TotalBytes() {
					t.Errorf("budget %v saves %d bytes, more than min-cut's %d", b, p.TotalBytes(), mc.TotalBytes())
				}
			}
			for _, b := range []float64{-0.1, 1.5, math.NaN()} {
				if _, err := SplitBudget(j, b); err == nil {
					t.Errorf("budget %v accepted", b)
				}
			}
		})
	}
}

// savedForEffect reports whether the joint value name is a result (or a
// getitem of one) of a node of j.Effects or of a random op.
func savedForEffect(j *jointgraph.Joint, name string) bool {
	g := j.Module.Root()
	id, ok := g.Lookup(name)
	if !ok {
		return false
	}
	n := &g.Nodes[id]
	if n.Target == "_operator.getitem" && len(n.Args) > 0 && n.Args[0].Ref >= 0 {
		n = &g.Nodes[n.Args[0].Ref]
	}
	return slices.Contains(j.Effects, n.Name) || randomOps[opPacket(n.Target)]
}

func names(s []SavedValue) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = v.Name
	}
	return out
}

// TestDPKnapsackIsOptimal: dp_knapsack's answer is the best subset within
// the capacity (brute force over small instances).
func TestDPKnapsackIsOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + r.IntN(8)
		mem := make([]int64, n)
		run := make([]float64, n)
		for i := range n {
			mem[i] = int64(r.IntN(6))
			run[i] = float64(1 + r.IntN(20))
		}
		capacity := int64(r.IntN(15))
		keep := dpKnapsack(mem, run, capacity)
		var m int64
		var v float64
		for i, k := range keep {
			if k {
				m += mem[i]
				v += run[i]
			}
		}
		if m > capacity {
			t.Fatalf("mem %v cap %d: kept %v, %d over the capacity", mem, capacity, keep, m)
		}
		best := 0.0
		for set := range 1 << n {
			var sm int64
			var sv float64
			for i := range n {
				if set&(1<<i) != 0 {
					sm += mem[i]
					sv += run[i]
				}
			}
			if sm <= capacity {
				best = max(best, sv)
			}
		}
		if v != best {
			t.Fatalf("mem %v run %v cap %d: kept %v worth %v, the best is %v", mem, run, capacity, keep, v, best)
		}
	}
}

// TestMetadataOnlyNeverSaved: y = x * ones_like(w): the backward's ∂y/∂x is the
// tangent times ones_like(w), which needs only w's metadata: neither
// partition saves w or the fill (zerofill.go), as AOTAutograd's min-cut
// makes the factory in the backward. Trigger: ones_like, which hopctl
// saved (or saved w for) before; near miss: mul by w itself, which saves w.
func TestMetadataOnlyNeverSaved(t *testing.T) {
	for _, tc := range []struct {
		fill string
		want int
	}{{"aten.ones_like.default", 0}, {"", 1}} {
		g := &ir.Graph{}
		r := func(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name} }
		g.Nodes = append(g.Nodes,
			ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 3, 4)},
			ir.Node{Name: "w", Op: ir.OpPlaceholder, Target: "w", Val: f32(false, 3, 4)})
		other := "w"
		if tc.fill != "" {
			g.Nodes = append(g.Nodes, ir.Node{Name: "o", Op: ir.OpCallFunction, Target: tc.fill, Args: []ir.Arg{r("w")}, Val: f32(false, 3, 4)})
			other = "o"
		}
		g.Nodes = append(g.Nodes,
			ir.Node{Name: "y", Op: ir.OpCallFunction, Target: "aten.mul.Tensor", Args: []ir.Arg{r("x"), r(other)}, Val: f32(true, 3, 4)},
			ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{r("y")})}})
		g.Reindex()
		for i := range g.Nodes {
			g.Nodes[i].WalkRefs(func(a *ir.Arg) { a.Ref, _ = g.Lookup(a.S) })
		}
		j := build(t, &ir.Module{Graphs: []*ir.Graph{g}}, jointgraph.Options{})
		for _, mode := range []Mode{Default, MinCut} {
			p, err := Split(j, mode)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p.Saved()); len(got) != tc.want {
				t.Errorf("%q, %s: saves %v, want %d values", tc.fill, mode, got, tc.want)
			}
		}
	}
}
