package ir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// richFile uses every argument kind, value kind and metadata field.
const richFile = `format_version { major: 1 minor: 0 }
producer: "test" torch_version: "2.6.0"
graph {
  nodes { name: "x" op: PLACEHOLDER target: "x"
    val { tensor { shape { value: 4 } shape { expr: "s0" } stride { expr: "s0" } stride { value: 1 }
      storage_offset { value: 0 } dtype: "float32" device: "cpu" requires_grad: true
      memory_format: "contiguous_format" storage_id: 0 layout: "strided" } } }
  nodes { name: "n" op: PLACEHOLDER target: "n" val { sym { kind: SYM_INT expr: "s0" hint: "3" } } }
  nodes { name: "c" op: CALL_FUNCTION target: "aten.full.default"
    args { list { items { int: 2 } items { sym { kind: SYM_INT expr: "s0" } } } }
    args { float: -1.5 }
    kwargs { name: "dtype" value { dtype: "float32" } }
    kwargs { name: "layout" value { layout: "strided" } }
    kwargs { name: "device" value { device: "cpu" } }
    kwargs { name: "pin_memory" value { bool: false } }
    kwargs { name: "memory_format" value { memory_format: "contiguous_format" } }
    kwargs { name: "d" value { dict { entries { name: "k" value { str: "v" } } } } }
    kwargs { name: "z" value { complex { real: 1 imag: -2 } } }
    kwargs { name: "none" value { none {} } }
    kwargs { name: "op" value { op: "aten.add.Tensor" } }
    kwargs { name: "sl" value { slice { start { none {} } stop { node: "n" } step { int: 2 } } } }
    kwargs { name: "sl2" value { slice { stop { int: 3 } } } }
    kwargs { name: "dots" value { ellipsis {} } }
    kwargs { name: "spec" value { constant { type: "torch.utils._pytree.TreeSpec"
      fields { name: "type" value { op: "torch._higher_order_ops.auto_functionalize.SchemaHolder" } }
      fields { name: "context" value { constant { type: "torch._higher_order_ops.auto_functionalize.SchemaHolder"
        fields { name: "schema" value { constant { type: "torch._C.FunctionSchema" fields { name: "schema" value { str: "cond(Tensor pred) -> Tensor" } } } } } } } }
      fields { name: "children" value { list {} } } } } }
    val { tuple { items { none {} } items { int: 3 } items { float: 2.5 } items { bool: true } items { opaque: "torch.Generator" }
      items { list { items { tensor { dtype: "int64" is_quantized: true qparams { qscheme: "per_tensor_affine" scale: 0.5 zero_point: 3 } } } } } } }
    meta { stack_trace: "File \"m.py\", line 3, in forward\n    x + 1" seq_nr: 7 fwd_source: "add"
      nn_module_stack { key: "l" path: "L['self'].l" type: "torch.nn.Linear" }
      source_fn_stack { key: "add" path: "add" type: "operator.add" }
      extra { key: "k" value: "v" } } }
  nodes { name: "g" op: GET_ATTR target: "sub" }
  nodes { name: "p" op: GET_ATTR target: "_tensor_constant0" }
  nodes { name: "output" op: OUTPUT target: "output" args { tuple { items { node: "c" } items { node: "p" } } } }
}
submodules { qualified_name: "sub" graph { nodes { name: "output" op: OUTPUT target: "output" args { tuple { } } } } }
attributes { qualified_name: "_tensor_constant0" meta { shape { value: 2 } dtype: "float32" } data: "\000\000\200?\000\000\000@" }
attributes { qualified_name: "_tree_spec_constant0" constant { constant { type: "torch.utils._pytree.TreeSpec"
  fields { name: "type" value { none {} } } fields { name: "context" value { none {} } } fields { name: "children" value { list {} } } } } }
schemas { name: "aten::full" schema: "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor" }
annotations { key: "hopctl.joint.masks" value: "1,0" }
grad_enabled: false
hop_classes { target: "higher_order.invoke_quant_test" classes: "__main__.InvokeQuantTest" classes: "torch._higher_order_ops.base_hop.BaseHOP" classes: "" }
hop_classes { target: "higher_order.cond" }
signature {
  inputs { kind: INPUT_KIND_BUFFER name: "x" target: "buf" persistent: true }
  inputs { kind: INPUT_KIND_USER_INPUT name: "n" }
  outputs { kind: OUTPUT_KIND_BUFFER_MUTATION name: "c" target: "buf" }
  outputs { kind: OUTPUT_KIND_USER_OUTPUT name: "p" }
}
`

