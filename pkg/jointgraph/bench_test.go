package jointgraph

import (
	"fmt"
	"testing"
	"time"

	"github.com/hopctl/hopctl/internal/cputime"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/synth"
)

// mlpStack builds the forward graph of a layers-deep Linear → LayerNorm →
// GELU stack (batch 8, width 64), the graph the README's Performance section
// times beside AOTAutograd (python/tools/bench_aot.py): 11 nodes per
// layer (4 parameter placeholders, t, addmm, native_layer_norm and its 3
// getitems, gelu).
func mlpStack(layers int) *ir.Module {
	const batch, width = 8, 64
	g := &ir.Graph{}
	add := func(n ir.Node) string {
		g.Nodes = append(g.Nodes, n)
		return n.Name
	}
	tv := func(rg bool, shape ...int64) *ir.Value { return f32(rg, shape...) }
	r := func(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name} }
	h := add(ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: tv(true, batch, width)})
	for l := range layers {
		p := func(s string) string { return fmt.Sprintf("%s_%d", s, l) }
		w := add(ir.Node{Name: p("w"), Op: ir.OpPlaceholder, Target: p("w"), Val: tv(true, width, width)})
		b := add(ir.Node{Name: p("b"), Op: ir.OpPlaceholder, Target: p("b"), Val: tv(true, width)})
		lw := add(ir.Node{Name: p("lw"), Op: ir.OpPlaceholder, Target: p("lw"), Val: tv(true, width)})
		lb := add(ir.Node{Name: p("lb"), Op: ir.OpPlaceholder, Target: p("lb"), Val: tv(true, width)})
		t := add(ir.Node{Name: p("t"), Op: ir.OpCallFunction, Target: "aten.t.default", Args: []ir.Arg{r(w)}, Val: tv(true, width, width)})
		mm := add(ir.Node{Name: p("addmm"), Op: ir.OpCallFunction, Target: "aten.addmm.default", Args: []ir.Arg{r(b), r(h), r(t)}, Val: tv(true, batch, width)})
		ln := add(ir.Node{Name: p("ln"), Op: ir.OpCallFunction, Target: "aten.native_layer_norm.default",
			Args: []ir.Arg{r(mm), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ir.IntArg(width)}), r(lw), r(lb), ir.FloatArg(1e-5)}})
		y := add(ir.Node{Name: p("y"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), {Kind: ir.ArgInt}}, Val: tv(true, batch, width)})
		add(ir.Node{Name: p("mean"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), ir.IntArg(1)}, Val: tv(false, batch, 1)})
		add(ir.Node{Name: p("rstd"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), ir.IntArg(2)}, Val: tv(false, batch, 1)})
		h = add(ir.Node{Name: p("gelu"), Op: ir.OpCallFunction, Target: "aten.gelu.default", Args: []ir.Arg{r(y)}, Val: tv(true, batch, width)})
	}
	add(ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{r(h)})}})
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) { a.Ref, _ = g.Lookup(a.S) })
	}
	return &ir.Module{Graphs: []*ir.Graph{g}}
}

