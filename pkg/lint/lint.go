// Package lint runs every hopctl check over graph files, as `hopctl lint`
// does: graph structure (ir.Verify, each defect kind a rule), the file's
// schema table, and every analyzer of package passes (HOP mutation and
// aliasing, HOP metadata, HOP operand types, schema arity and argument
// kinds, unknown ops). Files are checked in parallel by a bounded pool of
// workers; results come back in argument order, findings sorted by graph,
// node, rule and message, so output is deterministic.
//
// A file that fails ir.Verify is invalid input: its structure findings are
// reported and nothing else runs on it. A file whose schema table does not
// parse, or with a call that does not fit its schema or its subgraphs, is
// invalid input too (every hopctl command refuses it, see package
// validate), but lint runs every check on it and reports those problems as
// findings of their rules. A file that cannot be read or decoded has no
// findings, only an error. Suppressions hide findings; they do not make an
// invalid file valid.
package lint

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// FileResult is what lint found in one file.
type FileResult struct {
	Path string
	// Findings are the findings not suppressed, sorted.
	Findings []analyze.Finding
	// Details[i] is what lint resolved of Findings[i] in the module.
	Details []Detail
	// Suppressed counts the findings a suppression hid.
	Suppressed int
	// SuppressedFindings are the findings a suppression hid, in order:
	// outputs that can say so (SARIF, JSON) still list them.
	SuppressedFindings []SuppressedFinding
	// Err is set when the file could not be read or decoded (an
	// ir.InputError), or checking it hit a bug of hopctl (an
	// *ir.InternalError); there are no findings then.
	Err error
	// Mutations are the writes the program makes to its root graph's
	// inputs, each with its provenance (sigmut.Mutations: a node, or the
	// graph signature's declaration), for outputs that carry facts beside
	// findings (SARIF's artifact properties).
	Mutations []sigmut.Mutation
	// Invalid is set when the file is invalid input: it has a finding of
	// a rule marked Invalid (it failed Verify, its schema table does not
	// parse, or a call does not fit its schema or subgraphs).
	Invalid bool
	// Skipped is why a directory walk did not read the file (ExpandEntries):
	// it is not a regular file. There are no findings then.
	Skipped string
}

// SuppressedFinding is a finding a suppression hid.
type SuppressedFinding struct {
	Finding analyze.Finding
	Detail  Detail
	// By is the index of the first matching suppression in
	// Options.Suppress.
	By int
}

// Options configure a run.
type Options struct {
	// Jobs bounds the files checked at once; <= 0 means GOMAXPROCS.
	Jobs int
	// Suppress lists the findings not to report.
	Suppress []Suppression
	// Root is the directory fingerprints take file paths relative to (the
	// repository's root, so that a baseline written in one directory
	// matches in another); "" means paths as given.
	Root string
	// Analysis are the options of each file's analysis run (the torch
	// release whose HOP rules apply).
	Analysis analyze.Options
}

// Run checks every file, Jobs at a time, and returns the results in the
// order of paths.
func Run(paths []string, opts Options) []FileResult {
	out, _ := RunCounting(paths, opts)
	return out
}

// RunCounting is Run that also returns, for every suppression of
// opts.Suppress, how many findings it hid (a finding counts for the first
// suppression that matches it).
func RunCounting(paths []string, opts Options) ([]FileResult, []int) {
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, max(len(paths), 1))
	out := make([]FileResult, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = checkFile(paths[i], opts)
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	counts := make([]int, len(opts.Suppress))
	for _, r := range out {
		for _, s := range r.SuppressedFindings {
			counts[s.By]++
		}
	}
	return out, counts
}