func TestRoundTripAllEncodings(t *testing.T) {
	m, err := Decode([]byte(richFile), Text, "rich.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(m, "rich.pbtxt"); err != nil {
		t.Fatal(err)
	}
	want := ToProto(m)
	for _, enc := range []Encoding{Binary, JSON, Text} {
		data, err := Encode(m, enc)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		again, err := Encode(m, enc)
		if err != nil || string(again) != string(data) {
			t.Errorf("%s: encoding is not deterministic", enc)
		}
		m2, err := Decode(data, enc, "x")
		if err != nil {
			t.Fatalf("%s: decode: %v", enc, err)
		}
		if d := cmp.Diff(want, ToProto(m2), protocmp.Transform()); d != "" {
			t.Errorf("%s round trip differs (-want +got):\n%s", enc, d)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := Encode(decodeText(t, richFile), Binary)
	if err != nil {
		t.Fatal(err)
	}
	jsonData, err := Encode(decodeText(t, richFile), JSON)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		enc  Encoding
		want string
	}{
		{"truncated binary", good[:len(good)/2], Binary, "cannot decode as binary"},
		{"json in a .pb", jsonData, Binary, "looks like json"},
		{"garbage text", []byte("graph { nodes { name: 3"), Text, "cannot decode as text"},
		{"newer major", []byte("format_version { major: 2 } graph {}"), Text, "format version 2.0 is newer"},
		{"no version", []byte("graph {}"), Text, "missing format_version"},
		{"no root", []byte("format_version { major: 1 }"), Text, "missing root graph"},
		{"empty arg", []byte(`format_version { major: 1 } graph { nodes { name: "a" op: CALL_FUNCTION args {} } }`), Text, "node a: argument 0: argument has no value set"},
		{"empty file", nil, Binary, "empty file"},
		{"blank text file", []byte("\n  \n"), Text, "empty file"},
		{"truncated node", good[:len(good)-3], Binary, "truncated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.data, tc.enc, "in.file")
			var ie InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "in.file") {
				t.Errorf("err = %q, want it to name the file and contain %q", err, tc.want)
			}
		})
	}
}

