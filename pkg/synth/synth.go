// Package synth writes synthetic forward graphs of a chosen size for
// benchmarks: the op mix of real make_fx exports (Linear = t + addmm,
// native_layer_norm with getitems, GELU, reductions, views, in-place ops
// on views of intermediates) with nested HOP subgraphs (cond branches, a
// scan inside some branches), valid schemas and tensor metadata, and the
// same graph for the same options every time.
package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Options choose the graph.
type Options struct {
	// Nodes is the approximate number of nodes over all graphs.
	Nodes int
	// Seed makes the op mix vary; the same seed gives the same graph.
	Seed uint64
	// HOPs adds a cond every CondEvery layers (default 40), and a scan
	// inside every fourth cond's true branch.
	HOPs      bool
	CondEvery int
	// Batch and Width are the activation shape [Batch, Width].
	Batch, Width int64
}

type gen struct {
	opt     Options
	m       *ir.Module
	rng     *rand.Rand
	schemas map[string]bool
	nconds  int
}

// Generate builds the module.
func Generate(opt Options) *ir.Module {
	if opt.Batch == 0 {
		opt.Batch = 4
	}
	if opt.Width == 0 {
		opt.Width = 8
	}
	if opt.CondEvery == 0 {
		opt.CondEvery = 40
	}
	g := &gen{
		opt:     opt,
		m:       &ir.Module{FormatMajor: ir.FormatMajor, FormatMinor: ir.FormatMinor, Producer: "hopctl synth", TorchVersion: "synthetic"},
		rng:     rand.New(rand.NewPCG(opt.Seed, 0x5eed)),
		schemas: map[string]bool{},
	}
	root := ir.NewGraph("")
	g.m.Graphs = []*ir.Graph{root}
	g.build(root)
	for _, name := range sortedKeys(g.schemas) {
		s, ok := opschema.BuiltinTable().Lookup(mustOpName(name))
		if !ok {
			panic("synth: no builtin schema for " + name)
		}
		g.m.Schemas = append(g.m.Schemas, ir.SchemaText{Name: s.QualifiedName() + overloadSuffix(s), Schema: s.Text})
	}
	return g.m
}

func overloadSuffix(s *opschema.Schema) string {
	if s.Overload == "" {
		return ""
	}
	return "." + s.Overload
}

