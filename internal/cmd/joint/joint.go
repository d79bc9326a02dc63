// Package joint implements `hopctl joint`: the joint forward+backward graph
// of a forward graph, as AOTAutograd's create_joint traces it, optionally
// split into a forward and a backward graph with a report of what the
// forward saves.
package joint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
	"github.com/hopctl/hopctl/pkg/report"
)

// Options are the inputs of `hopctl joint`.
type Options struct {
	IO            *iostreams.IOStreams
	In            string
	Out           string // joint graph; "" writes none, "-" standard output
	Masks         string // auto, all, or 1,0,1
	UnmaskNone    bool
	HOPConvention string // none, create_fw_bw_graph, create_bw_fn
	Partition     string // "", default or mincut
	FwOut, BwOut  string
	Report        bool
	// MemoryBudget is --memory-budget, in [0, 1]: AOTAutograd's
	// activation_memory_budget (partition.SplitBudget); nil (the flag not
	// given) is min-cut, as 1 is.
	MemoryBudget *float64
	Timings      bool
	Format       string // of the summary: text or json
	// TorchVersion ("major.minor", from --torch-version / the
	// input.torch-version key; "" = the file's) selects the torch release
	// whose HOP backward rules apply (version rows such as scan-grad-2.6),
	// as it selects analyze's rules; the outputs record it as their torch
	// version, since they follow its conventions.
	TorchVersion string
}

// NewCmdJoint returns the joint command; runF replaces jointRun in tests.
func NewCmdJoint(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	var budget float64
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
follows prepare_fw_with_masks_all_requires_grad. --masks=1,0,1 is explicit
(--masks 1,0,1 too, unless a file is named 1,0,1).
The masks used are printed and recorded in the file (annotation
hopctl.joint.masks).

--hop-convention create_fw_bw_graph | create_bw_fn writes the joint in the
calling convention of PyTorch's HOP backward helpers: gradients only, a
tangent per output, zeros for missing gradients, aliasing outputs cloned.

--partition default | mincut splits the joint into a forward graph (primals
→ outputs + saved values) and a backward graph (saved values + tangents →
gradients), written to --fw-out and --bw-out; mincut recomputes cheap ops
instead of saving them, as min_cut_rematerialization_partition does.
--report lists every saved value with its shape, dtype, bytes, where the
program makes it and why it is saved, the saved bytes per source line, and
the bytes a partition saving everything the backward reads would keep.

--memory-budget F (0 to 1, with --partition mincut) trades recomputation
for saved bytes as torch._functorch.config.activation_memory_budget does:
1 is min-cut, 0 saves only the inputs (recomputing the rest), and between,
a knapsack keeps the saved bytes within F of the way from the inputs'
bytes to min-cut's, recomputing the cheapest ops first (partitioners.py
choose_saved_values_set).