// RelPath is file's path relative to root, with forward slashes; file as
// given (cleaned) when root is "" or file is not under it.
func RelPath(root, file string) string {
	if root != "" {
		if rel, ok := RelTo(root, file); ok {
			return rel
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

// RelTo is file's path relative to directory root, with forward slashes,
// and whether file is under root. Paths are compared absolute, then, if
// that puts file outside root, with symbolic links resolved (a working
// directory reached through a link, a root git reports resolved).
func RelTo(root, file string) (string, bool) {
	rel := func(r, f string) (string, bool) {
		x, err := filepath.Rel(r, f)
		if err != nil || x == ".." || strings.HasPrefix(x, ".."+string(filepath.Separator)) {
			return "", false
		}
		return filepath.ToSlash(x), true
	}
	r, err1 := filepath.Abs(root)
	f, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return "", false
	}
	if x, ok := rel(r, f); ok {
		return x, true
	}
	rr, err1 := filepath.EvalSymlinks(r)
	// The file itself may not exist (a stack trace's file): resolve its
	// directory.
	fd, err2 := filepath.EvalSymlinks(filepath.Dir(f))
	if err1 != nil || err2 != nil {
		return "", false
	}
	return rel(rr, filepath.Join(fd, filepath.Base(f)))
}

func (r *FileResult) fingerprint(root string) {
	if len(r.Details) == len(r.Findings) {
		fingerprints(RelPath(root, r.Path), r.Findings, r.Details)
	}
}

// checkFile checks one file on a worker goroutine, where a panic cannot
// reach hopctl's top level: it becomes the file's error, an
// *ir.InternalError.
func checkFile(p string, opts Options) (r FileResult) {
	defer func() {
		if v := recover(); v != nil {
			r = FileResult{Path: p, Err: ir.Panicked("lint", ir.Location{File: p}, v)}
		}
	}()
	f, err := load.Open(p, load.Lenient)
	if err != nil {
		r = FileResult{Path: p, Err: err}
	} else {
		r = checkReleases(f, opts.Analysis)
	}
	r.fingerprint(opts.Root)
	r.suppress(opts.Suppress)
	return r
}

// File checks one file, without suppressions.
func File(p string) FileResult {
	f, err := load.Open(p, load.Lenient)
	if err != nil {
		return FileResult{Path: p, Err: err}
	}
	return check(f, analyze.Options{})
}

// Module checks a decoded module read from file p, without suppressions.
func Module(m *ir.Module, p string) FileResult {
	f, err := load.Module(m, p, load.Lenient)
	if err != nil {
		return FileResult{Path: p, Err: err}
	}
	return check(f, analyze.Options{})
}

// checkReleases runs every check on a file opened leniently, under each
// release of opts.Releases when there are several: one finding per
// finding of any release, with the releases that report it
// (analyze.MergeReleases). The file is invalid when some release finds
// it so; its signature mutations are the newest release's.
func checkReleases(f *load.File, opts analyze.Options) FileResult {
	if len(opts.Releases) < 2 {
		return check(f, opts)
	}
	var runs [][]analyze.Finding
	var r FileResult
	invalid := false
	for _, v := range opts.Releases {
		r = check(f, opts.ForRelease(v))
		if r.Err != nil {
			return r
		}
		runs = append(runs, r.Findings)
		invalid = invalid || r.Invalid
	}
	r.Findings = analyze.MergeReleases(f.Module, opts.Releases, runs)
	analyze.SortFindings(f.Module, r.Findings)
	r.Invalid = invalid
	r.resolve(f.Module)
	return r
}

// check runs every check on a file opened leniently.
func check(f *load.File, opts analyze.Options) FileResult {
	m, p := f.Module, f.Path
	r := FileResult{Path: p, Findings: problemFindings(f.Problems), Invalid: f.Invalid()}
	if !f.Verified {
		analyze.SortFindings(m, r.Findings)
		r.resolve(m)
		return r
	}
	if _, err := analyze.CallOrder(m); err != nil {
		r.Invalid = true
		r.Findings = append(r.Findings, analyze.Finding{Rule: RuleCycle, Severity: analyze.Error, Message: err.Error(), FileWide: true})
		r.resolve(m)
		return r
	}
	res, err := analyze.RunWith(m, p, f.Registry, opts, passes.All()...)
	var bug *ir.InternalError
	switch {
	case errors.As(err, &bug):
		r.Err = bug
		return r
	case err != nil:
		r.Err = &AnalysisError{File: p, Err: err}
		return r
	}
	r.Findings = append(r.Findings, res.Findings...)
	if s, ok := res.Results[alias.Analyzer][""].(*alias.Summary); ok {
		r.Mutations = sigmut.Mutations(m, s)
	}
	analyze.SortFindings(m, r.Findings)
	for _, f := range r.Findings {
		if rule, ok := LookupRule(f.Rule); ok && rule.Invalid {
			r.Invalid = true
		}
	}
	r.resolve(m)
	return r
}

// resolve fills Details, with fingerprints of the path as given.
func (r *FileResult) resolve(m *ir.Module) {
	r.Details = make([]Detail, len(r.Findings))
	graph := m.GraphLookup()
	for i, f := range r.Findings {
		r.Details[i] = detail(graph, f)
	}
	r.fingerprint("")
}

// AnalysisError is an analyzer that could not finish on a file; the file is
// treated as invalid input.
type AnalysisError struct {
	File string
	Err  error
}

func (e *AnalysisError) Error() string { return e.Err.Error() }
func (e *AnalysisError) Unwrap() error { return e.Err }

// InvalidInput marks AnalysisError as an input error (exit code 3).
func (e *AnalysisError) InvalidInput() {}

// Suppression hides the findings that match all of its non-empty fields.
// Rule, Graph and Node are globs ("hop-*", "true_graph_*", "add_*"); Graph
// "<root>" names the root graph. Path is a glob in which "**" matches any
// number of directories ("models/**/*.pb"), matched against the file path
// as given, against it relative to Dir (the directory of the configuration
// file) and, when the glob has no slash, against the file's base name.
// Reason says why; the configuration requires it.
type Suppression struct {
	Rule, Path, Graph, Node string
	Reason                  string
	// Dir is the directory Path is relative to, besides the current one.
	Dir string
}

// Validate checks the globs.
func (s Suppression) Validate() error {
	for _, g := range []struct{ name, glob string }{{"rule", s.Rule}, {"path", s.Path}, {"graph", s.Graph}, {"node", s.Node}} {
		if !doublestar.ValidatePattern(g.glob) {
			return fmt.Errorf("invalid %s glob %q", g.name, g.glob)
		}
	}
	return nil
}

// Matches reports whether the suppression hides finding f of file.
func (s Suppression) Matches(file string, f analyze.Finding) bool {
	if !glob(s.Rule, f.Rule) {
		return false
	}
	if s.Path != "" {
		p := filepath.ToSlash(filepath.Clean(file))
		ok := glob(s.Path, p)
		if !ok && s.Dir != "" {
			ok = glob(s.Path, RelPath(s.Dir, file))
		}
		if !ok && !strings.Contains(s.Path, "/") {
			ok = glob(s.Path, path.Base(p))
		}
		if !ok {
			return false
		}
	}
	if s.Graph != "" && !(glob(s.Graph, f.Graph) || (s.Graph == "<root>" && f.Graph == "")) {
		return false
	}
	return s.Node == "" || glob(s.Node, f.Node)
}

func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, err := doublestar.Match(pattern, s)
	return err == nil && ok
}

func (r *FileResult) suppress(ss []Suppression) {
	if len(ss) == 0 {
		return
	}
	kept := r.Findings[:0]
	keptD := r.Details[:0]
	for i, f := range r.Findings {
		by := -1
		for j, s := range ss {
			if s.Matches(r.Path, f) {
				by = j
				break
			}
		}
		if by >= 0 {
			r.Suppressed++
			r.SuppressedFindings = append(r.SuppressedFindings, SuppressedFinding{Finding: f, Detail: r.Details[i], By: by})
		} else {
			kept = append(kept, f)
			keptD = append(keptD, r.Details[i])
		}
	}
	r.Findings = kept
	r.Details = keptD
}
