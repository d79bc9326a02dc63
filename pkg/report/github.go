package report

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
)

// ghPath is a SARIF URI as the path GitHub annotations take.
func ghPath(uri string) string {
	if p, err := url.PathUnescape(strings.TrimPrefix(uri, "file://")); err == nil {
		return p
	}
	return uri
}

// WriteGitHub renders a lint run as GitHub Actions workflow commands
// (`hopctl lint --format github`), one annotation per finding:
//
//	::error file=model.py,line=6,title=hop-input-mutation::cond_true might be modifying the input!%0A…
//
// error, warning and info findings become ::error, ::warning and ::notice.
// The file and line are SARIF's primary location (the user's Python line
// when the stack trace leads into the source root, else the graph file and,
// in text and JSON graph files, the node's line), relative to the source
// root with the path prefix; the message carries the graph, node,
// provenance and the rule's fix ("help: ..."). Findings a baseline lists
// and suppressed findings are left out; unreadable files are ::error
// annotations on the file, skipped ones ::notice.
func WriteGitHub(w io.Writer, doc *LintDoc, o SARIFOptions) error {
	b := newSarifBuilder(o)
	var sb strings.Builder
	for _, f := range doc.Files {
		if f.Status == StatusUnreadable {
			fmt.Fprintf(&sb, "::error file=%s,title=%s::%s\n", ghProp(ghPath(b.artifact(f.Path).URI)), ghProp("hopctl: unreadable graph file"), ghData(f.Error))
			continue
		}
		if f.Status == StatusSkipped {
			fmt.Fprintf(&sb, "::notice file=%s,title=%s::%s\n", ghProp(ghPath(b.artifact(f.Path).URI)), ghProp("hopctl: skipped"), ghData(f.Reason))
			continue
		}
		for i, fd := range f.Findings {
			if fd.InBaseline {
				continue
			}
			res := b.result(f.Path, fd, detailAt(f.details, i))
			loc := res.Locations[0].PhysicalLocation
			props := "file=" + ghProp(ghPath(loc.ArtifactLocation.URI))
			if loc.Region != nil && (len(res.RelatedLocations) > 0 || loc.Region.StartLine > 1) {
				props += fmt.Sprintf(",line=%d", loc.Region.StartLine)
			}
			props += ",title=" + ghProp("hopctl "+fd.Rule)
			var msg strings.Builder
			msg.WriteString(fd.Message)
			where := f.Path
			if !fd.FileWide {
				where += ": graph " + ir.Abbrev(ir.DisplayName(fd.Graph))
				if fd.Node != "" {
					where += ": node " + fd.Node
				}
			}
			msg.WriteString("\n" + where + "\n")
			writeProvenanceText(&msg, "", fd.Provenance)
			if l := releasesLine(fd.Releases); l != "" {
				msg.WriteString(l + "\n")
			}
			writeHelpText(&msg, "", fd)
			sev, _ := analyze.ParseSeverity(fd.Severity)
			fmt.Fprintf(&sb, "::%s %s::%s\n", ghLevel(sev), props, ghData(strings.TrimRight(msg.String(), "\n")))
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func ghLevel(s analyze.Severity) string {
	if l := SARIFLevel(s); l != "note" {
		return l
	}
	return "notice"
}

// ghData escapes a workflow command's message (actions/toolkit's
// escapeData: %, CR, LF).
func ghData(s string) string {
	// Control characters but newlines escaped first (ir.Printable): the
	// annotations are printed in the job's log, which interprets escape
	// sequences.
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = ir.Printable(l)
	}
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(strings.Join(lines, "\n"))
}

// ghProp escapes a workflow command's property value (escapeProperty:
// also ':' and ',').
func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(ir.Printable(s))
}
