package partition

import (
	"github.com/hopctl/hopctl/pkg/ir"
)

// Values that need only metadata. AOTAutograd's partitioners never save a
// value the backward can make from sizes, strides, dtype and device alone
// (torch/_functorch/partitioners.py, torch 2.14.1): the factories of
// get_default_op_list's recomputable ops (zeros, ones, full, empty,
// scalar_tensor, zeros_like, full_like, empty_like, new_zeros) have no
// forward tensor among their operands once its decompositions write
// them with static sizes (zeros_like → full(sizes, 0)), so min-cut finds no
// path from a primal through them and the backward makes them; and
// default_partition saves, for a forward tensor whose backward reads only
// its sizes or strides, those symbolic sizes instead of the tensor ("it
// will be a lot cheaper to save only the sizes/strides, and not the actual
// tensor"). hopctl classes the same values as needing only metadata:
//
//   - a tensor of one constant value with static metadata (zeros_like,
//     ones_like, empty_like, full_like, new_zeros, new_ones, new_empty,
//     new_full, zeros, ones, empty, full, scalar_tensor of a constant, and
//     detach/alias/clone of one) is never saved: the partitioner treats it
//     as having no operands and emits it as aten.zeros.default /
//     aten.full.default of its shape, dtype and device, so it reads nothing
//     from the graph — the backward does not keep its template tensor
//     alive. An empty tensor's contents are undefined: it is made as zeros;
//   - a metadata read of a forward tensor (sym_size, sym_stride, sym_numel,
//     sym_storage_offset) that the backward needs is saved as the symbolic
//     int, not the tensor, by both partitioners (min-cut weighs a symbolic
//     int 1, as sym_node_size does; defaultSaved moves the reads into the
//     forward, as default_partition does).
//
// A fill of symbolic sizes (zeros_like of a dynamic-shape tensor) still
// reads its template: hopctl does not rewrite it into sym_size reads and a
// full, so the template is saved where AOTAutograd would save its sizes.

// fillTargets are the constant-fill ops and the argument index of their
// fill value (fillZero, fillOne: a constant).
var fillTargets = map[string]int{
	"aten.zeros_like.default":    fillZero,
	"aten.new_zeros.default":     fillZero,
	"aten.zeros.default":         fillZero,
	"aten.empty_like.default":    fillZero,
	"aten.new_empty.default":     fillZero,
	"aten.empty.memory_format":   fillZero,
	"aten.ones_like.default":     fillOne,
	"aten.new_ones.default":      fillOne,
	"aten.ones.default":          fillOne,
	"aten.full.default":          1,
	"aten.full_like.default":     1,
	"aten.new_full.default":      2,
	"aten.scalar_tensor.default": 0,
}

// The constant values of fillTargets.
const (
	fillZero = -1
	fillOne  = -3
)

// metadataReads are the ops whose result is a tensor's metadata: the
// backward reads them, not the tensor's data.
var metadataReads = map[string]bool{
	"aten.sym_size.int": true, "aten.sym_stride.int": true, "aten.sym_numel.default": true,
	"aten.sym_storage_offset.default": true,
}

// sameValueOps return their operand's value unchanged: of a constant fill,
// they are the same constant fill (make_fx writes detach after factories).
var sameValueOps = map[string]bool{
	"aten.detach.default": true, "aten.alias.default": true, "aten.lift_fresh.default": true,
	"aten.clone.default": true,
}

// fillTable holds the constant-fill verdicts of a graph's nodes: an index
// a node, and the values (few) apart, not an ir.Arg a node. The verdicts
// are made at the first fill: a graph without one has none to allocate.
type fillTable struct {
	n    int     // nodes
	at   []int32 // node → 1 + index into vals; 0: not a fill (nil: no fill)
	vals []ir.Arg
}

func newFillTable(n int) fillTable { return fillTable{n: n} }

// is reports whether node i is a fill.
func (t *fillTable) is(i int) bool { return t.at != nil && t.at[i] > 0 }