// BenchmarkJointMinCut is the joint + min-cut partition of a
// 1,000-layer stack (11k forward nodes) that the README's Performance
// section compares with AOTAutograd.
func BenchmarkJointMinCut(b *testing.B) {
	m := mlpStack(1000)
	b.ReportMetric(float64(len(m.Root().Nodes)), "fwd-nodes")
	cpu0 := cputime.Process()
	for b.Loop() {
		j, err := Build(m, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Split(j, PartitionMinCut); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cputime.Process(); cpu > 0 {
		b.ReportMetric(float64((cpu-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// synthSizes are the graph sizes of the scaling benchmarks: the cost per
// node of joint and partition must stay flat from 10k to 1M nodes.
var synthSizes = []struct {
	name  string
	nodes int
}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}

// synthForward is pkg/synth's graph without HOPs (Linear, LayerNorm,
// GELU, reductions, views, in-place ops on views).
func synthForward(n int) *ir.Module {
	return synth.Generate(synth.Options{Nodes: n, Seed: 1})
}

// reportPerNode reports wall time per forward node and, where the
// platform tells, CPU time per node (both cores and the GC; cpu0 is the
// process's CPU time before the loop).
func reportPerNode(b *testing.B, nodes int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	if cpu := cputime.Process(); cpu > 0 {
		b.ReportMetric(float64((cpu-cpu0).Nanoseconds())/float64(b.N)/float64(nodes), "cpu-ns/node")
	}
}

// BenchmarkJointSynth times Build (the joint graph) per forward node.
func BenchmarkJointSynth(b *testing.B) {
	for _, s := range synthSizes {
		b.Run(s.name, func(b *testing.B) {
			m := synthForward(s.nodes)
			nodes := len(m.Root().Nodes)
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := Build(m, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes, cpu0)
		})
	}
}

// BenchmarkPartitionSynth times the min-cut Split of the joint graph per
// forward node.
func BenchmarkPartitionSynth(b *testing.B) {
	for _, s := range synthSizes {
		b.Run(s.name, func(b *testing.B) {
			m := synthForward(s.nodes)
			j, err := Build(m, Options{})
			if err != nil {
				b.Fatal(err)
			}
			nodes := len(m.Root().Nodes)
			b.ReportMetric(float64(len(j.Module.Root().Nodes)), "joint-nodes")
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := Split(j, PartitionMinCut); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes, cpu0)
		})
	}
}

// BenchmarkPartitionLazySynth times the min-cut SplitLazy (what `hopctl
// joint --partition` runs: the two graphs read from the joint in place)
// per forward node.
func BenchmarkPartitionLazySynth(b *testing.B) {
	for _, s := range synthSizes {
		b.Run(s.name, func(b *testing.B) {
			m := synthForward(s.nodes)
			j, err := Build(m, Options{})
			if err != nil {
				b.Fatal(err)
			}
			nodes := len(m.Root().Nodes)
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := SplitLazy(j, PartitionMinCut); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes, cpu0)
		})
	}
}

// TestJointMinCutScale: joint + min-cut of the MLP stack do work linear
// in its depth, measured in allocations (a step quadratic in the depth
// makes 10× the layers cost ~100× the allocations; linear work, 10×), and
// the min-cut saves the same number of values for every layer, as
// AOTAutograd's does for a stack of identical layers. Time is measured by
// make bench (BenchmarkJointMinCut), never here.
func TestJointMinCutScale(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	type work struct {
		allocs       float64
		saved, joint int
	}
	measure := func(layers int) work {
		m := mlpStack(layers)
		if err := ir.Verify(m, "stack"); err != nil {
			t.Fatal(err)
		}
		var w work
		w.allocs = testing.AllocsPerRun(1, func() {
			j, err := Build(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Split(j, PartitionMinCut)
			if err != nil {
				t.Fatal(err)
			}
			w.saved, w.joint = len(p.Saved()), len(j.Module.Root().Nodes)
		})
		return w
	}
	small, two, big := measure(100), measure(200), measure(1000)
	t.Logf("100 layers: %+v; 200: %+v; 1000: %+v", small, two, big)
	if r := big.allocs / small.allocs; r > 13 {
		t.Errorf("10× the layers took %.1f× the allocations (%.0f → %.0f): more than linear", r, small.allocs, big.allocs)
	}
	if r := float64(big.joint) / float64(small.joint); r > 10.5 {
		t.Errorf("10× the layers made %.1f× the joint nodes (%d → %d)", r, small.joint, big.joint)
	}
	if per := two.saved - small.saved; per <= 0 || big.saved-small.saved != 9*per {
		t.Errorf("min-cut saved %d, %d, %d values of 100, 200, 1000 layers: not the same number per layer", small.saved, two.saved, big.saved)
	}
}
