// Package report implements `hopctl report`: one self-contained interactive
// HTML page showing graph files with hopctl's analysis drawn on them.
package report

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
	"github.com/hopctl/hopctl/pkg/viz"
)

// Options are the inputs of `hopctl report`.
type Options struct {
	IO        *iostreams.IOStreams
	Files     []string
	Out       string
	Joint     bool
	Partition string
	// Analysis are the analysis runs' options (the torch release whose
	// HOP rules apply).
	Analysis analyze.Options
}

// NewCmdReport returns the report command; runF replaces reportRun in tests.
func NewCmdReport(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "report FILE... -o REPORT.html",
		Short: "Write an interactive HTML report of graph files and their analysis",
		Long: `Write one self-contained HTML page (no network, works from file://)
showing each file's graphs as layered dataflow diagrams: nodes labelled as
torch prints them, HOP calls and nn_module_stack layers as boxes that
expand and collapse, and hopctl's analysis drawn on them — mutated inputs,
alias classes, and each finding's provenance path from the input through
views and HOP bodies to the writing node (click a finding to see it).
Also: search by node name or op, and the four alias/mutation maps of
every graph as tables.

--joint draws the joint forward/backward graph of each (forward) file
instead, partitioned with --partition (mincut by default): forward and
backward nodes coloured, saved values marked, and a table of the saved
values sortable by size. A joint, forward or backward file hopctl joint
wrote is coloured the same way without --joint.

Every file is read and analysed before anything is written; a file that
is unreadable or invalid fails the command (exit 3) and writes nothing.`,
		Example: `  hopctl report model.pb -o report.html
  hopctl report --joint model.pb -o joint.html
  hopctl report exported/*.pb -o all.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if opts.Out == "" {
				return cmdutil.FlagErrorf("-o/--output is required")
			}
			if err := cmdutil.Enum("partition", opts.Partition, "default", "mincut"); err != nil {
				return err
			}
			if err := cmdutil.CheckOutputs(opts.Files, opts.Out); err != nil {
				return err
			}
			a, err := cmdutil.AnalysisOptions(f)
			if err != nil {
				return err
			}
			opts.Analysis = a
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "output", "o", "", "the HTML file to write (- is standard output)")
	cmd.Flags().BoolVar(&opts.Joint, "joint", false, "draw each file's joint forward/backward graph, partitioned")
	cmd.Flags().StringVar(&opts.Partition, "partition", "mincut", "with --joint: the partitioner, default or mincut")
	return cmd
}

func reportRun(opts *Options) error {
	doc := &viz.Doc{Version: viz.DocVersion, Title: "hopctl report", Files: []viz.File{}}
	for _, path := range opts.Files {
		f, err := buildFile(path, opts)
		if err != nil {
			return err
		}
		doc.Files = append(doc.Files, f)
	}
	if len(opts.Files) == 1 {
		doc.Title = "hopctl report: " + opts.Files[0]
	}
	var buf bytes.Buffer
	if err := viz.WriteHTML(&buf, doc); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return cmdutil.WriteOutput(opts.IO.Out, opts.Out, buf.Bytes())
}

// buildFile loads, analyses and models one file.
func buildFile(path string, opts *Options) (viz.File, error) {
	if !opts.Joint {
		f, res, err := load.AnalyzeWith(path, opts.Analysis, passes.All()...)
		if err != nil {
			return viz.File{}, err
		}
		return viz.Build(path, f.Module, res, viz.Options{}), nil
	}
	f, err := load.Open(path, load.Strict)
	if err != nil {
		return viz.File{}, err
	}
	j, err := jointgraph.Build(f.Module, jointgraph.Options{File: path, MaskMode: jointgraph.MasksAuto, Registry: f.Registry})
	if err != nil {
		return viz.File{}, err
	}
	mode, _ := partition.ParseMode(opts.Partition)
	part, err := partition.Split(j, mode)
	if err != nil {
		return viz.File{}, err
	}
	// The default partition beside min-cut: what saving everything the
	// backward reads would keep.
	var saveAll *partition.Partition
	if mode == partition.MinCut {
		if saveAll, err = partition.SplitLazy(j, partition.Default); err != nil {
			return viz.File{}, err
		}
	}
	// The joint graph is analysed like any file (findings, maps).
	reg, err := load.Registry(j.Module, path)
	if err != nil {
		return viz.File{}, err
	}
	res, err := analyze.RunWith(j.Module, path, reg, opts.Analysis, passes.All()...)
	if err != nil {
		return viz.File{}, err
	}
	return viz.Build(path+" (joint)", j.Module, res, viz.Options{Partition: part, SaveAll: saveAll}), nil
}
