// Package lint implements `hopctl lint`: every check over many graph files,
// with stable rule ids, severities, suppressions from the configuration,
// and text, JSON or SARIF output.
package lint

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cmdutil"
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/report"
)

// Options are the inputs of `hopctl lint`.
type Options struct {
	IO        *iostreams.IOStreams
	Config    func() (*hopconfig.Config, error)
	Files     []string
	Format    string // text, json or sarif
	Jobs      int
	ListRules bool
}

// NewCmdLint returns the lint command; runF replaces lintRun in tests.
func NewCmdLint(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Run every check over graph files (CI): text, JSON or SARIF",
		Long: `Run every hopctl check over one or more graph files, in parallel:
graph structure, schema arity and argument kinds, unknown ops, HOP input
mutation and aliasing, HOP metadata consistency and HOP operand types.
Every finding has a stable rule id and a severity; 'hopctl lint
--list-rules' lists them.

Suppressions come from the configuration file (.hopctl.yaml, --config or
$HOPCTL_CONFIG):

  version: 1
  lint:
    fail-on: warning
    suppress:
      - rule: unknown-op          # glob on the rule id
        path: "exported/*.pb"     # glob on the file path (or base name)
        graph: true_graph_0       # glob on the graph; <root> is the root
        node: "add_*"             # glob on the node name

--fail-on overrides $HOPCTL_LINT_FAIL_ON, which overrides lint.fail-on in
the file (default error).

Exit status, the same for every --format: 0 no finding at or above
--fail-on, 1 findings at or above --fail-on, 2 usage or configuration
error, 3 a file is unreadable or invalid: it fails verification, its
schema table does not parse, or a call does not fit its schema or its
subgraphs — the files other commands refuse. Their findings (rules marked
"invalid" in --list-rules) are still reported. Output order is the order
of the arguments.`,
		Example: `  hopctl lint exported/*.pb
  hopctl lint --format sarif exported/*.pb > hopctl.sarif
  hopctl lint --fail-on warning --config ci/hopctl.yaml model.pb
  hopctl lint --list-rules`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := cmdutil.Enum("format", opts.Format, "text", "json", "sarif"); err != nil {
				return err
			}
			if len(args) == 0 && !opts.ListRules {
				return cmdutil.FlagErrorf("lint: missing FILE... (see '%s --help')", cmd.CommandPath())
			}
			if opts.Jobs < 0 {
				return cmdutil.FlagErrorf("invalid value %d for --jobs (want 0 for one per CPU, or more)", opts.Jobs)
			}
			if runF != nil {
				return runF(opts)
			}
			return lintRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text, json or sarif")
	cmd.Flags().String("fail-on", "", "least severe level that fails the run: error, warning, info (note) or none (default lint.fail-on, else error)")
	cmdutil.BindFlag(cmd, "fail-on", hopconfig.KeyLintFailOn)
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, "files checked in parallel (0: one per CPU)")
	cmd.Flags().BoolVar(&opts.ListRules, "list-rules", false, "list the rules with their ids and severities, and exit")
	return cmd
}

func lintRun(opts *Options) error {
	if opts.ListRules {
		return listRules(opts)
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	supp, err := suppressions(cfg)
	if err != nil {
		return err
	}
	results := lint.Run(opts.Files, lint.Options{Jobs: opts.Jobs, Suppress: supp})
	doc := report.NewLintDoc(results, cfg.Lint.FailOn)
	switch opts.Format {
	case "json":
		err = report.WriteJSON(opts.IO.Out, doc)
	case "sarif":
		err = report.WriteJSON(opts.IO.Out, report.NewSARIF(doc, lint.Rules(), build.Version))
	default:
		err = report.WriteLintText(opts.IO.Out, doc)
	}
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return outcome(results, doc)
}

// outcome is the run's error: the files that could not be checked (exit
// 3), then the findings at or above --fail-on (exit 1).
func outcome(results []lint.FileResult, doc *report.LintDoc) error {
	var errs []error
	for _, r := range results {
		switch {
		case r.Err != nil:
			errs = append(errs, r.Err)
		case r.Invalid:
			errs = append(errs, &InvalidFileError{Path: r.Path})
		}
	}
	if doc.Summary.Failing > 0 {
		errs = append(errs, &cmdutil.FindingsError{Count: doc.Summary.Failing, Threshold: doc.FailOn})
	}
	return errors.Join(errs...)
}

// InvalidFileError is a file that decoded but is not a valid graph file: it
// fails verification or its schema table does not parse. Its findings say
// why.
type InvalidFileError struct{ Path string }

func (e *InvalidFileError) Error() string {
	return e.Path + ": invalid graph file (see its findings of structure, schema and hop-call rules)"
}

// InvalidInput marks InvalidFileError as an input error (exit code 3).
func (e *InvalidFileError) InvalidInput() {}

// suppressions converts and checks the configured suppressions: a rule
// without glob characters must be a known rule id.
func suppressions(cfg *hopconfig.Config) ([]lint.Suppression, error) {
	var out []lint.Suppression
	var errs []error
	for i, s := range cfg.Lint.Suppress {
		ls := lint.Suppression{Rule: s.Rule, Path: s.Path, Graph: s.Graph, Node: s.Node}
		if err := ls.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: %w", i, err))
		}
		if _, known := lint.LookupRule(s.Rule); !known && !strings.ContainsAny(s.Rule, "*?[") {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: unknown rule %q (see 'hopctl lint --list-rules')", i, s.Rule))
		}
		out = append(out, ls)
	}
	if len(errs) > 0 {
		return nil, &hopconfig.Error{File: cfg.File, Err: errors.Join(errs...)}
	}
	return out, nil
}

func listRules(opts *Options) error {
	rules := lint.Rules()
	switch opts.Format {
	case "json":
		return report.WriteJSON(opts.IO.Out, report.NewRuleDocs(rules))
	case "sarif":
		return report.WriteJSON(opts.IO.Out, report.NewSARIF(report.NewLintDoc(nil, hopconfig.FailOnLevels[0]), rules, build.Version))
	}
	return report.WriteRulesText(opts.IO.Out, rules)
}
