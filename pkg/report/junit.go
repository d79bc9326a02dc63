package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// JUnit XML for `hopctl lint --format junit`, the shape CI systems
// (Jenkins, GitLab, GitHub test reporters) read: one testsuite per graph
// file, one testcase per finding (a failure whose type is the rule id and
// whose text has the location, provenance and the rule's fix), and one
// passing testcase "lint" for a file without findings. An unreadable file
// is a testcase with an error. Findings a baseline lists and suppressed findings are
// left out, as in the text output.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit renders a lint run as JUnit XML.
func WriteJUnit(w io.Writer, doc *LintDoc) error {
	out := junitSuites{Name: "hopctl lint"}
	for _, f := range doc.Files {
		s := junitSuite{Name: f.Path}
		if f.Status == StatusUnreadable {
			s.Cases = append(s.Cases, junitCase{Name: "read", Classname: f.Path,
				Error: &junitProblem{Message: firstLine(f.Error), Type: "unreadable", Text: f.Error}})
			s.Errors++
		}
		if f.Status == StatusSkipped {
			s.Cases = append(s.Cases, junitCase{Name: "read", Classname: f.Path, Skipped: &junitSkipped{Message: f.Reason}})
		}
		for _, fd := range f.Findings {
			if fd.InBaseline {
				continue
			}
			name := fd.Rule
			if !fd.FileWide {
				name += " " + ir.Abbrev(ir.DisplayName(fd.Graph))
				if fd.Node != "" {
					name += "." + fd.Node
				}
			}
			var text strings.Builder
			fmt.Fprintf(&text, "%s: %s: %s [%s]\n", f.Path, fd.Severity, fd.Message, fd.Rule)
			writeProvenanceText(&text, "  ", fd.Provenance)
			if l := releasesLine(fd.Releases); l != "" {
				text.WriteString("  " + strings.ReplaceAll(l, "\n", "\n  ") + "\n")
			}
			writeHelpText(&text, "  ", fd)
			s.Cases = append(s.Cases, junitCase{Name: name, Classname: f.Path,
				Failure: &junitProblem{Message: firstLine(fd.Message), Type: fd.Rule, Text: text.String()}})
			s.Failures++
		}
		if len(s.Cases) == 0 {
			s.Cases = append(s.Cases, junitCase{Name: "lint", Classname: f.Path})
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Suites = append(out.Suites, s)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	b.WriteString("\n")
	// encoding/xml replaces control characters by U+FFFD but writes C1
	// controls and bidi overrides raw.
	_, err := w.Write(escapeRunes(b.Bytes(), "&#x%x;"))
	return err
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
