package metadiff_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/ir"
)

// golden is testdata/torch_messages.json, written by torch_messages.py from
// torch's own str() of sizes, strides, dtypes and qparams.
type golden struct {
	Torch string `json:"torch"`
	Cases []struct {
		Name              string      `json:"name"`
		LHSName           string      `json:"lhs_name"`
		RHSName           string      `json:"rhs_name"`
		IncludeContiguity bool        `json:"include_contiguity"`
		LHSTuple          bool        `json:"lhs_tuple"`
		RHSTuple          bool        `json:"rhs_tuple"`
		LHS               []goldValue `json:"lhs"`
		RHS               []goldValue `json:"rhs"`
		Message           string      `json:"message"`
	} `json:"cases"`
}

type goldValue struct {
	Tensor *struct {
		Shape        []int64 `json:"shape"`
		Stride       []int64 `json:"stride"`
		Dtype        string  `json:"dtype"`
		Device       string  `json:"device"`
		RequiresGrad bool    `json:"requires_grad"`
		MemoryFormat string  `json:"memory_format"`
		IsQuantized  bool    `json:"is_quantized"`
		QScheme      string  `json:"qscheme"`
		Scale        float64 `json:"scale"`
		ZeroPoint    int64   `json:"zero_point"`
	} `json:"tensor"`
	None  bool     `json:"none"`
	Bool  *bool    `json:"bool"`
	Int   *int64   `json:"int"`
	Float *float64 `json:"float"`
}

func dims(xs []int64) []ir.Dim {
	out := make([]ir.Dim, len(xs))
	for i, x := range xs {
		out[i] = ir.Dim{Val: x}
	}
	return out
}

func (g goldValue) value() *ir.Value {
	switch {
	case g.Tensor != nil:
		t := g.Tensor
		tm := &ir.TensorMeta{Shape: dims(t.Shape), Stride: dims(t.Stride), Dtype: t.Dtype, Device: t.Device,
			RequiresGrad: t.RequiresGrad, MemoryFormat: t.MemoryFormat, IsQuantized: t.IsQuantized, Layout: "strided"}
		if t.IsQuantized {
			tm.QParams = &ir.QParams{QScheme: t.QScheme, Scale: t.Scale, ZeroPoint: t.ZeroPoint}
		}
		return &ir.Value{Kind: ir.ValTensor, Tensor: tm}
	case g.None:
		return &ir.Value{Kind: ir.ValNone}
	case g.Bool != nil:
		return &ir.Value{Kind: ir.ValBool, B: *g.Bool}
	case g.Int != nil:
		return &ir.Value{Kind: ir.ValInt, I: *g.Int}
	case g.Float != nil:
		return &ir.Value{Kind: ir.ValFloat, F: *g.Float}
	}
	return nil
}

func values(gs []goldValue) []*ir.Value {
	out := make([]*ir.Value, len(gs))
	for i, g := range gs {
		out[i] = g.value()
	}
	return out
}

// TestTorchMessages reproduces, byte for byte, the messages PyTorch's
// check_meta_consistency gives on the golden cases.
func TestTorchMessages(t *testing.T) {
	data, err := os.ReadFile("testdata/torch_messages.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 10 {
		t.Fatalf("only %d cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			r := metadiff.Compare(
				metadiff.List{Name: c.LHSName, Values: values(c.LHS), Tuple: c.LHSTuple},
				metadiff.List{Name: c.RHSName, Values: values(c.RHS), Tuple: c.RHSTuple},
				metadiff.Options{IncludeContiguity: c.IncludeContiguity})
			if got := r.Message(); got != c.Message {
				t.Errorf("message:\n got %q\nwant %q", got, c.Message)
			}
			if r.Equal() != (c.Message == "") {
				t.Errorf("Equal() = %v for message %q", r.Equal(), c.Message)
			}
		})
	}
}

// TestGoldenIsTorchs regenerates the golden file with Debian's torch when it
// is installed, so the golden cannot drift from what torch prints.
func TestGoldenIsTorchs(t *testing.T) {
	const py = "/usr/bin/python3"
	if testing.Short() {
		t.Skip("runs torch")
	}
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	cmd := exec.Command(py, "testdata/torch_messages.py")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if strings.Contains(stderr.String(), "No module named 'torch'") {
		t.Skipf("%s cannot import torch (apt-get install python3-torch)", py)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	want, err := os.ReadFile("testdata/torch_messages.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("testdata/torch_messages.json is stale; regenerate it with %s testdata/torch_messages.py", py)
	}
}

func tensor(dtype string, shape ...int64) *ir.Value {
	stride := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		stride[i] = acc
		acc *= shape[i]
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: dims(shape), Stride: dims(stride), Dtype: dtype,
		Device: "cpu", Layout: "strided", MemoryFormat: "contiguous_format"}}
}

