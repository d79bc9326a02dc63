// Package cli is hopctl's command line: the root command, the Factory of one
// invocation, and Main, which runs a command line and decides its exit code.
package cli

import (
	"errors"
	"fmt"
	analyzecmd "github.com/hopctl/hopctl/internal/cmd/analyze"
	synthcmd "github.com/hopctl/hopctl/internal/cmd/synth"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cmd/config"
	"github.com/hopctl/hopctl/internal/cmd/convert"
	printcmd "github.com/hopctl/hopctl/internal/cmd/print"
	"github.com/hopctl/hopctl/internal/cmd/version"
	"github.com/hopctl/hopctl/internal/cmdutil"
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Exit codes. They are the same for every command and output format.
const (
	ExitOK       = 0 // success, no findings at or above the threshold
	ExitFindings = 1 // findings at or above --fail-on (a *cmdutil.FindingsError)
	// ExitUsage is a usage error (unknown command or flag, bad flag value or
	// argument count), a configuration error, or any other failure that is
	// not about the input, such as an output file that cannot be written.
	ExitUsage = 2
	ExitInput = 3 // unreadable or invalid input (an ir.InputError)
)

// ExitCode maps the error a command returned to hopctl's exit code.
// Invalid input wins over findings: a run that could not read all of its
// inputs has not checked them.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ie ir.InputError
	if errors.As(err, &ie) {
		return ExitInput
	}
	var fe *cmdutil.FindingsError
	if errors.As(err, &fe) {
		return ExitFindings
	}
	return ExitUsage
}

// Main runs hopctl with the command-line arguments args (without the
// program name) and returns the exit code. Errors are printed to
// ios.ErrOut as "hopctl: <message>" lines.
func Main(args []string, ios *iostreams.IOStreams) int {
	if args == nil {
		args = []string{} // cobra would read os.Args for nil
	}
	root := NewCmdRoot(NewFactory(ios))
	root.SetArgs(args)
	return Execute(root, ios.ErrOut)
}

// Execute runs the root command, prints the error it returns, if any, to
// errOut, and returns the exit code. Main uses it; tests use it to run
// command trees of their own.
func Execute(root *cobra.Command, errOut io.Writer) int {
	err := root.Execute()
	if err != nil {
		printError(errOut, err)
	}
	return ExitCode(err)
}

// printError writes err as "hopctl: " lines: one per problem of a
// verification error, otherwise one for the message (continuation lines
// as they are).
func printError(w io.Writer, err error) {
	var ve *ir.VerifyError
	if errors.As(err, &ve) && len(ve.Problems) > 0 {
		for _, p := range ve.Problems {
			fmt.Fprintf(w, "hopctl: %s\n", p)
		}
		return
	}
	fmt.Fprintf(w, "hopctl: %s\n", strings.TrimRight(err.Error(), "\n"))
}

// NewFactory returns the Factory of one invocation: its streams, its viper
// instance, and the configuration, loaded once on first use from the file
// that --config, $HOPCTL_CONFIG or the current directory names.
func NewFactory(ios *iostreams.IOStreams) *cmdutil.Factory {
	v := hopconfig.NewViper()
	return &cmdutil.Factory{
		IOStreams: ios,
		Viper:     v,
		Config: sync.OnceValues(func() (*hopconfig.Config, error) {
			return hopconfig.Load(v, hopconfig.Path(v, "."))
		}),
	}
}

// NewCmdRoot returns the root command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hopctl <command> [flags]",
		Short: "Static analysis of PyTorch FX graphs and their HOP subgraphs",
		Long: `hopctl reads PyTorch FX graphs, including the subgraphs of higher-order
operators, from its protobuf interchange format (.pb, .json, .pbtxt) and
answers statically what PyTorch answers by re-tracing.

Exit codes: 0 success, 1 findings at or above --fail-on, 2 usage or
configuration error, 3 unreadable or invalid input.`,
		Version:       build.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.BindFlags(cmd, f.Viper); err != nil {
				return err
			}
			if !cmdutil.UsesConfig(cmd) {
				return nil
			}
			_, err := f.Config()
			return err
		},
	}
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetVersionTemplate("hopctl version {{.Version}}\n")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.FlagErrorf("%v (see '%s --help')", err, c.CommandPath())
	})
	cmd.PersistentFlags().String("config", "", "configuration file (default .hopctl.yaml in the current directory, if present)")
	cmdutil.BindFlag(cmd, "config", hopconfig.KeyConfig)

	cmd.AddCommand(
		analyzecmd.NewCmdAnalyze(f, nil),
		printcmd.NewCmdPrint(f, nil),
		synthcmd.NewCmdSynth(f, nil),
		convert.NewCmdConvert(f, nil),
		config.NewCmdConfig(f, nil),
		version.NewCmdVersion(f, nil),
	)
	requireSubcommand(cmd)
	// cobra's completion command, created now rather than at Execute so that
	// an unknown shell is a usage error too.
	cmd.InitDefaultCompletionCmd()
	for _, c := range cmd.Commands() {
		if c.Name() == "completion" {
			requireSubcommand(c)
		}
	}
	return cmd
}

// requireSubcommand makes cmd, a command that only groups subcommands,
// print its help when run alone and report an unknown subcommand as a
// one-line usage error (cobra prints help and succeeds for those, or
// reports them over several lines).
func requireSubcommand(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = 2
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q", args[0])
		if c.HasParent() {
			msg += fmt.Sprintf(" for %q", c.CommandPath())
		}
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return cmdutil.FlagErrorf("%s; see '%s --help'", msg, c.CommandPath())
	}
	cmd.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
}