// get returns node i's fill value, Kind ArgNone if it is not a fill.
func (t *fillTable) get(i int) ir.Arg {
	if t.is(i) {
		return t.vals[t.at[i]-1]
	}
	return ir.Arg{}
}

func (t *fillTable) set(i int, v ir.Arg) {
	if t.at == nil {
		t.at = make([]int32, t.n)
	}
	t.vals = append(t.vals, v)
	t.at[i] = int32(len(t.vals))
}

// fillOp is what constantFill needs to know of a call target, looked up
// once per target (partitioner.index): whether it is a constant-fill op
// and where its value is, or one of sameValueOps.
type fillOp struct {
	fill bool
	arg  int // fillTargets' value index
	same bool
}

func fillOpOf(target string) fillOp {
	if vi, ok := fillTargets[target]; ok {
		return fillOp{fill: true, arg: vi}
	}
	return fillOp{same: sameValueOps[target]}
}

// constantFill reports whether call node n, whose target is op, makes a
// tensor of one constant value with static shape, dtype and device, and
// returns that value (an int, float or bool argument). fills holds the
// verdicts of the nodes before n, so a detach of a fill is one too.
func constantFill(n *ir.Node, op fillOp, fills *fillTable) (ir.Arg, bool) {
	vi := op.arg
	if !op.fill {
		if !op.same || len(n.Args) == 0 || n.Args[0].Kind != ir.ArgNode {
			return ir.Arg{}, false
		}
		r := n.Args[0].Ref
		if r < 0 || int(r) >= fills.n || !fills.is(int(r)) {
			return ir.Arg{}, false
		}
		vi = -2
	}
	t := valueTensor(n.Val)
	if t == nil || t.Dtype == "" || t.Device == "" || t.IsQuantized {
		return ir.Arg{}, false
	}
	if t.Layout != "" && t.Layout != "strided" || t.Stride != nil && !ir.IsContiguous(t.Shape, t.Stride) {
		return ir.Arg{}, false
	}
	for _, d := range t.Shape {
		if d.Expr != "" {
			return ir.Arg{}, false
		}
	}
	switch vi {
	case -2:
		return fills.get(int(n.Args[0].Ref)), true
	case fillZero:
		return ir.IntArg(0), true
	case fillOne:
		return ir.IntArg(1), true
	}
	var v *ir.Arg
	if vi < len(n.Args) {
		v = &n.Args[vi]
	}
	for k := range n.Kwargs {
		if n.Kwargs[k].Name == "fill_value" {
			v = &n.Kwargs[k].Value
		}
	}
	if v == nil {
		return ir.Arg{}, false
	}
	switch v.Kind {
	case ir.ArgInt, ir.ArgFloat, ir.ArgBool:
		return *v, true
	}
	return ir.Arg{}, false
}

// fillNode returns the node that makes n's constant tensor from its
// metadata alone: aten.zeros.default(shape, ...) or
// aten.full.default(shape, value, ...), with n's name, value and metadata.
func fillNode(n *ir.Node, value ir.Arg) ir.Node {
	t := valueTensor(n.Val)
	kwargs := []ir.Kwarg{
		{Name: "dtype", Value: ir.Arg{Kind: ir.ArgDtype, S: t.Dtype}},
		{Name: "layout", Value: ir.Arg{Kind: ir.ArgLayout, S: "strided"}},
		{Name: "device", Value: ir.Arg{Kind: ir.ArgDevice, S: t.Device}},
		{Name: "pin_memory", Value: ir.Arg{Kind: ir.ArgBool, B: false}},
	}
	sizes := make([]ir.Arg, len(t.Shape)) // concrete (constantFill)
	for i, d := range t.Shape {
		sizes[i] = ir.IntArg(d.Val)
	}
	shape := ir.WithElems(ir.Arg{Kind: ir.ArgList}, sizes)
	out := *n
	out.Kwargs = kwargs
	if value.Kind == ir.ArgInt && value.Int() == 0 {
		out.Target = "aten.zeros.default"
		out.Args = []ir.Arg{shape}
	} else {
		out.Target = "aten.full.default"
		out.Args = []ir.Arg{shape, value}
	}
	return out
}
