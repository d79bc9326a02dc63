// Package metadiff implements `hopctl meta-diff`: PyTorch's
// check_meta_consistency over the inputs or outputs of two graphs — the
// root graphs of two files (two exported versions of a model) or two
// subgraphs of one file (a cond's branches).
package metadiff

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// Options are the inputs of `hopctl meta-diff`.
type Options struct {
	IO           *iostreams.IOStreams
	Files        []string // one or two
	LHS, RHS     string   // graph qualified names; "" the root
	Inputs       bool     // compare placeholders instead of outputs
	Outputs      bool
	NoContiguity bool
	CheckGrad    bool
	Format       string
}

// NewCmdMetaDiff returns the meta-diff command; runF replaces metaDiffRun
// in tests.
func NewCmdMetaDiff(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "meta-diff A B | meta-diff FILE --lhs GRAPH --rhs GRAPH",
		Short: "Compare the tensor metadata of two graphs' outputs or inputs",
		Long: `Compare two lists of values as PyTorch's check_meta_consistency does:
lists of different length differ; tensors are compared field by field
(shape, dtype, stride, memory_format, is_quantized, qparams; requires_grad
with --check-grad) and by device; a pair that is neither two tensors nor two
ints/SymInts differs in type. Every difference is listed, in PyTorch's
wording ("pair[1] differ in 'shape: torch.Size([2, 3]) vs
torch.Size([3, 2])', where lhs is ... and rhs is ...").

With two files, the root graphs' outputs are compared (--lhs and --rhs pick
other graphs of A and B); the sides are named by the file paths. With one
file, --lhs and --rhs name two of its graphs (qualified names, <root> for
the root), which name the sides. --inputs compares the graphs' placeholders
instead of their outputs. memory_format is compared unless --no-contiguity
(PyTorch's include_contiguity=False, which HOP call sites use).

Exit status: 0 same metadata, 1 the lists differ, 2 usage error (also an
unknown graph name), 3 an unreadable or invalid file.`,
		Example: `  hopctl meta-diff v1.pb v2.pb
  hopctl meta-diff v1.pb v2.pb --inputs --format json
  hopctl meta-diff model.pb --lhs true_graph_0 --rhs false_graph_0`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cmdutil.FlagErrorf("meta-diff: want two files, or one file with --lhs and --rhs (see '%s --help')", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := cmdutil.Enum("format", opts.Format, "text", "json"); err != nil {
				return err
			}
			if opts.Inputs && opts.Outputs {
				return cmdutil.FlagErrorf("--inputs and --outputs are mutually exclusive")
			}
			if len(args) == 1 && (opts.LHS == "" || opts.RHS == "") {
				return cmdutil.FlagErrorf("meta-diff with one file needs --lhs and --rhs (see '%s --help')", cmd.CommandPath())
			}
			if runF != nil {
				return runF(opts)
			}
			return metaDiffRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.LHS, "lhs", "", "graph of the first file (or of FILE) to compare; default the root")
	fl.StringVar(&opts.RHS, "rhs", "", "graph of the second file (or of FILE) to compare; default the root")
	fl.BoolVar(&opts.Inputs, "inputs", false, "compare the graphs' inputs (placeholders)")
	fl.BoolVar(&opts.Outputs, "outputs", false, "compare the graphs' outputs (the default)")
	fl.BoolVar(&opts.NoContiguity, "no-contiguity", false, "do not compare memory_format (include_contiguity=False)")
	fl.BoolVar(&opts.CheckGrad, "check-grad", false, "also compare requires_grad")
	fl.StringVar(&opts.Format, "format", "text", "output format: text or json")
	return cmd
}

func metaDiffRun(opts *Options) error {
	lfile, rfile := opts.Files[0], opts.Files[len(opts.Files)-1]
	// load.Open refuses what every command refuses: files that fail
	// verification, schema tables that do not parse, calls that do not fit.
	lf, err := load.Open(lfile, load.Strict)
	if err != nil {
		return err
	}
	lm, rm := lf.Module, lf.Module
	if len(opts.Files) == 2 {
		rf, err := load.Open(rfile, load.Strict)
		if err != nil {
			return err
		}
		rm = rf.Module
	}
	side := "outputs"
	if opts.Inputs {
		side = "inputs"
	}
	lhs, lside, err := values(lm, lfile, opts.LHS, side)
	if err != nil {
		return err
	}
	rhs, rside, err := values(rm, rfile, opts.RHS, side)
	if err != nil {
		return err
	}
	if len(opts.Files) == 2 {
		lhs.Name, rhs.Name = lfile, rfile
		if lfile == rfile {
			lhs.Name, rhs.Name = "lhs", "rhs"
		}
	} else {
		lhs.Name, rhs.Name = ir.DisplayName(lside.Graph), ir.DisplayName(rside.Graph)
	}
	lside.Name, rside.Name = lhs.Name, rhs.Name
	mopts := metadiff.Options{IncludeContiguity: !opts.NoContiguity, CheckGrad: opts.CheckGrad}
	res := metadiff.Compare(lhs, rhs, mopts)
	doc := report.NewMetaDiffDoc(lside, rside, mopts, res)
	p, _ := report.MetaDiffFormats.Printer(opts.Format) // checked in PreRunE
	if err = p.Print(opts.IO.Out, doc); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if res.Equal() {
		return nil
	}
	n := len(res.Pairs)
	if res.LengthMismatch {
		n++
	}
	return &cmdutil.FindingsError{Count: n, Threshold: "error"}
}

// values returns the inputs or outputs of the named graph of m.
func values(m *ir.Module, file, graph, side string) (metadiff.List, report.MetaDiffSide, error) {
	if graph == ir.DisplayName("") {
		graph = ""
	}
	g := m.Graph(graph)
	if g == nil {
		return metadiff.List{}, report.MetaDiffSide{}, cmdutil.NoGraphError(file, m, graph)
	}
	s := report.MetaDiffSide{File: file, Graph: g.Name, Side: side}
	if side == "inputs" {
		_, vals := analyze.Inputs(g)
		return metadiff.List{Values: vals, Tuple: true}, s, nil
	}
	leaves, tuple := g.Outputs()
	return metadiff.List{Values: analyze.LeafValues(g, leaves), Tuple: tuple}, s, nil
}
