package jointgraph

import (
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestJointOlderHOPForm: the joint reads HOP calls through the convention
// table's lookup (hop.Lookup), so torch 2.6's scan form (combine_fn, init,
// xs, dim, reverse, additional_inputs), traced by torch 2.6
// (testdata/hops_real/torch2.6, python/tools/hop_corpus.py), is
// differentiated like 2.14's form of the same program; a 2.6 scan the
// current form cannot express (dim 1) is refused naming the node.
func TestJointOlderHOPForm(t *testing.T) {
	load := func(path string) *ir.Module {
		m, err := ir.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		g := m.Root()
		for _, id := range g.Placeholders() {
			if tm := valueTensor(g.Nodes[id].Val); tm != nil && isDifferentiableDtype(tm.Dtype) {
				c := *tm
				c.RequiresGrad = true
				g.Nodes[id].Val = tensorValue(&c)
			}
		}
		return m
	}
	opts := Options{MaskMode: MasksAll}
	old := build(t, load("../../testdata/hops_real/torch2.6/scan_clean.pb"), opts)
	cur := build(t, load("../../testdata/hops_real/scan_clean.pb"), opts)
	grads := func(j *Joint) (n int) {
		leaves, _ := j.Module.Root().Outputs()
		for _, a := range leaves {
			if a.Kind == ir.ArgNode {
				n++
			}
		}
		return n
	}
	if go_, gc := grads(old), grads(cur); go_ != gc || gc < 3 {
		t.Errorf("torch 2.6's scan: %d outputs and gradients, 2.14's: %d", go_, gc)
	}

	m := load("../../testdata/hops_real/torch2.6/scan_clean.pb")
	g := m.Root()
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Target == "higher_order.scan" {
			n.Args[3] = ir.Arg{Kind: ir.ArgInt, I: 1} // scan over dim 1, as make_pt2_refused.py's trace
		}
	}
	_, err := Build(m, Options{File: "scan_dim1", MaskMode: MasksAll})
	if err == nil || !strings.Contains(err.Error(), "scan with dim=1") || !strings.Contains(err.Error(), "scan") {
		t.Errorf("2.6 scan over dim 1: %v", err)
	}
}
