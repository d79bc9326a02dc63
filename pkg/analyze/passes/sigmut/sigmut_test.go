package sigmut_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/ir"
	_ "github.com/hopctl/hopctl/pkg/pt2" // .pt2 archives
)

const lint = "../../../../testdata/lint/"

// TestSigmut runs sigmut (and the alias analysis it reads) over lint's
// triggers and near miss, and over real torch.export programs that write
// buffers and inputs (testdata/*.want: near misses in both dialects).
func TestSigmut(t *testing.T) {
	real, _ := filepath.Glob("testdata/*.want")
	if len(real) < 10 {
		t.Fatalf("found %d want files", len(real))
	}
	paths := append([]string{lint + "signature-mutation.pbtxt", lint + "signature-mutation_returns_input.pbtxt", lint + "signature-mutation_ok.pbtxt"}, real...)
	analysistest.Test(t, sigmut.Analyzer, paths...)
}

// TestFunctional: run_decompositions' programs (verifiers ATEN) claim to be
// functional, the default export's (training IR) do not.
func TestFunctional(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"../../../../testdata/pt2/2.14/buffer_update.aten.pt2", true},
		{"../../../../testdata/pt2/2.14/buffer_update.train.pt2", false},
		{"../../../../testdata/pt2/2.14/mlp.train.pt2", false},
		{"../../../../testdata/pt2/2.6/input_mutation.aten.pt2", true},
	} {
		m, err := ir.LoadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := sigmut.Functional(m); got != tc.want {
			t.Errorf("%s: Functional = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestMutatedBufferListedAsParameter: torch.export's verifier
// (torch/_export/verifier.py, _verify_exported_program_signature) refuses
// a buffers_to_mutate entry that names no buffer ("Buffer output … does
// not point to a buffer that exists"); hopctl refuses the file the same
// way, at verification (exit 3), so no rule sees it. The real archive, with
// its mutated buffer's input spec turned into a parameter, is the trigger;
// the archive as torch wrote it the near miss.
func TestMutatedBufferListedAsParameter(t *testing.T) {
	const path = "../../../../testdata/pt2/2.14/batchnorm_steps.aten.pt2"
	m, err := ir.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m, path); err != nil {
		t.Fatalf("near miss: %v", err)
	}
	for i := range m.Signature.Inputs {
		if m.Signature.Inputs[i].Name == "b_steps" {
			m.Signature.Inputs[i].Kind = ir.InputParameter
		}
	}
	err = ir.Verify(m, path)
	if err == nil || !strings.Contains(err.Error(), "BUFFER_MUTATION") || !strings.Contains(err.Error(), "which is no BUFFER input") {
		t.Fatalf("trigger: %v", err)
	}
}
