package validate_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hopctl/hopctl/internal/fuzzedit"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// FuzzAnalyze runs what `hopctl analyze` and `hopctl lint` run on a file —
// decode, Verify, the schema table, validate.Check, every analyzer — and
// checks that nothing panics, that a refusal is an ir.InputError, and that
// the analysis is deterministic: two runs give equal results, equal
// findings and byte-identical reports. Seeds: every shipped graph and the
// adversarial corpus, in the binary encoding.
func FuzzAnalyze(f *testing.F) {
	var paths []string
	for _, glob := range []string{"../../../testdata/models/*.pb", "../../../testdata/hops/*.pbtxt", "../../../testdata/lint/*.pbtxt", "../../../testdata/bad/*.p*"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	for _, p := range paths {
		m, err := ir.LoadFile(p)
		if err != nil {
			continue
		}
		if data, err := ir.Encode(m, ir.Binary); err == nil && len(data) < 1<<16 {
			f.Add(data)
		}
	}
	f.Fuzz(fuzzPipeline)
}

// fuzzPipeline runs decode, Verify, the schema table, validate.Check and
// every analyzer twice on data, checking determinism.
func fuzzPipeline(t *testing.T, data []byte) {
	const file = "fuzz.pb"
	m, err := ir.Decode(data, ir.Binary, file)
	if err == nil {
		err = ir.Verify(m, file)
	}
	if err != nil {
		return
	}
	reg, err := load.Registry(m, file)
	if err == nil {
		err = validate.Check(m, file, reg)
	}
	if err != nil {
		if _, ok := err.(ir.InputError); !ok {
			t.Fatalf("refusal is not an ir.InputError: %T %v", err, err)
		}
		return
	}
	var results [2]*analyze.Result
	var reports [2][]byte
	for i := range results {
		res, err := analyze.Run(m, file, reg, passes.All()...)
		if err != nil {
			// An analyzer that cannot finish on a valid file is a bug.
			t.Fatalf("analysis of a valid file failed: %v", err)
		}
		results[i] = res
		doc := &report.AnalyzeDoc{SchemaVersion: report.AnalyzeSchemaVersion, Files: []report.AnalyzeFile{report.NewAnalyzeFile(file, m, res)}}
		var b bytes.Buffer
		if err := report.WriteJSON(&b, doc); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteAnalyzeText(&b, doc); err != nil {
			t.Fatal(err)
		}
		reports[i] = b.Bytes()
	}
	if !reflect.DeepEqual(results[0].Findings, results[1].Findings) {
		t.Fatalf("findings differ between two runs:\n%v\n---\n%v", results[0].Findings, results[1].Findings)
	}
	if !reflect.DeepEqual(results[0].Results, results[1].Results) {
		t.Fatal("analyzer results differ between two runs")
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Fatal("reports differ between two runs")
	}
}

var editSeeds []*ir.Module

func loadEditSeeds(f *testing.F) {
	paths, _ := filepath.Glob("../../../testdata/hops/*.pbtxt")
	more, _ := filepath.Glob("../../../testdata/models/*.pb")
	for _, p := range append(paths, more...) {
		m, err := ir.Load(p)
		if err != nil {
			f.Fatal(err)
		}
		if n := len(m.Root().Nodes); n < 2000 {
			editSeeds = append(editSeeds, m)
		}
	}
}

// FuzzAnalyzeEdits is FuzzAnalyze on graphs the fuzzer edits rather than
// bytes it flips: it starts from a shipped graph and applies edits
// (internal/fuzzedit), which reach the analyzers far more often than
// corrupt bytes, which mostly fail to decode.
func FuzzAnalyzeEdits(f *testing.F) {
	loadEditSeeds(f)
	for i := range editSeeds {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 1, 2, 3, 1, 0, 5, 12, 4, 0, 0, 0})
	}
	f.Fuzz(func(t *testing.T, seed uint8, edits []byte) {
		if len(editSeeds) == 0 || len(edits) > 64 {
			return
		}
		// Edit a copy: encode the seed, edit, re-encode so references
		// resolve, then run the pipeline on the bytes.
		data, err := ir.Encode(editSeeds[int(seed)%len(editSeeds)], ir.Binary)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Decode(data, ir.Binary, "seed")
		if err != nil {
			t.Fatal(err)
		}
		fuzzedit.Apply(m, edits)
		if data, err = ir.Encode(m, ir.Binary); err != nil {
			t.Fatal(err)
		}
		fuzzPipeline(t, data)
	})
}
