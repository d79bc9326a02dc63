// Package cli is hopctl's command line: the root command, the Factory of one
// invocation, and Main, which runs a command line and decides its exit code.
package cli

import (
	"errors"
	"fmt"
	analyzecmd "github.com/hopctl/hopctl/internal/cmd/analyze"
	synthcmd "github.com/hopctl/hopctl/internal/cmd/synth"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/build"
	// Registers torch.export archives and program JSON with ir.LoadFile.
	"github.com/hopctl/hopctl/internal/cmd/config"
	"github.com/hopctl/hopctl/internal/cmd/convert"
	"github.com/hopctl/hopctl/internal/cmd/explain"
	jointcmd "github.com/hopctl/hopctl/internal/cmd/joint"
	lintcmd "github.com/hopctl/hopctl/internal/cmd/lint"
	metadiffcmd "github.com/hopctl/hopctl/internal/cmd/metadiff"
	printcmd "github.com/hopctl/hopctl/internal/cmd/print"
	reportcmd "github.com/hopctl/hopctl/internal/cmd/report"
	"github.com/hopctl/hopctl/internal/cmd/version"
	"github.com/hopctl/hopctl/internal/cmdutil"
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	_ "github.com/hopctl/hopctl/pkg/pt2"
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
	// ExitInternal is a bug in hopctl (an *ir.InternalError): a panic,
	// recovered where its phase and node are known or else by Execute, or
	// an output that fails hopctl's own checks.
	ExitInternal = 4
)

// ExitCode maps the error a command returned to hopctl's exit code. An
// internal error wins over everything (the run did not do its work), and
// invalid input over findings: a run that could not read all of its inputs
// has not checked them.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var bug *ir.InternalError
	if errors.As(err, &bug) {
		return ExitInternal
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
	root := newCmdRoot(NewFactory(ios), subcommandNamed(args))
	root.SetArgs(args)
	defer stopProfiles(ios.ErrOut)
	return Execute(root, ios.ErrOut)
}

// Execute runs the root command, prints the error it returns, if any, to
// errOut, and returns the exit code. Main uses it; tests use it to run
// command trees of their own. It is the one place a panic of the command's
// goroutine is recovered: the packages that know the phase and node of
// their work return an *ir.InternalError instead of panicking (a panic in
// another goroutine is theirs to bring back), and anything else is a bug
// of the command itself. Either way hopctl prints the error and the stack
// and exits ExitInternal.
func Execute(root *cobra.Command, errOut io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			err := ir.Panicked("the command", ir.Location{}, r)
			printError(errOut, err)
			code = ExitInternal
		}
	}()
	err := root.Execute()
	progress.Finish() // the line is cleared before any error is printed
	if err != nil && !(errors.Is(err, os.ErrClosed) && atomicfile.Interrupted()) {
		// (A write an interrupt stopped: the signal is the message, and
		// the handler in main exits 128+signal.)
		printError(errOut, err)
	}
	return ExitCode(err)
}

// printError writes err as "hopctl: " lines: each error of a joined error
// in turn (a command that read several files), one per problem of a
// verification error (its continuation lines indented), otherwise one for
// the message (continuation lines as they are). Every line starts with
// "hopctl: " and is escaped (ir.PrintableLines): messages quote names and
// targets from the file, and a line break or an escape sequence in one
// must not forge a line (a workflow command such as "::error::") or reach
// the terminal.
func printError(w io.Writer, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printError(w, e)
		}
		return
	}
	var bug *ir.InternalError
	if errors.As(err, &bug) {
		// The message, then the stack for the bug report.
		printLines(w, err.Error(), "")
		printLines(w, string(bug.Stack), "    ")
		return
	}
	var ve *ir.VerifyError
	if errors.As(err, &ve) && len(ve.Problems) > 0 {
		for _, p := range ve.Problems {
			// A problem's continuation lines (the schema a call does not
			// fit) are indented under it.
			first, rest, _ := strings.Cut(strings.TrimRight(p.String(), "\n"), "\n")
			printLines(w, first, "")
			printLines(w, rest, "    ")
		}
		return
	}
	printLines(w, err.Error(), "")
}

// printLines writes each non-empty line of s (after the first, only
// non-empty ones) as "hopctl: " + indent + the line, escaped.
func printLines(w io.Writer, s, indent string) {
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" && (i > 0 || indent != "") {
			continue
		}
		fmt.Fprintf(w, "hopctl: %s%s\n", indent, ir.PrintableLines(l))
	}
}

// NewFactory returns the Factory of one invocation: its streams, its
// settings, and the configuration, loaded once on first use from the file
// that --config, $HOPCTL_CONFIG or the current directory names.
func NewFactory(ios *iostreams.IOStreams) *cmdutil.Factory {
	s := hopconfig.NewSettings()
	return &cmdutil.Factory{
		IOStreams: ios,
		Settings:  s,
		Config: sync.OnceValues(func() (*hopconfig.Config, error) {
			return hopconfig.Load(s, hopconfig.Path(s, "."))
		}),
	}
}

