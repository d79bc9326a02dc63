// Package joint implements `hopctl joint`: the joint forward+backward graph
// of a forward graph, as AOTAutograd's create_joint traces it, optionally
// split into a forward and a backward graph with a report of what the
// forward saves.
package joint

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
)

// Options are the inputs of `hopctl joint`.
type Options struct {
	IO            *iostreams.IOStreams
	In            string
	Out           string // joint graph; "" writes none
	Masks         string // auto, all, or 1,0,1
	UnmaskNone    bool
	HOPConvention string // none, create_fw_bw_graph, create_bw_fn
	Partition     string // "", default or mincut
	FwOut, BwOut  string
	Report        bool
	Timings       bool
}

// NewCmdJoint returns the joint command; runF replaces jointRun in tests.
func NewCmdJoint(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "joint IN [-o OUT] [--partition default|mincut --fw-out FW --bw-out BW]",
		Short: "Build the joint forward+backward graph of a forward graph, and partition it",
		Long: `Build the joint forward+backward graph AOTAutograd's create_joint would trace.

The joint graph takes every forward input (primals_1, ...) then one tangent
(tangents_1, ...) per output whose mask is true, and returns every forward
output followed by one gradient per forward input (None where the input gets
none). In-place ops and writes through views are functionalized first;
mutated inputs are written back with copy_ at the end of the graph.

--masks (or --masks=auto) infers the masks as prepare_fw_with_masks does: an
output gets a tangent iff it is a tensor that requires grad. --masks=all
follows prepare_fw_with_masks_all_requires_grad. --masks=1,0,1 is explicit.
The masks used are printed and recorded in the file (annotation
hopctl.joint.masks).

--hop-convention create_fw_bw_graph | create_bw_fn writes the joint in the
calling convention of PyTorch's HOP backward helpers: gradients only, a
tangent per output, zeros for missing gradients, aliasing outputs cloned.

--partition default | mincut splits the joint into a forward graph (primals
→ outputs + saved values) and a backward graph (saved values + tangents →
gradients), written to --fw-out and --bw-out; mincut recomputes cheap ops
instead of saving them, as min_cut_rematerialization_partition does.
--report lists every saved value with its shape, dtype and size.

An op without a derivative rule fails with its name and node (exit code 3)
and no file is written. Every graph written verifies and is written
atomically.`,
		Example: `  hopctl joint model.pb -o joint.pb
  hopctl joint model.pb -o joint.pb --masks=1,0
  hopctl joint model.pb --partition mincut --fw-out fw.pb --bw-out bw.pb --report`,
		Args: cmdutil.ExactArgs(1, "IN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In = args[0]
			if err := validate(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return jointRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "output", "o", "", "write the joint graph to `OUT` (.pb, .json or .pbtxt)")
	fl.StringVar(&opts.Masks, "masks", "auto", "output masks: auto, all, or 0/1 per output (e.g. 1,0,1)")
	fl.Lookup("masks").NoOptDefVal = "auto"
	fl.BoolVar(&opts.UnmaskNone, "unmask-none-gradients", false, "return zeros instead of None for tensor inputs without a gradient")
	fl.StringVar(&opts.HOPConvention, "hop-convention", "none", "calling convention: none, create_fw_bw_graph or create_bw_fn")
	fl.StringVar(&opts.Partition, "partition", "", "split the joint graph: default or mincut")
	fl.StringVar(&opts.FwOut, "fw-out", "", "write the partitioned forward graph to `FW`")
	fl.StringVar(&opts.BwOut, "bw-out", "", "write the partitioned backward graph to `BW`")
	fl.BoolVar(&opts.Report, "report", false, "list the values the forward saves for the backward (needs --partition)")
	fl.BoolVar(&opts.Timings, "timings", false, "print the wall time of each phase to stderr")
	return cmd
}

func validate(opts *Options) error {
	if _, _, err := jointgraph.ParseMasks(opts.Masks); err != nil {
		return &cmdutil.FlagError{Err: err}
	}
	if err := cmdutil.Enum("hop-convention", opts.HOPConvention, "none", "create_fw_bw_graph", "create_bw_fn"); err != nil {
		return err
	}
	if opts.Partition != "" {
		if err := cmdutil.Enum("partition", opts.Partition, "default", "mincut"); err != nil {
			return err
		}
		if opts.HOPConvention != "none" {
			return cmdutil.FlagErrorf("--partition needs --hop-convention none")
		}
	} else if opts.FwOut != "" || opts.BwOut != "" || opts.Report {
		return cmdutil.FlagErrorf("--fw-out, --bw-out and --report need --partition default or mincut")
	}
	if opts.FwOut != "" && opts.FwOut == opts.BwOut || opts.Out != "" && (opts.Out == opts.FwOut || opts.Out == opts.BwOut) {
		return cmdutil.FlagErrorf("the output files must differ")
	}
	return nil
}

func jointRun(opts *Options) error {
	timings := cmdutil.NewTimings(opts.IO.ErrOut, opts.Timings)
	in, err := load.Open(opts.In, load.Strict)
	if err != nil {
		return err
	}
	m := in.Module
	timings.Lap("load")
	mode, masks, _ := jointgraph.ParseMasks(opts.Masks)
	conv, _ := jointgraph.ParseConvention(opts.HOPConvention)
	j, err := jointgraph.Build(m, jointgraph.Options{
		File: opts.In, MaskMode: mode, Masks: masks, Convention: conv,
		UnmaskNoneGradients: opts.UnmaskNone, Registry: in.Registry,
	})
	if err != nil {
		var me *jointgraph.MaskError
		if errors.As(err, &me) {
			return &cmdutil.FlagError{Err: err}
		}
		return err
	}
	// Each output is verified, then encoded, on its own goroutine; the
	// joint's starts before the partition is computed (which only reads
	// it; the partitioned modules share the joint's HOP subgraphs, which
	// concurrent reads allow). Everything is built, verified and encoded
	// before anything is written, and all outputs are written as one step:
	// a failure leaves every destination untouched.
	type output struct {
		path string
		data []byte
		err  error
	}
	var (
		outs []*output
		wg   sync.WaitGroup
	)
	prepare := func(path string, m *ir.Module) {
		o := &output{path: path}
		outs = append(outs, o)
		enc := ir.EncodingForPath(path)
		if enc == ir.EncodingUnknown {
			enc = ir.Binary
		}
		wg.Go(func() {
			if err := ir.Verify(m, path); err != nil {
				// hopctl built a graph that is not valid: a bug, not bad input.
				o.err = &ir.InternalError{Phase: "verify output", Loc: ir.Location{File: path},
					Err: fmt.Errorf("the graph hopctl built does not verify:\n%w", err)}
				return
			}
			var err error
			if o.data, err = ir.Encode(m, enc); err != nil {
				o.err = fmt.Errorf("cannot encode %s: %w", path, err)
			}
		})
	}
	if opts.Out != "" {
		prepare(opts.Out, j.Module)
	}
	timings.Lap("joint")
	var part *jointgraph.Partition
	if opts.Partition != "" {
		pm, _ := jointgraph.ParsePartitionMode(opts.Partition)
		if part, err = jointgraph.Split(j, pm); err != nil {
			wg.Wait()
			return err
		}
		timings.Lap("partition")
		if opts.FwOut != "" {
			prepare(opts.FwOut, part.Forward)
		}
		if opts.BwOut != "" {
			prepare(opts.BwOut, part.Backward)
		}
	}
	wg.Wait()
	timings.Lap("verify+encode")
	paths := make([]string, len(outs))
	datas := make([][]byte, len(outs))
	for i, o := range outs {
		if o.err != nil {
			return o.err
		}
		paths[i], datas[i] = o.path, o.data
	}
	if err := ir.WriteFilesAtomic(paths, datas); err != nil {
		return fmt.Errorf("cannot write the outputs: %w", err)
	}
	timings.Lap("write")
	timings.Print()
	w := opts.IO.Out
	if len(j.Masks) <= maxPrintedMasks {
		fmt.Fprintf(w, "masks: %s (%s)\n", jointgraph.FormatMasks(j.Masks), maskSource(opts.Masks))
	} else {
		n := 0
		for _, m := range j.Masks {
			if m {
				n++
			}
		}
		fmt.Fprintf(w, "masks: %d of %d outputs (%s; the full list is the file's %s annotation)\n",
			n, len(j.Masks), maskSource(opts.Masks), jointgraph.AnnotationMasks)
	}
	if len(j.MutatedInputs) > 0 {
		fmt.Fprintf(w, "mutated inputs (written back with copy_): %s\n", inputNames(j, j.MutatedInputs))
	}
	if len(j.InPlaceInputs) > 0 {
		fmt.Fprintf(w, "inputs updated in place (kept as in the forward): %s\n", inputNames(j, j.InPlaceInputs))
	}
	if part != nil {
		fmt.Fprintf(w, "partition %s: %d saved values, %s\n", part.Mode, len(part.Saved), humanBytes(part.TotalBytes()))
		if opts.Report {
			writeReport(w, part)
		}
	}
	return nil
}

// maxPrintedMasks bounds the mask list printed in full.
const maxPrintedMasks = 64

func maskSource(s string) string {
	switch s {
	case "", "auto":
		return "auto"
	case "all":
		return "all"
	}
	return "explicit"
}

func inputNames(j *jointgraph.Joint, idx []int) string {
	ph := j.Module.Root().Placeholders()
	var names []string
	for _, i := range idx {
		if i < len(ph) {
			names = append(names, j.Module.Root().Nodes[ph[i]].Name)
		}
	}
	return strings.Join(names, ", ")
}

// writeReport lists the saved values as a table.
func writeReport(w io.Writer, p *jointgraph.Partition) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "saved value\tkind\tshape\tdtype\tbytes\t")
	for _, s := range p.Saved {
		shape := "-"
		if s.Kind == "tensor" {
			shape = ir.FormatDims(s.Shape)
		}
		b := "?"
		if s.Bytes >= 0 {
			b = fmt.Sprint(s.Bytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Kind, shape, s.Dtype, b)
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d\t\n", p.TotalBytes())
	tw.Flush()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d bytes (%.1f KiB)", n, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
