package ir_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hopctl/hopctl/pkg/ir"
)

// -update rewrites the golden files. It is declared only if no other test
// file of this test binary declared it first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/golden")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const goldenDir = "../../testdata/golden"

// checkGolden compares got with testdata/golden/name, rewriting it under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if updating() {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/ir -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// condModule is a cond HOP with nested subgraphs, stack traces, kwargs and
// symbolic shapes, written the way the Python bridge exports such graphs.
const condModule = `
format_version { major: 1 }
producer: "test"
graph {
  nodes { name: "x" op: PLACEHOLDER target: "x"
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" device: "cpu" } } }
  nodes { name: "n" op: PLACEHOLDER target: "n"
    val { sym { kind: SYM_INT expr: "s0" } } }
  nodes { name: "sum_1" op: CALL_FUNCTION target: "aten.sum.default" args { node: "x" }
    val { tensor { dtype: "float32" } }
    meta { stack_trace: "  File \"/work/model.py\", line 10, in forward\n    s = x.sum()\n" } }
  nodes { name: "gt" op: CALL_FUNCTION target: "aten.gt.Scalar" args { node: "sum_1" } args { int: 0 }
    val { tensor { dtype: "bool" } }
    meta { stack_trace: "  File \"/work/model.py\", line 8, in outer\n    return self.forward(x)\n  File \"/work/model.py\", line 11, in forward\n    p = s > 0\n" } }
  nodes { name: "true_graph_0" op: GET_ATTR target: "true_graph_0" }
  nodes { name: "false_graph_0" op: GET_ATTR target: "false_graph_0" }
  nodes { name: "cond" op: CALL_FUNCTION target: "higher_order.cond"
    args { node: "gt" } args { node: "true_graph_0" } args { node: "false_graph_0" }
    args { tuple { items { node: "x" } items { node: "n" } } }
    val { tuple { items { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } } } }
  nodes { name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args { node: "cond" } args { int: 0 }
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "ones" op: CALL_FUNCTION target: "aten.ones.default"
    args { list { items { sym { kind: SYM_INT expr: "s0" } } items { int: 8 } } }
    kwargs { name: "dtype" value { dtype: "float16" } }
    kwargs { name: "device" value { device: "cuda:0" } }
    kwargs { name: "pin_memory" value { bool: false } }
    val { tensor { shape { expr: "s0" } shape { value: 8 } dtype: "float16" } } }
  nodes { name: "view" op: CALL_METHOD target: "view" args { node: "getitem" } args { int: -1 } }
  nodes { name: "output" op: OUTPUT target: "output"
    args { tuple { items { node: "view" } items { node: "ones" } items { none {} } } } }
}
submodules { qualified_name: "true_graph_0" graph {
  nodes { name: "arg0_1" op: PLACEHOLDER target: "arg0_1" val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "arg1_1" op: PLACEHOLDER target: "arg1_1" val { sym { kind: SYM_INT expr: "s0" } } }
  nodes { name: "body_graph_0" op: GET_ATTR target: "body_graph_0" }
  nodes { name: "map_impl" op: CALL_FUNCTION target: "higher_order.map_impl"
    args { node: "body_graph_0" } args { list { items { node: "arg0_1" } } } args { list { } }
    val { list { items { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } } } }
  nodes { name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args { node: "map_impl" } args { int: 0 }
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "mul" op: CALL_FUNCTION target: "aten.mul.Scalar" args { node: "getitem" } args { float: 1e-05 }
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "output" op: OUTPUT target: "output" args { tuple { items { node: "mul" } } } }
} }
submodules { qualified_name: "true_graph_0.body_graph_0" graph {
  nodes { name: "xs" op: PLACEHOLDER target: "xs" val { tensor { shape { value: 8 } dtype: "float32" } } }
  nodes { name: "cos" op: CALL_FUNCTION target: "aten.cos.default" args { node: "xs" } val { tensor { shape { value: 8 } dtype: "float32" } } }
  nodes { name: "output" op: OUTPUT target: "output" args { tuple { items { node: "cos" } } } }
} }
submodules { qualified_name: "false_graph_0" graph {
  nodes { name: "arg0_1" op: PLACEHOLDER target: "arg0_1" val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "arg1_1" op: PLACEHOLDER target: "arg1_1" val { sym { kind: SYM_INT expr: "s0" } } }
  nodes { name: "clone" op: CALL_FUNCTION target: "aten.clone.default" args { node: "arg0_1" }
    kwargs { name: "memory_format" value { memory_format: "contiguous_format" } }
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "add_" op: CALL_FUNCTION target: "aten.add_.Tensor" args { node: "clone" } args { str: "it's" }
    val { tensor { shape { value: 4 } shape { value: 8 } dtype: "float32" } } }
  nodes { name: "output" op: OUTPUT target: "output" args { tuple { items { node: "clone" } } } }
} }
`

