// The bad-input corpus: these files generate hopctl's adversarial corpus, testdata/bad:
// graph files that every command must refuse with exit code 3 and a message
// naming the file and, where there is one, the graph and node at fault —
// truncated and bit-flipped real models, wrong encodings, an empty file,
// structural defects, schemas that do not parse, calls that do not fit
// their schema, HOP calls that do not match their subgraphs, impossible
// shapes, a newer format version, and inputs built to exhaust stacks, time
// or memory.
//
// Committed returns the cases that are small enough to commit; Large
// returns the ones generated at test time (a 10,000-deep subgraph chain is
// ~100 MB because qualified names grow with depth). Each case carries the
// substrings its refusal must contain, written next to it as NAME.want.
//
//	go test ./internal/cli -run TestGenerate -update
//
// rewrites testdata/bad; without -update the test checks it is current.
// It is test code: nothing but the tests of this package uses it.
package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Case is one bad input.
type Case struct {
	Name string // file name; its extension selects the decoder
	Doc  string // what is wrong, one line
	Data []byte
	// Want are substrings the command's output (stderr, or for commands
	// that report findings, stdout) must contain: the location ("graph
	// <root>: node add") and the problem. The file path is always required
	// and is not listed.
	Want []string
}

// WantFile is the content of the case's .want sidecar.
func (c Case) WantFile() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", c.Doc)
	for _, w := range c.Want {
		b.WriteString(w)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseWant reads a .want sidecar: one substring per line; lines starting
// with '#' and empty lines are ignored.
func ParseWant(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Committed returns the cases committed in testdata/bad, built from the
// real models in modelsDir (testdata/models) and the hand-written graphs in
// hopsDir (testdata/hops).
func Committed(modelsDir, hopsDir string) ([]Case, error) {
	mlp, err := os.ReadFile(filepath.Join(modelsDir, "mlp.pb"))
	if err != nil {
		return nil, err
	}
	m, err := ir.Decode(mlp, ir.Binary, "mlp.pb")
	if err != nil {
		return nil, err
	}
	mlpJSON, err := ir.Encode(m, ir.JSON)
	if err != nil {
		return nil, err
	}
	condText, err := os.ReadFile(filepath.Join(hopsDir, "cond.pbtxt"))
	if err != nil {
		return nil, err
	}
	flip, err := bitflip(mlp)
	if err != nil {
		return nil, err
	}
	cases := []Case{
		// Unreadable files.
		{Name: "empty.pb", Doc: "an empty file", Data: []byte{}, Want: []string{"empty file"}},
		{Name: "empty.json", Doc: "an empty file", Data: []byte{}, Want: []string{"empty file"}},
		{Name: "empty.pbtxt", Doc: "an empty file", Data: []byte{}, Want: []string{"empty file"}},
		{Name: "truncated_mlp.pb", Doc: "testdata/models/mlp.pb cut in half",
			Data: mlp[:len(mlp)/2], Want: []string{"cannot decode as binary", "truncated"}},
		{Name: "truncated_mlp.json", Doc: "mlp.pb in the JSON encoding, cut in half",
			Data: mlpJSON[:len(mlpJSON)/2], Want: []string{"cannot decode as json", "unexpected EOF"}},
		{Name: "truncated_cond.pbtxt", Doc: "testdata/hops/cond.pbtxt cut in half",
			Data: condText[:len(condText)/2], Want: []string{"cannot decode as text"}},
		{Name: "bitflip_mlp.pb", Doc: fmt.Sprintf("testdata/models/mlp.pb with bit %d of byte %d flipped", flip.bit, flip.off),
			Data: flip.data, Want: []string{"cannot decode as binary"}},
		{Name: "json_in.pb", Doc: "the JSON encoding of mlp.pb in a .pb file",
			Data: mlpJSON, Want: []string{"cannot decode as binary", "looks like json"}},
		{Name: "binary_in.pbtxt", Doc: "the binary encoding of mlp.pb in a .pbtxt file",
			Data: mlp, Want: []string{"cannot decode as text", "looks like binary"}},
		{Name: "text_in.json", Doc: "the text encoding (testdata/hops/cond.pbtxt) in a .json file",
			Data: condText, Want: []string{"cannot decode as json", "looks like text"}},
		{Name: "not_hopctl.json", Doc: "valid JSON that is not a hopctl graph file",
			Data: []byte("{}\n"), Want: []string{"missing format_version"}},
		{Name: "newer_version.pbtxt", Doc: "format version 2.0, newer than hopctl reads",
			Data: text(module("format_version {major: 2 minor: 0}", graph("", ph("x"), out("x")))),
			Want: []string{"format version 2.0 is newer"}},
		{Name: "invalid_utf8.pb", Doc: "a node name that is not valid UTF-8",
			Data: invalidUTF8(), Want: []string{"graph <root>: node #1", "invalid UTF-8"}},
		{Name: "deep_args.pb", Doc: "an argument list nested 6,000 deep (12,000 levels of messages)",
			Data: deepArgs(6000), Want: []string{"graph <root>: node deep", "nested too deeply"}},
		{Name: "deep_args.pbtxt", Doc: "an argument list nested 6,000 deep (12,000 levels of messages)",
			Data: deepArgsText(6000), Want: []string{"cannot decode as text", "recursion"}},
		{Name: "deep_args.json", Doc: "an argument list nested 6,000 deep (12,000 levels of messages)",
			Data: deepArgsJSON(6000), Want: []string{"cannot decode as json", "recursion"}},

		// Structural defects (ir.Verify).
		{Name: "cycle.pbtxt", Doc: "two nodes that use each other",
			Data: text(module(v1, graph("", ph("x"),
				call("a", "aten.add.Tensor", corpusRef("x"), corpusRef("b")),
				call("b", "aten.add.Tensor", corpusRef("a"), corpusRef("x")),
				out("b")))),
			Want: []string{"graph <root>: node a", "cycle through nodes a, b"}},
		{Name: "self_cycle.pbtxt", Doc: "a node that uses itself",
			Data: text(module(v1, graph("", ph("x"), call("a", "aten.sin.default", corpusRef("a")), out("a")))),
			Want: []string{"graph <root>: node a", "node uses itself (cycle)"}},
		{Name: "dangling.pbtxt", Doc: "an argument naming a node that does not exist",
			Data: text(module(v1, graph("", ph("x"), call("sin", "aten.sin.default", corpusRef("nope")), out("sin")))),
			Want: []string{"graph <root>: node sin", `dangling reference to "nope"`}},
		{Name: "use_before_def.pbtxt", Doc: "a node used before its definition",
			Data: text(module(v1, graph("", ph("x"),
				call("cos", "aten.cos.default", corpusRef("sin")),
				call("sin", "aten.sin.default", corpusRef("x")),
				out("cos")))),
			Want: []string{"graph <root>: node cos", `use of "sin" before its definition`}},
		{Name: "duplicate_node.pbtxt", Doc: "two nodes named sin",
			Data: text(module(v1, graph("", ph("x"),
				call("sin", "aten.sin.default", corpusRef("x")),
				call("sin", "aten.sin.default", corpusRef("x")),
				out("sin")))),
			Want: []string{"graph <root>: node sin", "duplicate node name"}},
		{Name: "duplicate_submodule.pbtxt", Doc: "two submodules named true_graph_0",
			Data: text(corpusCond(1, 1, "true_graph_0", "true_graph_0")),
			Want: []string{"graph true_graph_0", "duplicate submodule name"}},
		{Name: "missing_subgraph.pbtxt", Doc: "cond's false branch is referenced but missing",
			Data: text(corpusCond(1, 1, "true_graph_0")),
			Want: []string{"graph <root>: node false_graph_0", `get_attr target "false_graph_0" does not exist`}},
		{Name: "empty_name.pbtxt", Doc: "a node without a name (refused by the decoders: see empty_nodes_6000000.pb)",
			Data: text(module(v1, graph("", ph("x"), call("", "aten.sin.default", corpusRef("x")), out("x")))),
			Want: []string{"graph <root>: node #1", "node has an empty name"}},
		{Name: "missing_output.pbtxt", Doc: "a graph without an output node",
			Data: text(module(v1, graph("", ph("x"), call("sin", "aten.sin.default", corpusRef("x"))))),
			Want: []string{"graph <root>", "missing output node"}},
		{Name: "huge_shape.pbtxt", Doc: "a tensor of shape [2**32, 2**32, 2**32]: its element count overflows int64",
			Data: text(module(v1, graph("", phShape("x", "[{value: 4294967296}, {value: 4294967296}, {value: 4294967296}]"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "overflows int64"}},
		{Name: "negative_size.pbtxt", Doc: "a tensor with a negative size",
			Data: text(module(v1, graph("", phShape("x", "[{value: 4}, {value: -3}]"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "negative size -3"}},

		{Name: "dim_2_63.pbtxt", Doc: "f32[2**63-1]: its element count fits int64, its bytes do not (torch: Storage size calculation overflowed, under fake tensors too)",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 9223372036854775807}]", "[{value: 1}]", "float32", "strided"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "overflows int64 bytes"}},
		{Name: "negative_stride.pbtxt", Doc: "a negative stride (torch: as_strided: Negative strides are not supported)",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 4}]", "[{value: -1}]", "float32", "strided"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "negative stride -1"}},
		{Name: "stride_overflow.pbtxt", Doc: "strides whose extent (size-1)*stride overflows int64",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 4}, {value: 4}]", "[{value: 4611686018427387904}, {value: 1}]", "float32", "strided"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "overflows int64 bytes"}},
		{Name: "stride_count.pbtxt", Doc: "a 2-d tensor with one stride",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 4}, {value: 4}]", "[{value: 1}]", "float32", "strided"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", "has 1 strides"}},
		{Name: "unknown_dtype.pbtxt", Doc: "a dtype torch does not have",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 4}]", "[{value: 1}]", "float99", "strided"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", `dtype "float99" is not a torch dtype`}},
		{Name: "unknown_layout.pbtxt", Doc: "a layout torch does not have",
			Data: text(module(v1, graph("", tensorPh("x", "[{value: 4}]", "[{value: 1}]", "float32", "sparse_hash"),
				call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph <root>: node x", `layout "sparse_hash" is not a torch layout`}},

		// The schema table and calls against schemas.
		{Name: "bad_schema.pbtxt", Doc: "a schema in the file's table that does not parse",
			Data: text(module(v1, graph("", ph("x"), call("sin", "aten.sin.default", corpusRef("x")), out("sin")),
				`schemas {name: "aten::sin" schema: "aten::sin(Tensor self -> Tensor"}`)),
			Want: []string{"file schema 0 (aten::sin)", "schema parse error at column 23"}},
		{Name: "arity.pbtxt", Doc: "aten.add.Tensor called with four positional arguments",
			Data: text(module(v1, graph("", ph("x"),
				call("add", "aten.add.Tensor", corpusRef("x"), corpusRef("x"), "{int: 1}", "{int: 2}"), out("add")))),
			Want: []string{"graph <root>: node add", "takes at most 2 positional arguments but 4 were given"}},
		{Name: "missing_arg.pbtxt", Doc: "aten.add.Tensor called without its other argument",
			Data: text(module(v1, graph("", ph("x"), call("add", "aten.add.Tensor", corpusRef("x")), out("add")))),
			Want: []string{"graph <root>: node add", "missing required argument 'other'"}},
		{Name: "arg_type.pbtxt", Doc: "aten.sin.default called with a string",
			Data: text(module(v1, graph("", ph("x"), call("sin", "aten.sin.default", `{str: "x"}`), out("sin")))),
			Want: []string{"graph <root>: node sin", "argument 'self' (Tensor) got a string"}},
		{Name: "args_100000.pb", Doc: "aten.add.Tensor called with 100,000 arguments",
			Data: manyArgs(100000), Want: []string{"graph <root>: node add", "but 100000 were given"}},

		// HOP calls that do not match their subgraphs.
		{Name: "hop_operands.pbtxt", Doc: "cond passes two operands to branches that take one",
			Data: text(corpusCond(2, 1, "true_graph_0", "false_graph_0")),
			Want: []string{"graph <root>: node cond", "true_fn subgraph true_graph_0 takes 1 inputs but the call passes 2"}},
		{Name: "hop_no_outputs.pbtxt", Doc: "cond's branches return nothing while the call has (and reads) output 0 (joint once wrote such graphs)",
			Data: text(module(v1, graph("", ph("x"), ph("p"), getAttr("true_graph_0"), getAttr("false_graph_0"),
				`name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "true_graph_0"} args {node: "false_graph_0"} args {list {items {node: "x"}}} val {tuple {items `+tensor4+`}}`,
				`name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val `+tensor4,
				out("getitem")),
				graph("true_graph_0", ph("arg0_1"), `name: "output" op: OUTPUT target: "output" args {tuple {}}`),
				graph("false_graph_0", ph("arg0_1"), `name: "output" op: OUTPUT target: "output" args {tuple {}}`))),
			Want: []string{"graph <root>: node cond", "output 0 of the call is output 0 of its subgraphs, but none returns more than 0"}},
		{Name: "self_reference.pbtxt", Doc: "cond's true_fn is get_attr \"\": the root graph itself (joint recursed until the stack overflowed)",
			Data: text(module(v1, graph("", ph("x"), ph("p"),
				`name: "true_graph_0" op: GET_ATTR target: "" val {opaque: "GraphModule"}`, getAttr("false_graph_0"),
				`name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "true_graph_0"} args {node: "false_graph_0"} args {list {items {node: "x"} items {node: "p"}}} val {tuple {items `+tensor4+`}}`,
				`name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val `+tensor4,
				out("getitem")),
				graph("false_graph_0", ph("arg0_1"), ph("arg1_1"), call("sin", "aten.sin.default", corpusRef("arg0_1")), out("sin")))),
			Want: []string{"graph <root>: node true_graph_0", `get_attr target "" is empty`, "cannot call itself"}},
		{Name: "ancestor_reference.pbtxt", Doc: `subgraph g calls cond on get_attr "" (g + "." + "" is a graph "g.", which joint's view of g renamed to g itself)`,
			Data: text(module(v1, graph("", ph("x"), ph("p"), getAttr("g"),
				`name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "g"} args {node: "g"} args {list {items {node: "x"} items {node: "p"}}} val {tuple {items `+tensor4+`}}`,
				`name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val `+tensor4,
				out("getitem")),
				graph("g", ph("x"), ph("p"),
					`name: "up" op: GET_ATTR target: "" val {opaque: "GraphModule"}`,
					`name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "up"} args {node: "up"} args {list {items {node: "x"} items {node: "p"}}} val {tuple {items `+tensor4+`}}`,
					`name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val `+tensor4,
					out("getitem")),
				graph("g.", ph("x"), ph("p"), call("sin", "aten.sin.default", corpusRef("x")), out("sin")))),
			Want: []string{"graph g: node up", `get_attr target "" is empty`, `submodule name "g." has an empty component`}},
		{Name: "hop_not_subgraph.pbtxt", Doc: "cond's true_fn argument is a tensor, not a subgraph",
			Data: text(module(v1, graph("", ph("x"), ph("p"),
				call("cond", "higher_order.cond", corpusRef("p"), corpusRef("x"), corpusRef("x"), "{list {items {node: \"x\"}}}"),
				out("cond")))),
			Want: []string{"graph <root>: node cond", "argument 1 (true_fn) is not a get_attr of an existing subgraph"}},
	}
	// torch.export archives and program JSON (testdata/pt2 is beside
	// testdata/models).
	archives, err := archiveCases(filepath.Join(modelsDir, "..", "pt2"))
	if err != nil {
		return nil, err
	}
	return append(cases, archives...), nil
}

// Large returns the cases generated at test time: a chain of cond calls
// whose subgraphs nest 10,000 deep (true_graph_0.true_graph_0...: ~100 MB,
// since every level's qualified name spells out its ancestors).
//
// The tiny-repeated-field cases are 12 MB each of the smallest messages a
// field can repeat (two-byte empty arguments and nodes, four-byte `none`
// arguments, eight-byte keyword arguments): each once cost hundreds of
// bytes of memory before the file was refused (3.6 GB for the empty
// arguments).
func Large() []Case {
	return []Case{{
		Name: "nested_10000.pb", Doc: "cond calls whose subgraphs nest 10,000 deep",
		Data: Nested(10000),
		Want: []string{"subgraphs nest more than 1000 levels deep"},
	},
		{Name: "empty_args_6000000.pb", Doc: "a node with 6,000,000 empty arguments",
			Data: repeatedArgs([]byte{0x22, 0x00}, 6_000_000), Want: []string{"graph <root>: node add", "argument 1: argument has no value set"}},
		{Name: "none_args_3000000.pb", Doc: "aten.add.Tensor called with 3,000,000 None arguments",
			Data: repeatedArgs([]byte{0x22, 0x02, 0x32, 0x00}, 3_000_000), Want: []string{"graph <root>: node add", "but 3000001 were given"}},
		{Name: "kwargs_1500000.pb", Doc: "aten.add.Tensor called with 1,500,000 keyword arguments named \"\"",
			Data: repeatedArgs([]byte{0x2a, 0x06, 0x0a, 0x00, 0x12, 0x02, 0x32, 0x00}, 1_500_000), Want: []string{"graph <root>: node add", "unknown keyword argument", "more problems with this call"}},
		{Name: "empty_nodes_6000000.pb", Doc: "a graph of 6,000,000 empty nodes",
			Data: emptyNodes(6_000_000), Want: []string{"graph <root>: node #1", "node has an empty name"}},
		{Name: "empty_nodes_3000000.json", Doc: "a JSON graph of 3,000,000 empty nodes ({}: protojson held 60 times the file's size before Verify refused it)",
			Data: []byte(`{"formatVersion":{"major":1},"graph":{"nodes":[` + strings.Repeat("{},", 3_000_000-1) + `{}]}}`),
			Want: []string{"node #0 of the nodes list", "node has an empty name"}},
	}
}

// repeatedArgs is a root graph x → add → output whose add node carries
// unit (an encoded args or kwargs field) n times after its argument x.
func repeatedArgs(unit []byte, n int) []byte {
	node := wrap(1, []byte("add"))
	node = append(node, 0x10, 0x03) // op: CALL_FUNCTION
	node = append(node, wrap(3, []byte("aten.add.Tensor"))...)
	node = append(node, wrap(4, wrap(1, []byte("x")))...)
	node = append(node, bytes.Repeat(unit, n)...)
	var g []byte
	g = append(g, wrap(1, append(append(wrap(1, []byte("x")), 0x10, 0x01), wrap(3, []byte("x"))...))...) // placeholder x
	g = append(g, wrap(1, node)...)
	g = append(g, wrap(1, append(append(wrap(1, []byte("output")), 0x10, 0x06), wrap(4, wrap(1, []byte("add")))...))...)
	return append(wrap(1, []byte{0x08, 0x01}), wrap(4, g)...)
}

// emptyNodes is a root graph of a placeholder then n empty node messages.
func emptyNodes(n int) []byte {
	g := wrap(1, append(append(wrap(1, []byte("x")), 0x10, 0x01), wrap(3, []byte("x"))...))
	g = append(g, bytes.Repeat([]byte{0x0a, 0x00}, n)...)
	return append(wrap(1, []byte{0x08, 0x01}), wrap(4, g)...)
}

// Nested returns a module whose root calls cond on subgraph "g" (as both
// branches), which calls cond on "g.g", and so on, depth levels deep. Short
// names keep it as small as a depth-deep nesting can be.
func Nested(depth int) []byte { return nested(depth, false) }

// NestedGrad is Nested with every input requiring grad, so that joint
// builds a backward for every level: each cond's branches are one shared
// subgraph (whose backward was once built per call path, 2^depth times).
func NestedGrad(depth int) []byte { return nested(depth, true) }

func nested(depth int, grad bool) []byte {
	m := &ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus"}
	name := ""
	for level := 0; level <= depth; level++ {
		g := &ir.Graph{Name: name}
		x := ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: corpusF32()}
		x.Val.Tensor.RequiresGrad = grad
		if level == depth {
			g.Nodes = []ir.Node{x,
				{Name: "sin", Op: ir.OpCallFunction, Target: "aten.sin.default", Args: []ir.Arg{nodeRef("x")}, Val: corpusF32()},
				{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("sin"))}}}
		} else {
			g.Nodes = []ir.Node{
				x,
				{Name: "p", Op: ir.OpCallFunction, Target: "aten.gt.Scalar", Args: []ir.Arg{nodeRef("x"), {Kind: ir.ArgInt}},
					Val: &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "bool", Device: "cpu"}}},
				{Name: "g", Op: ir.OpGetAttr, Target: "g"},
				{Name: "cond", Op: ir.OpCallFunction, Target: "higher_order.cond",
					Args: []ir.Arg{nodeRef("p"), nodeRef("g"), nodeRef("g"), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{nodeRef("x")})},
					Val:  &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*corpusF32()}}},
				{Name: "getitem", Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{nodeRef("cond"), ir.IntArg(0)}, Val: corpusF32()},
				{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("getitem"))}},
			}
		}
		m.Graphs = append(m.Graphs, g)
		if name == "" {
			name = "g"
		} else {
			name += ".g"
		}
	}
	return encode(m)
}

