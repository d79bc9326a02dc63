package hopargs_test

import (
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopargs"
	_ "github.com/hopctl/hopctl/pkg/pt2" // .pt2 archives
)

// TestHopargs runs hopargs alone over its own cases (testdata/*.pbtxt),
// lint's trigger and near miss, and real traces and exported programs
// torch accepted (testdata/*.want, near misses).
func TestHopargs(t *testing.T) {
	own, _ := filepath.Glob("testdata/*.pbtxt")
	real, _ := filepath.Glob("testdata/*.want")
	if len(own) == 0 || len(real) < 8 {
		t.Fatalf("found %d cases and %d want files", len(own), len(real))
	}
	paths := append(own, real...)
	paths = append(paths, "../../../../testdata/lint/hop-arg-type.pbtxt", "../../../../testdata/lint/hop-arg-type_ok.pbtxt")
	analysistest.Test(t, hopargs.Analyzer, paths...)
}
