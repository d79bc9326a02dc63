package cmdutil

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// maxGraphNames is how many of a file's graph names NoGraphError lists.
const maxGraphNames = 10

// NoGraphError is the usage error of a graph name (--graph, --lhs, --rhs)
// that file's module m does not have. It lists a few of the file's graph
// names, each abbreviated, and counts the rest: a file of thousands of
// deeply nested graphs once made this message one line of 229 KB (1 MB
// for print --graph of 1000 levels).
func NoGraphError(file string, m *ir.Module, graph string) error {
	var names []string
	for _, h := range m.Graphs[:min(len(m.Graphs), maxGraphNames)] {
		names = append(names, ir.Abbrev(ir.DisplayName(h.Name)))
	}
	if more := len(m.Graphs) - len(names); more > 0 {
		names = append(names, fmt.Sprintf("and %d more: hopctl analyze lists them", more))
	}
	return FlagErrorf("%s: no graph %q (the file has %s)", ir.Printable(file), ir.Abbrev(graph), strings.Join(names, ", "))
}