func encode(m *ir.Module) []byte {
	data, err := ir.Encode(m, ir.Binary)
	if err != nil {
		panic(err) // cannot happen: the generated modules are well formed
	}
	return data
}

func corpusF32() *ir.Value {
	return &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: 4}}, Stride: []ir.Dim{{Val: 1}}, Dtype: "float32", Device: "cpu"}}
}

func nodeRef(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name, Ref: ir.NoNode} }

func tuple(elems ...ir.Arg) ir.Arg { return ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, elems) }

// manyArgs is a root graph whose add node has n arguments.
func manyArgs(n int) []byte {
	args := make([]ir.Arg, n)
	for i := range args {
		args[i] = nodeRef("x")
	}
	m := &ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: []ir.Node{
			{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: corpusF32()},
			{Name: "add", Op: ir.OpCallFunction, Target: "aten.add.Tensor", Args: args, Val: corpusF32()},
			{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("add"))}},
		}}}}
	return encode(m)
}

// deepArgs is a root graph whose node "deep" has one argument: a list
// nested depth deep. It is encoded by hand: protobuf-go refuses to
// marshal messages that deep.
func deepArgs(depth int) []byte {
	// Arg{list: ArgList{items: Arg{list: ...}}}, innermost Arg{int: 1}:
	// nested length-delimited fields are all headers then the core, so
	// compute the sizes from the inside out and write the headers outside in.
	core := []byte{0x10, 0x01}
	headers := make([][]byte, 2*depth)
	size := len(core)
	for i := len(headers) - 1; i >= 0; i-- {
		field := uint64(7) // Arg.list
		if i%2 == 1 {
			field = 1 // ArgList.items
		}
		headers[i] = appendVarint(appendVarint(nil, field<<3|2), uint64(size))
		size += len(headers[i])
	}
	inner := make([]byte, 0, size)
	for _, h := range headers {
		inner = append(inner, h...)
	}
	inner = append(inner, core...)
	var node []byte
	node = append(node, wrap(1, []byte("deep"))...)
	node = append(node, 0x10, 0x03) // op: CALL_FUNCTION
	node = append(node, wrap(3, []byte("aten.sin.default"))...)
	node = append(node, wrap(4, inner)...)
	var g []byte
	g = append(g, wrap(1, append(append(wrap(1, []byte("x")), 0x10, 0x01), wrap(3, []byte("x"))...))...) // placeholder x
	g = append(g, wrap(1, node)...)
	g = append(g, wrap(1, append(append(wrap(1, []byte("output")), 0x10, 0x06), wrap(4, wrap(1, []byte("deep")))...))...)
	var f []byte
	f = append(f, wrap(1, []byte{0x08, 0x01})...) // format_version {major: 1}
	f = append(f, wrap(4, g)...)
	return f
}

