package cmdutil

import "github.com/hopctl/hopctl/pkg/analyze"

// AnalysisOptions returns the options of the invocation's analysis runs
// from its configuration (input.torch-version: --torch-version,
// HOPCTL_INPUT_TORCH_VERSION; input.grad-mode: --grad-mode,
// HOPCTL_INPUT_GRAD_MODE); the defaults when f loads none (tests).
func AnalysisOptions(f *Factory) (analyze.Options, error) {
	if f.Config == nil {
		return analyze.Options{}, nil
	}
	c, err := f.Config()
	if err != nil {
		return analyze.Options{}, err
	}
	return analyze.Options{TorchVersion: c.Input.TorchVersion, GradMode: c.Input.GradMode}, nil
}
