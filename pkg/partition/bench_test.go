package partition

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/synth"
)

// BenchmarkJointMinCut is the joint + min-cut partition of a
// 1,000-layer stack (11k forward nodes) that python/tools/bench_aot.py
// runs through AOTAutograd.
func BenchmarkJointMinCut(b *testing.B) {
	m := synth.MLPStack(1000)
	b.ReportMetric(float64(len(m.Root().Nodes)), "fwd-nodes")
	for b.Loop() {
		j, err := jointgraph.Build(m, jointgraph.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Split(j, MinCut); err != nil {
			b.Fatal(err)
		}
	}
}

// synthSizes are the graph sizes of the scaling benchmarks: the cost per
// node of the partition must stay flat from 10k to 1M nodes.
var synthSizes = []struct {
	name  string
	nodes int
}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}

// synthForward is pkg/synth's graph without HOPs.
func synthForward(n int) *ir.Module {
	return synth.Generate(synth.Options{Nodes: n, Seed: 1})
}

// reportPerNode reports wall time per forward node.
func reportPerNode(b *testing.B, nodes int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkPartitionSynth times the min-cut Split of the joint graph per
// forward node.
func BenchmarkPartitionSynth(b *testing.B) {
	for _, s := range synthSizes {
		b.Run(s.name, func(b *testing.B) {
			m := synthForward(s.nodes)
			j, err := jointgraph.Build(m, jointgraph.Options{})
			if err != nil {
				b.Fatal(err)
			}
			nodes := len(m.Root().Nodes)
			b.ReportMetric(float64(len(j.Module.Root().Nodes)), "joint-nodes")
			for b.Loop() {
				if _, err := Split(j, MinCut); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes)
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
			j, err := jointgraph.Build(m, jointgraph.Options{})
			if err != nil {
				b.Fatal(err)
			}
			nodes := len(m.Root().Nodes)
			for b.Loop() {
				if _, err := SplitLazy(j, MinCut); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes)
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
		m := synth.MLPStack(layers)
		if err := ir.Verify(m, "stack"); err != nil {
			t.Fatal(err)
		}
		var w work
		w.allocs = testing.AllocsPerRun(1, func() {
			j, err := jointgraph.Build(m, jointgraph.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Split(j, MinCut)
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
