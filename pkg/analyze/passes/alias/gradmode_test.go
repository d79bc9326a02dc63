package alias_test

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestGradModeOption: --grad-mode (Options.GradMode) decides the rules of a
// file that records no grad mode, and never overrides one that does. The
// graphs are torch 2.14's Dynamo traces of a cond whose branch writes its
// operand (testdata/hops_real/dynamo, python/tools/hop_corpus_dynamo.py):
// torch.compile refuses it with grad enabled and compiles it with grad
// disabled or in inference mode (verdicts.json). With its record removed,
// the grad-enabled trace must follow the option.
func TestGradModeOption(t *testing.T) {
	const dir = "../../../../testdata/hops_real/dynamo/"
	run := func(path string, forget bool, mode string) []string {
		t.Helper()
		f, err := load.Open(path, load.Strict)
		if err != nil {
			t.Fatal(err)
		}
		if forget {
			f.Module.HasGradEnabled, f.Module.HasInferenceMode = false, false
		}
		res, err := analyze.RunWith(f.Module, path, f.Registry, analyze.Options{GradMode: mode}, passes.All()...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range res.Findings {
			if x.Rule == alias.RuleHOPMutation {
				got = append(got, x.Message)
			}
		}
		return got
	}
	grad := dir + "cond_mutate_grad.pb"
	for _, c := range []struct {
		path   string
		forget bool
		mode   string
		refuse bool
	}{
		{grad, true, "", true},                                                 // no record, no option: grad enabled
		{grad, true, analyze.GradModeEnabled, true},                            // the option says enabled
		{grad, true, analyze.GradModeDisabled, false},                          // ... disabled: Dynamo lets the write through
		{grad, true, analyze.GradModeInference, false},                         // ... inference mode disables grad
		{grad, false, analyze.GradModeDisabled, true},                          // the file's record wins
		{dir + "cond_mutate_nograd.pb", false, analyze.GradModeEnabled, false}, // likewise
		{dir + "cond_mutate_view_inference.pb", false, analyze.GradModeEnabled, false},
		{dir + "cond_mutate_view_noinference.pb", false, analyze.GradModeDisabled, true},
	} {
		got := run(c.path, c.forget, c.mode)
		if refused := len(got) > 0; refused != c.refuse || refused && got[0] != opschema.DynamoMutationMessage {
			t.Errorf("%s (record removed: %v, --grad-mode %q): %q, want refused=%v", c.path, c.forget, c.mode, got, c.refuse)
		}
	}
}

// TestGradModeSwitchesAreKnown: the region boundaries Dynamo writes
// (torch._C._set_grad_enabled, _enter/_exit_inference_mode) touch no tensor,
// so no finding names them.
func TestGradModeSwitchesAreKnown(t *testing.T) {
	for _, name := range []string{"region_nograd_grad", "region_enable_grad_nograd", "region_inference_grad"} {
		path := "../../../../testdata/hops_real/dynamo/" + name + ".pb"
		f, res, err := load.Analyze(path, passes.All()...)
		if err != nil {
			t.Fatal(err)
		}
		switches := 0
		for i := range f.Module.Root().Nodes {
			if analyze.IsGradModeTarget(f.Module.Root().Nodes[i].Target) {
				switches++
			}
		}
		if switches < 2 {
			t.Errorf("%s: %d grad-mode switches, want the block's two", path, switches)
		}
		for _, x := range res.Findings {
			if id, ok := f.Module.Root().Lookup(x.Node); x.Graph == "" && ok && analyze.IsGradModeTarget(f.Module.Root().Nodes[id].Target) {
				t.Errorf("%s: %s", path, x.Message)
			}
		}
	}
}
