package synth

import (
	"bytes"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

func nodes(m *ir.Module) int {
	n := 0
	for _, g := range m.Graphs {
		n += len(g.Nodes)
	}
	return n
}

func TestGenerateIsValidCleanAndDeterministic(t *testing.T) {
	for _, hops := range []bool{false, true} {
		opt := Options{Nodes: 5000, Seed: 7, HOPs: hops}
		m := Generate(opt)
		if got := nodes(m); got < 5000 || got > 5100 {
			t.Errorf("hops=%v: %d nodes, want about 5000", hops, got)
		}
		if err := ir.Verify(m, "synth"); err != nil {
			t.Fatal(err)
		}
		if hops && len(m.Graphs) < 10 {
			t.Errorf("only %d graphs with HOPs on", len(m.Graphs))
		}
		reg, err := load.Registry(m, "synth")
		if err != nil {
			t.Fatal(err)
		}
		res, err := analyze.Run(m, "synth", reg, alias.Analyzer)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 0 {
			t.Errorf("hops=%v: synthetic graph has findings: %+v", hops, res.Findings[0])
		}
		// In-place ops on views of intermediates must not leak to inputs.
		if s := res.Results[alias.Analyzer][""].(*alias.Summary); len(s.MutatedInputs) != 0 {
			t.Errorf("mutated inputs %v", s.MutatedInputs)
		}
		a, _ := ir.Encode(m, ir.Binary)
		b, _ := ir.Encode(Generate(opt), ir.Binary)
		if !bytes.Equal(a, b) {
			t.Error("same options gave different graphs")
		}
	}
}