// NewCmdRoot returns the root command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command { return newCmdRoot(f, "") }

// subcommands are the constructors of the root's subcommands, by name.
var subcommands = []struct {
	name string
	new  func(*cmdutil.Factory) *cobra.Command
}{
	{"analyze", func(f *cmdutil.Factory) *cobra.Command { return analyzecmd.NewCmdAnalyze(f, nil) }},
	{"joint", func(f *cmdutil.Factory) *cobra.Command { return jointcmd.NewCmdJoint(f, nil) }},
	{"lint", func(f *cmdutil.Factory) *cobra.Command { return lintcmd.NewCmdLint(f, nil) }},
	{"meta-diff", func(f *cmdutil.Factory) *cobra.Command { return metadiffcmd.NewCmdMetaDiff(f, nil) }},
	{"print", func(f *cmdutil.Factory) *cobra.Command { return printcmd.NewCmdPrint(f, nil) }},
	{"report", func(f *cmdutil.Factory) *cobra.Command { return reportcmd.NewCmdReport(f, nil) }},
	{"synth", func(f *cmdutil.Factory) *cobra.Command { return synthcmd.NewCmdSynth(f, nil) }},
	{"convert", func(f *cmdutil.Factory) *cobra.Command { return convert.NewCmdConvert(f, nil) }},
	{"config", func(f *cmdutil.Factory) *cobra.Command { return config.NewCmdConfig(f, nil) }},
	{"explain", func(f *cmdutil.Factory) *cobra.Command { return explain.NewCmdExplain(f, nil) }},
	{"version", func(f *cmdutil.Factory) *cobra.Command { return version.NewCmdVersion(f, nil) }},
}

// subcommandNamed returns the subcommand a command line runs when its first
// argument names one exactly, else "" (a flag first, help, completion, a
// typo: the whole tree is needed).
func subcommandNamed(args []string) string {
	if len(args) > 0 {
		for _, c := range subcommands {
			if c.name == args[0] {
				return c.name
			}
		}
	}
	return ""
}

// newCmdRoot returns the root command with every subcommand, or with only
// the one named only (Main, when the command line names it first): a run
// builds the command it runs, not all ten, nor cobra's completion commands:
// what a run never uses it never constructs (TestOnlySubcommandSame checks
// that such a tree runs every command as the whole tree does).
func newCmdRoot(f *cmdutil.Factory, only string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hopctl <command> [flags]",
		Short: "Static analysis of PyTorch FX graphs and their HOP subgraphs",
		Long: `hopctl reads PyTorch FX graphs, including the subgraphs of higher-order
operators, from its protobuf interchange format (.pb, .json, .pbtxt) and
answers statically what PyTorch answers by re-tracing.

Exit codes: 0 success, 1 findings at or above --fail-on, 2 usage or
configuration error, 3 unreadable or invalid input, 4 internal error (a bug
in hopctl).`,
		Version:       build.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			configureProgress(cmd, f.IOStreams.ErrOut)
			ir.SetHooks(ir.Hooks{Nodes: progress.Add})
			if err := startProfiles(cmd); err != nil {
				return err
			}
			cmdutil.BindFlags(cmd, f.Settings)
			if !cmdutil.UsesConfig(cmd) {
				return nil
			}
			c, err := f.Config()
			if err != nil {
				return err
			}
			ir.SetMaxInputSize(c.Input.MaxSizeBytes())
			return nil
		},
	}
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetVersionTemplate("hopctl version {{.Version}}\n")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.FlagErrorf("%v%s (see '%s --help')", err, flagSuggestion(c, err), c.CommandPath())
	})
	cmd.PersistentFlags().String("config", "", "configuration file (default .hopctl.yaml from the current directory up to the repository's root, if present)")
	cmdutil.BindFlag(cmd, "config", hopconfig.KeyConfig)
	cmd.PersistentFlags().String("max-input-size", "", "read at most `SIZE` bytes of an input file (e.g. 512MiB; default "+hopconfig.DefaultInputSize+", configuration key input.max-size)")
	cmdutil.BindFlag(cmd, "max-input-size", hopconfig.KeyInputMaxSize)
	cmd.PersistentFlags().String("torch-version", "", "follow the HOP rules of torch `X.Y`; lint and analyze also take several, each finding then saying in which it is reported: a list 2.6,2.14, a range 2.6..2.14 or supported (input.torch-supported, else the version table's releases) (default: the version each file records, else the newest; configuration key input.torch-version)")
	cmdutil.BindFlag(cmd, "torch-version", hopconfig.KeyInputTorchVersion)
	cmd.PersistentFlags().String("grad-mode", "", "grad mode `enabled|disabled|inference` of files that record none: PyTorch relaxes HOP input mutation and aliasing rules when grad is disabled (default: enabled; configuration key input.grad-mode)")
	cmdutil.BindFlag(cmd, "grad-mode", hopconfig.KeyInputGradMode)
	cmd.PersistentFlags().Bool("progress", false, "show the progress line of work longer than a second even when stderr is not a terminal (plain lines)")
	cmd.PersistentFlags().Bool("quiet", false, "never show a progress line")
	cmd.MarkFlagsMutuallyExclusive("progress", "quiet")
	cmd.PersistentFlags().String("cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof)")
	cmd.PersistentFlags().String("memprofile", "", "write an allocation profile of the run to `FILE` at exit (go tool pprof -sample_index=alloc_space)")

	for _, c := range subcommands {
		if only == "" || c.name == only {
			cmd.AddCommand(c.new(f))
		}
	}
	requireSubcommand(cmd)
	if only != "" {
		// Neither help nor completion runs: cobra would build their
		// commands in Execute all the same.
		cmd.CompletionOptions.DisableDefaultCmd = true
		return cmd
	}
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

