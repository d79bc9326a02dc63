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
	"strings"
	"sync"
	"text/tabwriter"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
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
	Timings       bool
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
	summary := jointSummary(j, opts, frozen)
	timings.Lap("joint")

	// Each output is verified, encoded and written to a temporary file on
	// its own goroutine; the joint's starts before the partition is
	// computed (which only reads it; the partitioned modules share the
	// joint's HOP subgraphs, which concurrent reads allow), the forward's
	// and backward's once it is. Only when every output is written are the
	// temporary files renamed into place (atomicfile.WriteFilesFunc): a
	// failure leaves every destination untouched. Every encoding is
	// streamed into its temporary file (ir.EncodeSourceTo), so memory
	// stays proportional to the graph, not to its encodings. Standard
	// output, which has no temporary file to drop, gets the binary encoding
	// whole or nothing (ir.EncodeSource).
	type output struct {
		path string
		// m returns the module, and the nodes of its root graph when they
		// are read from the joint in place (a forward or backward graph,
		// partition.SplitLazy); a nil module: the partition failed.
		m func() (*ir.Module, ir.NodeSource)
		// checked, if not nil, gives the result of the module's check,
		// run ahead of its writer (the joint's)
		checked chan error
		err     error
		// partitioned: a forward or backward graph (verifyPartitioned)
		partitioned bool
	}
	var outs []*output
	partDone := make(chan struct{})
	var part *partition.Partition
	if opts.Out != "" {
		joint := j.Module
		o := &output{path: opts.Out, m: func() (*ir.Module, ir.NodeSource) { return joint, nil }}
		if opts.Partition != "" && opts.Out != cmdutil.Stdout {
			// The joint's check starts now, beside the partition, not when
			// its writer has made its temporary file.
			o.checked = make(chan error, 1)
			go func() { o.checked <- verifyWritten(joint, opts.Out) }()
		}
		outs = append(outs, o)
	}
	if opts.Partition != "" && opts.FwOut != "" {
		wait := func(fw bool) func() (*ir.Module, ir.NodeSource) {
			return func() (*ir.Module, ir.NodeSource) {
				<-partDone
				if part == nil {
					return nil, nil
				}
				return part.Source(!fw)
			}
		}
		outs = append(outs, &output{path: opts.FwOut, m: wait(true), partitioned: true},
			&output{path: opts.BwOut, m: wait(false), partitioned: true})
	}
	errPartition := errors.New("the partition failed")
	// The joint is checked in full (checkWritten) whether or not it is
	// written; the forward and backward graphs, copied from it, get the
	// checks of what the partition itself makes (checkPartitioned).
	jointChecked := make(chan error, 1)
	if opts.Out == "" && opts.FwOut != "" {
		joint := j.Module
		go func() { jointChecked <- verifyWritten(joint, opts.In+" (joint graph)") }()
	} else {
		jointChecked <- nil // checked as the output it is, or not needed
	}
	var jointErr error
	var jointOnce sync.Once
	// The outputs' binary encoders share one memo of the values' encodings:
	// the forward and backward graphs are the joint's nodes, their values
	// the joint's (ir.ValueMemo), sized by the joint, whose nodes the
	// three outputs hold between them about twice.
	vals := ir.NewValueMemo(2 * len(j.Module.Root().Nodes))
	// encode writes m, its root graph's nodes read from nodes (nil: its
	// own), to w: streamed, or for standard output encoded whole first.
	// An error of the encoding, not of w, is o's too (o.err).
	encode := func(o *output, w io.Writer, m *ir.Module, nodes ir.NodeSource, stream bool) error {
		if nodes == nil {
			nodes = ir.GraphNodes(m.Root())
		}
		enc := ir.EncodingForPath(o.path)
		if enc != ir.JSON && enc != ir.Text {
			enc = ir.Binary // "-" included
		}
		if stream || enc != ir.Binary {
			// An error that is not the writer's is the encoder's.
			if err := ir.EncodeSourceToMemo(w, m, nodes, enc, vals); err != nil {
				if we := (*ir.WriteError)(nil); errors.As(err, &we) {
					return we.Err
				}
				o.err = fmt.Errorf("cannot encode %s: %w", o.path, err)
				return o.err
			}
			return nil
		}
		data, err := ir.EncodeSource(m, nodes, enc)
		if err != nil {
			o.err = fmt.Errorf("cannot encode %s: %w", o.path, err)
			return o.err
		}
		_, err = w.Write(data)
		return err
	}
	write := func(o *output, w io.Writer, stream bool) error {
		m, nodes := o.m()
		if m == nil {
			return errPartition
		}
		var check *partitionCheck
		if o.partitioned {
			jointOnce.Do(func() { jointErr = <-jointChecked })
			if jointErr != nil {
				o.err = jointErr
				return jointErr
			}
			if stream && nodes.Len() >= seenNodes && regularFile(w) {
				// Checked as it is encoded (partitionCheck.checking): the
				// check's result, not the encoding's, decides, as when it
				// ran first; the encoders read a reference's name, never
				// the node its id points to, so no problem the check finds
				// can make them fail otherwise; and what they wrote goes to
				// a temporary file that a failure removes. A device or FIFO
				// is written only once the graph has passed, and a graph
				// that stays in cache is checked first (its reads are
				// cheap either way, the reader checking is not free).
				c, err := newPartitionCheck(m, nodes, o.path)
				if err != nil {
					o.err = invalidOutput(o.path, err)
					return o.err
				}
				check, nodes = c, c.checking()
			} else if err := verifyPartitioned(m, nodes, o.path); err != nil {
				o.err = err
				return err
			}
		} else {
			var err error
			if o.checked != nil {
				err = <-o.checked
			} else {
				err = verifyWritten(m, o.path)
			}
			if err != nil {
				o.err = err
				return err
			}
		}
		err := encode(o, w, m, nodes, stream)
		if check != nil {
			if cerr := check.finish(); cerr != nil {
				o.err = invalidOutput(o.path, cerr)
				return o.err
			}
		}
		return err
	}
	writeErr := make(chan error, 1)
	switch {
	case opts.Out == cmdutil.Stdout:
		// The only output (validate): standard output, once the partition
		// (for --report) succeeded.
		go func() {
			<-partDone
			if opts.Partition != "" && part == nil {
				writeErr <- errPartition
				return
			}
			writeErr <- write(outs[0], opts.IO.Out, false)
		}()
	case len(outs) > 0:
		paths := make([]string, len(outs))
		writes := make([]func(io.Writer) error, len(outs))
		for i, o := range outs {
			paths[i] = o.path
			writes[i] = func(w io.Writer) error { return write(o, w, true) }
		}
		go func() { writeErr <- atomicfile.WriteFilesFunc(paths, writes) }()
	default:
		writeErr <- nil
	}
	var splitErr error
	if opts.Partition != "" {
		progress.Phase("partition", 0)
		pm, _ := partition.ParseMode(opts.Partition)
		// The forward and backward graphs are encoded from the joint's
		// nodes in place, never copied.
		part, splitErr = partition.SplitLazy(j, pm)
		timings.Lap("partition")
	}
	close(partDone)
	progress.Phase("write", 0)
	werr := <-writeErr
	if splitErr != nil {
		return splitErr
	}
	for _, o := range outs {
		if o.err != nil {
			return o.err // a bug of hopctl or an encoding error, not the write's
		}
	}
	if werr != nil {
		return fmt.Errorf("cannot write the outputs: %w", werr)
	}
	timings.Lap("write")
	timings.Print()
	w := opts.IO.Out
	if opts.Out == cmdutil.Stdout {
		w = opts.IO.ErrOut // the graph is standard output: the summary goes to stderr
	}
	io.WriteString(w, summary)
	if part != nil {
		fmt.Fprintf(w, "partition %s: %d saved values, %s\n", part.Mode, part.NumSaved(), humanBytes(part.TotalBytes()))
		if opts.Report {
			writeReport(w, part)
		}
	}
	return nil
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

