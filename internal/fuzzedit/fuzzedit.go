// Package fuzzedit holds the graph edits the fuzz targets apply to shipped
// graphs (FuzzAnalyzeEdits in pkg/analyze/validate, FuzzJointEdits in
// pkg/jointgraph): rewriting a decoded module node by node reaches the
// analyzers and joint's derivative formulas far more often than flipping
// bytes, which mostly fails to decode. Only tests use it.
package fuzzedit

import (
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Targets are the call targets an edit retargets nodes to: ops that
// write, view, alias through wildcards, and every HOP shape.
var Targets = []string{
	"aten.add_.Tensor", "aten.add.Tensor", "aten.view.default", "aten.t.default", "aten.copy_.default",
	"aten.sin.default", "aten.split.Tensor", "aten.unbind.int", "aten.cat.default", "aten.native_batch_norm.default",
	"aten.index_put_.default", "_operator.getitem", "higher_order.cond", "higher_order.while_loop",
	"higher_order.scan", "higher_order.map_impl", "higher_order.associative_scan", "higher_order.invoke_subgraph",
	"higher_order.with_effects", "higher_order.auto_functionalized", "higher_order.flex_attention", "higher_order.unknown_hop",
}

// Apply applies edits to m, four bytes each (op, graph, node, operand);
// a trailing partial edit is ignored. The module is edited in place:
// encode it to resolve the references the edits made by name.
func Apply(m *ir.Module, edits []byte) {
	for len(edits) >= 4 {
		Edit(m, edits[0], edits[1], edits[2], edits[3])
		edits = edits[4:]
	}
}

// Edit applies one edit op to node n of graph g, with operand v: point an
// argument at another node, retarget a call, drop or wrap an argument,
// share a storage, change a value, add a keyword argument, point a
// get_attr at another subgraph, set an int argument (a dimension, a size)
// to a small signed value, make a tensor require grad.
func Edit(m *ir.Module, op, gi, ni, v byte) {
	if len(m.Graphs) == 0 {
		return
	}
	g := m.Graphs[int(gi)%len(m.Graphs)]
	if len(g.Nodes) == 0 {
		return
	}
	n := &g.Nodes[int(ni)%len(g.Nodes)]
	other := g.Nodes[int(v)%len(g.Nodes)].Name
	ref := ir.Arg{Kind: ir.ArgNode, S: other, Ref: ir.NoNode}
	tensor := func() *ir.Value {
		return &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: 4}}, Stride: []ir.Dim{{Val: 1}}, Dtype: "float32", Device: "cpu"}}
	}
	switch op % 10 {
	case 0:
		if len(n.Args) == 0 {
			n.Args = append(n.Args, ref)
		} else {
			n.Args[int(v)%len(n.Args)] = ref
		}
	case 1:
		if n.Op != ir.OpPlaceholder && n.Op != ir.OpOutput {
			n.Op, n.Target = ir.OpCallFunction, Targets[int(v)%len(Targets)]
		}
	case 2:
		if len(n.Args) > 0 {
			n.Args = n.Args[:len(n.Args)-1]
		}
	case 3:
		if len(n.Args) > 0 {
			k := int(v) % len(n.Args)
			n.Args[k] = ir.WithElems(ir.Arg{Kind: ir.ArgList + ir.ArgKind(v%2)}, []ir.Arg{n.Args[k], ref})
		}
	case 4:
		if n.Val != nil && n.Val.Kind == ir.ValTensor {
			c := n.Val.Clone()
			c.Tensor.HasStorageID, c.Tensor.StorageID = true, int64(v%3)
			n.Val = c
		}
	case 5:
		switch v % 3 {
		case 0:
			n.Val = nil
		case 1:
			n.Val = &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*tensor(), *tensor()}}
		default:
			n.Val = tensor()
		}
	case 6:
		names := []string{"out", "alpha", "self", "other", "training"}
		n.Kwargs = append(n.Kwargs, ir.Kwarg{Name: names[int(v)%len(names)], Value: ref})
	case 7:
		if n.Op == ir.OpGetAttr && len(m.Graphs) > 1 {
			sub := m.Graphs[1+int(v)%(len(m.Graphs)-1)].Name
			if g.Name == "" {
				n.Target = sub
			} else if rest, ok := strings.CutPrefix(sub, g.Name+"."); ok {
				n.Target = rest
			}
		}
	case 8:
		// The first int argument, or int element of a list argument, in
		// the low nibble's order, becomes v's high nibble as a signed
		// value (-8..7): out-of-range and negative dimensions and sizes.
		k := int(v & 15)
		for i := range n.Args {
			a := &n.Args[i]
			if a.Kind == ir.ArgInt {
				if k == 0 {
					a.SetInt(int64(int8(v) >> 4))
					return
				}
				k--
			}
			for e := range a.Elems() {
				if a.Elems()[e].Kind == ir.ArgInt {
					if k == 0 {
						a.Elems()[e].SetInt(int64(int8(v) >> 4))
						return
					}
					k--
				}
			}
		}
	case 9:
		if n.Val != nil && n.Val.Kind == ir.ValTensor {
			c := n.Val.Clone()
			c.Tensor.RequiresGrad = v%2 == 0
			n.Val = c
		}
	}
}
