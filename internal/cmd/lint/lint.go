// Package lint implements `hopctl lint`: every check over graph files and
// directories, with stable rule ids, severities, fingerprints, suppressions
// from the configuration, baselines, git-diff filtering, and text, JSON,
// SARIF, GitHub-annotation and JUnit output, several at once.
package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cmdutil"
	hopconfig "github.com/hopctl/hopctl/internal/config"
	"github.com/hopctl/hopctl/internal/gitutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/internal/progress"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/report"
)

// Options are the inputs of `hopctl lint`.
type Options struct {
	IO        *iostreams.IOStreams
	Config    func() (*hopconfig.Config, error)
	Files     []string
	Formats   []string // FORMAT or FORMAT=FILE, each once
	Jobs      int
	ListRules bool

	Baseline      string // --baseline FILE
	WriteBaseline string // --write-baseline FILE
	NewFromRev    string // --new-from-rev REV
	SourceRoot    string // --source-root DIR
	PathPrefix    string // --path-prefix P
}

// Formats lint writes.
var formats = []string{"text", "json", "sarif", "github", "junit"}

// output is one --format: where it goes ("" is stdout).
type output struct{ format, file string }

// NewCmdLint returns the lint command; runF replaces lintRun in tests.
func NewCmdLint(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "lint FILE|DIR|DIR/...",
		Short: "Run every check over graph files (CI): text, JSON, SARIF, GitHub annotations, JUnit",
		Long: `Run every hopctl check over graph files, in parallel: graph structure,
schema arity and argument kinds, unknown ops, HOP input mutation and
aliasing, HOP metadata consistency and HOP operand types. Every finding has
a stable rule id, a severity and a fingerprint; 'hopctl lint --list-rules'
lists the rules, docs/lint-rules.md documents them.

Arguments are files, directories (the graph files in them) or DIR/...
(the graph files under DIR, recursively; ./... is the current directory):
files ending in .pb, .binpb, .pbtxt, .txtpb, .textproto, .prototxt and
.pt2, and .json files that are hopctl graphs or torch.export programs. Directories starting with '.' or '_'
and node_modules are skipped.

Suppressions come from the configuration file (--config, $HOPCTL_CONFIG,
else .hopctl.yaml from the current directory up to the repository's root);
every suppression needs a reason, and those that matched nothing are
reported on stderr:

  version: 1
  lint:
    fail-on: warning
    suppress:
      - rule: unknown-op          # glob on the rule id
        path: "exported/**/*.pb"  # glob on the file path; ** spans directories
        graph: true_graph_0       # glob on the graph; <root> is the root
        node: "add_*"             # glob on the node name
        reason: mylib ops are checked by their own tests

--fail-on overrides $HOPCTL_LINT_FAIL_ON, which overrides lint.fail-on in
the file (default error).

Baselines: --write-baseline FILE records the run's findings by fingerprint
(which a re-export that renumbers nodes keeps); --baseline FILE then fails
only on findings it does not list. --new-from-rev REV lints only the graph
files changed since git revision REV (committed or not, and untracked ones).

Outputs: --format FORMAT[=FILE], repeatable: text, json, sarif (GitHub code
scanning), github (workflow command annotations) or junit; without =FILE
the report goes to stdout (at most one), with it to FILE, written
atomically. SARIF and github locations are relative to --source-root
(default: the git checkout's top level, else the current directory), with
--path-prefix in front.

Exit status, the same for every --format: 0 no finding at or above
--fail-on (outside the baseline), 1 findings at or above --fail-on, 2 usage
or configuration error, 3 a file is unreadable or invalid: it fails
verification, its schema table does not parse, or a call does not fit its
schema or its subgraphs — the files other commands refuse. Their findings
(rules marked "invalid" in --list-rules) are still reported. Output order
is the order of the arguments.`,
		Example: `  hopctl lint ./...
  hopctl lint exported/*.pb --format text --format sarif=hopctl.sarif
  hopctl lint models/ --write-baseline .hopctl-baseline.json
  hopctl lint ./... --baseline .hopctl-baseline.json --format github
  hopctl lint ./... --new-from-rev origin/main
  hopctl lint --fail-on warning --config ci/hopctl.yaml model.pb
  hopctl lint --list-rules`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if _, err := parseOutputs(opts.Formats); err != nil {
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
	cmd.Flags().StringArrayVar(&opts.Formats, "format", []string{"text"}, "output format, repeatable: text, json, sarif, github or junit, each as FORMAT (stdout) or FORMAT=FILE")
	cmd.Flags().String("fail-on", "", "least severe level that fails the run: error, warning, info (note) or none, or supported: the errors a release of input.torch-supported reports (default lint.fail-on, else error)")
	cmdutil.BindFlag(cmd, "fail-on", hopconfig.KeyLintFailOn)
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, "files checked in parallel (0: one per CPU)")
	cmd.Flags().BoolVar(&opts.ListRules, "list-rules", false, "list the rules with their ids and severities, and exit")
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "fail only on findings this baseline file does not list")
	cmd.Flags().StringVar(&opts.WriteBaseline, "write-baseline", "", "write the run's findings to this baseline file (the run is then judged against it)")
	cmd.Flags().StringVar(&opts.NewFromRev, "new-from-rev", "", "lint only graph files changed since this git revision")
	cmd.Flags().StringVar(&opts.SourceRoot, "source-root", "", "directory SARIF and github locations are relative to (default: the git top level, else the current directory)")
	cmd.Flags().StringVar(&opts.PathPrefix, "path-prefix", "", "prefix of every relative SARIF and github location (where the source root is in the repository)")
	return cmd
}

