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
		Example: `  hopctl config
  HOPCTL_LINT_FAIL_ON=warning hopctl config
  hopctl config verify .hopctl.yaml`,
		Args: cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configRun(opts)
		},
	}
	cmd.AddCommand(newCmdVerify(f))
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

func newCmdVerify(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check a configuration file against hopctl's JSON Schema and rules",
		Long: `Check a configuration file: against the JSON Schema of the format
(internal/config/hopctl.schema.json, which editors can use too), then as
hopctl reads it (version, values, every suppression with a reason, valid
globs, known rule ids). FILE defaults to the file hopctl would read
(--config, $HOPCTL_CONFIG, else .hopctl.yaml from the current directory up
to the repository's root).

Exit status: 0 the file is valid, 2 it is not (every problem is listed).`,
		Example: `  hopctl config verify
  hopctl config verify ci/.hopctl.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			} else {
				file = hopconfig.Path(f.Settings, ".")
			}
			if file == "" {
				return &hopconfig.Error{Err: fmt.Errorf("no configuration file: no %s from here up to the repository's root", hopconfig.DefaultFile)}
			}
			// Read once, bounded (/dev/zero, a FIFO), for both checks.
			data, err := hopconfig.ReadFile(file)
			if err != nil {
				return &hopconfig.Error{File: file, Err: err}
			}
			if err := hopconfig.CheckSchema(data); err != nil {
				return &hopconfig.Error{File: file, Err: err}
			}
			c, err := hopconfig.LoadBytes(hopconfig.NewSettings(), file, data)
			if err != nil {
				return err
			}
			if _, err := c.LintSuppressions(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(f.IOStreams.Out, "%s: valid (version %d, %d suppression%s)\n", file, c.Version, len(c.Lint.Suppress), map[bool]string{true: "", false: "s"}[len(c.Lint.Suppress) == 1])
			return err
		},
	}
	// verify reads the file itself, to report its problems rather than
	// fail on them before it runs.
	cmdutil.DisableConfig(cmd)
	return cmd
}