func decodeText(t *testing.T, text string) *ir.Module {
	t.Helper()
	m, err := ir.Decode([]byte(text), ir.Text, "test.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m, "test.pbtxt"); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestShortTensor(t *testing.T) {
	dims := func(vs ...int64) []ir.Dim {
		var ds []ir.Dim
		for _, v := range vs {
			ds = append(ds, ir.Dim{Val: v})
		}
		return ds
	}
	tests := []struct {
		t    *ir.TensorMeta
		want string
	}{
		{&ir.TensorMeta{Dtype: "float32", Shape: dims(4, 8)}, "f32[4, 8]"},
		{&ir.TensorMeta{Dtype: "int64"}, "i64[]"},
		{&ir.TensorMeta{Dtype: "torch.bfloat16", Shape: dims(2)}, "bf16[2]"},
		{&ir.TensorMeta{Dtype: "bool", Shape: dims(1)}, "b8[1]"},
		{&ir.TensorMeta{Dtype: "uint8", Shape: dims(0)}, "u8[0]"},
		{&ir.TensorMeta{Dtype: "complex64"}, "c64[]"},
		{&ir.TensorMeta{Dtype: "complex128"}, "c128[]"},
		{&ir.TensorMeta{Dtype: "float64"}, "f64[]"},
		{&ir.TensorMeta{Dtype: "float16"}, "f16[]"},
		{&ir.TensorMeta{Dtype: "int32"}, "i32[]"},
		{&ir.TensorMeta{Dtype: "int16"}, "i16[]"},
		{&ir.TensorMeta{Dtype: "int8"}, "i8[]"},
		{&ir.TensorMeta{Dtype: "float8_e4m3fn"}, "f8e4m3fn[]"},
		{&ir.TensorMeta{Dtype: "quint8", Shape: dims(3)}, "quint8[3]"},
		{&ir.TensorMeta{Shape: dims(3)}, "?[3]"},
		{&ir.TensorMeta{Dtype: "float32", Shape: []ir.Dim{{Expr: "s0"}, {Expr: "2*s1"}, {Val: 8}}}, "f32[s0, 2*s1, 8]"},
		{nil, "?"},
	}
	for _, tt := range tests {
		if got := ir.ShortTensor(tt.t); got != tt.want {
			t.Errorf("ShortTensor(%+v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestFormatNode(t *testing.T) {
	m := decodeText(t, condModule)
	want := map[string][]string{
		"": {
			"%x = placeholder : f32[4, 8]",
			"%n = placeholder : s0",
			"%sum_1 = aten.sum.default(%x) : f32[]",
			"%gt = aten.gt.Scalar(%sum_1, 0) : b8[]",
			"%true_graph_0 = get_attr[true_graph_0]",
			"%false_graph_0 = get_attr[false_graph_0]",
			"%cond = higher_order.cond(%gt, %true_graph_0, %false_graph_0, (%x, %n)) : (f32[4, 8],)",
			"%getitem = _operator.getitem(%cond, 0) : f32[4, 8]",
			"%ones = aten.ones.default([s0, 8], dtype=torch.float16, device=cuda:0, pin_memory=False) : f16[s0, 8]",
			"%view = call_method[view](%getitem, -1)",
			"%output = output((%view, %ones, None))",
		},
		"true_graph_0": {
			"%arg0_1 = placeholder : f32[4, 8]",
			"%arg1_1 = placeholder : s0",
			"%body_graph_0 = get_attr[body_graph_0]",
			"%map_impl = higher_order.map_impl(%body_graph_0, [%arg0_1], []) : [f32[4, 8]]",
			"%getitem = _operator.getitem(%map_impl, 0) : f32[4, 8]",
			"%mul = aten.mul.Scalar(%getitem, 1e-05) : f32[4, 8]",
			"%output = output((%mul,))",
		},
		"false_graph_0": {
			"%arg0_1 = placeholder : f32[4, 8]",
			"%arg1_1 = placeholder : s0",
			"%clone = aten.clone.default(%arg0_1, memory_format=torch.contiguous_format) : f32[4, 8]",
			`%add_ = aten.add_.Tensor(%clone, "it's") : f32[4, 8]`,
			"%output = output((%clone,))",
		},
	}
	for name, lines := range want {
		g := m.Graph(name)
		if len(g.Nodes) != len(lines) {
			t.Fatalf("graph %q has %d nodes, want %d", name, len(g.Nodes), len(lines))
		}
		for i, w := range lines {
			if got := ir.FormatNode(g, ir.NodeID(i)); got != w {
				t.Errorf("graph %q node %d:\n got  %s\n want %s", name, i, got, w)
			}
		}
	}
	if got := ir.FormatNode(m.Root(), 99); got != "<no node #99>" {
		t.Errorf("FormatNode out of range = %q", got)
	}
}

// TestFormatNodeArgs covers every argument and value kind.
func TestFormatNodeArgs(t *testing.T) {
	arg := func(a ir.Arg) ir.Node {
		return ir.Node{Name: "r", Op: ir.OpCallFunction, Target: "aten.f.default", Args: []ir.Arg{a}}
	}
	f := func(v float64) ir.Arg { return ir.FloatArg(v) }
	inf := 1.0
	for range 400 {
		inf *= 10
	}
	tests := []struct {
		n    ir.Node
		want string
	}{
		{arg(f(1e-05)), "%r = aten.f.default(1e-05)"},
		{arg(f(0.1)), "%r = aten.f.default(0.1)"},
		{arg(f(1)), "%r = aten.f.default(1.0)"},
		{arg(f(-2.5)), "%r = aten.f.default(-2.5)"},
		{arg(f(0.0001)), "%r = aten.f.default(0.0001)"},
		{arg(f(1e16)), "%r = aten.f.default(1e+16)"},
		{arg(f(1234567890123456)), "%r = aten.f.default(1234567890123456.0)"},
		{arg(f(inf)), "%r = aten.f.default(inf)"},
		{arg(f(-inf)), "%r = aten.f.default(-inf)"},
		{arg(f(inf - inf)), "%r = aten.f.default(nan)"},
		{arg(ir.Arg{Kind: ir.ArgBool, B: true}), "%r = aten.f.default(True)"},
		{arg(ir.Arg{Kind: ir.ArgStr, S: `a'b"c` + "\n"}), `%r = aten.f.default('a\'b"c\n')`},
		{arg(ir.Arg{Kind: ir.ArgTuple}), "%r = aten.f.default(())"},
		{arg(ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ir.IntArg(1)})), "%r = aten.f.default((1,))"},
		{arg(ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{{Kind: ir.ArgNone}, ir.IntArg(-3)})), "%r = aten.f.default([None, -3])"},
		{arg(ir.Arg{Kind: ir.ArgDtype, S: "int64"}), "%r = aten.f.default(torch.int64)"},
		{arg(ir.Arg{Kind: ir.ArgLayout, S: "strided"}), "%r = aten.f.default(torch.strided)"},
		{arg(ir.Arg{Kind: ir.ArgDevice, S: "cpu"}), "%r = aten.f.default(cpu)"},
		{arg(ir.SymArg(&ir.SymExpr{Kind: ir.SymInt, Expr: "s0 + 1"})), "%r = aten.f.default(s0 + 1)"},
		{arg(ir.Arg{Kind: ir.ArgOp, S: "aten.add.Tensor"}), "%r = aten.f.default(aten.add.Tensor)"},
		{arg(ir.ComplexArg(1, -2)), "%r = aten.f.default((1-2j))"},
		{arg(ir.ComplexArg(0, 0.5)), "%r = aten.f.default(0.5j)"},
		{arg(ir.DictArg([]string{"k"}, []ir.Arg{ir.NodeArg(0, "x")})), "%r = aten.f.default({'k': %x})"},
		{ir.Node{Name: "c", Op: ir.OpCallModule, Target: "sub.lin", Args: []ir.Arg{ir.NodeArg(0, "x")}}, "%c = call_module[sub.lin](%x)"},
		{ir.Node{Name: "x_1", Op: ir.OpPlaceholder, Target: "x", Args: []ir.Arg{{Kind: ir.ArgNone}}}, "%x_1 = placeholder[x](None)"},
		{ir.Node{Name: "v", Op: ir.OpCallFunction, Target: "f", Val: &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{
			{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "float32", Shape: []ir.Dim{{Val: 2}}}},
			{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "float32", Shape: []ir.Dim{{Val: 2}}}},
		}}}, "%v = f() : (f32[2], f32[2])"},
		{ir.Node{Name: "v", Op: ir.OpCallFunction, Target: "f", Val: &ir.Value{Kind: ir.ValList, Elems: []ir.Value{
			{Kind: ir.ValNone}, {Kind: ir.ValInt, I: 3}, {Kind: ir.ValFloat, F: 0.5}, {Kind: ir.ValBool}, {Kind: ir.ValOpaque, S: "ScriptObject"},
		}}}, "%v = f() : [None, 3, 0.5, False, ScriptObject]"},
		{ir.Node{Name: "v", Op: ir.OpCallFunction, Target: "f", Val: &ir.Value{Kind: ir.ValUnset}}, "%v = f()"},
	}
	for _, tt := range tests {
		g := &ir.Graph{Nodes: []ir.Node{tt.n}}
		if got := ir.FormatNode(g, 0); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestStackSummary(t *testing.T) {
	trace := "  File \"/a/model.py\", line 3, in forward\n    y = self.block(x)\n" +
		"  File \"/a/block.py\", line 7, in forward\n    return x.relu()\n"
	got, ok := ir.StackSummary(trace)
	if want := "File: /a/block.py:7 in forward, code: return x.relu()"; !ok || got != want {
		t.Errorf("StackSummary = %q, %v; want %q", got, ok, want)
	}
	if _, ok := ir.StackSummary("not a trace"); ok {
		t.Error("StackSummary accepted a string without frames")
	}
}

func TestPrintReadableGolden(t *testing.T) {
	m := decodeText(t, condModule)
	var buf bytes.Buffer
	if err := ir.PrintReadable(&buf, m); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cond.fx.txt", buf.Bytes())
}

func TestPrintReadableForms(t *testing.T) {
	// Statement forms not in the cond golden: operator syntax, getattr,
	// placeholders renamed or with defaults, call_module, inplace operators.
	const text = `
format_version { major: 1 }
graph {
  nodes { name: "x_1" op: PLACEHOLDER target: "x" }
  nodes { name: "y" op: PLACEHOLDER target: "y" args { float: 0.5 } }
  nodes { name: "add" op: CALL_FUNCTION target: "_operator.add" args { node: "x_1" } args { node: "y" } }
  nodes { name: "neg" op: CALL_FUNCTION target: "_operator.neg" args { node: "add" } }
  nodes { name: "iadd" op: CALL_FUNCTION target: "_operator.iadd" args { node: "neg" } args { int: 1 } }
  nodes { name: "shape" op: CALL_FUNCTION target: "builtins.getattr" args { node: "iadd" } args { str: "shape" } }
  nodes { name: "size" op: CALL_FUNCTION target: "torch.sym_size" args { node: "iadd" } args { int: 0 } }
  nodes { name: "sub" op: CALL_MODULE target: "layers.0" args { node: "iadd" } }
  nodes { name: "w" op: GET_ATTR target: "layers.0.weight" }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "sub" } }
}
submodules { qualified_name: "layers.0" graph {
  nodes { name: "output" op: OUTPUT target: "output" args { none {} } }
} }
attributes { qualified_name: "layers.0.weight" meta { dtype: "float32" } }
`
	m := decodeText(t, text)
	def, body := ir.ReadableForward(m.Root())
	if want := "def forward(self, x, y = 0.5):"; def != want {
		t.Errorf("def = %q, want %q", def, want)
	}
	want := []string{
		"x_1 = x",
		"",
		"# No stacktrace found for following nodes",
		"add = x_1 + y;  x_1 = y = None",
		"neg = -add;  add = None",
		"neg += 1;  iadd = neg;  neg = None",
		"shape = iadd.shape",
		"size = torch.sym_size(iadd, 0)",
		`sub = getattr(self.layers, "0")(iadd);  iadd = None`,
		`w = getattr(self.layers, "0").weight`,
		"return sub",
	}
	if strings.Join(body, "\n") != strings.Join(want, "\n") {
		t.Errorf("body:\n%s\nwant:\n%s", strings.Join(body, "\n"), strings.Join(want, "\n"))
	}
	_, body = ir.ReadableForward(m.Graph("layers.0"))
	if len(body) != 1 || body[0] != "return None" {
		t.Errorf("layers.0 body = %q", body)
	}
	_, body = ir.ReadableForward(&ir.Graph{})
	if len(body) != 1 || body[0] != "pass" {
		t.Errorf("empty graph body = %q", body)
	}
}

const resnet18 = "../../testdata/models/resnet18.pb"

func loadResnet18(t *testing.T) *ir.Module {
	t.Helper()
	if _, err := os.Stat(resnet18); err != nil {
		t.Skipf("%s not exported yet (make testdata): %v", resnet18, err)
	}
	m, err := ir.Load(resnet18)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPrintReadableResnet18Golden(t *testing.T) {
	m := loadResnet18(t)
	var buf bytes.Buffer
	if err := ir.PrintReadable(&buf, m); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "resnet18.fx.txt", buf.Bytes())
}

// annotationRE matches print_readable's string annotations (': "f32[4]"'),
// which torch 1.13 does not print.
var annotationRE = regexp.MustCompile(`: "[^"]*"`)

// statements returns the root forward's parameter names and its statement
// lines (no blank or comment lines, annotations removed) from
// print_readable output.
func statements(t *testing.T, text string) (params []string, stmts []string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	inForward := false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		indent := len(l) - len(strings.TrimLeft(l, " "))
		switch {
		case strings.HasPrefix(l, "    def forward(self"):
			inForward = true
			sig := annotationRE.ReplaceAllString(trimmed, "")
			sig = strings.TrimSuffix(strings.TrimPrefix(sig, "def forward("), "):")
			for _, p := range strings.Split(sig, ",")[1:] {
				name, _, _ := strings.Cut(strings.TrimSpace(p), ":")
				name, _, _ = strings.Cut(name, "=")
				params = append(params, strings.TrimSpace(name))
			}
		case !inForward || trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case indent < 8:
			return params, stmts // the end of the root forward
		default:
			stmts = append(stmts, annotationRE.ReplaceAllString(trimmed, ""))
		}
	}
	if !inForward {
		t.Fatalf("no root forward in:\n%s", text)
	}
	return params, stmts
}

