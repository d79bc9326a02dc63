// Package analyze implements `hopctl analyze`: the alias and mutation report
// of every graph and subgraph of one or more files.
package analyze

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// Options are the inputs of `hopctl analyze`.
type Options struct {
	IO     *iostreams.IOStreams
	Files  []string
	Format string
	// Analysis are the analysis run's options (the torch release whose
	// HOP rules apply).
	Analysis analyze.Options
}

// NewCmdAnalyze returns the analyze command; runF replaces analyzeRun in tests.
func NewCmdAnalyze(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Report which inputs each graph and HOP subgraph mutates and aliases",
		Long: `Report, for the root graph and every HOP subgraph, the four results of
PyTorch's check_input_alias_and_mutation (inp_inp_alias, inp_out_alias,
out_out_alias, mutated_inputs), computed statically from op schemas, with
HOP calls analysed through their subgraphs; and every HOP restriction
violated at a call site (cond branches must not mutate or alias their
inputs, ...), in PyTorch's wording, with provenance: the input, the chain
of views, the writing or returning node, the path through nested
subgraphs, and the node's stack trace.

--format json prints the versioned document described in the README.
With several torch releases (--torch-version 2.6,2.14, 2.6..2.14 or
supported) each release's rules run and every finding says which
releases report it.
Exit status: 0 when the analysis ran (findings or not), 3 when a file is
unreadable or invalid; the other files are still reported.`,
		Example: `  hopctl analyze graph.pb
  hopctl analyze --format json exported/*.pb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := cmdutil.Enum("format", opts.Format, "text", "json"); err != nil {
				return err
			}
			a, err := cmdutil.AnalysisOptionsReleases(f)
			if err != nil {
				return err
			}
			opts.Analysis = a
			if runF != nil {
				return runF(opts)
			}
			return analyzeRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	return cmd
}

// analyzeReleases analyses one file, under each release of a.Releases
// when there are several: the newest release's summaries, and every
// release's findings merged (analyze.MergeReleases). A file one release
// cannot analyse is reported as that release's error.
func analyzeReleases(path string, a analyze.Options) (*load.File, *analyze.Result, error) {
	if len(a.Releases) < 2 {
		return load.AnalyzeWith(path, a, alias.Analyzer)
	}
	var runs [][]analyze.Finding
	var f *load.File
	var res *analyze.Result
	for _, v := range a.Releases {
		var err error
		f, res, err = load.AnalyzeWith(path, a.ForRelease(v), alias.Analyzer)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, res.Findings)
	}
	res.Findings = analyze.MergeReleases(f.Module, a.Releases, runs)
	analyze.SortFindings(f.Module, res.Findings)
	return f, res, nil
}

func analyzeRun(opts *Options) error {
	doc := &report.AnalyzeDoc{SchemaVersion: report.AnalyzeSchemaVersion, Files: []report.AnalyzeFile{}, TorchReleases: opts.Analysis.Releases}
	var errs []error
	for _, path := range opts.Files {
		progress.Phase("analyze "+path, 0)
		f, res, err := analyzeReleases(path, opts.Analysis)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		doc.Files = append(doc.Files, report.NewAnalyzeFile(path, f.Module, res))
	}
	p, _ := report.AnalyzeFormats.Printer(opts.Format) // checked in PreRunE
	if err := p.Print(opts.IO.Out, doc); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return errors.Join(errs...)
}