func mustOpName(target string) opschema.OpName {
	n, err := opschema.ParseTarget(target)
	if err != nil {
		panic(err)
	}
	return n
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (g *gen) tensor(shape ...int64) *ir.Value {
	t := &ir.TensorMeta{Dtype: "float32", Device: "cpu", Layout: "strided", MemoryFormat: "contiguous_format"}
	stride := int64(1)
	t.Shape = make([]ir.Dim, len(shape))
	t.Stride = make([]ir.Dim, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		t.Shape[i] = ir.Dim{Val: shape[i]}
		t.Stride[i] = ir.Dim{Val: stride}
		stride *= shape[i]
	}
	return &ir.Value{Kind: ir.ValTensor, Tensor: t}
}

func ints(xs ...int64) ir.Arg {
	a := ir.WithElems(ir.Arg{Kind: ir.ArgList}, make([]ir.Arg, len(xs)))
	for i, x := range xs {
		a.Elems()[i] = ir.IntArg(x)
	}
	return a
}

func ref(gr *ir.Graph, id ir.NodeID) ir.Arg { return ir.NodeArg(id, gr.Nodes[id].Name) }

func (g *gen) placeholder(gr *ir.Graph, base string, val *ir.Value, grad bool) ir.NodeID {
	name := gr.FreshName(base)
	if val != nil && val.Tensor != nil {
		val.Tensor.RequiresGrad = grad
	}
	return gr.Append(ir.Node{Name: name, Op: ir.OpPlaceholder, Target: name, Val: val})
}

// call appends a call_function node of an aten op.
func (g *gen) call(gr *ir.Graph, base, target string, val *ir.Value, args ...ir.Arg) ir.NodeID {
	g.schemas[target] = true
	return gr.Append(ir.Node{Name: gr.FreshName(base), Op: ir.OpCallFunction, Target: target, Args: args, Val: val})
}

func (g *gen) getitem(gr *ir.Graph, src ir.NodeID, i int64, val *ir.Value) ir.NodeID {
	return gr.Append(ir.Node{Name: gr.FreshName("getitem"), Op: ir.OpCallFunction, Target: "_operator.getitem",
		Args: []ir.Arg{ref(gr, src), ir.IntArg(i)}, Val: val})
}

// layer appends one Linear → LayerNorm → GELU block (plus some variety)
// reading h and returns the block's output. It appends about 12 nodes.
func (g *gen) layer(gr *ir.Graph, h ir.NodeID) ir.NodeID {
	B, D := g.opt.Batch, g.opt.Width
	w := g.placeholder(gr, "weight", g.tensor(D, D), true)
	b := g.placeholder(gr, "bias", g.tensor(D), true)
	t := g.call(gr, "t", "aten.t.default", g.tensor(D, D), ref(gr, w))
	mm := g.call(gr, "addmm", "aten.addmm.default", g.tensor(B, D), ref(gr, b), ref(gr, h), ref(gr, t))
	ln := g.call(gr, "native_layer_norm", "aten.native_layer_norm.default",
		&ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*g.tensor(B, D), *g.tensor(B, 1), *g.tensor(B, 1)}},
		ref(gr, mm), ints(D), ir.Arg{Kind: ir.ArgNone}, ir.Arg{Kind: ir.ArgNone}, ir.FloatArg(1e-5))
	y := g.getitem(gr, ln, 0, g.tensor(B, D))
	g.getitem(gr, ln, 1, g.tensor(B, 1))
	g.getitem(gr, ln, 2, g.tensor(B, 1))
	out := g.call(gr, "gelu", "aten.gelu.default", g.tensor(B, D), ref(gr, y))
	switch g.rng.IntN(4) {
	case 0: // a reduction broadcast back
		s := g.call(gr, "sum", "aten.sum.dim_IntList", g.tensor(B, 1), ref(gr, out), ints(1), ir.Arg{Kind: ir.ArgBool, B: true})
		out = g.call(gr, "add", "aten.add.Tensor", g.tensor(B, D), ref(gr, out), ref(gr, s))
	case 1: // an in-place op through a view of an intermediate
		v := g.call(gr, "view", "aten.view.default", g.tensor(B*D), ref(gr, out), ints(B*D))
		g.call(gr, "mul_", "aten.mul_.Tensor", g.tensor(B*D), ref(gr, v), ir.FloatArg(0.5))
		out = g.call(gr, "view", "aten.view.default", g.tensor(B, D), ref(gr, v), ints(B, D))
	case 2:
		out = g.call(gr, "relu", "aten.relu.default", g.tensor(B, D), ref(gr, out))
	default:
		out = g.call(gr, "mul", "aten.mul.Tensor", g.tensor(B, D), ref(gr, out), ref(gr, h))
	}
	return out
}