// parseOutputs checks the --format values: known formats, at most one on
// stdout, no file twice.
func parseOutputs(values []string) ([]output, error) {
	var out []output
	stdout, files := 0, map[string]bool{}
	for _, v := range values {
		format, file, hasFile := strings.Cut(v, "=")
		if err := cmdutil.Enum("format", format, formats...); err != nil {
			return nil, err
		}
		if hasFile {
			if file == "" {
				return nil, cmdutil.FlagErrorf("--format %s=: missing file name", format)
			}
			if files[filepath.Clean(file)] {
				return nil, cmdutil.FlagErrorf("--format: %s is written twice", file)
			}
			files[filepath.Clean(file)] = true
		} else if stdout++; stdout > 1 {
			return nil, cmdutil.FlagErrorf("--format: at most one format without =FILE goes to stdout")
		}
		out = append(out, output{format, file})
	}
	return out, nil
}

func lintRun(opts *Options) error {
	if opts.ListRules {
		return listRules(opts)
	}
	outs, err := parseOutputs(opts.Formats)
	if err != nil {
		return err
	}
	progress.Phase("lint", 0)
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	supp, err := cfg.LintSuppressions()
	if err != nil {
		return err
	}
	analysis, err := cmdutil.ConfigAnalysisOptions(cfg)
	if err != nil {
		return err
	}
	// --fail-on supported asks about the supported releases: without
	// --torch-version the run is over them.
	supported := cmdutil.SupportedReleases(cfg)
	if cfg.Lint.FailOn == report.FailOnSupported && cfg.Input.TorchVersion == "" {
		if len(supported) > 1 {
			analysis.Releases = supported
		} else if len(supported) == 1 {
			analysis.TorchVersion = supported[0]
		}
	}
	root := opts.SourceRoot
	var vcs *report.VCS
	if co, err := gitutil.Describe("."); err == nil {
		if root == "" {
			root = co.Top
		}
		vcs = &report.VCS{RepositoryURI: co.RemoteURI, Revision: co.Revision, Branch: co.Branch}
	}
	if root == "" {
		root = "."
	}
	var baseline map[string]bool
	if opts.Baseline != "" {
		b, err := lint.ReadBaseline(opts.Baseline)
		if err != nil {
			return &hopconfig.Error{Err: fmt.Errorf("--baseline: %w", err)}
		}
		baseline = b.Set()
	}
	entries, err := lint.ExpandEntries(opts.Files)
	if err != nil {
		return cmdutil.FlagErrorf("lint: %v", err)
	}
	var files []string
	for _, e := range entries {
		if e.Skip == "" && e.Err == nil {
			files = append(files, e.Path)
		}
	}
	if len(entries) == 0 {
		msg := "lint: no graph files in " + strings.Join(opts.Files, " ")
		if other := lint.NotGraphFiles(opts.Files); other != "" {
			// A project's checkpoints, TorchScript, ONNX or sources: say
			// what hopctl reads instead of only that nothing was found.
			msg += fmt.Sprintf(": the %s there are not graph files; export the model: %s", other, ir.ExportHint)
		}
		return cmdutil.FlagErrorf("%s", msg)
	}
	if err := checkOutputs(opts, outs, files); err != nil {
		return err
	}
	if opts.NewFromRev != "" {
		changed, err := gitutil.ChangedSince(".", opts.NewFromRev)
		if err != nil {
			return cmdutil.FlagErrorf("--new-from-rev: %v", err)
		}
		kept := entries[:0]
		for _, e := range entries {
			if abs, err := filepath.Abs(e.Path); err == nil && changed[abs] {
				kept = append(kept, e)
			}
		}
		entries = kept
		files = files[:0]
		for _, e := range entries {
			if e.Skip == "" && e.Err == nil {
				files = append(files, e.Path)
			}
		}
	}
	checked, counts := lint.RunCounting(files, lint.Options{Jobs: opts.Jobs, Suppress: supp, Root: root,
		Analysis: analysis})
	// Every entry in the order the walk found it: the files checked, the
	// ones it skipped (with why) and the paths it could not list.
	results := make([]lint.FileResult, 0, len(entries))
	for _, e := range entries {
		switch {
		case e.Err != nil:
			results = append(results, lint.FileResult{Path: e.Path, Err: &ir.DecodeError{Loc: ir.Location{File: e.Path}, Err: ir.WithoutPath(e.Err)}})
		case e.Skip != "":
			results = append(results, lint.FileResult{Path: e.Path, Skipped: e.Skip})
		default:
			results = append(results, checked[0])
			checked = checked[1:]
		}
	}
	// Every output is built before any is written, and the files are
	// written as one step (all or nothing), then standard output.
	var w outputWriter
	if opts.WriteBaseline != "" {
		b := lint.NewBaseline(results, root)
		data, err := b.Encode()
		if err != nil {
			return fmt.Errorf("writing baseline: %w", err)
		}
		w.add(opts.WriteBaseline, data)
		if baseline == nil {
			baseline = map[string]bool{}
		}
		for fp := range b.Set() {
			baseline[fp] = true
		}
	}
	doc := report.NewLintDocWith(results, report.LintOptions{FailOn: cfg.Lint.FailOn, Baseline: baseline,
		Suppress: supp, Counts: counts, ConfigFile: cfg.File, Releases: analysis.Releases,
		Supported: supported, Release: analysis.TorchVersion})
	// A run over the files --new-from-rev kept says nothing about the
	// suppressions that would match the others.
	if opts.NewFromRev != "" {
		doc.UnmatchedSuppressions = nil
	}
	so := report.SARIFOptions{SourceRoot: root, PathPrefix: opts.PathPrefix, VCS: vcs}
	printers := report.LintFormats(lint.Rules(), build.Version, so)
	for _, o := range outs {
		var buf bytes.Buffer
		p, _ := printers.Printer(o.format) // parseOutputs checked the name
		err = p.Print(&buf, doc)
		if err != nil {
			return fmt.Errorf("writing %s report: %w", o.format, err)
		}
		w.add(o.file, buf.Bytes())
	}
	if err := w.write(opts.IO.Out); err != nil {
		return err
	}
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(opts.IO.ErrOut, "hopctl: %s: warning: skipped: %s\n", ir.Printable(r.Path), r.Skipped)
		}
	}
	for _, u := range doc.UnmatchedSuppressions {
		where := "hopctl: "
		if u.File != "" {
			where += u.File + ": "
		}
		fmt.Fprintf(opts.IO.ErrOut, "%swarning: %s matched no finding\n", where, u.Describe())
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

func listRules(opts *Options) error {
	rules := lint.Rules()
	outs, err := parseOutputs(opts.Formats)
	if err != nil {
		return err
	}
	if err := checkOutputs(&Options{IO: opts.IO}, outs, nil); err != nil {
		return err
	}
	var w outputWriter
	for _, o := range outs {
		var buf bytes.Buffer
		p, ok := report.RuleFormats(build.Version).Printer(o.format)
		if !ok {
			return cmdutil.FlagErrorf("--list-rules: no rule listing in format %s (want text, json or sarif)", o.format)
		}
		err = p.Print(&buf, rules)
		if err != nil {
			return fmt.Errorf("writing the rules: %w", err)
		}
		w.add(o.file, buf.Bytes())
	}
	return w.write(opts.IO.Out)
}

// checkOutputs refuses, before any file is read, report files and a
// --write-baseline file that are one of the graph files (however
// spelled: files are compared, not names), the same file twice, or the
// file standard output goes to; and report files that are the --baseline
// file. --write-baseline may name the --baseline file: it is read in full
// first, then replaced (updating a baseline).
func checkOutputs(opts *Options, outs []output, graphs []string) error {
	var reports []string
	for _, o := range outs {
		if o.file != "" {
			reports = append(reports, o.file)
		}
	}
	all := append(slices.Clone(reports), opts.WriteBaseline)
	if err := cmdutil.CheckOutputs(graphs, all...); err != nil {
		return err
	}
	if opts.Baseline != "" {
		if err := cmdutil.CheckConfigOutputs([]string{opts.Baseline}, reports...); err != nil {
			return err
		}
	}
	return cmdutil.CheckStdout(opts.IO.Out, all...)
}

// outputWriter collects a run's outputs: files, written together (all or
// nothing), and standard output (path ""), written after them.
type outputWriter struct {
	paths  []string
	datas  [][]byte
	stdout []byte
}

func (w *outputWriter) add(path string, data []byte) {
	if path == "" {
		w.stdout = data
		return
	}
	w.paths = append(w.paths, path)
	w.datas = append(w.datas, data)
}

func (w *outputWriter) write(out io.Writer) error {
	if len(w.paths) > 0 {
		if err := atomicfile.WriteFiles(w.paths, w.datas); err != nil {
			return fmt.Errorf("cannot write the outputs: %w", err)
		}
	}
	if w.stdout != nil {
		_, err := out.Write(w.stdout)
		return err
	}
	return nil
}