// regularFile reports whether w is a regular file (a temporary file
// atomicfile renames into place, or removes on an error).
func regularFile(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// jointSummary is what the command prints of the joint: its masks, the
// frozen attributes, mutated inputs and inputs updated in place.
func jointSummary(j *jointgraph.Joint, opts *Options, frozen []string) string {
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
		fmt.Fprintf(&b, "mutated inputs (written back with copy_): %s\n", inputNames(j, j.MutatedInputs))
	}
	if len(j.InPlaceInputs) > 0 {
		fmt.Fprintf(&b, "inputs updated in place (kept as in the forward): %s\n", inputNames(j, j.InPlaceInputs))
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
func writeReport(w io.Writer, p *partition.Partition) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "saved value\tkind\tshape\tdtype\tbytes\t")
	for _, s := range p.Saved() {
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
// the 3.8M nodes the two graphs have at 1M input nodes (README,
// Performance).
func checkPartitioned(m *ir.Module, path string) error {
	return checkPartitionedNodes(m, ir.GraphNodes(m.Root()), path)
}

// checkPartitionedNodes is checkPartitioned with m's root graph's nodes
// read from nodes (partition.Partition.Source): each reference is checked
// where nodes says it points and by the name it stores.
func checkPartitionedNodes(m *ir.Module, nodes ir.NodeSource, path string) error {
	c, err := newPartitionCheck(m, nodes, path)
	if err != nil {
		return err
	}
	return c.finish()
}

// partitionCheck is checkPartitionedNodes node by node, so that it can run
// as the encoder reads the nodes (checking): node after node, in order,
// and then the graph (finish).
type partitionCheck struct {
	m        *ir.Module
	nodes    ir.NodeSource
	path     string
	size     int
	next     int             // the first node not checked
	outputs  int             // output nodes so far
	names    map[string]bool // the module's graphs and attributes, on the first get_attr
	problems []ir.Problem
	// seen holds each node checked's name as nameWord packs it: a
	// reference whose name is that very string (all of them, in the
	// graphs the partition makes) is known to carry its node's name
	// without reading the node, which for a reference far back is a
	// cache miss or three (emission.Node's tables, then the node). Nil for
	// a graph of fewer than seenNodes nodes.
	seen []uint64
}

// seenNodes is the size from which a partitionCheck keeps its seen words,
// and from which the command checks a graph as it encodes it: a smaller
// graph's nodes stay in cache, the words' fresh pages cost more than they
// save (the 4.4k-node stack's two outputs: 33 more page faults), and the
// reader that checks (checking) costs 0.8 M instructions more there.
var seenNodes = 1 << 16 // a variable for the tests

// nameWord packs the address and length of s's bytes into a word (0 when
// they do not fit, or for a string at address 0): two strings with the same
// non-zero word are the same bytes, so equal. The strings compared are
// the nodes' names, which the nodes keep alive, so an address is never
// reused while the check runs.
func nameWord(s string) uint64 {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))
	if p >= 1<<48 || len(s) >= 1<<16 {
		return 0
	}
	return p<<16 | uint64(len(s))
}

