package hopmeta_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/analysistest"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestFirstSlice(t *testing.T) {
	x := &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{
		Shape: []ir.Dim{{Val: 5}, {Val: 3}, {Val: 2}}, Stride: []ir.Dim{{Val: 1}, {Val: 10}, {Val: 5}},
		Dtype: "float16", Device: "cuda:0", RequiresGrad: true, HasStorageID: true, StorageID: 7}}
	got := hopmeta.FirstSlice(x)
	if got == nil || metadiff.FormatSize(got.Tensor.Shape) != "torch.Size([3, 2])" || metadiff.FormatTuple(got.Tensor.Stride) != "(2, 1)" ||
		got.Tensor.Dtype != "float16" || got.Tensor.Device != "cuda:0" || got.Tensor.HasStorageID {
		t.Errorf("FirstSlice = %+v", got.Tensor)
	}
	if x.Tensor.Shape[0].Val != 5 {
		t.Error("FirstSlice modified its argument")
	}
	if hopmeta.FirstSlice(&ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{}}) != nil || hopmeta.FirstSlice(&ir.Value{Kind: ir.ValInt}) != nil {
		t.Error("FirstSlice of a 0-dim tensor or an int")
	}
}

// corpusVerdict is the message torch's trace of program name raised, from
// the verdicts.json of the real-trace corpus in dir (python/tools/hop_corpus.py),
// or "" where torch traced it.
func corpusVerdict(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Programs map[string]struct {
			Trace *struct{ Message string } `json:"trace"`
		} `json:"programs"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	p, ok := v.Programs[name]
	if !ok {
		t.Fatalf("%s: no program %s", dir, name)
	}
	if p.Trace == nil {
		return ""
	}
	return p.Trace.Message
}

// metaFindings are the hop-meta-mismatch messages of path analysed under
// torch release version ("" is the file's own).
func metaFindings(t *testing.T, path, version string) []string {
	t.Helper()
	return analysistest.RuleMessages(t, path, analyze.Options{TorchVersion: version}, hopmeta.RuleMetaMismatch, passes.All()...)
}

// TestScanCarry26 is version row scan-carry-2.6 on real traces: torch 2.6's
// trace_scan compares each init with its carry, zipped, in device, dtype
// and shape only, in its own words. Trigger scan_carry_dtype (a float64
// carry for a float32 init): 2.6's graph, and 2.14's read with
// --torch-version 2.6, get 2.6's message word for word. Near misses
// 2.6 traces: scan_carry_stride (a transposed carry: same shape, other
// stride; 2.14 refuses it) and scan_count (one carry for two inits).
func TestScanCarry26(t *testing.T) {
	const real, real26 = "../../../../testdata/hops_real", "../../../../testdata/hops_real/torch2.6"
	want := corpusVerdict(t, real26, "scan_carry_dtype")
	if !strings.HasPrefix(want, "Expected metadata of the combine_fn result TensorMetadata(") {
		t.Fatalf("torch 2.6's verdict on scan_carry_dtype is %q: not trace_scan's check", want)
	}
	for _, c := range []struct{ path, version string }{
		{filepath.Join(real26, "scan_carry_dtype.pb"), ""},
		{filepath.Join(real, "scan_carry_dtype.pb"), "2.6"},
	} {
		if got := metaFindings(t, c.path, c.version); !slices.Equal(got, []string{want}) {
			t.Errorf("%s (--torch-version %q): hopctl reports %q, torch 2.6 %q", c.path, c.version, got, want)
		}
	}
	for _, name := range []string{"scan_carry_stride", "scan_count"} {
		if v := corpusVerdict(t, real26, name); v != "" {
			t.Fatalf("torch 2.6 refuses near miss %s: %q", name, v)
		}
		if got := metaFindings(t, filepath.Join(real26, name+".pb"), ""); len(got) > 0 {
			t.Errorf("%s: torch 2.6 traces it, hopctl reports %q", name, got)
		}
		if got := metaFindings(t, filepath.Join(real, name+".pb"), "2.6"); len(got) > 0 {
			t.Errorf("%s (2.14's graph, --torch-version 2.6): torch 2.6 traces it, hopctl reports %q", name, got)
		}
	}
	// The same graphs under 2.14's rules: check_meta_consistency's words.
	for _, name := range []string{"scan_carry_dtype", "scan_carry_stride"} {
		want := corpusVerdict(t, real, name)
		got := metaFindings(t, filepath.Join(real, name+".pb"), "")
		if want == "" || !slices.ContainsFunc(got, func(m string) bool { return unindent(m) == unindent(want) }) {
			t.Errorf("%s: torch 2.14 says %q, hopctl %q", name, want, got)
		}
	}
}

// unindent drops the indentation the corpus gives a message's later lines.
func unindent(m string) string {
	lines := strings.Split(m, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestFormatTensorMetadata: the carry's TensorMetadata as torch 2.6 prints
// it in trace_scan's message (scan_carry_dtype's verdict), and a carry
// whose strides match no memory format (memory_format=None).
func TestFormatTensorMetadata(t *testing.T) {
	d := func(vs ...int64) []ir.Dim {
		out := make([]ir.Dim, len(vs))
		for i, v := range vs {
			out[i] = ir.Dim{Val: v}
		}
		return out
	}
	for _, c := range []struct {
		t    ir.TensorMeta
		want string
	}{
		{ir.TensorMeta{Shape: d(4), Stride: d(1), Dtype: "float64", MemoryFormat: "contiguous_format"},
			"TensorMetadata(shape=torch.Size([4]), dtype=torch.float64, requires_grad=False, stride=(1,), memory_format=torch.contiguous_format, is_quantized=False, qparams={})"},
		{ir.TensorMeta{Shape: d(4, 4), Stride: d(1, 4), Dtype: "float32", RequiresGrad: true},
			"TensorMetadata(shape=torch.Size([4, 4]), dtype=torch.float32, requires_grad=True, stride=(1, 4), memory_format=None, is_quantized=False, qparams={})"},
	} {
		if got := metadiff.FormatTensorMetadata(&c.t); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