An op without a derivative rule fails with its name and node (exit code 3)
and no file is written. Every graph written verifies and is written
atomically.`,
		Example: `  hopctl joint model.pb -o joint.pb
  hopctl joint model.pb -o joint.pb --masks=1,0
  hopctl joint model.pb --partition mincut --fw-out fw.pb --bw-out bw.pb --report
  hopctl joint model.pb --partition mincut --memory-budget 0.5 --report`,
		Args: func(cmd *cobra.Command, args []string) error {
			in, err := masksArg(cmd, args, opts)
			opts.In = in
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("memory-budget") {
				b := budget
				opts.MemoryBudget = &b
			}
			if err := validate(opts); err != nil {
				return err
			}
			a, err := cmdutil.AnalysisOptions(f)
			if err != nil {
				return err
			}
			opts.TorchVersion = a.TorchVersion
			if runF != nil {
				return runF(opts)
			}
			return jointRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "output", "o", "", "write the joint graph to `OUT` (.pb, .json or .pbtxt; - is standard output, binary)")
	fl.StringVar(&opts.Masks, "masks", "auto", "output masks: auto, all, or 0/1 per output (e.g. 1,0,1)")
	fl.Lookup("masks").NoOptDefVal = "auto"
	fl.BoolVar(&opts.UnmaskNone, "unmask-none-gradients", false, "return zeros instead of None for tensor inputs without a gradient")
	fl.StringVar(&opts.HOPConvention, "hop-convention", "none", "calling convention: none, create_fw_bw_graph or create_bw_fn")
	fl.StringVar(&opts.Partition, "partition", "", "split the joint graph: default or mincut")
	fl.StringVar(&opts.FwOut, "fw-out", "", "write the partitioned forward graph to `FW`")
	fl.StringVar(&opts.BwOut, "bw-out", "", "write the partitioned backward graph to `BW`")
	fl.BoolVar(&opts.Report, "report", false, "list the values the forward saves for the backward (needs --partition)")
	fl.Float64Var(&budget, "memory-budget", 1, "activation memory budget `F`, 0 to 1 (needs --partition mincut): 1 is min-cut, 0 saves only the inputs")
	fl.StringVar(&opts.Format, "format", "text", "summary format: text or json (the document of docs/formats.md)")
	fl.BoolVar(&opts.Timings, "timings", false, "print the wall time of each phase to stderr")
	return cmd
}

// budget is the memory budget: --memory-budget, else 1 (min-cut).
func (opts *Options) budget() float64 {
	if opts.MemoryBudget == nil {
		return 1
	}
	return *opts.MemoryBudget
}

// masksArg returns the input file of args. --masks takes an optional
// value, which pflag only reads after '=': in "--masks 1,0 model.pb" it
// sets the masks to auto and leaves 1,0 as a second argument. When one of
// two arguments is a mask list and no file of that name exists, it is
// what the user meant as the value; otherwise the error shows the form.
func masksArg(cmd *cobra.Command, args []string, opts *Options) (string, error) {
	bare := cmd.Flags().Changed("masks") && opts.Masks == cmd.Flags().Lookup("masks").NoOptDefVal
	if len(args) == 2 && bare {
		var masks []int
		for i, a := range args {
			if _, _, err := jointgraph.ParseMasks(a); err == nil && a != "" && !exists(a) {
				masks = append(masks, i)
			}
		}
		if len(masks) == 1 {
			opts.Masks = args[masks[0]]
			return args[1-masks[0]], nil
		}
	}
	if err := cmdutil.ExactArgs(1, "IN")(cmd, args); err != nil {
		if bare && len(args) > 1 {
			return "", cmdutil.FlagErrorf("%s: too many arguments, want IN: --masks takes its value after '=' (--masks=1,0,1, --masks=all) (see '%s --help')", cmd.Name(), cmd.CommandPath())
		}
		return "", err
	}
	return args[0], nil
}

// exists reports whether a file of that name exists.
func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func validate(opts *Options) error {
	if opts.Format == "" {
		opts.Format = "text"
	}
	if err := cmdutil.Enum("format", opts.Format, "text", "json"); err != nil {
		return err
	}
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
	if b := opts.MemoryBudget; b != nil {
		if opts.Partition != "mincut" {
			return cmdutil.FlagErrorf("--memory-budget needs --partition mincut (the budget trades min-cut's recomputation for saved bytes)")
		}
		if !(*b >= 0 && *b <= 1) {
			return cmdutil.FlagErrorf("--memory-budget must be between 0 and 1 (a fraction of min-cut's saved bytes above the inputs'), not %v", *b)
		}
	}
	// A run that writes nothing, or half a partition, looks like success
	// and is not: usage errors, with what to add.
	switch {
	case opts.Partition == "" && opts.Out == "":
		return cmdutil.FlagErrorf("nothing to write: give -o OUT for the joint graph (-o - for standard output), or --partition default|mincut --fw-out FW --bw-out BW")
	case (opts.FwOut == "") != (opts.BwOut == ""):
		return cmdutil.FlagErrorf("--fw-out and --bw-out go together: the forward graph is useless without the backward graph that takes its saved values, and the backward without the forward that saves them (give both)")
	case opts.Partition != "" && opts.Out == "" && opts.FwOut == "" && !opts.Report:
		return cmdutil.FlagErrorf("nothing to write: give --fw-out FW --bw-out BW for the partition, -o OUT for the joint graph, or --report")
	case opts.FwOut == cmdutil.Stdout || opts.BwOut == cmdutil.Stdout || opts.Out == cmdutil.Stdout && opts.FwOut != "":
		return cmdutil.FlagErrorf("only a single output can go to standard output: -o - without --fw-out and --bw-out")
	}
	if err := cmdutil.CheckOutputs([]string{opts.In}, opts.Out, opts.FwOut, opts.BwOut); err != nil {
		return err
	}
	// The summary goes to standard output.
	return cmdutil.CheckStdout(opts.IO.Out, opts.Out, opts.FwOut, opts.BwOut)
}

func jointRun(opts *Options) error {
	timings := cmdutil.NewTimings(opts.IO.ErrOut, opts.Timings)
	progress.Phase("load", 0)
	in, err := load.Open(opts.In, load.Strict)
	if err != nil {
		return err
	}
	if opts.TorchVersion != "" {
		in.Module.TorchVersion = opts.TorchVersion
	}
	timings.Lap("load")
	progress.Phase("joint", 0)
	// What the summary says of the input is taken now: the input module is
	// not referenced past Build, so the collector can free it while the
	// partition and the outputs are made.
	frozen := frozenAttributes(in.Module)
	names := newPrimalNames(in.Module)
	mode, masks, _ := jointgraph.ParseMasks(opts.Masks)
	conv, _ := jointgraph.ParseConvention(opts.HOPConvention)
	j, err := jointgraph.Build(in.Module, jointgraph.Options{
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
	summary := jointSummary(j, opts, frozen, names)
	timings.Lap("joint")
	// The joint's own check reads the joint as the partition does, and
	// neither changes what the other reads: it runs beside the partition,
	// which is sequential, so that on a second processor its cost leaves
	// the command's critical path. writeOutputs takes its verdict before
	// anything is written.
	jointChecked := checkJointAsync(opts, j)
	defer jointChecked()

	var part, all *partition.Partition
	if opts.Partition != "" {
		progress.Phase("partition", 0)
		pm, _ := partition.ParseMode(opts.Partition)
		// The forward and backward graphs are encoded from the joint's
		// nodes in place, never copied.
		if b := opts.budget(); pm == partition.MinCut && b < 1 {
			part, err = partition.SplitBudget(j, b)
		} else {
			part, err = partition.SplitLazy(j, pm)
		}
		if err != nil {
			return err
		}
		// What a partition that saves everything the backward reads
		// keeps, beside it: the report's comparison.
		if (opts.Report || opts.Format == "json") && pm == partition.MinCut {
			if all, err = partition.SplitLazy(j, partition.Default); err != nil {
				return err
			}
		} else if pm == partition.Default {
			all = part
		}
		timings.Lap("partition")
	}
	progress.Phase("write", 0)
	if err := writeOutputs(opts, j, part, jointChecked); err != nil {
		return err
	}
	timings.Lap("write")
	timings.Print()
	w := opts.IO.Out
	if opts.Out == cmdutil.Stdout {
		w = opts.IO.ErrOut // the graph is standard output: the summary goes to stderr
	}
	if opts.Format == "json" {
		return report.WriteJSON(w, jointDoc(j, opts, frozen, part, all, names))
	}
	io.WriteString(w, summary)
	if part != nil {
		budget := ""
		if b := opts.budget(); b < 1 {
			budget = fmt.Sprintf(" (memory budget %v)", b)
		}
		fmt.Fprintf(w, "partition %s%s: %d saved values, %s\n", part.Mode, budget, part.NumSaved(), humanBytes(part.TotalBytes()))
		if opts.Report {
			writeReport(w, part, all, names)
		}
	}
	return nil
}

// output is one graph the command writes: the joint, or a forward or
// backward graph whose root nodes are read from the joint in place
// (partition.SplitLazy).
type output struct {
	path        string
	m           *ir.Module
	nodes       ir.NodeSource
	partitioned bool
}

// writeOutputs checks every output, then writes them all: a graph hopctl
// built that fails its checks is a bug (exit 4) and nothing is written.
// The joint is checked in full (verifyWritten) whether or not it is written
// when the forward and backward graphs are; those, copied from it, get the
// checks of what the partition itself makes (verifyPartitioned). Files are
// renamed into place only when every one is written
// (atomicfile.WriteFilesFunc), each encoding streamed into its temporary
// file so that memory stays proportional to the graph. Standard output,
// which has no temporary file to drop, gets the encoding whole or nothing.
func writeOutputs(opts *Options, j *jointgraph.Joint, part *partition.Partition, jointChecked func() error) error {
	var outs []output
	if opts.Out != "" {
		outs = append(outs, output{path: opts.Out, m: j.Module, nodes: ir.GraphNodes(j.Module.Root())})
	}
	if part != nil && opts.FwOut != "" {
		fw, fwNodes := part.Source(false)
		bw, bwNodes := part.Source(true)
		outs = append(outs, output{opts.FwOut, fw, fwNodes, true}, output{opts.BwOut, bw, bwNodes, true})
	}
	if err := jointChecked(); err != nil {
		return err
	}
	// The forward's and the backward's checks read the joint and write
	// nothing they share: they run at the same time, and the first failure
	// in the outputs' order is the one reported.
	errs := make([]error, len(outs))
	var checks sync.WaitGroup
	for i, o := range outs {
		if o.partitioned {
			checks.Go(func() {
				defer func() {
					if r := recover(); r != nil {
						errs[i] = ir.Panicked("validate output", ir.Location{File: o.path}, r)
					}
				}()
				errs[i] = verifyPartitioned(o.m, o.nodes, o.path)
			})
		}
	}
	checks.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// The outputs' binary encoders share one memo of the values'
	// encodings: the forward and backward graphs are the joint's nodes.
	vals := ir.NewValueMemo(2 * len(j.Module.Root().Nodes))
	var encErr error // an error of the encoding, not of the writer
	encode := func(o output, w io.Writer) error {
		enc := ir.EncodingForPath(o.path)
		if enc != ir.JSON && enc != ir.Text {
			enc = ir.Binary // "-" included
		}
		if o.path == cmdutil.Stdout && enc == ir.Binary {
			data, err := ir.EncodeSource(o.m, o.nodes, enc)
			if err != nil {
				encErr = fmt.Errorf("cannot encode %s: %w", o.path, err)
				return encErr
			}
			_, err = w.Write(data)
			return err
		}
		if err := ir.EncodeSourceToMemo(w, o.m, o.nodes, enc, vals); err != nil {
			if we := (*ir.WriteError)(nil); errors.As(err, &we) {
				return we.Err
			}
			encErr = fmt.Errorf("cannot encode %s: %w", o.path, err)
			return encErr
		}
		return nil
	}
	var werr error
	switch {
	case opts.Out == cmdutil.Stdout:
		werr = encode(outs[0], opts.IO.Out) // the only output (validate)
	case len(outs) > 0:
		paths := make([]string, len(outs))
		writes := make([]func(io.Writer) error, len(outs))
		for i, o := range outs {
			paths[i] = o.path
			writes[i] = func(w io.Writer) error { return encode(o, w) }
		}
		werr = atomicfile.WriteFilesFunc(paths, writes)
	}
	if encErr != nil {
		return encErr
	}
	if werr != nil {
		return fmt.Errorf("cannot write the outputs: %w", werr)
	}
	return nil
}

// checkJointAsync starts the check of the joint that writeOutputs needs
// (verifyWritten: of the joint written to -o or, when only the forward
// and backward graphs are written, of the joint they are read from) and
// returns the function that waits for its verdict; it may be called more
// than once.
func checkJointAsync(opts *Options, j *jointgraph.Joint) func() error {
	path := opts.Out
	if path == "" && opts.Partition != "" && opts.FwOut != "" {
		path = opts.In + " (joint graph)"
	}
	if path == "" {
		return func() error { return nil }
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		// A panic here is a bug of hopctl, reported as the command's own
		// are (exit 4), not a crash of the process.
		defer func() {
			if r := recover(); r != nil {
				err = ir.Panicked("validate output", ir.Location{File: path}, r)
			}
		}()
		err = verifyWritten(j.Module, path)
	}()
	return func() error {
		<-done
		return err
	}
}

// verifyWritten checks a module hopctl built as every command checks what
// it reads (load.Open: ir.Verify, the schema table, every call): one that
// does not is a bug, not bad input.
func verifyWritten(m *ir.Module, path string) error {
	if err := checkWritten(m, path); err != nil {
		return invalidOutput(path, err)
	}
	return nil
}

// verifyPartitioned is verifyWritten for a forward or backward graph of
// the partition of a joint that verifyWritten accepted.
func verifyPartitioned(m *ir.Module, nodes ir.NodeSource, path string) error {
	if err := checkPartitionedNodes(m, nodes, path); err != nil {
		return invalidOutput(path, err)
	}
	return nil
}

// invalidOutput is the error of an output at path that fails its check:
// a bug of hopctl, not bad input.
func invalidOutput(path string, err error) error {
	return &ir.InternalError{Phase: "validate output", Loc: ir.Location{File: path},
		Err: fmt.Errorf("the graph hopctl built is not valid input:\n%w", err)}
}

// jointSummary is what the command prints of the joint: its masks, the
// frozen attributes, mutated inputs and inputs updated in place.
func jointSummary(j *jointgraph.Joint, opts *Options, frozen []string, names primalNames) string {
	var b strings.Builder
	if len(j.Masks) <= maxPrintedMasks {
		fmt.Fprintf(&b, "masks: %s (%s)\n", jointgraph.FormatMasks(j.Masks), maskSource(opts.Masks))
	} else {
		n := 0
		for _, m := range j.Masks {
			if m {
				n++
			}
		}
		fmt.Fprintf(&b, "masks: %d of %d outputs (%s; the full list is the file's %s annotation)\n",
			n, len(j.Masks), maskSource(opts.Masks), jointgraph.AnnotationMasks)
	}
	if len(frozen) > 0 {
		fmt.Fprintf(&b, "no gradient for %d tensor attribute(s) that require grad: %s (get_attr constants, as make_fx of a module makes its parameters; to differentiate them make them inputs: trace torch.func.functional_call with the parameters as arguments, or use torch.export)\n",
			len(frozen), abbreviateList(frozen, 8))
	}
	if len(j.MutatedInputs) > 0 {
		fmt.Fprintf(&b, "mutated inputs (written back with copy_): %s\n", inputNames(j, j.MutatedInputs, names))
	}
	if len(j.InPlaceInputs) > 0 {
		fmt.Fprintf(&b, "inputs updated in place (kept as in the forward): %s\n", inputNames(j, j.InPlaceInputs, names))
	}
	for _, d := range j.MetaDisagreements {
		fmt.Fprintf(&b, "recorded meta: node %s (%s) was traced from x.detach() (%s) and requires no grad there, but %s requires grad in this graph: it gets a gradient, as torch gives it running this graph; the training IR keeps the detach\n",
			ir.Abbrev(d.Node), d.Target, ir.Abbrev(d.Recorded), d.Target)
	}
	return b.String()
}

// frozenAttributes are the tensor attributes of m's root that require grad
// (nn.Parameters that make_fx left as get_attr constants): the joint gives
// them no gradient, which a user differentiating a model must know.
func frozenAttributes(m *ir.Module) []string {
	requires := map[string]bool{}
	for _, a := range m.Attributes {
		if a.Meta.RequiresGrad {
			requires[a.Name] = true
		}
	}
	var out []string
	root := m.Root()
	for i := range root.Nodes {
		n := &root.Nodes[i]
		if n.Op == ir.OpGetAttr && requires[n.Target] {
			out = append(out, ir.Printable(n.Target))
			delete(requires, n.Target)
		}
	}
	return out
}

// abbreviateList joins the first max names and counts the rest.
func abbreviateList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

// checkWritten runs the checks every command runs on reading a file
// (load.Module, Strict: ir.Verify, the schema table, every call against its
// schema and its subgraphs), once.
func checkWritten(m *ir.Module, path string) error {
	_, err := load.Module(m, path, load.Strict)
	return err
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

// jointDoc is the summary as the JSON document.
func jointDoc(j *jointgraph.Joint, opts *Options, frozen []string, part, all *partition.Partition, names primalNames) *report.JointDoc {
	d := &report.JointDoc{SchemaVersion: report.JointSchemaVersion, File: opts.In, Masks: j.Masks,
		MaskSource: maskSource(opts.Masks), FrozenAttributes: append([]string{}, frozen...),
		MutatedInputs: jointInputs(j, j.MutatedInputs, names), InPlaceInputs: jointInputs(j, j.InPlaceInputs, names)}
	for _, m := range j.MetaDisagreements {
		d.MetaDisagreements = append(d.MetaDisagreements, report.JointMetaDisagreement{Node: m.Node, Target: m.Target, Recorded: m.Recorded})
	}
	if part != nil {
		jp := &report.JointPartition{Mode: part.Mode.String(), Saved: []report.SavedValue{}, TotalBytes: part.TotalBytes(),
			BySource: []report.SourceBytes{}}
		if part.Mode == partition.MinCut {
			b := opts.budget()
			jp.MemoryBudget = &b
		}
		saved := part.Saved()
		for _, s := range saved {
			v := report.SavedValue{Name: s.Name, ProgramName: names.of(s.Name), Kind: s.Kind, Dtype: s.Dtype, Bytes: s.Bytes, Source: s.Source, Why: s.Why}
			if s.Kind == "tensor" {
				v.Shape = ir.FormatDims(s.Shape)
			}
			jp.Saved = append(jp.Saved, v)
		}
		for _, g := range partition.BySource(saved) {
			jp.BySource = append(jp.BySource, report.SourceBytes{Source: g.Source, Count: g.Count, Bytes: g.Bytes})
		}
		if all != nil {
			jp.SaveAll = &report.SaveAll{Count: all.NumSaved(), TotalBytes: all.TotalBytes()}
		}
		d.Partition = jp
	}
	return d
}

func jointInputs(j *jointgraph.Joint, idx []int, names primalNames) []report.JointInput {
	ph := j.Module.Root().Placeholders()
	out := []report.JointInput{}
	for _, i := range idx {
		if i < len(ph) {
			n := j.Module.Root().Nodes[ph[i]].Name
			out = append(out, report.JointInput{Index: i, Name: n, ProgramName: names.of(n)})
		}
	}
	return out
}

func inputNames(j *jointgraph.Joint, idx []int, names primalNames) string {
	ph := j.Module.Root().Placeholders()
	var out []string
	for _, i := range idx {
		if i < len(ph) {
			out = append(out, names.label(j.Module.Root().Nodes[ph[i]].Name))
		}
	}
	return strings.Join(out, ", ")
}

// primalNames are the names the program knows the joint's primals by:
// primals_k is the forward's k-th placeholder, known by its state_dict key
// (bn.running_mean) when the export signature gives one, else by the
// placeholder's own name (x). They are read before Build, which consumes
// the forward graph. The joint's own names stay what AOTAutograd calls
// them (primals_k, tangents_k), and each is printed with the name it
// stands for.
type primalNames []string

func newPrimalNames(m *ir.Module) primalNames {
	root := m.Root()
	var out primalNames
	for _, id := range root.Placeholders() {
		name := root.Nodes[id].Name
		if m.Signature != nil {
			name = m.Signature.StateName(name)
		}
		out = append(out, ir.Printable(name))
	}
	return out
}

// of returns the program's name for joint placeholder n ("primals_3"), ""
// for any other name.
func (p primalNames) of(n string) string {
	k, ok := strings.CutPrefix(n, "primals_")
	if !ok {
		return ""
	}
	i, err := strconv.Atoi(k)
	if err != nil || i < 1 || i > len(p) {
		return ""
	}
	return p[i-1]
}

// label is n with the program's name beside it: "primals_3 (steps)".
func (p primalNames) label(n string) string {
	if pn := p.of(n); pn != "" && pn != n {
		return n + " (" + pn + ")"
	}
	return n
}

// writeReport lists the saved values as a table, with where the program
// makes each and why it is saved, then the saved bytes per source line (the
// per-layer view of activation memory), and what a partition saving every
// forward value the backward reads keeps (all: the default partition's).
func writeReport(w io.Writer, p *partition.Partition, all *partition.Partition, names primalNames) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "saved value\tkind\tshape\tdtype\tbytes\twhy\t")
	saved := p.Saved()
	for _, s := range saved {
		shape := "-"
		if s.Kind == "tensor" {
			shape = ir.FormatDims(s.Shape)
		}
		b := "?"
		if s.Bytes >= 0 {
			b = fmt.Sprint(s.Bytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", names.label(s.Name), s.Kind, shape, s.Dtype, b, s.Why)
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d\t\t\n", p.TotalBytes())
	tw.Flush()
	groups := partition.BySource(saved)
	if len(groups) > 0 {
		fmt.Fprintln(w, "\nsaved bytes by source line:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, g := range groups {
			src := g.Source
			if src == "" {
				src = "(no source)"
			}
			fmt.Fprintf(tw, "  %d\t%d saved\t%s\t%s\n", g.Bytes, g.Count, bar(g.Bytes, p.TotalBytes()), ir.Printable(src))
		}
		tw.Flush()
	}
	if all != nil {
		fmt.Fprintf(w, "saving everything the backward reads (default partition): %d values, %s\n", all.NumSaved(), humanBytes(all.TotalBytes()))
	}
}

// bar is a 20-column bar of n out of total.
func bar(n, total int64) string {
	const width = 20
	k := 0
	if total > 0 && n > 0 {
		k = max(1, int(float64(n)/float64(total)*width+0.5))
	}
	return strings.Repeat("#", k) + strings.Repeat(".", width-k)
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

// checkPartitioned checks a forward or backward graph of a partition for
// what the partition makes, without re-deriving what it copies from the
// joint (which checkWritten accepted): every node of it but the
// placeholders, the output and the zero fills is a joint node with its
// name, target, value and arguments, the references renumbered; the
// placeholders are joint nodes too, each taken once; the HOP subgraphs
// are the joint's. So the names are unique and the calls match their
// schemas because the joint's do, and what is left to check is the
// partition's own work: every node named and of a kind, every reference
// pointing to an earlier node and carrying that node's name (the name is
// what the file stores), exactly one output and it last, and every
// get_attr target present in the module. It skips ir.Verify's name index
// and the schema check of every call, most of the cost of load.Module on
// the millions of nodes the two graphs have for a large joint.
func checkPartitioned(m *ir.Module, path string) error {
	return checkPartitionedNodes(m, ir.GraphNodes(m.Root()), path)
}

// checkPartitionedNodes is checkPartitioned with m's root graph's nodes
// read from nodes (partition.Partition.Source): each reference is checked
// where nodes says it points and by the name it stores.
func checkPartitionedNodes(m *ir.Module, nodes ir.NodeSource, path string) error {
	if len(m.Graphs) == 0 || m.Graphs[0].Name != "" {
		return fmt.Errorf("%s: the module has no root graph", path)
	}
	var problems []ir.Problem
	add := func(kind ir.ProblemKind, node, msg string) {
		if len(problems) < ir.MaxProblems {
			problems = append(problems, ir.Problem{Loc: ir.At(path, "", node), Msg: msg, Kind: kind})
		}
	}
	var names map[string]bool // the module's graphs and attributes, on the first get_attr
	size, outputs := nodes.Len(), 0
	for i := range size {
		n := nodes.Node(i)
		if n.Name == "" {
			add(ir.ProblemMalformed, fmt.Sprintf("#%d", i), "node has an empty name")
		}
		if n.Op == ir.OpUnspecified {
			add(ir.ProblemMalformed, n.Name, "node has no op kind")
		}
		n.WalkRefs(func(a *ir.Arg) {
			id, name := nodes.Ref(a)
			switch r := int(id); {
			case r < 0 || r >= size:
				add(ir.ProblemDanglingRef, n.Name, fmt.Sprintf("dangling reference to %q: no such node in this graph", name))
			case r == i:
				add(ir.ProblemCycle, n.Name, "node uses itself (cycle)")
			case r > i:
				add(ir.ProblemUseBeforeDef, n.Name, fmt.Sprintf("use of %q before its definition", name))
			case nodes.Node(r).Name != name:
				add(ir.ProblemDanglingRef, n.Name, fmt.Sprintf("reference named %q points to node %q", name, nodes.Node(r).Name))
			}
		})
		switch n.Op {
		case ir.OpOutput:
			outputs++
			if i != size-1 || outputs > 1 {
				add(ir.ProblemExtraOutput, n.Name, "output node is not the last node, or not the only one")
			}
		case ir.OpGetAttr:
			if names == nil {
				names = map[string]bool{}
				for _, h := range m.Graphs {
					names[h.Name] = true
				}
				for _, a := range m.Attributes {
					names[a.Name] = true
				}
			}
			if !names[n.Target] {
				add(ir.ProblemMissingAttr, n.Name, fmt.Sprintf("get_attr target %q does not exist", n.Target))
			}
		}
	}
	if outputs == 0 {
		add(ir.ProblemMissingOutput, "", "missing output node")
	}
	if len(problems) > 0 {
		return &ir.VerifyError{Problems: problems}
	}
	return nil
}
