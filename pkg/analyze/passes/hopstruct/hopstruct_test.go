package hopstruct_test

import (
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopstruct"
)

// TestRealTraces runs hopstruct alone over the real-trace corpus
// (testdata/hops_real, python/tools/hop_corpus.py): each testdata/*.want
// names a trace and wants torch's message for it, or nothing for a near
// miss torch traced.
func TestRealTraces(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.want")
	if err != nil || len(paths) < 20 {
		t.Fatalf("found %d want files (%v)", len(paths), err)
	}
	analysistest.Test(t, hopstruct.Analyzer, paths...)
}

// TestLintCases runs hopstruct alone over lint's trigger and near miss.
func TestLintCases(t *testing.T) {
	analysistest.Test(t, hopstruct.Analyzer, "../../../../testdata/lint/hop-structure.pbtxt", "../../../../testdata/lint/hop-structure_ok.pbtxt")
}
