package cli_test

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// TestOnlySubcommandSame checks that the root Main builds when the command
// line names a subcommand first (that subcommand alone) runs it as the
// whole tree does: help, flag errors, argument errors and a missing input
// give the same exit code, stdout and stderr, for every subcommand.
func TestOnlySubcommandSame(t *testing.T) {
	sandbox(t)
	run := func(root *cobra.Command, ios *iostreams.IOStreams, args []string) int {
		root.SetArgs(args)
		return cli.Execute(root, ios.ErrOut)
	}
	full := cli.NewCmdRoot(cli.NewFactory(must(iostreams.Test())))
	names := 0
	for _, c := range full.Commands() {
		name := c.Name()
		if name == "help" || name == "completion" {
			if cli.SubcommandNamed([]string{name}) != "" {
				t.Errorf("%s builds a one-command tree", name)
			}
			continue
		}
		names++
		if got := cli.SubcommandNamed([]string{name, "x"}); got != name {
			t.Errorf("SubcommandNamed(%q) = %q", name, got)
			continue
		}
		only := cli.NewCmdRootOnly(cli.NewFactory(must(iostreams.Test())), name)
		if len(only.Commands()) != 1 || only.Commands()[0].Name() != name {
			t.Errorf("tree for %s has %d commands", name, len(only.Commands()))
		}
		for _, args := range [][]string{
			{name}, {name, "--help"}, {name, "-h"}, {name, "--no-such-flag"}, {name, "no-such.pb"},
			{name, "no-such.pb", "--format", "bogus"}, {name, "a", "b", "c", "d"}, {name, "--quiet", "--progress"},
		} {
			ios1, _, out1, err1 := iostreams.Test()
			code1 := run(cli.NewCmdRoot(cli.NewFactory(ios1)), ios1, args)
			ios2, _, out2, err2 := iostreams.Test()
			code2 := run(cli.NewCmdRootOnly(cli.NewFactory(ios2), name), ios2, args)
			if code1 != code2 || out1.String() != out2.String() || err1.String() != err2.String() {
				t.Errorf("%q: whole tree: exit %d, stdout %q, stderr %q; %s alone: exit %d, stdout %q, stderr %q",
					args, code1, out1, err1, name, code2, out2, err2)
			}
		}
	}
	if names < 10 {
		t.Errorf("only %d subcommands", names)
	}
}

func must(ios *iostreams.IOStreams, _, _, _ any) *iostreams.IOStreams { return ios }
