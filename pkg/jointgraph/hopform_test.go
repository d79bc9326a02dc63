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
// differentiated like 2.14's form of the same program when read under 2.14's
// rules (under its own, 2.6's, scan has no autograd and is refused); a 2.6
// scan the current form cannot express (dim 1, reversed) is refused naming
// the node.
func TestJointOlderHOPForm(t *testing.T) {
	// torch 2.6 cannot differentiate scan (opschema.DiffScanGrad26): its
	// own trace is refused with its message, naming the node.
	if _, err := Build(loadRequiringGrad(t, "../../testdata/hops_real/torch2.6/scan_clean.pb"), Options{MaskMode: MasksAll}); err == nil ||
		!strings.Contains(err.Error(), "node scan: Autograd not implemented for scan") {
		t.Errorf("torch 2.6's scan_clean: %v, want torch 2.6's refusal naming the node", err)
	}
	// Its call form is read under 2.14's rules (what the file would be
	// with a newer torch's version recorded).
	load := func(path string) *ir.Module {
		m := loadRequiringGrad(t, path)
		m.TorchVersion = "2.14.1"
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

	// torch 2.6's scans over dim 1 and reversed
	// (python/tools/make_scan26_forms.py) are refused naming the node.
	for name, want := range map[string]string{
		"scan_dim1":    "scan with dim=1 (an older torch's form): hopctl reads this form only with dim=0, reverse=False",
		"scan_reverse": "scan with reverse=True (an older torch's form)",
	} {
		_, err := Build(load("../../testdata/hops_real/torch2.6/forms/"+name+".pb"), Options{File: name, MaskMode: MasksAll})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "node scan") {
			t.Errorf("%s: %v, want an error containing %q naming the node", name, err, want)
		}
	}
}

// loadRequiringGrad loads a real trace with its floating-point inputs
// requiring grad (trace files record none).
func loadRequiringGrad(t *testing.T, path string) *ir.Module {
	t.Helper()
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