// newPartitionCheck starts checking m's root graph, its nodes read from
// nodes; a module without a root graph is the error.
func newPartitionCheck(m *ir.Module, nodes ir.NodeSource, path string) (*partitionCheck, error) {
	if len(m.Graphs) == 0 || m.Graphs[0].Name != "" {
		return nil, fmt.Errorf("%s: the module has no root graph", path)
	}
	c := &partitionCheck{m: m, nodes: nodes, path: path, size: nodes.Len()}
	if c.size >= seenNodes {
		c.seen = make([]uint64, c.size)
	}
	return c, nil
}

func (c *partitionCheck) add(kind ir.ProblemKind, node, msg string) {
	if len(c.problems) < ir.MaxProblems {
		c.problems = append(c.problems, ir.Problem{Loc: ir.At(c.path, "", node), Msg: msg, Kind: kind})
	}
}

// node checks node c.next, the next in order.
func (c *partitionCheck) node() {
	i, nodes, size := c.next, c.nodes, c.size
	c.next++
	n := nodes.Node(i)
	if c.seen != nil {
		c.seen[i] = nameWord(n.Name)
	}
	if n.Name == "" {
		c.add(ir.ProblemMalformed, fmt.Sprintf("#%d", i), "node has an empty name")
	}
	if n.Op == ir.OpUnspecified {
		c.add(ir.ProblemMalformed, n.Name, "node has no op kind")
	}
	n.WalkRefs(func(a *ir.Arg) { c.ref(n, i, a) })
	switch n.Op {
	case ir.OpOutput:
		c.outputs++
		if i != size-1 || c.outputs > 1 {
			c.add(ir.ProblemExtraOutput, n.Name, "output node is not the last node, or not the only one")
		}
	case ir.OpGetAttr:
		if c.names == nil {
			c.names = map[string]bool{}
			for _, h := range c.m.Graphs {
				c.names[h.Name] = true
			}
			for _, a := range c.m.Attributes {
				c.names[a.Name] = true
			}
		}
		if !c.names[n.Target] {
			c.add(ir.ProblemMissingAttr, n.Name, fmt.Sprintf("get_attr target %q does not exist", n.Target))
		}
	}
}

