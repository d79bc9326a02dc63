// Package convert implements `hopctl convert`: a graph file rewritten in
// another of the three encodings, validated on the way, written atomically.
package convert

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// Options are the inputs of `hopctl convert`.
type Options struct {
	IO  *iostreams.IOStreams
	In  string
	Out string // "-" is standard output
	To  string // pb, json or pbtxt; "" takes the encoding from Out's extension
}

// NewCmdConvert returns the convert command; runF replaces convertRun in
// tests.
func NewCmdConvert(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a graph file between the binary, JSON and text encodings",
		Long: `Convert a graph file between the binary (.pb), protobuf JSON (.json) and
text (.pbtxt) encodings. The input's encoding comes from its extension or
content; the output's from OUT's extension, or --to. OUT "-" writes to
standard output (with --to).

The input is verified and validated first, as every command does (exit
code 3 for an invalid file). OUT is written to a temporary file that is
renamed into place, so a failed conversion never leaves a partial or
clobbered OUT.`,
		Example: `  hopctl convert model.pb model.pbtxt
  hopctl convert model.json - --to pbtxt`,
		Args: cmdutil.ExactArgs(2, "IN OUT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In, opts.Out = args[0], args[1]
			if opts.To != "" {
				if _, err := ir.ParseEncoding(opts.To); err != nil {
					return cmdutil.FlagErrorf("invalid value %q for --to (want pb, json or pbtxt)", opts.To)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return convertRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "output encoding: pb, json or pbtxt (default: from OUT's extension)")
	return cmd
}

func convertRun(opts *Options) error {
	enc, err := outputEncoding(opts)
	if err != nil {
		return err
	}
	if err := cmdutil.CheckOutputs([]string{opts.In}, opts.Out); err != nil {
		return err
	}
	progress.Phase("load", 0)
	f, err := load.Open(opts.In, load.Strict)
	if err != nil {
		return err
	}
	m := f.Module
	progress.Phase("write "+enc.String(), m.NumNodes())
	// The output is streamed (ir.EncodeTo): a 1M-node graph's JSON is
	// about a gigabyte, which need not be held in memory. A validated
	// module always encodes, so standard output never gets a partial
	// encoding; a file is renamed into place only once complete.
	if opts.Out == "-" {
		return ir.EncodeTo(opts.IO.Out, m, enc)
	}
	return cmdutil.WriteError(opts.Out, atomicfile.WriteFileFunc(opts.Out, func(w io.Writer) error { return ir.EncodeTo(w, m, enc) }))
}

func outputEncoding(opts *Options) (ir.Encoding, error) {
	if opts.To != "" {
		enc, err := ir.ParseEncoding(opts.To)
		if err != nil {
			return ir.EncodingUnknown, &cmdutil.FlagError{Err: err}
		}
		return enc, nil
	}
	if opts.Out == "-" {
		return ir.EncodingUnknown, cmdutil.FlagErrorf("writing to standard output needs --to pb, json or pbtxt")
	}
	enc := ir.EncodingForPath(opts.Out)
	if enc == ir.EncodingUnknown {
		return ir.EncodingUnknown, cmdutil.FlagErrorf("cannot tell the encoding of %s from its extension (want .pb, .json or .pbtxt); use --to", opts.Out)
	}
	return enc, nil
}
