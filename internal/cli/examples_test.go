package cli_test

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// TestEveryCommandHasAnExample: each command's --help shows how it is run
// (cobra's Examples section), as gh's and ruff's do; cobra's own help and
// completion commands excepted.
func TestEveryCommandHasAnExample(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := cli.NewCmdRoot(cli.NewFactory(ios))
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			n++
			if sub.Example == "" {
				t.Errorf("%s has no example", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(root)
	if n < 10 {
		t.Errorf("only %d commands walked", n)
	}
}
