// Package cmdutil is what every hopctl command shares: the Factory that
// hands a command its streams and configuration, the error types that
// decide exit codes, and helpers for arguments and config-bound flags.
package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// Factory carries the dependencies of one invocation to its commands.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Settings layers the configuration file, HOPCTL_* variables and
	// flags. There is one per invocation; only internal/ touches it.
	Settings *config.Settings
	// Config returns the invocation's validated configuration, loading it
	// on first use.
	Config func() (*config.Config, error)
}

// FlagError is a usage error: a bad flag, flag value or argument count.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a *FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// FindingsError is returned by a command that ran to completion and found
// problems at or above its failure threshold (exit code 1). The findings
// themselves have already been reported on stdout.
type FindingsError struct {
	Count     int    // findings at or above Threshold
	Threshold string // the --fail-on level
}

func (e *FindingsError) Error() string {
	s := "s"
	if e.Count == 1 {
		s = ""
	}
	if e.Threshold == "supported" {
		return fmt.Sprintf("%d error%s refused by a supported torch release", e.Count, s)
	}
	return fmt.Sprintf("%d finding%s at or above %s", e.Count, s, e.Threshold)
}

// ExactArgs is cobra.ExactArgs with a usage error naming the arguments
// expected, e.g. ExactArgs(2, "IN OUT").
func ExactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == n:
			return nil
		case n == 0:
			return FlagErrorf("%s takes no arguments (see '%s --help')", cmd.Name(), cmd.CommandPath())
		case len(args) < n:
			return FlagErrorf("%s: missing %s (see '%s --help')", cmd.Name(), names, cmd.CommandPath())
		}
		return FlagErrorf("%s: too many arguments, want %s (see '%s --help')", cmd.Name(), names, cmd.CommandPath())
	}
}

// Enum validates that a flag's value is one of allowed.
func Enum(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	want := allowed[0]
	if n := len(allowed); n > 1 {
		want = strings.Join(allowed[:n-1], ", ") + " or " + allowed[n-1]
	}
	return FlagErrorf("invalid value %q for --%s (want %s)", value, flag, want)
}

const (
	configKeyAnnotation = "hopctl/config-key"
	noConfigAnnotation  = "hopctl/no-config"
)

// BindFlag makes the named flag of cmd override the configuration key when
// the flag is given, on top of the file and the environment.
func BindFlag(cmd *cobra.Command, flag, key string) {
	fs := cmd.Flags()
	if fs.Lookup(flag) == nil {
		fs = cmd.PersistentFlags()
	}
	if err := fs.SetAnnotation(flag, configKeyAnnotation, []string{key}); err != nil {
		panic(err) // a programming error: no such flag
	}
}

// BindFlags binds the flags BindFlag marked on cmd (including inherited
// persistent flags) to s. The root command calls it for the command that
// runs, so a flag shared by several commands binds only once.
func BindFlags(cmd *cobra.Command, s *config.Settings) {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if keys := f.Annotations[configKeyAnnotation]; len(keys) == 1 {
				s.BindPFlag(keys[0], f)
			}
		})
	}
}

// DisableConfig marks cmd (and its subcommands) as not loading the
// configuration: a broken .hopctl.yaml must not stop `hopctl version`.
func DisableConfig(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[noConfigAnnotation] = "true"
}

// UsesConfig reports whether cmd loads the configuration before it runs:
// every command except those marked DisableConfig and cobra's help and
// completion commands.
func UsesConfig(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[noConfigAnnotation] != "" {
			return false
		}
		switch c.Name() {
		case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return true
}

// EditDistance is the Levenshtein distance of a and b: how a typed name
// (a subcommand, a rule id) is matched to its nearest suggestion.
func EditDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
