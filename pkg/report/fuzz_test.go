package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/lint"
)

// FuzzWriters runs every output format of analyze and lint on documents
// whose names, messages, paths and stack traces are arbitrary strings (they
// come from the file, i.e. from whoever wrote it). Each output must parse
// back in its own format — JSON and SARIF as JSON, JUnit as XML, GitHub as
// one workflow command a line — and contain no unescaped control sequence:
// no control character but the line feeds of its own layout, no bidi
// override, no invalid UTF-8, and no text or GitHub line that a name could
// start (a text line starting "::" is a workflow command in a CI log).
func FuzzWriters(f *testing.F) {
	f.Add("models/a.pb", "true_graph_0", "add_", "writes input x", "hop-input-mutation", `File "m.py", line 3, in forward`, byte(2))
	f.Add("a\nb.pb", "g\r\n::error::pwned", "n\x1b]8;;http://x\x07", "m\n::add-mask::secret\u202e", "r%0A", "\x00\x9b31m", byte(1))
	f.Add("</script><!--", "a,b:c", "\u2028", "%25 ]]> & <x>", "", "\xff\xfe", byte(0))
	f.Fuzz(func(t *testing.T, path, graph, node, message, rule, stack string, sev byte) {
		fd := analyze.Finding{Rule: rule, Severity: analyze.Severity(sev % 3), Graph: graph, Node: node, Message: message,
			Provenance: &analyze.Provenance{Input: node, InputIndex: 0, Views: []string{graph}, Node: node, Path: []string{graph, node}, StackTrace: stack}}
		results := []lint.FileResult{
			{Path: path, Findings: []analyze.Finding{fd}, Details: []lint.Detail{{Fingerprint: "f"}}},
			{Path: path + ".2", Err: errors.New(message)},
			{Path: path + ".3", Skipped: message},
		}
		doc := NewLintDocWith(results, LintOptions{FailOn: "error"})
		for name, p := range LintFormats(lint.Rules(), "0.0.0", SARIFOptions{SourceRoot: "."}) {
			var b bytes.Buffer
			if err := p.Print(&b, doc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkOutput(t, name, b.Bytes())
		}
		adoc := &AnalyzeDoc{SchemaVersion: 1, Files: []AnalyzeFile{{Path: path, Graphs: []AnalyzeGraph{{
			Name: graph, Inputs: []string{node}, Findings: []Finding{NewFinding(fd)}}}}}}
		for name, p := range AnalyzeFormats {
			var b bytes.Buffer
			if err := p.Print(&b, adoc); err != nil {
				t.Fatalf("analyze %s: %v", name, err)
			}
			checkOutput(t, "analyze "+name, b.Bytes())
		}
	})
}

// checkOutput checks one output of the format name.
func checkOutput(t *testing.T, name string, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("%s: invalid UTF-8 in the output:\n%q", name, out)
	}
	for i, r := range string(out) {
		if r != '\n' && unsafeRune(r) {
			t.Fatalf("%s: unescaped %U at byte %d:\n%q", name, r, i, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	switch strings.TrimPrefix(name, "analyze ") {
	case "text":
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, " "), "::") {
				t.Fatalf("%s: a line starts a workflow command: %q", name, l)
			}
		}
	case "github":
		for _, l := range lines {
			if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "::warning ") && !strings.HasPrefix(l, "::notice ") {
				t.Fatalf("%s: a line is not one annotation: %q", name, l)
			}
			props, _, ok := strings.Cut(strings.SplitN(l, " ", 2)[1], "::")
			if !ok {
				t.Fatalf("%s: no message: %q", name, l)
			}
			for _, kv := range strings.Split(props, ",") {
				if k, _, ok := strings.Cut(kv, "="); !ok || strings.ContainsAny(k, ":%") {
					t.Fatalf("%s: property %q of %q is not escaped", name, kv, l)
				}
			}
		}
	case "json", "sarif":
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: not JSON: %v", name, err)
		}
		if name == "sarif" {
			checkURIs(t, v)
		}
	case "junit":
		d := xml.NewDecoder(bytes.NewReader(out))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: not XML: %v\n%q", name, err, out)
			}
		}
	default:
		t.Fatalf("format %s has no check: add one", name)
	}
}

// unsafeRune reports a rune a terminal or log viewer would interpret:
// control characters (C0, DEL, C1) and bidirectional overrides, isolates
// and marks.
func unsafeRune(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f
}

// checkURIs checks every "uri" of a SARIF log parses, and is relative to a
// base (uriBaseId) or a file: URI.
func checkURIs(t *testing.T, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "uri" {
				u, err := url.Parse(s)
				if err != nil || u.Scheme != "" && u.Scheme != "file" && u.Scheme != "https" {
					t.Fatalf("sarif: uri %q: %v", s, err)
				}
				if u.Scheme == "" && v["uriBaseId"] == nil && !strings.HasSuffix(s, "/") {
					t.Fatalf("sarif: relative uri %q without uriBaseId", s)
				}
			}
			checkURIs(t, e)
		}
	case []any:
		for _, e := range v {
			checkURIs(t, e)
		}
	}
}