// profiles are the --cpuprofile and --memprofile of the running command,
// written when Main returns.
var profiles struct {
	cpu *os.File
	mem string
}

// startProfiles starts the profiles the command's flags ask for. A
// profile is a developer's tool (`make bench` profiling): a file that
// cannot be created is a usage error.
func startProfiles(cmd *cobra.Command) error {
	if path, _ := cmd.Flags().GetString("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return cmdutil.FlagErrorf("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return cmdutil.FlagErrorf("--cpuprofile: %v", err)
		}
		profiles.cpu = f
	}
	if path, _ := cmd.Flags().GetString("memprofile"); path != "" {
		profiles.mem = path
	}
	return nil
}

// stopProfiles finishes the profiles startProfiles started. The
// allocation profile is as of the run's last collection, as the runtime
// keeps it: hopctl does not force one.
func stopProfiles(errOut io.Writer) {
	if profiles.cpu != nil {
		pprof.StopCPUProfile()
		profiles.cpu.Close()
		profiles.cpu = nil
	}
	if path := profiles.mem; path != "" {
		profiles.mem = ""
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(errOut, "hopctl: --memprofile: %v\n", err)
		}
	}
}

// configureProgress sets up the progress line (internal/progress) of the
// command about to run: on stderr, shown on a terminal by default, always
// with --progress, never with --quiet.
func configureProgress(cmd *cobra.Command, errOut io.Writer) {
	mode := progress.Auto
	if q, _ := cmd.Flags().GetBool("quiet"); q {
		mode = progress.Never
	} else if p, _ := cmd.Flags().GetBool("progress"); p {
		mode = progress.Always
	}
	tty := false
	if f, ok := errOut.(*os.File); ok && mode == progress.Auto {
		tty = progress.IsTerminal(f)
	}
	progress.Configure(errOut, tty, mode)
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
		if s := closest(args[0], c.SuggestionsFor(args[0])); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return cmdutil.FlagErrorf("%s; see '%s --help'", msg, c.CommandPath())
	}
	cmd.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
}

// flagSuggestion is ", did you mean --format?" for an unknown flag near
// enough to one of c's flags to be a typo of it, else "": cobra suggests
// subcommands, never flags. A long flag typed with one dash ("-format")
// is parsed as shorthands, so the suggestion is the long flag.
func flagSuggestion(c *cobra.Command, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ""
	}
	typed := ne.GetSpecifiedName()
	if s := ne.GetSpecifiedShortnames(); s != "" {
		typed, _, _ = strings.Cut(s, "=")
		if len(typed) < 3 {
			return "" // -Z: a shorthand, not a long flag typed with one dash
		}
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	best, bestD := "", -1
	for _, n := range names {
		d := cmdutil.EditDistance(strings.ToLower(typed), n)
		if len(typed) >= 3 && strings.HasPrefix(n, strings.ToLower(typed)) {
			d = 1 // --part for --partition: pflag takes no abbreviations
		}
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD >= len(typed) || bestD > max(2, len(best)/3) {
		return ""
	}
	return ", did you mean --" + best + "?"
}

// closest returns the suggestion nearest to typed in edit distance (cobra
// lists its suggestions alphabetically: "prnt" must suggest "print", not
// "lint"), the first of equals; "" if there is none.
func closest(typed string, suggestions []string) string {
	best, bestD := "", -1
	for _, s := range suggestions {
		if d := cmdutil.EditDistance(strings.ToLower(typed), strings.ToLower(s)); bestD < 0 || d < bestD {
			best, bestD = s, d
		}
	}
	return best
}
