package alias_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
)

// TestReshapeCopiesByRecordedLayout: reshape and contiguous alias their
// input only where the recorded layouts allow a view (ATen's computeStride;
// is_contiguous), as torch.export's training IR keeps them: x.t().reshape(-1)
// is a copy (AOTAutograd: non_alias), x.reshape(-1) of a contiguous x a
// view; contiguous() of a transposed x a copy, of a contiguous x x itself;
// contiguous(memory_format=channels_last) is left to the schema (an alias).
func TestReshapeCopiesByRecordedLayout(t *testing.T) {
	tensor := func(shape, stride string) string {
		return fmt.Sprintf(`val {tensor {shape: [%s] stride: [%s] dtype: "float32" device: "cpu"}}`, shape, stride)
	}
	d := func(xs ...int) string {
		s := ""
		for i, x := range xs {
			if i > 0 {
				s += ", "
			}
			s += fmt.Sprintf("{value: %d}", x)
		}
		return s
	}
	for _, c := range []struct {
		name, op, inShape, inStride, outShape, outStride, kwargs string
		alias                                                    bool
	}{
		{"reshape_of_transpose", "aten.reshape.default", d(3, 2), d(1, 3), d(6), d(1), "", false},
		{"reshape_of_contiguous", "aten.reshape.default", d(2, 3), d(3, 1), d(6), d(1), "", true},
		{"contiguous_of_transpose", "aten.contiguous.default", d(3, 2), d(1, 3), d(3, 2), d(2, 1), "", false},
		{"contiguous_of_contiguous", "aten.contiguous.default", d(2, 3), d(3, 1), d(2, 3), d(3, 1), "", true},
		{"contiguous_channels_last", "aten.contiguous.default", d(1, 2, 2, 2), d(8, 1, 4, 2), d(1, 2, 2, 2), d(8, 1, 4, 2),
			`kwargs {name: "memory_format" value {memory_format: "channels_last"}}`, true},
	} {
		args := `args {node: "x"}`
		if c.op == "aten.reshape.default" {
			args += ` args {list {items {int: -1}}}`
		}
		src := fmt.Sprintf(`format_version {major: 1}
graph {
  nodes {name: "x" op: PLACEHOLDER target: "x" %s}
  nodes {name: "y" op: CALL_FUNCTION target: "%s" %s %s %s}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "y"}}}}
}`, tensor(c.inShape, c.inStride), c.op, args, c.kwargs, tensor(c.outShape, c.outStride))
		p := filepath.Join(t.TempDir(), c.name+".pbtxt")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, res := analyzeFile(t, p)
		sum := res.Results[alias.Analyzer][""].(*alias.Summary)
		if got := len(sum.InpOutAlias) > 0; got != c.alias {
			t.Errorf("%s: output aliases the input: %v, want %v (%v)", c.name, got, c.alias, sum.InpOutAlias)
		}
	}
}
