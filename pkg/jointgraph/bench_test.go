package jointgraph

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/synth"
)

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

// reportPerNode reports wall time per forward node.
func reportPerNode(b *testing.B, nodes int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkJointSynth times Build (the joint graph) per forward node.
func BenchmarkJointSynth(b *testing.B) {
	for _, s := range synthSizes {
		b.Run(s.name, func(b *testing.B) {
			m := synthForward(s.nodes)
			nodes := len(m.Root().Nodes)
			for b.Loop() {
				if _, err := Build(m, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			reportPerNode(b, nodes)
		})
	}
}
