package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/report"
)

func lintCorpus(t *testing.T) []lint.FileResult {
	t.Helper()
	files, err := filepath.Glob("../../testdata/lint/*.pbtxt")
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata/lint: %d files, %v", len(files), err)
	}
	junk := filepath.Join(t.TempDir(), "junk.pb")
	if err := os.WriteFile(junk, []byte("\xff\xffjunk"), 0o644); err != nil {
		t.Fatal(err)
	}
	return lint.Run(append(files, junk), lint.Options{})
}

// obj, arr, str read a decoded JSON document, failing the test on a shape
// mismatch.
func obj(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T", what, v)
	}
	return m
}

func arr(t *testing.T, v any, what string) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T", what, v)
	}
	return a
}

func str(t *testing.T, v any, what string) string {
	t.Helper()
	s, ok := v.(string)
	if !ok || s == "" {
		t.Fatalf("%s: want a non-empty string, got %#v", what, v)
	}
	return s
}

// TestSARIFShape validates the SARIF log structurally against SARIF 2.1.0:
// the properties the schema requires (version, runs, tool.driver.name,
// reportingDescriptor.id, result.message.text, invocation
// executionSuccessful), the level enum, and what GitHub code scanning reads
// (rule descriptions and default levels, ruleId, locations with
// artifactLocation.uri and a region, logical locations).
func TestSARIFShape(t *testing.T) {
	results := lintCorpus(t)
	doc := report.NewLintDoc(results, "error")
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, report.NewSARIF(doc, lint.Rules(), "1.2.3")); err != nil {
		t.Fatal(err)
	}
	var log any
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	root := obj(t, log, "log")
	if root["version"] != "2.1.0" {
		t.Errorf("version = %v", root["version"])
	}
	if s := str(t, root["$schema"], "$schema"); !strings.Contains(s, "sarif") || !strings.Contains(s, "2.1.0") {
		t.Errorf("$schema = %q", s)
	}
	runs := arr(t, root["runs"], "runs")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	run := obj(t, runs[0], "run")
	driver := obj(t, obj(t, run["tool"], "tool")["driver"], "driver")
	if str(t, driver["name"], "driver.name") != "hopctl" || driver["version"] != "1.2.3" {
		t.Errorf("driver %v", driver)
	}
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	rules := arr(t, driver["rules"], "rules")
	ruleIDs := map[string]int{}
	for i, r := range rules {
		rule := obj(t, r, "rule")
		id := str(t, rule["id"], "rule.id")
		ruleIDs[id] = i
		str(t, obj(t, rule["shortDescription"], "shortDescription")["text"], id+" shortDescription.text")
		str(t, obj(t, rule["fullDescription"], "fullDescription")["text"], id+" fullDescription.text")
		if l := obj(t, rule["defaultConfiguration"], "defaultConfiguration")["level"]; !levels[l.(string)] {
			t.Errorf("rule %s: level %v", id, l)
		}
	}
	if len(ruleIDs) != len(lint.Rules()) {
		t.Errorf("%d rules in SARIF, %d in the table", len(ruleIDs), len(lint.Rules()))
	}
	seen := map[string]bool{}
	results2 := arr(t, run["results"], "results")
	if len(results2) != doc.Summary.Findings {
		t.Errorf("%d results, %d findings", len(results2), doc.Summary.Findings)
	}
	for _, r := range results2 {
		res := obj(t, r, "result")
		id := str(t, res["ruleId"], "ruleId")
		seen[id] = true
		if idx, ok := res["ruleIndex"].(float64); !ok || int(idx) != ruleIDs[id] {
			t.Errorf("result %s: ruleIndex %v, rule is at %d", id, res["ruleIndex"], ruleIDs[id])
		}
		if l, _ := res["level"].(string); !levels[l] {
			t.Errorf("result %s: level %v", id, res["level"])
		}
		text := str(t, obj(t, res["message"], "message")["text"], "message.text")
		locs := arr(t, res["locations"], "locations")
		if len(locs) != 1 {
			t.Fatalf("result %s: %d locations", id, len(locs))
		}
		loc := obj(t, locs[0], "location")
		phys := obj(t, loc["physicalLocation"], "physicalLocation")
		uri := str(t, obj(t, phys["artifactLocation"], "artifactLocation")["uri"], "uri")
		if !strings.HasSuffix(uri, ".pbtxt") || strings.Contains(uri, `\`) {
			t.Errorf("uri %q", uri)
		}
		// The line that names the node in these text files; line 1 for
		// file-wide findings.
		line, _ := obj(t, phys["region"], "region")["startLine"].(float64)
		if want := nodeLine(t, uri, loc["logicalLocations"]); int(line) != want {
			t.Errorf("result %s in %s: startLine %v, want %d", id, uri, line, want)
		}
		if id == "dangling-ref" && line <= 1 {
			t.Errorf("dangling-ref at line %v, not at its node's line", line)
		}
		// File-wide findings: the schema table, attributes.
		if id == lint.RuleBadSchema || strings.HasPrefix(text, "attribute ") {
			if loc["logicalLocations"] != nil {
				t.Errorf("file-wide finding with a logical location: %v", loc["logicalLocations"])
			}
			continue
		}
		ll := arr(t, loc["logicalLocations"], id+" logicalLocations")
		fq := str(t, obj(t, ll[0], "logicalLocation")["fullyQualifiedName"], "fullyQualifiedName")
		if id == "dangling-ref" && fq != "sub.relu" {
			t.Errorf("dangling-ref fullyQualifiedName %q, want sub.relu", fq)
		}
	}
	for _, r := range lint.Rules() {
		if !seen[r.ID] {
			t.Errorf("no result for rule %s", r.ID)
		}
	}
	inv := obj(t, arr(t, run["invocations"], "invocations")[0], "invocation")
	if inv["executionSuccessful"] != false {
		t.Errorf("executionSuccessful = %v with an unreadable file", inv["executionSuccessful"])
	}
	notes := arr(t, inv["toolExecutionNotifications"], "toolExecutionNotifications")
	if len(notes) != 1 || !strings.Contains(str(t, obj(t, obj(t, notes[0], "n")["message"], "m")["text"], "text"), "junk.pb") {
		t.Errorf("notifications %v", notes)
	}
}

func TestLintJSONAndText(t *testing.T) {
	results := lintCorpus(t)
	doc := report.NewLintDoc(results, "warning")
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	var back report.LintDoc
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	s := back.Summary
	if back.SchemaVersion != 1 || s.Files != len(results) || s.Findings != s.Errors+s.Warnings+s.Infos || s.Failing != s.Errors+s.Warnings || s.InvalidFiles < 10 {
		t.Errorf("summary %+v", s)
	}
	statuses := map[string]int{}
	for _, f := range back.Files {
		statuses[f.Status]++
		if f.Findings == nil {
			t.Errorf("%s: findings is null", f.Path)
		}
	}
	if statuses["unreadable"] != 1 || statuses["invalid"] < 9 || statuses["ok"] < 20 {
		t.Errorf("statuses %v", statuses)
	}
	buf.Reset()
	if err := report.WriteLintText(&buf, doc); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{
		"testdata/lint/dangling-ref.pbtxt: graph sub: node relu: error: dangling reference to \"x_1\": no such node in this graph [dangling-ref]\n",
		"testdata/lint/bad-schema.pbtxt: error: file schema 0 (mylib::frob): ",
		"testdata/lint/missing-output.pbtxt: graph <root>: error: missing output node [missing-output]\n",
		"\n    pair[1] differ in device, where lhs is",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	last := text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:]
	if want := fmt.Sprintf("%d findings (%d errors, %d warnings) in %d files, %d invalid files\n", s.Findings, s.Errors, s.Warnings, s.Files, s.InvalidFiles); last != want {
		t.Errorf("summary line %q, want %q", last, want)
	}
}

// TestTextAbbreviatesLongGraphNames: the text reports spell out a graph's
// qualified name only up to ir.Abbrev's bound (a subgraph 900 levels deep
// has a name of some 2000 bytes); JSON keeps it whole.
func TestTextAbbreviatesLongGraphNames(t *testing.T) {
	long := strings.Repeat("g.", 1000) + "g"
	doc := &report.LintDoc{SchemaVersion: 1, Files: []report.LintFile{{Path: "deep.pb", Status: "ok",
		Findings: []report.Finding{{Rule: "hop-input-mutation", Severity: "error", Graph: long, Node: "add_", Message: "mutates"}}}}}
	var text, js bytes.Buffer
	if err := report.WriteLintText(&text, doc); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&js, doc); err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(text.String(), "\n")
	if len(line) > 400 || !strings.Contains(line, "(2001 bytes)") || !strings.Contains(line, "node add_") {
		t.Errorf("text line (%d bytes): %.300s", len(line), line)
	}
	if !strings.Contains(js.String(), long) {
		t.Error("JSON lost the full graph name")
	}
}

// nodeLine is the line of testdata file uri (relative to the repository)
// that names the node of a logical location "graph.node" (the first such
// line after the graph's qualified_name), 1 without a logical location or
// node.
func nodeLine(t *testing.T, uri string, logical any) int {
	t.Helper()
	ll, _ := logical.([]any)
	if len(ll) == 0 {
		return 1
	}
	l := ll[0].(map[string]any)
	if l["kind"] != "function" {
		return 1
	}
	node := l["name"].(string)
	graph := strings.TrimSuffix(l["fullyQualifiedName"].(string), node)
	graph = strings.TrimSuffix(graph, ".")
	p := filepath.Join("../..", uri)
	if rest, ok := strings.CutPrefix(uri, "file://"); ok {
		p = rest
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Text format allows any space after the colon (protobuf-go's
	// prototext writes one or two at random).
	sub := regexp.MustCompile(`qualified_name:\s*"` + regexp.QuoteMeta(graph) + `"`)
	named := regexp.MustCompile(`(^|[\s{])name:\s*"` + regexp.QuoteMeta(node) + `"`)
	inGraph := graph == ""
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "qualified_name:") {
			inGraph = sub.MatchString(line)
			continue
		}
		if inGraph && named.MatchString(line) {
			return i + 1
		}
	}
	return 1 // a node without a name of its own (malformed-node's "#2")
}
