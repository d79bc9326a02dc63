// Package synth implements `hopctl synth`: synthetic forward graphs of a
// chosen size for benchmarks (see pkg/synth).
package synth

import (
	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/synth"
)

// MaxNodes bounds -n: 5,000,000 nodes make a file of about 700 MB (under
// the default input size limit of 1 GiB, so hopctl reads what it wrote)
// and take about 5.5 GB of memory to build (measured: 1,000,000 nodes,
// 138 MB, 1.1 GB of peak RSS). -n 2000000000 ran until the machine's
// memory was exhausted.
const MaxNodes = 5_000_000

// Options are the inputs of `hopctl synth`.
type Options struct {
	IO    *iostreams.IOStreams
	Out   string
	Synth synth.Options
}

// NewCmdSynth returns the synth command; runF replaces synthRun in tests.
func NewCmdSynth(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "synth -o OUT",
		Short: "Write a synthetic forward graph of about N nodes (for benchmarks)",
		Long: `Write a synthetic forward graph of about N nodes: the op mix of real
make_fx exports (t + addmm, native_layer_norm and its getitems, GELU,
reductions, views, in-place ops on views of intermediates), with --hops
cond subgraphs and scans nested in some branches. The same options give a
byte-identical file.`,
		Example: `  hopctl synth -n 1000000 --hops -o big.pb`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Out == "" {
				return cmdutil.FlagErrorf("-o OUT is required")
			}
			if opts.Synth.Nodes < 2 || opts.Synth.Nodes > MaxNodes {
				return cmdutil.FlagErrorf("-n must be between 2 and %d (a graph of about 140 bytes a node, built in memory at about 1.1 KB a node)", MaxNodes)
			}
			if runF != nil {
				return runF(opts)
			}
			if err := cmdutil.CheckOutputs(nil, opts.Out); err != nil {
				return err
			}
			progress.Phase("generate", 0)
			m := synth.Generate(opts.Synth)
			progress.Phase("write", m.NumNodes())
			if opts.Out == cmdutil.Stdout {
				data, err := ir.Encode(m, ir.Binary)
				if err != nil {
					return err
				}
				return cmdutil.WriteOutput(opts.IO.Out, opts.Out, data)
			}
			// Streamed to the file (JSON and text are not held in memory).
			return cmdutil.WriteError(opts.Out, cmdutil.SaveModule(opts.Out, m))
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "output", "o", "", "output file (.pb, .json or .pbtxt; - is standard output, binary)")
	cmd.Flags().IntVarP(&opts.Synth.Nodes, "nodes", "n", 10000, "approximate number of nodes")
	cmd.Flags().Uint64Var(&opts.Synth.Seed, "seed", 1, "seed of the op mix")
	cmd.Flags().BoolVar(&opts.Synth.HOPs, "hops", false, "add cond subgraphs (with nested scans)")
	cmdutil.DisableConfig(cmd)
	return cmd
}
