package jointgraph

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	_ "github.com/hopctl/hopctl/pkg/pt2"
)

// TestJointOfExportedPrograms builds the joint of every program torch 2.6
// and 2.14 saved in testdata/pt2 — training IR (in-place and composite ops
// kept: linear, conv2d, batch_norm; rules_composite.go) and ATen IR — and
// checks that it
// follows the signature: every parameter is differentiated and its
// gradient labelled gradient_to_parameter with its state_dict key;
// buffers (whose requires_grad torch may record as True) and user inputs
// that do not require grad get None; only user outputs get tangents; the
// joint verifies with its signature.
func TestJointOfExportedPrograms(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/pt2/*/*.pt2")
	built := 0
	for _, p := range paths {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		j, err := Build(m, Options{File: p})
		if err != nil {
			// The only refusals: HOPs hop.go does not differentiate
			// (while_loop, auto_functionalized) and a
			// custom op whose schema an archive does not carry. An op
			// without a derivative rule fails the test.
			if msg := err.Error(); !strings.Contains(msg, "higher-order operator") && !strings.Contains(msg, "no schema for hopctl_test.") {
				t.Errorf("%s: %v", p, err)
			}
			continue
		}
		built++
		out := j.Module
		if err := ir.Verify(out, p); err != nil {
			t.Errorf("%s: the joint does not verify: %v", p, err)
			continue
		}
		sig, js := m.Signature, out.Signature
		if js == nil {
			t.Errorf("%s: the joint has no signature", p)
			continue
		}
		userOuts := 0
		for i, o := range sig.Outputs {
			if o.Kind == ir.OutputUserOutput {
				userOuts++
			} else if j.Masks[i] {
				t.Errorf("%s: output %d (%s) gets a tangent", p, i, o.Kind)
			}
		}
		if j.NumTangents > userOuts {
			t.Errorf("%s: %d tangents for %d user outputs", p, j.NumTangents, userOuts)
		}
		nf := len(sig.Outputs)
		lifts := map[string]int{}
		for _, in := range sig.Inputs {
			if in.Kind == ir.InputParameter {
				lifts[in.Target]++
			}
		}
		for i, in := range sig.Inputs {
			g := js.Outputs[nf+i]
			switch {
			case in.Kind == ir.InputParameter && lifts[in.Target] > 1 && g.Name == "":
				// torch 2.6 lifts a parameter used twice as two
				// placeholders (double_lift) and leaves one unused: no
				// gradient there, the other placeholder carries it.
			case in.Kind == ir.InputParameter && !j.RequiresGrad[i]:
				t.Errorf("%s: parameter %s is not differentiated", p, in.Target)
			case in.Kind == ir.InputParameter && (g.Kind != ir.OutputGradientToParameter || g.Target != in.Target):
				t.Errorf("%s: gradient of parameter %s is labelled %s %q", p, in.Target, g.Kind, g.Target)
			case in.Kind != ir.InputParameter && in.Kind != ir.InputUserInput && (j.RequiresGrad[i] || g.Name != ""):
				t.Errorf("%s: %s %s is differentiated", p, in.Kind, in.Target)
			case in.Kind == ir.InputUserInput && g.Name != "" && (g.Kind != ir.OutputGradientToUserInput || g.Target != js.Inputs[i].Name):
				t.Errorf("%s: gradient of user input %s is labelled %s %q", p, in.Name, g.Kind, g.Target)
			}
		}
	}
	// Effect tokens: with_effects is kept (a side effect, never dead) and
	// the token stays a TOKEN input and output of the joint.
	for _, v := range []string{"2.6", "2.14"} {
		p := "../../testdata/pt2/" + v + "/effects.aten.pt2"
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		j, err := Build(m, Options{File: p})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		found := false
		for _, n := range j.Module.Root().Nodes {
			found = found || n.Target == "higher_order.with_effects"
		}
		js := j.Module.Signature
		if !found || js == nil || js.Inputs[0].Kind != ir.InputToken || js.Outputs[0].Kind != ir.OutputToken {
			t.Errorf("%s: with_effects kept %v, joint signature %+v", p, found, js)
		}
	}
	if built < 40 {
		t.Errorf("only %d of %d exported programs have a joint", built, len(paths))
	}
}
