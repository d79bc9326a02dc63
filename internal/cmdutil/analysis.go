package cmdutil

import (
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// AnalysisOptions returns the options of the invocation's analysis runs
// from its configuration (input.torch-version: --torch-version,
// HOPCTL_INPUT_TORCH_VERSION; input.grad-mode: --grad-mode,
// HOPCTL_INPUT_GRAD_MODE); the defaults when f loads none (tests). It is
// for commands that follow one release: several (a list, a range,
// supported) are a usage error.
func AnalysisOptions(f *Factory) (analyze.Options, error) {
	o, err := AnalysisOptionsReleases(f)
	if err == nil && len(o.Releases) > 1 {
		return analyze.Options{}, FlagErrorf("--torch-version: this command follows one torch release, not %d (%v): name one; lint and analyze take several",
			len(o.Releases), o.Releases)
	}
	return o, err
}

// AnalysisOptionsReleases is AnalysisOptions for commands that run under
// several releases (lint, analyze): Releases holds them when there are
// more than one.
func AnalysisOptionsReleases(f *Factory) (analyze.Options, error) {
	if f.Config == nil {
		return analyze.Options{}, nil
	}
	c, err := f.Config()
	if err != nil {
		return analyze.Options{}, err
	}
	return ConfigAnalysisOptions(c)
}

// ConfigAnalysisOptions are the analysis options configuration c says.
func ConfigAnalysisOptions(c *hopconfig.Config) (analyze.Options, error) {
	o := analyze.Options{TorchVersion: c.Input.TorchVersion, GradMode: c.Input.GradMode}
	rs, err := opschema.ParseTorchReleases(c.Input.TorchVersion, c.Input.TorchSupported)
	if err != nil {
		return analyze.Options{}, &hopconfig.Error{File: c.File, Err: err}
	}
	if len(rs) > 1 {
		o.TorchVersion, o.Releases = "", rs
	} else if len(rs) == 1 && opschema.NormalizeTorchVersion(c.Input.TorchVersion) != rs[0] {
		// A range of one release, or supported: the release itself (one
		// release is kept as given, "2.6.0": joint records it).
		o.TorchVersion = rs[0]
	}
	return o, nil
}

// SupportedReleases are the releases the project supports
// (input.torch-supported), else the version table's.
func SupportedReleases(c *hopconfig.Config) []string {
	rs, err := opschema.ParseTorchReleases("supported", c.Input.TorchSupported)
	if err != nil {
		return nil // Validate has refused it
	}
	return rs
}