// branch builds one cond branch graph: (x) -> (f(x),), optionally with a scan.
func (g *gen) branch(name string, trueBranch, withScan bool) *ir.Graph {
	B, D := g.opt.Batch, g.opt.Width
	gr := ir.NewGraph(name)
	g.m.Graphs = append(g.m.Graphs, gr)
	x := g.placeholder(gr, "arg0_1", g.tensor(B, D), false)
	var out ir.NodeID
	if trueBranch {
		out = g.call(gr, "sin", "aten.sin.default", g.tensor(B, D), ref(gr, x))
	} else {
		out = g.call(gr, "cos", "aten.cos.default", g.tensor(B, D), ref(gr, x))
	}
	if withScan {
		comb := ir.NewGraph(name + ".scan_combine_graph_0")
		g.m.Graphs = append(g.m.Graphs, comb)
		c := g.placeholder(comb, "arg0_1", g.tensor(D), false)
		xi := g.placeholder(comb, "arg1_1", g.tensor(D), false)
		nc := g.call(comb, "add", "aten.add.Tensor", g.tensor(D), ref(comb, c), ref(comb, xi))
		y := g.call(comb, "clone", "aten.clone.default", g.tensor(D), ref(comb, nc))
		comb.Append(ir.Node{Name: "output", Op: ir.OpOutput, Target: "output",
			Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ref(comb, nc), ref(comb, y)})}})
		init := g.call(gr, "select", "aten.select.int", g.tensor(D), ref(gr, out), ir.IntArg(0), ir.IntArg(0))
		initc := g.call(gr, "clone", "aten.clone.default", g.tensor(D), ref(gr, init))
		ga := gr.Append(ir.Node{Name: "scan_combine_graph_0", Op: ir.OpGetAttr, Target: "scan_combine_graph_0"})
		sc := gr.Append(ir.Node{Name: "scan", Op: ir.OpCallFunction, Target: opschema.HOPTarget("scan"),
			Args: []ir.Arg{ref(gr, ga), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ref(gr, initc)}),
				ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ref(gr, out)}), {Kind: ir.ArgTuple}},
			Val: &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*g.tensor(D), *g.tensor(B, D)}}})
		out = g.getitem(gr, sc, 1, g.tensor(B, D))
	}
	gr.Append(ir.Node{Name: "output", Op: ir.OpOutput, Target: "output",
		Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref(gr, out)})}})
	return gr
}

// cond appends a cond over h whose branches are new subgraphs.
func (g *gen) cond(gr *ir.Graph, h ir.NodeID) ir.NodeID {
	B, D := g.opt.Batch, g.opt.Width
	i := g.nconds
	g.nconds++
	withScan := i%4 == 3
	tn, fn := fmt.Sprintf("true_graph_%d", i), fmt.Sprintf("false_graph_%d", i)
	g.branch(tn, true, withScan)
	g.branch(fn, false, false)
	s := g.call(gr, "sum", "aten.sum.default", g.tensor(), ref(gr, h))
	pred := g.call(gr, "gt", "aten.gt.Scalar", &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Dtype: "bool", Device: "cpu", Layout: "strided"}}, ref(gr, s), ir.IntArg(0))
	ta := gr.Append(ir.Node{Name: tn, Op: ir.OpGetAttr, Target: tn})
	fa := gr.Append(ir.Node{Name: fn, Op: ir.OpGetAttr, Target: fn})
	c := gr.Append(ir.Node{Name: gr.FreshName("cond"), Op: ir.OpCallFunction, Target: opschema.HOPTarget("cond"),
		Args: []ir.Arg{ref(gr, pred), ref(gr, ta), ref(gr, fa), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ref(gr, h)})},
		Val:  &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*g.tensor(B, D)}}})
	return g.getitem(gr, c, 0, g.tensor(B, D))
}

func (g *gen) build(root *ir.Graph) {
	B, D := g.opt.Batch, g.opt.Width
	h := g.placeholder(root, "x", g.tensor(B, D), true)
	count := func() int {
		n := 0
		for _, gr := range g.m.Graphs {
			n += len(gr.Nodes)
		}
		return n
	}
	total := 1
	for l := 1; total < g.opt.Nodes-1; l++ {
		before := len(root.Nodes)
		h = g.layer(root, h)
		total += len(root.Nodes) - before
		if g.opt.HOPs && l%g.opt.CondEvery == 0 {
			h = g.cond(root, h)
			total = count()
		}
	}
	root.Append(ir.Node{Name: "output", Op: ir.OpOutput, Target: "output",
		Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref(root, h)})}})
}
