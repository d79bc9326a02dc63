package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// LintSchemaVersion is the version of the `hopctl lint --format json`
// document. It changes only when a key is removed or changes meaning.
const LintSchemaVersion = 1

// LintDoc is the `hopctl lint --format json` document:
//
//	{"schema_version": 1, "fail_on": "error",
//	 "files": [{"path": "a.pb", "status": "ok", "findings": [...], "suppressed": 0}],
//	 "summary": {"files": 1, "findings": 0, "errors": 0, "warnings": 0, "infos": 0,
//	             "suppressed": 0, "failing": 0, "invalid_files": 0}}
//
// status is "ok", "invalid" (the file failed verification or its schema
// table does not parse; its structure findings are listed) or "unreadable"
// (it could not be read or decoded; error says why). failing counts the
// findings at or above fail_on.
//
// Keys added since (new keys, same schema_version): every finding has its
// "fingerprint"; with --baseline, findings the baseline lists have
// "in_baseline": true and do not count as failing (summary.baselined counts
// them); the findings suppressions hid are listed per file as
// "suppressed_findings", each with its "suppression" (index and reason);
// "unmatched_suppressions" lists the suppressions that hid nothing; status
// "skipped" is a file a directory walk did not read (a named pipe, a
// device, a link to a directory: "reason" says why), counted in
// summary.skipped and not in summary.files.
//
// In a run over several torch releases (--torch-version 2.6,2.14),
// "torch_releases" lists them, every finding has "releases" (which of
// them report it: FindingReleases) and fail_on may be "supported" (the
// errors a release of "torch_supported" reports fail the run).
type LintDoc struct {
	SchemaVersion  int         `json:"schema_version"`
	TorchReleases  []string    `json:"torch_releases,omitempty"`
	TorchSupported []string    `json:"torch_supported,omitempty"`
	FailOn         string      `json:"fail_on"`
	Files          []LintFile  `json:"files"`
	Summary        LintSummary `json:"summary"`
	// UnmatchedSuppressions are the configured suppressions that matched
	// no finding in this run.
	UnmatchedSuppressions []UnmatchedSuppression `json:"unmatched_suppressions,omitempty"`

	// baseline is set when the run had a baseline (SARIF's
	// baselineState is then set on every result).
	baseline bool
}