// deepArgsText is deepArgs in the text encoding.
func deepArgsText(depth int) []byte {
	return text(module(v1, graph("", ph("x"),
		`name: "deep" op: CALL_FUNCTION target: "aten.sin.default" args `+strings.Repeat("{list {items ", depth)+"{int: 1}"+strings.Repeat("}}", depth),
		out("deep"))))
}

// deepArgsJSON is deepArgs in the JSON encoding.
func deepArgsJSON(depth int) []byte {
	return []byte(`{"format_version": {"major": 1}, "graph": {"nodes": [
  {"name": "x", "op": "PLACEHOLDER", "target": "x"},
  {"name": "deep", "op": "CALL_FUNCTION", "target": "aten.sin.default", "args": [` +
		strings.Repeat(`{"list": {"items": [`, depth) + `{"int": "1"}` + strings.Repeat(`]}}`, depth) + `]},
  {"name": "output", "op": "OUTPUT", "target": "output", "args": [{"node": "deep"}]}]}}
`)
}

// wrap encodes a length-delimited field.
func wrap(field int, body []byte) []byte {
	out := appendVarint(nil, uint64(field)<<3|2)
	out = appendVarint(out, uint64(len(body)))
	return append(out, body...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// invalidUTF8 is a root graph whose second node's name is not UTF-8.
func invalidUTF8() []byte {
	phNode := append(append(wrap(1, []byte("x")), 0x10, 0x01), wrap(3, []byte("x"))...)
	bad := append(append(wrap(1, []byte("s\xffn")), 0x10, 0x03), wrap(3, []byte("aten.sin.default"))...)
	var g []byte
	g = append(g, wrap(1, phNode)...)
	g = append(g, wrap(1, bad)...)
	var f []byte
	f = append(f, wrap(1, []byte{0x08, 0x01})...)
	f = append(f, wrap(4, g)...)
	return f
}

type flipped struct {
	data     []byte
	off, bit int
}

// bitflip flips the first bit of data, scanning from the middle, that
// makes the file undecodable (a flip can leave a file decodable: a bit of
// a float, of a name).
func bitflip(data []byte) (flipped, error) {
	for off := len(data) / 2; off < len(data); off++ {
		for bit := 7; bit >= 0; bit-- {
			d := bytes.Clone(data)
			d[off] ^= 1 << bit
			if _, err := ir.Decode(d, ir.Binary, "x.pb"); err != nil {
				return flipped{d, off, bit}, nil
			}
		}
	}
	return flipped{}, fmt.Errorf("no single bit flip breaks the file")
}

// The pbtxt builders below write small graphs in the text encoding, by
// hand so that the files are stable (prototext varies its whitespace).

const v1 = "format_version {major: 1 minor: 0}"

const tensor4 = `{tensor {shape: [{value: 4}] stride: [{value: 1}] storage_offset {value: 0} dtype: "float32" device: "cpu" layout: "strided" memory_format: "contiguous_format"}}`

func module(version string, parts ...string) string {
	return version + "\nproducer: \"badcorpus\"\n" + strings.Join(parts, "\n") + "\n"
}

func text(s string) []byte { return []byte(s) }

func graph(name string, nodes ...string) string {
	body := "  nodes {" + strings.Join(nodes, "}\n  nodes {") + "}\n"
	if name == "" {
		return "graph {\n" + body + "}"
	}
	return fmt.Sprintf("submodules {\n  qualified_name: %q\n  graph {\n%s  }\n}", name, indent(body))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

func ph(name string) string {
	return fmt.Sprintf("name: %q op: PLACEHOLDER target: %q val %s", name, name, tensor4)
}

func phShape(name, shape string) string {
	return fmt.Sprintf(`name: %q op: PLACEHOLDER target: %q val {tensor {shape: %s dtype: "float32" device: "cpu"}}`, name, name, shape)
}

// tensorPh is a placeholder with the given shape, strides, dtype and layout.
func tensorPh(name, shape, stride, dtype, layout string) string {
	return fmt.Sprintf(`name: %q op: PLACEHOLDER target: %q val {tensor {shape: %s stride: %s dtype: %q device: "cpu" layout: %q}}`,
		name, name, shape, stride, dtype, layout)
}

func corpusRef(name string) string { return fmt.Sprintf("{node: %q}", name) }

func call(name, target string, args ...string) string {
	s := fmt.Sprintf("name: %q op: CALL_FUNCTION target: %q", name, target)
	for _, a := range args {
		s += " args " + a
	}
	return s + " val " + tensor4
}

func getAttr(name string) string {
	return fmt.Sprintf("name: %q op: GET_ATTR target: %q val {opaque: \"GraphModule\"}", name, name)
}

func out(names ...string) string {
	items := ""
	for _, n := range names {
		items += " items " + corpusRef(n)
	}
	return fmt.Sprintf("name: \"output\" op: OUTPUT target: \"output\" args {tuple {%s}}", strings.TrimSpace(items))
}

// condModule is cond(p, true_graph_0, false_graph_0, [x, ...]) with
// operands operands, and one submodule per name in subs, each taking
// placeholders placeholders.
func corpusCond(operands, placeholders int, subs ...string) string {
	nodes := []string{ph("x"), ph("p"), getAttr("true_graph_0"), getAttr("false_graph_0")}
	items := ""
	for range operands {
		items += ` items {node: "x"}`
	}
	nodes = append(nodes,
		fmt.Sprintf(`name: "cond" op: CALL_FUNCTION target: "higher_order.cond" args {node: "p"} args {node: "true_graph_0"} args {node: "false_graph_0"} args {list {%s}} val {tuple {items %s}}`, strings.TrimSpace(items), tensor4),
		`name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val `+tensor4,
		out("getitem"))
	parts := []string{graph("", nodes...)}
	for _, s := range subs {
		var sn []string
		for i := range placeholders {
			sn = append(sn, ph(fmt.Sprintf("arg%d_1", i)))
		}
		sn = append(sn, call("sin", "aten.sin.default", corpusRef("arg0_1")), out("sin"))
		parts = append(parts, graph(s, sn...))
	}
	return module(v1, parts...)
}

// Stress returns valid inputs at hopctl's limits, generated at test time:
// every command must accept them (exit 0, or 1 for findings) within the
// same time and memory bounds as the bad inputs. They catch recursion and
// quadratic costs that only show at scale.
func Stress() []Case {
	return []Case{
		{Name: fmt.Sprintf("nested_%d.pb", ir.MaxNesting), Doc: "cond calls whose subgraphs nest as deep as hopctl reads", Data: Nested(ir.MaxNesting)},
		{Name: "shared_cond_15_grad.pb", Doc: "15 levels of a cond whose branches are one shared subgraph, inputs requiring grad (joint took 1.5 GB)", Data: NestedGrad(15)},
		{Name: fmt.Sprintf("nested_%d_grad.pb", ir.MaxNesting), Doc: "NestedGrad as deep as hopctl reads (joint was cubic in the depth)", Data: NestedGrad(ir.MaxNesting)},
		{Name: "findings_6000_graphs.pb", Doc: "3,000 conds over distinct branches, each with an op of no schema: 6,000 subgraphs and 6,000 findings (findings were looked up per graph: subgraphs × findings)", Data: manyConds(3000, true)},
		{Name: "nested_250_grad.pb", Doc: "NestedGrad 250 levels deep: joint's cost grows with the cube of the depth (see nested_1000_grad.pb)", Data: NestedGrad(250)},
		{Name: "distinct_conds_8000_grad.pb", Doc: "8,000 conds over distinct branches, inputs requiring grad: 16,000 subgraphs (graphs were looked up, and a subgraph's descendants found, by scanning every graph per HOP call: quadratic, 12,000 conds took 23 s of CPU in joint)", Data: conds(8000, true, "aten.sin.default")},
		{Name: "conds_3000.pb", Doc: "3,000 cond calls in one graph, inputs requiring grad (fresh subgraph names were searched from 0 over every graph)", Data: manyConds(3000, false)},
		{Name: "cond_100000_operands.pb", Doc: "a cond passing 100,000 operands", Data: wideCond(100000)},
		{Name: "cat_100000.pb", Doc: "aten.cat of 100,000 tensors, and an output of 100,000 values", Data: wideCat(100000)},
		{Name: "views_100000.pb", Doc: "a chain of 100,000 views of an input, each written in place and returned", Data: viewChain(100000)},
		{Name: "deep_output_4990.pb", Doc: "an output tuple nested 4,990 deep (34 KB; its .pbtxt was 199 MB, indented with the depth)", Data: deepOutput(4990)},
		{Name: "shared_storage_100000.pb", Doc: "100,000 inputs sharing one storage, all returned", Data: sharedStorage(100000)},
	}
}

// manyConds is x (requiring grad) → n conds in sequence, each over the
// same branch pair → output.
//
// distinct gives every cond its own branches (t_i, f_i), the true branch
// calling trueOp ("mylib.op.default", with no schema: an unknown-op finding
// per subgraph; or a differentiable op, for joint).
func manyConds(n int, distinct bool) []byte { return conds(n, distinct, "mylib.op.default") }

func conds(n int, distinct bool, trueOp string) []byte {
	grad := corpusF32()
	grad.Tensor.RequiresGrad = true
	nodes := []ir.Node{
		{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: grad},
		{Name: "p", Op: ir.OpCallFunction, Target: "aten.gt.Scalar", Args: []ir.Arg{nodeRef("x"), {Kind: ir.ArgInt}},
			Val: &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "bool", Device: "cpu"}}},
	}
	branch := func(name, op string) *ir.Graph {
		return &ir.Graph{Name: name, Nodes: []ir.Node{
			{Name: "a", Op: ir.OpPlaceholder, Target: "a", Val: grad},
			{Name: "r", Op: ir.OpCallFunction, Target: op, Args: []ir.Arg{nodeRef("a")}, Val: grad},
			{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("r"))}},
		}}
	}
	prev := "x"
	var subs []*ir.Graph
	for i := range n {
		c, g := fmt.Sprintf("cond_%d", i), fmt.Sprintf("getitem_%d", i)
		t, f := "t", "f"
		if distinct {
			t, f = fmt.Sprintf("t_%d", i), fmt.Sprintf("f_%d", i)
			nodes = append(nodes, ir.Node{Name: t, Op: ir.OpGetAttr, Target: t}, ir.Node{Name: f, Op: ir.OpGetAttr, Target: f})
			subs = append(subs, branch(t, trueOp), branch(f, "aten.cos.default"))
		}
		nodes = append(nodes,
			ir.Node{Name: c, Op: ir.OpCallFunction, Target: "higher_order.cond",
				Args: []ir.Arg{nodeRef("p"), nodeRef(t), nodeRef(f), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{nodeRef(prev)})},
				Val:  &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*grad}}},
			ir.Node{Name: g, Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{nodeRef(c), {Kind: ir.ArgInt}}, Val: grad})
		prev = g
	}
	nodes = append(nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef(prev))}})
	if !distinct {
		subs = []*ir.Graph{branch("t", "aten.sin.default"), branch("f", "aten.cos.default")}
		nodes = slices.Insert(nodes, 2, ir.Node{Name: "t", Op: ir.OpGetAttr, Target: "t"}, ir.Node{Name: "f", Op: ir.OpGetAttr, Target: "f"})
	}
	m := &ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: append([]*ir.Graph{{Nodes: nodes}}, subs...)}
	return encode(m)
}