// TestPrintReadableMatchesTorch compares hopctl's print_readable of the
// exported resnet18 with torch's own print_readable of the same file
// rebuilt by hopctl_torch.load: same forward parameters, same number of
// statements and, annotations aside, the same statements.
func TestPrintReadableMatchesTorch(t *testing.T) {
	m := loadResnet18(t)
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s cannot import torch (apt-get install python3-torch): %v", python, err)
	}
	abs, err := filepath.Abs(resnet18)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", "import sys, hopctl_torch; hopctl_torch.load(sys.argv[1]).print_readable()", abs)
	cmd.Env = append(os.Environ(), "PYTHONPATH=../../python")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	torchOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("hopctl_torch.load(%s).print_readable(): %v\n%s", abs, err, stderr.Bytes())
	}
	var buf bytes.Buffer
	if err := ir.PrintReadable(&buf, m); err != nil {
		t.Fatal(err)
	}
	wantParams, wantStmts := statements(t, string(torchOut))
	gotParams, gotStmts := statements(t, buf.String())
	if strings.Join(gotParams, ", ") != strings.Join(wantParams, ", ") {
		t.Errorf("forward parameters:\n hopctl %v\n torch  %v", gotParams, wantParams)
	}
	if len(gotStmts) != len(wantStmts) {
		t.Errorf("forward has %d statements, torch prints %d", len(gotStmts), len(wantStmts))
	}
	bad := 0
	for i := range min(len(gotStmts), len(wantStmts)) {
		if gotStmts[i] != wantStmts[i] && bad < 5 {
			bad++
			t.Errorf("statement %d:\n hopctl %s\n torch  %s", i, gotStmts[i], wantStmts[i])
		}
	}
}