// ref checks reference a of node n, node i.
func (c *partitionCheck) ref(n *ir.Node, i int, a *ir.Arg) {
	id, name := c.nodes.Ref(a)
	switch r := int(id); {
	case r < 0 || r >= c.size:
		c.add(ir.ProblemDanglingRef, n.Name, fmt.Sprintf("dangling reference to %q: no such node in this graph", name))
	case r == i:
		c.add(ir.ProblemCycle, n.Name, "node uses itself (cycle)")
	case r > i:
		c.add(ir.ProblemUseBeforeDef, n.Name, fmt.Sprintf("use of %q before its definition", name))
	case c.seen != nil && c.seen[r] != 0 && c.seen[r] == nameWord(name):
		// node r's own name string: equal
	case c.nodes.Node(r).Name != name:
		c.add(ir.ProblemDanglingRef, n.Name, fmt.Sprintf("reference named %q points to node %q", name, c.nodes.Node(r).Name))
	}
}

// finish checks the nodes not yet checked and returns the problems found,
// in node order, as an *ir.VerifyError (nil: none).
func (c *partitionCheck) finish() error {
	for c.next < c.size {
		c.node()
	}
	if c.outputs == 0 {
		c.add(ir.ProblemMissingOutput, "", "missing output node")
	}
	if len(c.problems) > 0 {
		return &ir.VerifyError{Problems: c.problems}
	}
	return nil
}

// checking returns c's nodes as a NodeSource that checks each node the
// first time it is read in order, just before its reader gets it: an
// encoder reading the nodes one after another (every encoding does, but
// for the few a binary one samples ahead to size the graph, which finish
// checks in turn) then encodes each node while it is still in cache,
// instead of the check reading all of them from memory first.
func (c *partitionCheck) checking() ir.NodeSource { return (*checkedNodes)(c) }

type checkedNodes partitionCheck

func (s *checkedNodes) Len() int { return s.size }

func (s *checkedNodes) Node(i int) *ir.Node {
	if i == s.next {
		(*partitionCheck)(s).node()
	}
	return s.nodes.Node(i)
}

func (s *checkedNodes) Ref(a *ir.Arg) (ir.NodeID, string) { return s.nodes.Ref(a) }

// OwnNames passes on what the nodes say (ir.OwnNames): the check reads
// every reference through Ref, the encoder need not read it again.
func (s *checkedNodes) OwnNames() bool {
	o, ok := s.nodes.(ir.OwnNames)
	return ok && o.OwnNames()
}