// deepOutput is x → output, the output tuple nested depth deep around x:
// valid, and as deep as protobuf's 10,000 message levels allow.
func deepOutput(depth int) []byte {
	a := nodeRef("x")
	for range depth {
		a = tuple(a)
	}
	m := &ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: []ir.Node{
			{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: corpusF32()},
			{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{a}},
		}}}}
	return encode(m)
}

// viewChain is x → view → view → ... n deep, each view written by add_
// and every view returned: provenance walks view chains, so per-write or
// per-output walks would be quadratic.
func viewChain(n int) []byte {
	nodes := []ir.Node{{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: corpusF32()}}
	prev := "x"
	var outs []ir.Arg
	for i := range n {
		v, a := fmt.Sprintf("view%d", i), fmt.Sprintf("add%d", i)
		nodes = append(nodes,
			ir.Node{Name: v, Op: ir.OpCallFunction, Target: "aten.view.default",
				Args: []ir.Arg{nodeRef(prev), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ir.IntArg(4)})}, Val: corpusF32()},
			ir.Node{Name: a, Op: ir.OpCallFunction, Target: "aten.add_.Tensor", Args: []ir.Arg{nodeRef(v), ir.IntArg(1)}, Val: corpusF32()})
		outs = append(outs, nodeRef(v))
		prev = v
	}
	nodes = append(nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, outs)}})
	return encode(&ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: nodes}}})
}

