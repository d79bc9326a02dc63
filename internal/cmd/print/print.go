// Package print implements `hopctl print`: a graph file shown as PyTorch's
// print_readable() shows a GraphModule, as Graphviz DOT, as the protobuf
// JSON of the file, or as Model Explorer's graph JSON with hopctl's
// analysis as its node data.
package print

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
	"github.com/hopctl/hopctl/pkg/viz"
)

// Options are the inputs of `hopctl print`.
type Options struct {
	IO     *iostreams.IOStreams
	File   string
	Format string // fx, dot, json or model-explorer
	Graph  string // qualified name of the graph to print; "" the root
	// DOT only: subgraph levels drawn (-1 all), and the neighbourhood.
	Depth  int
	Around string
	Radius int
	// Overlay is where --format model-explorer writes its node data.
	Overlay string
	// Analysis are the analysis run's options (model-explorer: the torch
	// release whose HOP rules apply).
	Analysis analyze.Options
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
--format dot prints a Graphviz digraph with one cluster per graph; --depth
N draws subgraphs at most N levels deep (0: the graph alone), and
--around NODE --radius K only the nodes at most K edges from NODE (and the
subgraphs they call), so the neighbourhood of a finding renders even in a
huge graph.
--format json prints the file in the protobuf JSON encoding.
--format model-explorer prints Model Explorer's graph JSON (a graph
collection its JSON loader opens): every graph in one, HOP bodies nested as
namespaces under their call node, nn_module_stack layers as namespaces,
hopctl's analysis as node attributes; --overlay FILE also writes Model
Explorer node data colouring findings' provenance paths, mutated inputs,
saved values and alias classes (see the README).

--graph QUALNAME prints only that submodule graph and the graphs nested in
it, as a module of its own (as gm.get_submodule(QUALNAME).print_readable()
would).`,
		Example: `  hopctl print model.pb
  hopctl print model.pb --graph true_graph_0
  hopctl print model.pb --format dot | dot -Tsvg > model.svg
  hopctl print big.pb --format dot --around add_17 --radius 3 | dot -Tsvg > near.svg
  hopctl print model.pb --format model-explorer --overlay overlay.json > model.json`,
		Args: cmdutil.ExactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := cmdutil.Enum("format", opts.Format, "fx", "dot", "json", "model-explorer"); err != nil {
				return err
			}
			dotOnly := cmd.Flags().Changed("depth") || cmd.Flags().Changed("around") || cmd.Flags().Changed("radius")
			if dotOnly && opts.Format != "dot" {
				return cmdutil.FlagErrorf("--depth, --around and --radius need --format dot")
			}
			if cmd.Flags().Changed("radius") && opts.Around == "" {
				return cmdutil.FlagErrorf("--radius needs --around NODE")
			}
			if opts.Radius < 0 {
				return cmdutil.FlagErrorf("--radius must be at least 0")
			}
			if opts.Overlay != "" && opts.Format != "model-explorer" {
				return cmdutil.FlagErrorf("--overlay needs --format model-explorer")
			}
			if opts.Overlay != "" {
				// The overlay must not replace the input, nor be the file
				// standard output (the graph JSON) goes to.
				if err := cmdutil.CheckOutputs([]string{opts.File}, opts.Overlay); err != nil {
					return err
				}
				if err := cmdutil.CheckStdout(opts.IO.Out, opts.Overlay); err != nil {
					return err
				}
			}
			a, err := cmdutil.AnalysisOptions(f)
			if err != nil {
				return err
			}
			opts.Analysis = a
			if runF != nil {
				return runF(opts)
			}
			return printRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "fx", "output format: fx, dot, json or model-explorer")
	cmd.Flags().StringVar(&opts.Graph, "graph", "", "print only the graph with this qualified name (and its subgraphs)")
	cmd.Flags().IntVar(&opts.Depth, "depth", -1, "dot: draw subgraphs at most this many levels deep (-1: all)")
	cmd.Flags().StringVar(&opts.Around, "around", "", "dot: draw only the nodes near this node of the graph")
	cmd.Flags().IntVar(&opts.Radius, "radius", 2, "dot: with --around, how many edges away nodes are drawn")
	cmd.Flags().StringVar(&opts.Overlay, "overlay", "", "model-explorer: also write Model Explorer node data of the analysis to this file")
	return cmd
}

func printRun(opts *Options) error {
	if opts.Format == "model-explorer" {
		return modelExplorerRun(opts)
	}
	progress.Phase("load", 0)
	f, err := load.Open(opts.File, load.Strict)
	if err != nil {
		return err
	}
	progress.Phase("print", 0)
	m, err := Submodule(opts.File, f.Module, opts.Graph)
	if err != nil {
		return err
	}
	switch opts.Format {
	case "dot":
		if opts.Around != "" {
			if _, ok := m.Root().Lookup(opts.Around); !ok {
				return cmdutil.FlagErrorf("--around: graph %s of %s has no node %q", ir.Abbrev(ir.DisplayName(opts.Graph)), ir.Printable(opts.File), ir.Abbrev(opts.Around))
			}
		}
		return ir.WriteDOTWith(opts.IO.Out, m, ir.DOTOptions{Depth: opts.Depth, Around: opts.Around, Radius: opts.Radius})
	case "json":
		return ir.EncodeTo(opts.IO.Out, m, ir.JSON) // streamed
	}
	if opts.Graph == "" {
		// An exported program prints as torch prints an ExportedProgram.
		return ir.PrintExportedProgram(opts.IO.Out, m)
	}
	return ir.PrintReadable(opts.IO.Out, m)
}

// Submodule returns the module rooted at the graph named qualname: that
// graph as the root, the graphs and attributes under it renamed relative to
// it. "" and "<root>" name m itself. Graphs are shared with m, not copied.
func Submodule(file string, m *ir.Module, qualname string) (*ir.Module, error) {
	if qualname == "" || qualname == ir.DisplayName("") {
		return m, nil
	}
	if m.Graph(qualname) == nil {
		return nil, cmdutil.NoGraphError(file, m, qualname)
	}
	sub, _ := m.Submodule(qualname)
	return sub, nil
}

// modelExplorerRun analyses the file (the graph --graph names, as a module
// of its own) and writes Model Explorer's graph JSON to stdout and, with
// --overlay, its node data to a file. Everything is built before anything
// is written.
func modelExplorerRun(opts *Options) error {
	lf, res, err := load.AnalyzeWith(opts.File, opts.Analysis, passes.All()...)
	if err != nil {
		return err
	}
	m := lf.Module
	if opts.Graph != "" {
		if m, err = Submodule(opts.File, m, opts.Graph); err != nil {
			return err
		}
		// The submodule has the file's schema table, so the file's registry.
		if res, err = analyze.RunWith(m, opts.File, lf.Registry, opts.Analysis, passes.All()...); err != nil {
			return err
		}
	}
	f := viz.Build(opts.File, m, res, viz.Options{})
	// The graph compact and streamed node by node (indenting doubles a
	// large graph's JSON), the overlay indented.
	graph := viz.ModelExplorer(&f, m)
	if opts.Overlay != "" {
		var overlay bytes.Buffer
		if err := report.WriteJSON(&overlay, viz.ModelExplorerOverlay(&f, m)); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(opts.Overlay, overlay.Bytes()); err != nil {
			return fmt.Errorf("cannot write %s: %w", opts.Overlay, err)
		}
	}
	return graph.WriteJSON(opts.IO.Out)
}