func TestSniffEncoding(t *testing.T) {
	for in, want := range map[string]Encoding{"  {\"a\":1}": JSON, "graph {}": Text, "\x0a\x02\x08\x01": Binary} {
		if got := SniffEncoding([]byte(in)); got != want {
			t.Errorf("SniffEncoding(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSchemaName(t *testing.T) {
	for target, want := range map[string]string{
		"aten.add.Tensor": "aten::add.Tensor", "aten.relu.default": "aten::relu",
		"aten.add_.Tensor": "aten::add_.Tensor", "quantized.linear.default": "quantized::linear",
		"_operator.getitem": "", "higher_order.cond": "", "aten.": "",
	} {
		got, ok := SchemaName(target)
		if got != want || ok != (want != "") {
			t.Errorf("SchemaName(%q) = %q, %v; want %q", target, got, ok, want)
		}
	}
}

func TestDecodeToleratesMissingSubmessages(t *testing.T) {
	src := `format_version { major: 1 }
graph { nodes { name: "x" op: PLACEHOLDER target: "x" val { tensor {} } }
  nodes { name: "s" op: CALL_FUNCTION target: "aten.sin.default" args { node: "x" } args { sym {} } val { sym {} } }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "s" } } }
attributes { qualified_name: "w" }`
	m := decodeText(t, src)
	if err := Verify(m, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := Encode(m, JSON); err != nil {
		t.Fatal(err)
	}
}

// TestLoadFileLarge loads files big enough to be mapped rather than read
// (minMapSize), in every encoding, and checks the module equals what
// Decode makes of the same bytes and stays intact after the mapping is
// gone (its strings are copies, not views of the mapping).
func TestLoadFileLarge(t *testing.T) {
	rich := decodeText(t, richFile)
	m := &Module{FormatMajor: 1, Producer: "test"}
	g := NewGraph("")
	x := g.Append(Node{Name: "x", Op: OpPlaceholder, Target: "x", Val: rich.Graphs[0].Nodes[0].Val})
	prev := x
	for i := 0; i < 10000; i++ {
		name := g.FreshName("relu")
		prev = g.Append(Node{Name: name, Op: OpCallFunction, Target: "aten.relu.default",
			Args: []Arg{NodeArg(prev, g.Nodes[prev].Name)}, Val: rich.Graphs[0].Nodes[0].Val})
	}
	g.Append(Node{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{NodeArg(prev, g.Nodes[prev].Name)}})
	m.Graphs = []*Graph{g}
	dir := t.TempDir()
	for _, ext := range []string{".pb", ".json", ".pbtxt"} {
		path := filepath.Join(dir, "big"+ext)
		if err := saveFile(path, m); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < minMapSize {
			t.Fatalf("%s: %d bytes, smaller than minMapSize: the test no longer covers mapping", ext, len(data))
		}
		got, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Decode(data, EncodingForPath(path), path)
		if err != nil {
			t.Fatal(err)
		}
		// Overwrite the file: a module that still pointed into the (private,
		// now released) mapping or the file would change or fault.
		if err := os.WriteFile(path, make([]byte, len(data)), 0o644); err != nil {
			t.Fatal(err)
		}
		// The binary encoding is deterministic, so equal modules encode to
		// equal bytes (cmp.Diff takes seconds on 40k nodes).
		wantBin, err1 := Encode(want, Binary)
		gotBin, err2 := Encode(got, Binary)
		if err1 != nil || err2 != nil || !bytes.Equal(wantBin, gotBin) {
			t.Errorf("%s: LoadFile differs from Decode (%v, %v)", ext, err1, err2)
		}
		if err := Verify(got, path); err != nil {
			t.Errorf("%s: %v", ext, err)
		}
	}
}

// saveFile writes m to path in the encoding its extension names (binary
// when none): what the hopctl command's writes produce, without their
// atomicity, which is internal/atomicfile's.
func saveFile(path string, m *Module) error {
	enc := EncodingForPath(path)
	if enc == EncodingUnknown {
		enc = Binary
	}
	data, err := Encode(m, enc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// TestNextFieldFastPaths: nextField's fast paths read every field header
// of up to three bytes, with bodies short, exact and truncated, as its
// general path does.
func TestNextFieldFastPaths(t *testing.T) {
	buf := make([]byte, 3+300)
	for b0 := range 256 {
		for b1 := range 256 {
			for _, b2 := range []byte{0, 1, 2, 0x7f, 0x80, 0xff} {
				buf[0], buf[1], buf[2] = byte(b0), byte(b1), b2
				for _, n := range []int{0, 1, 2, 3, 4, 5, 130, 131, 132, 255, 259, 260, len(buf)} {
					b := buf[:n]
					f, size, err := nextField(b)
					g, gsize, gerr := nextFieldSlow(b)
					if size != gsize || (err == nil) != (gerr == nil) || f.num != g.num || f.typ != g.typ || f.v != g.v ||
						len(f.body) != len(g.body) || len(f.body) > 0 && &f.body[0] != &g.body[0] {
						t.Fatalf("% x: nextField %+v %d %v, general path %+v %d %v", b[:min(n, 3)], f, size, err, g, gsize, gerr)
					}
				}
			}
		}
	}
}
