// Package version implements `hopctl version`.
package version

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Options are the inputs of `hopctl version`.
type Options struct {
	IO     *iostreams.IOStreams
	Format string // text or json
}

// Info is what `hopctl version --format json` prints. Its JSON form is a
// documented interface: fields are only ever added.
type Info struct {
	Version       string `json:"version"`        // hopctl's version
	FormatVersion string `json:"format_version"` // graph format major.minor written
	GoVersion     string `json:"go_version"`
	Platform      string `json:"platform"` // GOOS/GOARCH
}

// Current describes this binary.
func Current() Info {
	return Info{
		Version:       build.Version,
		FormatVersion: fmt.Sprintf("%d.%d", ir.FormatMajor, ir.FormatMinor),
		GoVersion:     runtime.Version(),
		Platform:      runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// NewCmdVersion returns the version command; runF replaces versionRun in
// tests.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print hopctl's version, graph format version and Go version",
		Example: `  hopctl version
  hopctl version --format json`,
		Args: cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Enum("format", opts.Format, "text", "json"); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	cmdutil.DisableConfig(cmd)
	return cmd
}

func versionRun(opts *Options) error {
	info := Current()
	if opts.Format == "json" {
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(opts.IO.Out, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(opts.IO.Out, "hopctl %s\ngraph format %s\n%s %s\n", info.Version, info.FormatVersion, info.GoVersion, info.Platform)
	return err
}