// corpusFiles are the graph files under testdata that the printers must
// handle.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, pattern := range []string{"../../testdata/hops/*.pbtxt", "../../testdata/models/*.pb"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// TestPrintCorpus prints every graph of the test corpus in both forms,
// twice, and checks the output is the same each time and every node
// appears in it.
func TestPrintCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Skip("no corpus under testdata")
	}
	for _, file := range files {
		m, err := ir.LoadFile(file) // some cases are invalid on purpose
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, form := range []struct {
			name string
			fn   func(io.Writer, *ir.Module) error
		}{{"PrintReadable", ir.PrintReadable}, {"WriteDOT", ir.WriteDOT}} {
			var a, b bytes.Buffer
			if err := form.fn(&a, m); err != nil {
				t.Errorf("%s: %s: %v", file, form.name, err)
			}
			if err := form.fn(&b, m); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s: %s is not deterministic", file, form.name)
			}
			for _, g := range m.Graphs {
				for i := range g.Nodes {
					if n := &g.Nodes[i]; n.Op != ir.OpOutput && !strings.Contains(a.String(), n.Name) {
						t.Errorf("%s: %s does not mention node %s of graph %s", file, form.name, n.Name, ir.DisplayName(g.Name))
					}
				}
			}
		}
	}
}

// FuzzPrint checks that no decodable file makes the printers fail or panic,
// and that their output holds no unescaped control sequence: names,
// targets, qualified names and stack traces come from the file, and the
// printout goes to a terminal or a CI log. No control character but the
// printers' own line feeds (and, in DOT, none inside a quoted id), no bidi
// override, valid UTF-8, no line a name could make start "::" (a workflow
// command), and DOT ids whose quotes balance on every line.
func FuzzPrint(f *testing.F) {
	f.Add([]byte(condModule))
	f.Add([]byte(hostileModule))
	for _, file := range corpusFiles(f) {
		if data, err := os.ReadFile(file); err == nil && strings.HasSuffix(file, ".pbtxt") {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ir.Decode(data, ir.Text, "fuzz.pbtxt")
		if err != nil {
			return
		}
		for i := range m.Graphs {
			for j := range m.Graphs[i].Nodes {
				_ = ir.FormatNode(m.Graphs[i], ir.NodeID(j))
			}
		}
		var pr, dot bytes.Buffer
		if err := ir.PrintReadable(&pr, m); err != nil {
			t.Fatal(err)
		}
		if err := ir.WriteDOT(&dot, m); err != nil {
			t.Fatal(err)
		}
		checkPrinted(t, "print", pr.String())
		checkPrinted(t, "dot", dot.String())
		for _, l := range strings.Split(dot.String(), "\n") {
			if strings.Count(strings.ReplaceAll(l, `\\`, ""), `"`)-strings.Count(strings.ReplaceAll(l, `\\`, ""), `\"`) < 0 ||
				(strings.Count(strings.ReplaceAll(l, `\\`, ""), `"`)-strings.Count(strings.ReplaceAll(l, `\\`, ""), `\"`))%2 != 0 {
				t.Fatalf("dot: a quoted id spans lines or is not closed: %q", l)
			}
		}
	})
}

