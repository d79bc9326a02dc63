// Package config implements `hopctl config`: the effective configuration
// after the configuration file, HOPCTL_* environment variables and flags
// are layered.
package config

import (
	"fmt"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/hopctl/hopctl/internal/cmdutil"
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// Options are the inputs of `hopctl config`.
type Options struct {
	IO     *iostreams.IOStreams
	Config func() (*hopconfig.Config, error)
}

// NewCmdConfig returns the config command; runF replaces configRun in
// tests.
func NewCmdConfig(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration",
		Long: `Print the effective configuration as YAML: the configuration file
(--config, $HOPCTL_CONFIG, or .hopctl.yaml in the current directory), then
HOPCTL_* environment variables (lint.fail-on is HOPCTL_LINT_FAIL_ON), then
flags, each overriding the one before.`,
		Args: cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configRun(opts)
		},
	}
	// Hidden: lets the layering be seen (and tested) before `hopctl lint`
	// owns the real --fail-on flag.
	cmd.Flags().String("fail-on", "", "override lint.fail-on")
	_ = cmd.Flags().MarkHidden("fail-on")
	cmdutil.BindFlag(cmd, "fail-on", hopconfig.KeyLintFailOn)
	return cmd
}

func configRun(opts *Options) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	src := "no configuration file"
	if c.File != "" {
		src = "configuration file: " + c.File
	}
	if _, err := fmt.Fprintf(opts.IO.Out, "# %s\n", src); err != nil {
		return err
	}
	enc := yaml.NewEncoder(opts.IO.Out)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return err
	}
	return enc.Close()
}