// sharedStorage is n inputs with one storage_id, all returned.
func sharedStorage(n int) []byte {
	var nodes []ir.Node
	var outs []ir.Arg
	for i := range n {
		name := fmt.Sprintf("x%d", i)
		v := corpusF32()
		v.Tensor.HasStorageID = true
		nodes = append(nodes, ir.Node{Name: name, Op: ir.OpPlaceholder, Target: name, Val: v})
		outs = append(outs, nodeRef(name))
	}
	nodes = append(nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, outs)}})
	return encode(&ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: nodes}}})
}

// wideCond is a root graph with n inputs passed to one cond whose branches
// return their inputs' sines.
func wideCond(n int) []byte {
	var root []ir.Node
	ops := make([]ir.Arg, n)
	for i := range n {
		name := fmt.Sprintf("x%d", i)
		root = append(root, ir.Node{Name: name, Op: ir.OpPlaceholder, Target: name, Val: corpusF32()})
		ops[i] = nodeRef(name)
	}
	root = append(root,
		ir.Node{Name: "p", Op: ir.OpCallFunction, Target: "aten.gt.Scalar", Args: []ir.Arg{nodeRef("x0"), {Kind: ir.ArgInt}},
			Val: &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "bool", Device: "cpu"}}},
		ir.Node{Name: "true_graph_0", Op: ir.OpGetAttr, Target: "true_graph_0"},
		ir.Node{Name: "false_graph_0", Op: ir.OpGetAttr, Target: "false_graph_0"},
		ir.Node{Name: "cond", Op: ir.OpCallFunction, Target: "higher_order.cond",
			Args: []ir.Arg{nodeRef("p"), nodeRef("true_graph_0"), nodeRef("false_graph_0"), ir.WithElems(ir.Arg{Kind: ir.ArgList}, ops)},
			Val:  &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*corpusF32()}}},
		ir.Node{Name: "getitem", Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{nodeRef("cond"), {Kind: ir.ArgInt}}, Val: corpusF32()},
		ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("getitem"))}},
	)
	branch := func(name, op string) *ir.Graph {
		g := &ir.Graph{Name: name}
		for i := range n {
			ph := fmt.Sprintf("arg%d_1", i)
			g.Nodes = append(g.Nodes, ir.Node{Name: ph, Op: ir.OpPlaceholder, Target: ph, Val: corpusF32()})
		}
		g.Nodes = append(g.Nodes,
			ir.Node{Name: "r", Op: ir.OpCallFunction, Target: op, Args: []ir.Arg{nodeRef("arg0_1")}, Val: corpusF32()},
			ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{tuple(nodeRef("r"))}})
		return g
	}
	return encode(&ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: root}, branch("true_graph_0", "aten.sin.default"), branch("false_graph_0", "aten.cos.default")}})
}

