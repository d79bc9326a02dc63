package jointgraph

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/synth"
)

// TestForwardInPlaceMatchesCopy: the joint built on the functional
// graph's nodes in place (forwardInPlace) encodes to the same bytes as
// the joint built on a copy of them, for every model of testdata/models
// (make_fx traces of torch 1.13: Linear/LayerNorm stacks, convolutions
// with batch norm, LSTM, attention, in-place ops on views, inputs that
// share storage) under each convention and with every gradient
// unmasked, and for a synthetic Linear/LayerNorm/GELU stack; and mlp
// and that stack take the in-place way (the functional graph's node list
// becomes the joint's).
func TestForwardInPlaceMatchesCopy(t *testing.T) {
	files, err := filepath.Glob("../../testdata/models/*.pb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no models: %v", err)
	}
	type input struct {
		name string
		m    *ir.Module
		reg  Options
	}
	var inputs []input
	for _, f := range files {
		in, err := load.Open(f, load.Strict)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{filepath.Base(f), in.Module, Options{File: f, Registry: in.Registry}})
	}
	inputs = append(inputs, input{"stack", synth.MLPStack(20), Options{}})
	build := func(m *ir.Module, opts Options, copied bool) ([]byte, error) {
		copyForward = copied
		defer func() { copyForward = false }()
		j, err := Build(m, opts)
		if err != nil {
			return nil, err
		}
		return ir.Encode(j.Module, ir.Binary)
	}
	for _, in := range inputs {
		// The joint built in place remaps the functional graph's argument
		// lists where they are (functional.ownsArgs): never the input's.
		before, err := ir.Encode(in.m, ir.Binary)
		if err != nil {
			t.Fatal(err)
		}
		for _, variant := range []Options{{}, {Convention: ConventionCreateBwFn}, {UnmaskNoneGradients: true}} {
			opts := in.reg
			opts.Convention, opts.UnmaskNoneGradients = variant.Convention, variant.UnmaskNoneGradients
			copied, err1 := build(in.m, opts, true)
			direct, err2 := build(in.m, opts, false)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s %+v: copy: %v; in place: %v", in.name, variant, err1, err2)
			}
			if err1 != nil {
				continue
			}
			if !bytes.Equal(copied, direct) {
				t.Errorf("%s %+v: the joint built in place differs from the one built on a copy", in.name, variant)
			}
		}
		if after, _ := ir.Encode(in.m, ir.Binary); !bytes.Equal(before, after) {
			t.Errorf("%s: building its joint changed the input", in.name)
		}
	}
	// A make_fx trace without mutation (placeholders first) and the
	// synthetic stack (placeholders between the layers): the in-place
	// way must be the one taken.
	var mlp *ir.Module
	for _, in := range inputs {
		if in.name == "mlp.pb" {
			mlp = in.m
		}
	}
	for _, m := range []*ir.Module{mlp, synth.MLPStack(3)} {
		f, err := functionalize(m, "", nil, new(*ir.Node), 3*len(m.Root().Nodes))
		if err != nil {
			t.Fatal(err)
		}
		rg, _, err := requiresGrad(m, f.b.g, f.ops, f.effect, f.outputs, "")
		if err != nil {
			t.Fatal(err)
		}
		jb := &jointBuilder{f: f, rg: rg, src: m, at: new(*ir.Node), b: newJointGraphBuilder(f.b.g)}
		fnodes := &f.b.g.Nodes[:1][0]
		if _, err := jb.build(m); err != nil {
			t.Fatal(err)
		}
		if got := &jb.b.g.Nodes[0]; got != fnodes {
			t.Errorf("graph of %d nodes: the joint was built on a copy of the functional graph, not in place", len(m.Root().Nodes))
		}
	}
}
