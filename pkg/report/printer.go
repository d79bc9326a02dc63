package report

import (
	"io"

	"github.com/hopctl/hopctl/pkg/lint"
)

// A Printer writes a document of type D in one output format. Each format
// a command offers for a document (its --format values) is one Printer of
// it, listed in the document's Formats, so a command chooses the printer
// in one place (Formats.Printer) and a new format is one more entry there.
type Printer[D any] interface {
	Print(w io.Writer, doc D) error
}

// PrinterFunc is a function as a Printer.
type PrinterFunc[D any] func(w io.Writer, doc D) error

// Print calls f.
func (f PrinterFunc[D]) Print(w io.Writer, doc D) error { return f(w, doc) }

// JSONPrinter writes a document as the JSON of its Go struct (WriteJSON).
type JSONPrinter[D any] struct{}

// Print writes doc with WriteJSON.
func (JSONPrinter[D]) Print(w io.Writer, doc D) error { return WriteJSON(w, doc) }

// Formats maps format names (the values of --format) to the printers of
// a document.
type Formats[D any] map[string]Printer[D]

// Printer returns the printer of the named format.
func (fs Formats[D]) Printer(format string) (Printer[D], bool) {
	p, ok := fs[format]
	return p, ok
}

// AnalyzeFormats are the formats of `hopctl analyze`.
var AnalyzeFormats = Formats[*AnalyzeDoc]{
	"text": PrinterFunc[*AnalyzeDoc](WriteAnalyzeText),
	"json": JSONPrinter[*AnalyzeDoc]{},
}

// MetaDiffFormats are the formats of `hopctl meta-diff`.
var MetaDiffFormats = Formats[*MetaDiffDoc]{
	"text": PrinterFunc[*MetaDiffDoc](WriteMetaDiffText),
	"json": JSONPrinter[*MetaDiffDoc]{},
}

// LintFormats are the formats of `hopctl lint`: the SARIF log describes
// rules and names the tool's version, and SARIF and the GitHub
// annotations locate files as o says.
func LintFormats(rules []lint.Rule, version string, o SARIFOptions) Formats[*LintDoc] {
	return Formats[*LintDoc]{
		"text": PrinterFunc[*LintDoc](WriteLintText),
		"json": JSONPrinter[*LintDoc]{},
		"sarif": PrinterFunc[*LintDoc](func(w io.Writer, doc *LintDoc) error {
			return WriteJSON(w, NewSARIFWith(doc, rules, version, o))
		}),
		"github": PrinterFunc[*LintDoc](func(w io.Writer, doc *LintDoc) error { return WriteGitHub(w, doc, o) }),
		"junit":  PrinterFunc[*LintDoc](WriteJUnit),
	}
}

// RuleFormats are the formats of `hopctl lint --list-rules`; the SARIF
// log is that of a run without files, naming the tool's version.
func RuleFormats(version string) Formats[[]lint.Rule] {
	return Formats[[]lint.Rule]{
		"text": PrinterFunc[[]lint.Rule](WriteRulesText),
		"json": PrinterFunc[[]lint.Rule](func(w io.Writer, rules []lint.Rule) error {
			return WriteJSON(w, NewRuleDocs(rules))
		}),
		"sarif": PrinterFunc[[]lint.Rule](func(w io.Writer, rules []lint.Rule) error {
			return WriteJSON(w, NewSARIF(NewLintDoc(nil, "error"), rules, version))
		}),
	}
}