// TestEveryDifference: unlike PyTorch, a length mismatch does not hide the
// differences of the pairs both lists have.
func TestEveryDifference(t *testing.T) {
	r := metadiff.Compare(
		metadiff.List{Name: "a", Values: []*ir.Value{tensor("float32", 2), tensor("float32", 3), tensor("float32", 4)}},
		metadiff.List{Name: "b", Values: []*ir.Value{tensor("int64", 2), tensor("float32", 3)}},
		metadiff.Options{})
	msg := r.Message()
	for _, want := range []string{
		"Expected a and b to have same number of outputs but got lhs:[FakeTensor(..., size=(2,)), FakeTensor(..., size=(3,)), FakeTensor(..., size=(4,))] and rhs:[FakeTensor(..., size=(2,), dtype=torch.int64), FakeTensor(..., size=(3,))]",
		"\nExpected a and b to have same metadata but found:\npair[0] differ in 'dtype: torch.float32 vs torch.int64'",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if !r.LengthMismatch || len(r.Pairs) != 1 || r.Pairs[0].Index != 0 {
		t.Errorf("result %+v", r)
	}
}

func TestSymbolicAndOptions(t *testing.T) {
	sym := func(exprs ...string) *ir.Value {
		v := tensor("float32", make([]int64, len(exprs))...)
		for i, e := range exprs {
			v.Tensor.Shape[i] = ir.Dim{Expr: e}
		}
		v.Tensor.Stride = []ir.Dim{{Expr: exprs[1]}, {Val: 1}}
		return v
	}
	r := metadiff.Compare(metadiff.List{Name: "l", Values: []*ir.Value{sym("s0", "s1"), sym("u0", "3")}},
		metadiff.List{Name: "r", Values: []*ir.Value{sym("s0", "s1 "), sym("u1", " 3")}}, metadiff.Options{})
	want := "Expected l and r to have same metadata but found:\n" +
		"pair[1] differ in 'shape: torch.Size([u0, 3]) vs torch.Size([u1,  3])', where lhs is FakeTensor(..., size=(u0, 3)) and rhs is FakeTensor(..., size=(u1,  3))"
	if got := r.Message(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	a, b := tensor("float32", 2), tensor("float32", 2)
	b.Tensor.RequiresGrad = true
	b.Tensor.MemoryFormat = ""
	if r := metadiff.Compare(metadiff.List{Values: []*ir.Value{a}}, metadiff.List{Values: []*ir.Value{b}}, metadiff.Options{}); !r.Equal() {
		t.Errorf("requires_grad/memory_format compared by default: %s", r.Message())
	}
	r = metadiff.Compare(metadiff.List{Name: "l", Values: []*ir.Value{a}}, metadiff.List{Name: "r", Values: []*ir.Value{b}},
		metadiff.Options{CheckGrad: true, IncludeContiguity: true})
	if got := r.Lines(); len(got) != 1 || !strings.Contains(got[0], "'requires_grad: False vs True', 'memory_format: torch.contiguous_format vs None'") {
		t.Errorf("lines %q", got)
	}

	// Unknown values are not compared; int vs SymInt is consistent.
	si := &ir.Value{Kind: ir.ValSym, Sym: &ir.SymExpr{Kind: ir.SymInt, Expr: "u0"}}
	r = metadiff.Compare(metadiff.List{Values: []*ir.Value{nil, {Kind: ir.ValInt, I: 3}}}, metadiff.List{Values: []*ir.Value{a, si}}, metadiff.Options{})
	if !r.Equal() || len(r.Unknown) != 1 {
		t.Errorf("result %+v", r)
	}
	sf := &ir.Value{Kind: ir.ValSym, Sym: &ir.SymExpr{Kind: ir.SymFloat, Expr: "f0"}}
	r = metadiff.Compare(metadiff.List{Name: "l", Values: []*ir.Value{si}}, metadiff.List{Name: "r", Values: []*ir.Value{sf}}, metadiff.Options{})
	if got := r.Lines(); len(got) != 1 || got[0] != "pair[0] differ in type: u0 vs f0, where lhs is u0 and rhs is f0" {
		t.Errorf("SymFloat: %q", got)
	}
}
