package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/load"
)

// encodingJSON is what WriteJSON wrote before writeAnalyzeJSON: the
// oracle the hand-written writer must match byte for byte.
func encodingJSON(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func checkAnalyzeJSON(t testing.TB, doc *AnalyzeDoc) {
	t.Helper()
	var got bytes.Buffer
	if err := WriteJSON(&got, doc); err != nil {
		t.Fatal(err)
	}
	if want := encodingJSON(t, doc); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("writeAnalyzeJSON differs from encoding/json:\n got: %q\nwant: %q", got.Bytes(), want)
	}
}

// TestAnalyzeJSONMatchesEncodingJSON: the `analyze --format json` document
// of every graph of the corpus (its findings, provenance, exported
// programs' input kinds), one per file and all in one, is what
// encoding/json writes.
func TestAnalyzeJSONMatchesEncodingJSON(t *testing.T) {
	var paths []string
	for _, glob := range []string{"models/*", "models-torch2.14/*", "hops/*", "hops_real/*", "level/*", "lint/*.pb*", "bad/*"} {
		p, _ := filepath.Glob(filepath.Join("..", "..", "testdata", glob))
		paths = append(paths, p...)
	}
	if len(paths) < 50 {
		t.Fatalf("only %d corpus files", len(paths))
	}
	all := &AnalyzeDoc{SchemaVersion: AnalyzeSchemaVersion, Files: []AnalyzeFile{}}
	findings, kinds := 0, 0
	for _, path := range paths {
		f, res, err := load.AnalyzeWith(path, analyze.Options{}, alias.Analyzer)
		if err != nil {
			continue // not a graph hopctl reads (READMEs, bad input)
		}
		af := NewAnalyzeFile(path, f.Module, res)
		for _, g := range af.Graphs {
			findings += len(g.Findings)
			kinds += len(g.InputKinds)
		}
		checkAnalyzeJSON(t, &AnalyzeDoc{SchemaVersion: AnalyzeSchemaVersion, Files: []AnalyzeFile{af}})
		all.Files = append(all.Files, af)
	}
	if findings == 0 || kinds == 0 || len(all.Files) < 50 {
		t.Fatalf("the corpus exercised too little: %d files, %d findings, %d input kinds", len(all.Files), findings, kinds)
	}
	// The whole corpus's document is written in several chunks.
	if size := len(encodingJSON(t, all)); size < 3*jsonChunk {
		t.Fatalf("the corpus document is %d bytes: fewer than three chunks", size)
	}
	checkAnalyzeJSON(t, all)
	checkAnalyzeJSON(t, &AnalyzeDoc{})
	checkAnalyzeJSON(t, &AnalyzeDoc{Files: []AnalyzeFile{{}}})
	checkAnalyzeJSON(t, &AnalyzeDoc{Files: []AnalyzeFile{{Graphs: []AnalyzeGraph{{}}}}})
}

// FuzzAnalyzeJSONMatchesEncodingJSON: documents with arbitrary strings
// (invalid UTF-8, control characters, U+2028, HTML characters), nil and
// empty lists and every optional field are written as encoding/json
// writes them.
func FuzzAnalyzeJSONMatchesEncodingJSON(f *testing.F) {
	f.Add("x", "aten.add_.Tensor", "a\nb\t\"c\\\x00\x1f\x7f<>&", "\xff\xe2\x80\xa8\u2029é", 3, uint16(0x5a5))
	f.Add("", "", "", "", 0, uint16(0))
	f.Add("graph", "n", "\u2028", "\xed\xa0\x80", -7, uint16(0xffff))
	f.Fuzz(func(t *testing.T, s1, s2, s3, s4 string, n int, bits uint16) {
		on := func(i uint) bool { return bits&(1<<i) != 0 }
		strs := func(i uint) []string {
			switch {
			case on(i) && on(i+1):
				return []string{s1, s3, s4}
			case on(i):
				return []string{}
			case on(i + 1):
				return []string{s2}
			}
			return nil
		}
		fd := Finding{Rule: s1, Severity: s2, Graph: s3, Node: s4, Message: s3 + s4, FileWide: on(0), InBaseline: on(1)}
		if on(2) {
			fd.Provenance = &Provenance{InputIndex: n, Views: strs(3), Path: strs(5)}
			if on(7) {
				fd.Provenance.Input, fd.Provenance.Node, fd.Provenance.StackTrace = s4, s1, s2
			}
		}
		if on(8) {
			fd.Fingerprint = s2
		}
		if on(9) {
			fd.Suppression = &SuppressionInfo{Index: n, Reason: s4}
		}
		g := AnalyzeGraph{Name: s1, Inputs: strs(10), InputKinds: strs(12), InputTargets: strs(3), NumOutputs: n,
			InpOutAlias: IndexMap{{From: n, To: 1}, {From: 2, To: n}}}
		if on(14) {
			g.InpInpAlias, g.MutatedInputs, g.Findings = IndexMap{}, []int{}, []Finding{}
		} else {
			g.MutatedInputs, g.Findings = []int{n, 0, -n}, []Finding{fd, {}}
		}
		doc := &AnalyzeDoc{SchemaVersion: n, Files: []AnalyzeFile{{Path: s4, Graphs: []AnalyzeGraph{g, {}}}}}
		if on(15) {
			doc.Files = append(doc.Files, AnalyzeFile{Path: s1, Graphs: []AnalyzeGraph{}})
		}
		checkAnalyzeJSON(t, doc)
	})
}

// failAfter fails every write after its first n.
type failAfter struct{ n, writes int }

func (w *failAfter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.n {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestAnalyzeJSONWriteError: a document written in chunks returns the
// first write error and writes nothing after it.
func TestAnalyzeJSONWriteError(t *testing.T) {
	doc := &AnalyzeDoc{Files: []AnalyzeFile{{Graphs: []AnalyzeGraph{{Inputs: make([]string, jsonChunk)}}}}}
	w := &failAfter{n: 1}
	if err := WriteJSON(w, doc); err == nil || err.Error() != "disk full" {
		t.Fatalf("WriteJSON = %v, want the write's error", err)
	}
	if w.writes != 2 {
		t.Fatalf("%d writes, want 2: the first chunk and the one that failed", w.writes)
	}
}
