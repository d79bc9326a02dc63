package synth

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
)

// MLPStack is the forward graph of a layers-deep Linear → LayerNorm → GELU
// stack (batch 8, width 64), the graph python/tools/bench_aot.py runs
// through AOTAutograd: 11 nodes per layer (4 parameter placeholders, t,
// addmm, native_layer_norm and its 3 getitems, gelu). It carries no
// schemas: the built-in table has every op.
func MLPStack(layers int) *ir.Module {
	const batch, width = 8, 64
	g := &ir.Graph{}
	add := func(n ir.Node) string {
		g.Nodes = append(g.Nodes, n)
		return n.Name
	}
	tv := func(rg bool, shape ...int64) *ir.Value {
		m := &ir.TensorMeta{Dtype: "float32", Device: "cpu", Layout: "strided", MemoryFormat: "contiguous_format", RequiresGrad: rg}
		for _, s := range shape {
			m.Shape = append(m.Shape, ir.Dim{Val: s})
		}
		m.Stride = ir.ContiguousStrides(m.Shape)
		return &ir.Value{Kind: ir.ValTensor, Tensor: m}
	}
	r := func(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name} }
	h := add(ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: tv(true, batch, width)})
	for l := range layers {
		p := func(s string) string { return fmt.Sprintf("%s_%d", s, l) }
		w := add(ir.Node{Name: p("w"), Op: ir.OpPlaceholder, Target: p("w"), Val: tv(true, width, width)})
		b := add(ir.Node{Name: p("b"), Op: ir.OpPlaceholder, Target: p("b"), Val: tv(true, width)})
		lw := add(ir.Node{Name: p("lw"), Op: ir.OpPlaceholder, Target: p("lw"), Val: tv(true, width)})
		lb := add(ir.Node{Name: p("lb"), Op: ir.OpPlaceholder, Target: p("lb"), Val: tv(true, width)})
		t := add(ir.Node{Name: p("t"), Op: ir.OpCallFunction, Target: "aten.t.default", Args: []ir.Arg{r(w)}, Val: tv(true, width, width)})
		mm := add(ir.Node{Name: p("addmm"), Op: ir.OpCallFunction, Target: "aten.addmm.default", Args: []ir.Arg{r(b), r(h), r(t)}, Val: tv(true, batch, width)})
		ln := add(ir.Node{Name: p("ln"), Op: ir.OpCallFunction, Target: "aten.native_layer_norm.default",
			Args: []ir.Arg{r(mm), ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ir.IntArg(width)}), r(lw), r(lb), ir.FloatArg(1e-5)}})
		y := add(ir.Node{Name: p("y"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), {Kind: ir.ArgInt}}, Val: tv(true, batch, width)})
		add(ir.Node{Name: p("mean"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), ir.IntArg(1)}, Val: tv(false, batch, 1)})
		add(ir.Node{Name: p("rstd"), Op: ir.OpCallFunction, Target: "_operator.getitem", Args: []ir.Arg{r(ln), ir.IntArg(2)}, Val: tv(false, batch, 1)})
		h = add(ir.Node{Name: p("gelu"), Op: ir.OpCallFunction, Target: "aten.gelu.default", Args: []ir.Arg{r(y)}, Val: tv(true, batch, width)})
	}
	add(ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{r(h)})}})
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) { a.Ref, _ = g.Lookup(a.S) })
	}
	return &ir.Module{Graphs: []*ir.Graph{g}}
}