// UnmatchedSuppression is a configured suppression that hid nothing.
type UnmatchedSuppression struct {
	File   string `json:"file,omitempty"` // the configuration file
	Index  int    `json:"index"`          // its index in lint.suppress
	Rule   string `json:"rule"`
	Path   string `json:"path,omitempty"`
	Graph  string `json:"graph,omitempty"`
	Node   string `json:"node,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Describe is the suppression in one line: `lint.suppress[2] (rule
// unknown-op, path models/**)`.
func (u UnmatchedSuppression) Describe() string {
	parts := []string{"rule " + u.Rule}
	for _, kv := range [][2]string{{"path", u.Path}, {"graph", u.Graph}, {"node", u.Node}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return fmt.Sprintf("lint.suppress[%d] (%s)", u.Index, strings.Join(parts, ", "))
}

// LintFile is one linted file.
type LintFile struct {
	Path               string    `json:"path"`
	Status             string    `json:"status"`
	Error              string    `json:"error,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Findings           []Finding `json:"findings"`
	Suppressed         int       `json:"suppressed"`
	SuppressedFindings []Finding `json:"suppressed_findings,omitempty"`

	// details[i] and suppressedDetails[i] resolve Findings[i] and
	// SuppressedFindings[i] (steps with stack traces, for SARIF).
	details, suppressedDetails []lint.Detail
	// mutations are the program's writes to its inputs (lint.FileResult's),
	// for SARIF's artifact properties.
	mutations []sigmut.Mutation
}

// LintSummary counts a run's outcome.
type LintSummary struct {
	Files        int `json:"files"`
	Findings     int `json:"findings"`
	Errors       int `json:"errors"`
	Warnings     int `json:"warnings"`
	Infos        int `json:"infos"`
	Suppressed   int `json:"suppressed"`
	Failing      int `json:"failing"`
	InvalidFiles int `json:"invalid_files"`
	Baselined    int `json:"baselined"`
	Skipped      int `json:"skipped"`
}

// File statuses.
const (
	StatusOK         = "ok"
	StatusInvalid    = "invalid"
	StatusUnreadable = "unreadable"
	StatusSkipped    = "skipped"
)

// FailOnNone is the fail-on level no finding reaches.
const FailOnNone = "none"

// FailOnSupported is the fail-on level of the errors some supported torch
// release (LintOptions.Supported) reports: a library that supports
// 2.6..2.14 fails on what any of them refuses, not on what only an
// unsupported release would.
const FailOnSupported = "supported"

// FailOnSeverity parses a fail-on level: error, warning, info (or note, its
// SARIF name) and none. ok is false for none.
func FailOnSeverity(level string) (sev analyze.Severity, ok bool, err error) {
	switch level {
	case FailOnNone:
		return 0, false, nil
	case FailOnSupported:
		return analyze.Error, true, nil
	case "note":
		return analyze.Info, true, nil
	}
	s, err := analyze.ParseSeverity(level)
	return s, err == nil, err
}

// LintOptions are what a lint document needs besides the results.
type LintOptions struct {
	FailOn string
	// Baseline holds the fingerprints of a --baseline file; nil when the
	// run has none.
	Baseline map[string]bool
	// Suppress are the run's suppressions, Counts how many findings each
	// hid (lint.RunCounting), ConfigFile the file they come from.
	Suppress   []lint.Suppression
	Counts     []int
	ConfigFile string
	// Releases are the torch releases of a run over several (each
	// finding's Releases then says which report it); Release the one
	// release of another run ("" the files' own). Supported are the
	// project's releases, which FailOn "supported" gates on.
	Releases  []string
	Release   string
	Supported []string
}

// refusedBySupported reports whether finding f, an error, is reported by
// a supported release: by one of its Releases, or, in a run over one
// release, when that release is supported ("" the files' own: it counts).
func (o LintOptions) refusedBySupported(f analyze.Finding) bool {
	if f.Releases == nil {
		v := opschema.NormalizeTorchVersion(o.Release)
		return v == "" || slices.Contains(o.Supported, v)
	}
	for _, v := range f.Releases.Reported {
		if slices.Contains(o.Supported, v) {
			return true
		}
	}
	return false
}

// NewLintDoc builds the document of a run without baseline.
func NewLintDoc(results []lint.FileResult, failOn string) *LintDoc {
	return NewLintDocWith(results, LintOptions{FailOn: failOn})
}

// NewLintDocWith builds the document of a run.
func NewLintDocWith(results []lint.FileResult, o LintOptions) *LintDoc {
	failOn := o.FailOn
	doc := &LintDoc{SchemaVersion: LintSchemaVersion, FailOn: failOn, Files: []LintFile{}, baseline: o.Baseline != nil,
		TorchReleases: o.Releases}
	if failOn == FailOnSupported {
		doc.TorchSupported = o.Supported
	}
	threshold, fails, _ := FailOnSeverity(failOn)
	for i, s := range o.Suppress {
		if i < len(o.Counts) && o.Counts[i] == 0 {
			doc.UnmatchedSuppressions = append(doc.UnmatchedSuppressions, UnmatchedSuppression{File: o.ConfigFile, Index: i,
				Rule: s.Rule, Path: s.Path, Graph: s.Graph, Node: s.Node, Reason: s.Reason})
		}
	}
	for _, r := range results {
		lf := LintFile{Path: r.Path, Status: StatusOK, Findings: []Finding{}, Suppressed: r.Suppressed,
			details: r.Details, mutations: r.Mutations}
		for _, sf := range r.SuppressedFindings {
			f := NewFinding(sf.Finding)
			f.Fingerprint = sf.Detail.Fingerprint
			f.Suppression = &SuppressionInfo{Index: sf.By}
			if sf.By < len(o.Suppress) {
				f.Suppression.Reason = o.Suppress[sf.By].Reason
			}
			lf.SuppressedFindings = append(lf.SuppressedFindings, f)
			lf.suppressedDetails = append(lf.suppressedDetails, sf.Detail)
		}
		switch {
		case r.Skipped != "":
			lf.Status, lf.Reason = StatusSkipped, r.Skipped
			doc.Summary.Skipped++
		case r.Err != nil:
			lf.Status, lf.Error = StatusUnreadable, r.Err.Error()
			doc.Summary.InvalidFiles++
		case r.Invalid:
			lf.Status = StatusInvalid
			doc.Summary.InvalidFiles++
		}
		for i, f := range r.Findings {
			jf := NewFinding(f)
			if i < len(r.Details) {
				jf.Fingerprint = r.Details[i].Fingerprint
			}
			jf.InBaseline = o.Baseline[jf.Fingerprint] && jf.Fingerprint != ""
			lf.Findings = append(lf.Findings, jf)
			if jf.InBaseline {
				doc.Summary.Baselined++
			}
			switch f.Severity {
			case analyze.Error:
				doc.Summary.Errors++
			case analyze.Warning:
				doc.Summary.Warnings++
			default:
				doc.Summary.Infos++
			}
			if fails && f.Severity >= threshold && !jf.InBaseline && (failOn != FailOnSupported || o.refusedBySupported(f)) {
				doc.Summary.Failing++
			}
		}
		doc.Summary.Findings += len(r.Findings)
		doc.Summary.Suppressed += r.Suppressed
		doc.Files = append(doc.Files, lf)
	}
	doc.Summary.Files = len(results) - doc.Summary.Skipped
	return doc
}

// WriteLintText renders a run for people, golangci-lint style: one line per
// finding ("path: graph g: node n: severity: message [rule]"), message
// continuation lines indented, then the provenance as analyze prints it
// (input → views → path, and the stack trace with the source line) and the
// rule's fix ("help: ..."), then a summary line. Findings a --baseline
// lists are only counted. Files that could not be read are counted in the
// summary; the command reports their errors on stderr.
func WriteLintText(w io.Writer, doc *LintDoc) error {
	var b strings.Builder
	for _, f := range doc.Files {
		for _, fd := range f.Findings {
			if fd.InBaseline {
				continue
			}
			loc := ir.Printable(f.Path)
			if !fd.FileWide {
				loc += ": graph " + ir.Abbrev(ir.DisplayName(fd.Graph))
			}
			if fd.Node != "" {
				loc += ": node " + ir.Abbrev(fd.Node)
			}
			lines := strings.Split(printableLines(strings.TrimRight(fd.Message, "\n")), "\n")
			fmt.Fprintf(&b, "%s: %s: %s [%s]\n", loc, fd.Severity, lines[0], ir.Printable(fd.Rule))
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "    %s\n", l)
			}
			writeProvenanceText(&b, "    ", fd.Provenance)
			if l := releasesLine(fd.Releases); l != "" {
				fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(l, "\n", "\n    "))
			}
			writeHelpText(&b, "    ", fd)
		}
	}
	s := doc.Summary
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{s.Errors, "error"}, {s.Warnings, "warning"}, {s.Infos, "info"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s%s", c.n, c.name, plural(c.n)))
		}
	}
	detail := ""
	if len(parts) > 0 {
		detail = " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(&b, "%d finding%s%s in %d file%s", s.Findings, plural(s.Findings), detail, s.Files, plural(s.Files))
	if s.Suppressed > 0 {
		fmt.Fprintf(&b, ", %d suppressed", s.Suppressed)
	}
	if s.InvalidFiles > 0 {
		fmt.Fprintf(&b, ", %d invalid file%s", s.InvalidFiles, plural(s.InvalidFiles))
	}
	if s.Baselined > 0 {
		fmt.Fprintf(&b, ", %d in the baseline", s.Baselined)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", s.Skipped)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHelpText prints the fix of a finding's rule under it, as rustc and
// ruff print theirs: "help: return a fresh tensor ...". The text is the
// rule table's (analyze.Rule.Fix), the one hopctl explain shows.
//
// Under it, a HOP alias or mutation finding's own fix (analyze.Fix): which
// output aliases which input or which write to undo, and the line to
// change as the program's stack trace records it, as rustc prints a
// suggestion under its help.
func writeHelpText(b *strings.Builder, indent string, f Finding) {
	if fix := ruleFix(f.Rule); fix != "" {
		fmt.Fprintf(b, "%shelp: %s\n", indent, fix)
	}
	if x := f.Fix; x != nil && x.Text != "" {
		fmt.Fprintf(b, "%s  here: %s\n", indent, ir.Printable(x.Text))
		if x.Source != "" && x.Code != "" && x.Suggestion != "" {
			fmt.Fprintf(b, "%s  %s: %s  →  %s\n", indent, ir.Printable(x.Source), ir.Printable(x.Code), ir.Printable(x.Suggestion))
		}
	}
}

// ruleFix is the fix of the rule with the given id, "" for an id the
// table does not have.
func ruleFix(rule string) string {
	r, _ := lint.LookupRule(rule)
	return r.Fix
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// WriteRulesText lists the rules for `hopctl lint --list-rules`: id,
// severity, category, "invalid" for rules whose findings make the file
// invalid input (exit 3), and a one-line description.
func WriteRulesText(w io.Writer, rules []lint.Rule) error {
	width := 0
	for _, r := range rules {
		width = max(width, len(r.ID))
	}
	var b strings.Builder
	for _, r := range rules {
		invalid := ""
		if r.Invalid {
			invalid = "invalid"
		}
		fmt.Fprintf(&b, "%-*s  %-7s  %-9s  %-7s  %s\n", width, r.ID, r.Severity, r.Category, invalid, r.Short)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RuleDoc is a rule as JSON (`hopctl lint --list-rules --format json`).
type RuleDoc struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Category string `json:"category"`
	Short    string `json:"short"`
	Doc      string `json:"doc"`
	Fix      string `json:"fix"`
	Invalid  bool   `json:"invalid_input"`
}

// NewRuleDocs converts the rule table.
func NewRuleDocs(rules []lint.Rule) []RuleDoc {
	out := make([]RuleDoc, len(rules))
	for i, r := range rules {
		out[i] = RuleDoc{ID: r.ID, Severity: r.Severity.String(), Category: r.Category, Short: r.Short, Doc: r.Doc, Fix: r.Fix, Invalid: r.Invalid}
	}
	return out
}
