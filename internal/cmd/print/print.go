// Package print implements `hopctl print`: a graph file shown as PyTorch's
// print_readable() shows a GraphModule, as Graphviz DOT, or as the
// protobuf JSON of the file.
package print

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Options are the inputs of `hopctl print`.
type Options struct {
	IO     *iostreams.IOStreams
	File   string
	Format string // fx, dot or json
	Graph  string // qualified name of the graph to print; "" the root
}

// NewCmdPrint returns the print command; runF replaces printRun in tests.
func NewCmdPrint(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "print FILE",
		Short: "Print a graph file as print_readable() code, Graphviz DOT or JSON",
		Long: `Print a graph file.

--format fx (the default) prints the module the way torch.fx's
GraphModule.print_readable() does: a class with a forward method whose
statements carry "f32[4, 8]" annotations, HOP subgraphs as nested classes.
--format dot prints a Graphviz digraph with one cluster per graph.
--format json prints the file in the protobuf JSON encoding.

--graph QUALNAME prints only that submodule graph and the graphs nested in
it, as a module of its own (as gm.get_submodule(QUALNAME).print_readable()
would).`,
		Example: `  hopctl print model.pb
  hopctl print model.pb --graph true_graph_0
  hopctl print model.pb --format dot | dot -Tsvg > model.svg`,
		Args: cmdutil.ExactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := cmdutil.Enum("format", opts.Format, "fx", "dot", "json"); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return printRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "fx", "output format: fx, dot or json")
	cmd.Flags().StringVar(&opts.Graph, "graph", "", "print only the graph with this qualified name (and its subgraphs)")
	return cmd
}

func printRun(opts *Options) error {
	m, _, err := validate.Load(opts.File)
	if err != nil {
		return err
	}
	m, err = Submodule(m, opts.Graph)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	switch opts.Format {
	case "dot":
		return ir.WriteDOT(opts.IO.Out, m)
	case "json":
		return ir.EncodeTo(opts.IO.Out, m, ir.JSON) // streamed
	}
	return ir.PrintReadable(opts.IO.Out, m)
}

// Submodule returns the module rooted at the graph named qualname: that
// graph as the root, the graphs and attributes under it renamed relative to
// it. "" and "<root>" name m itself. Graphs are shared with m, not copied.
func Submodule(m *ir.Module, qualname string) (*ir.Module, error) {
	if qualname == "" || qualname == ir.DisplayName("") {
		return m, nil
	}
	g := m.Graph(qualname)
	if g == nil {
		names := make([]string, len(m.Graphs))
		for i, h := range m.Graphs {
			names[i] = ir.DisplayName(h.Name)
		}
		return nil, cmdutil.FlagErrorf("no graph %q (the file has %s)", qualname, strings.Join(names, ", "))
	}
	sub, _ := m.Submodule(qualname)
	return sub, nil
}