// wideCat is a root graph with n inputs, their concatenation, and an
// output of every input's sine plus the concatenation.
func wideCat(n int) []byte {
	var nodes []ir.Node
	xs := make([]ir.Arg, n)
	for i := range n {
		name := fmt.Sprintf("x%d", i)
		nodes = append(nodes, ir.Node{Name: name, Op: ir.OpPlaceholder, Target: name, Val: corpusF32()})
		xs[i] = nodeRef(name)
	}
	outs := []ir.Arg{nodeRef("cat")}
	nodes = append(nodes, ir.Node{Name: "cat", Op: ir.OpCallFunction, Target: "aten.cat.default",
		Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgList}, xs)},
		Val:  &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: int64(4 * n)}}, Stride: []ir.Dim{{Val: 1}}, Dtype: "float32", Device: "cpu"}}})
	for i := range n {
		name := fmt.Sprintf("sin%d", i)
		nodes = append(nodes, ir.Node{Name: name, Op: ir.OpCallFunction, Target: "aten.sin.default", Args: []ir.Arg{xs[i]}, Val: corpusF32()})
		outs = append(outs, nodeRef(name))
	}
	nodes = append(nodes, ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, outs)}})
	return encode(&ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "badcorpus",
		Graphs: []*ir.Graph{{Nodes: nodes}}})
}