// hostileModule is a cond whose names, targets, submodule names and stack
// trace hold line breaks, escape sequences (CSI, OSC 8, BEL), a NUL, a C1
// CSI and a bidi override.
const hostileModule = `
format_version {major: 1 minor: 0}
graph {
  nodes {name: "x\n::error::pwned" op: PLACEHOLDER target: "x"}
  nodes {name: "p" op: PLACEHOLDER target: "p"}
  nodes {name: "t" op: GET_ATTR target: "t\r\n::add-mask::\x1b[2J"}
  nodes {name: "f" op: GET_ATTR target: "f\u202e"}
  nodes {name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "t"} args {node: "f"} args {list {items {node: "x\n::error::pwned"}}}
    meta {stack_trace: "File \"a\x1b]8;;http://x\x07.py\", line 1\n::warning::x\u0000\u009b"}}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "cond"}}}}
}
submodules {qualified_name: "t\r\n::add-mask::\x1b[2J" graph {
  nodes {name: "a" op: PLACEHOLDER target: "a"}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "a"}}}}}}
submodules {qualified_name: "f\u202e" graph {
  nodes {name: "a" op: PLACEHOLDER target: "a"}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "a"}}}}}}
`

func checkPrinted(t *testing.T, name, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s: invalid UTF-8 in the output:\n%q", name, out)
	}
	for i, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f) {
			t.Fatalf("%s: unescaped %U at byte %d:\n%q", name, r, i, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::") {
			t.Fatalf("%s: a line starts a workflow command: %q", name, l)
		}
	}
}
