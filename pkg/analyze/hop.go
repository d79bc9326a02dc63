package analyze

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// HOP calling conventions, as data (see shared/reference/hops.md §9): which
// arguments of a HOP call are subgraphs, which caller values feed each
// subgraph placeholder, which subgraph output each HOP output passes through,
// and what PyTorch forbids the subgraph to do.

// Operand is the caller value that feeds one subgraph placeholder.
type Operand struct {
	// Arg is the caller's argument (usually a node reference); nil when the
	// HOP makes the value itself (flex_attention's score and indices).
	Arg *Arg
	// Sliced is true when the placeholder receives a slice of Arg (scan and
	// map xs): writes to it still write Arg's storage.
	Sliced bool
}

// Arg is an alias of ir.Arg kept short for the tables below.
type Arg = ir.Arg

// SubgraphCall is one subgraph a HOP call runs.
type SubgraphCall struct {
	Role     string    // "true_fn", "body_fn", "combine_fn", ...
	Name     string    // PyTorch's name in its alias/mutation messages: "cond_true", "body_fn", "scan"
	GetAttr  ir.NodeID // the get_attr node naming the subgraph
	Graph    string    // the subgraph's qualified name
	Operands []Operand // one per subgraph placeholder, in order
	// ForbidMutation and ForbidAlias say what PyTorch rejects in this
	// subgraph; MutationMessage overrides the "<Name> might be modifying the
	// input!" wording where PyTorch words it differently.
	ForbidMutation, ForbidAlias bool
	MutationMessage             string
	// Outputs[j] is the subgraph output index HOP output j passes through,
	// or -1 when HOP output j is a fresh tensor (stacked, cloned). Nil means
	// this subgraph's outputs are not HOP outputs (while_loop's cond_fn).
	Outputs []int
}

// HOPCall is a decoded HOP call site.
type HOPCall struct {
	Op        string // "cond", "while_loop", ...
	Subgraphs []SubgraphCall
}

// IsHOP reports whether a call_function target is a higher-order operator.
func IsHOP(target string) bool { return strings.HasPrefix(target, "higher_order.") }

type hopDecoder func(n *ir.Node, sub func(a *ir.Arg) (ir.NodeID, string, bool)) (*HOPCall, error)

// hopTable lists the HOPs whose subgraphs hopctl analyses. with_effects and
// auto_functionalized(_v2) have no subgraphs and are handled by the alias
// analysis directly.
var hopTable = map[string]hopDecoder{
	"cond":                       decodeCond,
	"while_loop":                 decodeWhile(false),
	"while_loop_stack_output":    decodeWhile(true),
	"scan":                       decodeScan,
	"map_impl":                   decodeMap,
	"associative_scan":           decodeAssociativeScan,
	"invoke_subgraph":            decodeVariadic("invoke_subgraph", 0, 2, false, true),
	"invoke_quant":               decodeVariadic("invoke_quant", 0, 1, true, true),
	"invoke_quant_packed":        decodeVariadic("invoke_quant_packed", 0, 1, true, true),
	"wrap_with_set_grad_enabled": decodeVariadic("wrap_with_set_grad_enabled", 1, 2, false, false),
	"wrap_with_autocast":         decodeVariadic("wrap_with_autocast", 4, 5, false, false),
	"tag_activation_checkpoint":  decodeVariadic("tag_activation_checkpoint", 0, 1, false, false),
	"flex_attention":             decodeFlex,
}

// KnownHOP reports whether hopctl knows the HOP's calling convention.
func KnownHOP(name string) bool {
	_, ok := hopTable[name]
	return ok || name == "with_effects" || name == "auto_functionalized" || name == "auto_functionalized_v2"
}

// DecodeHOP decodes the HOP call node id of g. It returns nil, nil for
// nodes that are not calls of a HOP with subgraphs.
func DecodeHOP(m *ir.Module, g *ir.Graph, id ir.NodeID) (*HOPCall, error) {
	return decodeHOP(m.Graph, g, id)
}

// decodeHOP is DecodeHOP with the module's graphs looked up by graphOf.
func decodeHOP(graphOf func(qualname string) *ir.Graph, g *ir.Graph, id ir.NodeID) (*HOPCall, error) {
	n := &g.Nodes[id]
	if n.Op != ir.OpCallFunction || !IsHOP(n.Target) {
		return nil, nil
	}
	name := strings.TrimPrefix(n.Target, "higher_order.")
	dec, ok := hopTable[name]
	if !ok {
		return nil, nil
	}
	sub := func(a *ir.Arg) (ir.NodeID, string, bool) {
		if a == nil || a.Kind != ir.ArgNode || a.Ref < 0 {
			return ir.NoNode, "", false
		}
		ga := &g.Nodes[a.Ref]
		if ga.Op != ir.OpGetAttr {
			return ir.NoNode, "", false
		}
		q := ir.Qualify(g, ga.Target)
		if graphOf(q) == nil {
			return ir.NoNode, "", false
		}
		return a.Ref, q, true
	}
	call, err := dec(n, sub)
	if err != nil {
		return nil, fmt.Errorf("%s call: %w", name, err)
	}
	call.Op = name
	return call, nil
}

func argAt(n *ir.Node, i int) *ir.Arg {
	if i < len(n.Args) {
		return &n.Args[i]
	}
	return nil
}

// seq returns the elements of a list/tuple argument.
func seq(a *ir.Arg) ([]ir.Arg, bool) {
	if a == nil {
		return nil, false
	}
	if a.Kind == ir.ArgList || a.Kind == ir.ArgTuple {
		return a.Elems, true
	}
	return nil, false
}

func operands(elems []ir.Arg, sliced bool) []Operand {
	out := make([]Operand, len(elems))
	for i := range elems {
		out[i] = Operand{Arg: &elems[i], Sliced: sliced}
	}
	return out
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func fresh(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

type subFn = func(a *ir.Arg) (ir.NodeID, string, bool)

func needSub(sub subFn, n *ir.Node, i int, role string) (ir.NodeID, string, error) {
	id, q, ok := sub(argAt(n, i))
	if !ok {
		return ir.NoNode, "", fmt.Errorf("argument %d (%s) is not a get_attr of an existing subgraph", i, role)
	}
	return id, q, nil
}

func needSeq(n *ir.Node, i int, role string) ([]ir.Arg, error) {
	s, ok := seq(argAt(n, i))
	if !ok {
		return nil, fmt.Errorf("argument %d (%s) is not a list or tuple", i, role)
	}
	return s, nil
}

// NumOutputs is the number of elements of a node's tuple or list value,
// or -1 when its value is not a sequence.
func NumOutputs(n *ir.Node) int {
	if n.Val != nil && (n.Val.Kind == ir.ValTuple || n.Val.Kind == ir.ValList) {
		return len(n.Val.Elems)
	}
	return -1
}

// decodeCond: cond(pred, true_fn, false_fn, operands).
func decodeCond(n *ir.Node, sub subFn) (*HOPCall, error) {
	ops, err := needSeq(n, 3, "operands")
	if err != nil {
		return nil, err
	}
	call := &HOPCall{}
	for i, role := range []string{"true_fn", "false_fn"} {
		id, q, err := needSub(sub, n, 1+i, role)
		if err != nil {
			return nil, err
		}
		name := "cond_true"
		if i == 1 {
			name = "cond_false"
		}
		call.Subgraphs = append(call.Subgraphs, SubgraphCall{Role: role, Name: name, GetAttr: id, Graph: q,
			Operands: operands(ops, false), ForbidMutation: true, ForbidAlias: true, Outputs: identity(max(NumOutputs(n), 0))})
	}
	return call, nil
}

// decodeWhile: while_loop(cond_fn, body_fn, carried_inputs, additional_inputs).
func decodeWhile(stacked bool) hopDecoder {
	return func(n *ir.Node, sub subFn) (*HOPCall, error) {
		carried, err := needSeq(n, 2, "carried_inputs")
		if err != nil {
			return nil, err
		}
		additional, err := needSeq(n, 3, "additional_inputs")
		if err != nil {
			return nil, err
		}
		ops := append(operands(carried, false), operands(additional, false)...)
		call := &HOPCall{}
		for i, role := range []string{"cond_fn", "body_fn"} {
			id, q, err := needSub(sub, n, i, role)
			if err != nil {
				return nil, err
			}
			sc := SubgraphCall{Role: role, Name: role, GetAttr: id, Graph: q, Operands: ops, ForbidMutation: true, ForbidAlias: true}
			if role == "body_fn" {
				if stacked {
					sc.Outputs = fresh(len(carried))
				} else {
					sc.Outputs = identity(len(carried))
				}
			}
			call.Subgraphs = append(call.Subgraphs, sc)
		}
		return call, nil
	}
}

// decodeScan: scan(combine_fn, init, xs, additional_inputs); outputs are
// (*final_carry, *stacked_ys).
func decodeScan(n *ir.Node, sub subFn) (*HOPCall, error) {
	id, q, err := needSub(sub, n, 0, "combine_fn")
	if err != nil {
		return nil, err
	}
	init, err := needSeq(n, 1, "init")
	if err != nil {
		return nil, err
	}
	xs, err := needSeq(n, 2, "xs")
	if err != nil {
		return nil, err
	}
	additional, err := needSeq(n, 3, "additional_inputs")
	if err != nil {
		return nil, err
	}
	ops := append(append(operands(init, false), operands(xs, true)...), operands(additional, false)...)
	outs := identity(len(init))
	if k := NumOutputs(n); k > len(init) {
		outs = append(outs, fresh(k-len(init))...)
	}
	return &HOPCall{Subgraphs: []SubgraphCall{{Role: "combine_fn", Name: "scan", GetAttr: id, Graph: q, Operands: ops,
		ForbidMutation: true, ForbidAlias: true, Outputs: outs}}}, nil
}

// decodeMap: map_impl(f, xs, pos_args); outputs are stacked.
func decodeMap(n *ir.Node, sub subFn) (*HOPCall, error) {
	id, q, err := needSub(sub, n, 0, "f")
	if err != nil {
		return nil, err
	}
	xs, err := needSeq(n, 1, "xs")
	if err != nil {
		return nil, err
	}
	pos, err := needSeq(n, 2, "pos_args")
	if err != nil {
		return nil, err
	}
	return &HOPCall{Subgraphs: []SubgraphCall{{Role: "body", Name: "map", GetAttr: id, Graph: q,
		Operands: append(operands(xs, true), operands(pos, false)...), ForbidMutation: true, ForbidAlias: true,
		Outputs: fresh(max(NumOutputs(n), 0))}}}, nil
}

// decodeAssociativeScan: associative_scan(combine_fn, xs, additional_inputs);
// the combine_fn takes (*lhs, *rhs, *additional), both halves slices of xs.
func decodeAssociativeScan(n *ir.Node, sub subFn) (*HOPCall, error) {
	id, q, err := needSub(sub, n, 0, "combine_fn")
	if err != nil {
		return nil, err
	}
	xs, err := needSeq(n, 1, "xs")
	if err != nil {
		return nil, err
	}
	var additional []ir.Arg
	if len(n.Args) > 2 {
		if additional, err = needSeq(n, 2, "additional_inputs"); err != nil {
			return nil, err
		}
	}
	ops := append(append(operands(xs, true), operands(xs, true)...), operands(additional, false)...)
	return &HOPCall{Subgraphs: []SubgraphCall{{Role: "combine_fn", Name: "associative_scan", GetAttr: id, Graph: q,
		Operands: ops, ForbidMutation: true, ForbidAlias: true, Outputs: fresh(max(NumOutputs(n), 0))}}}, nil
}

// decodeVariadic handles HOPs shaped (leading..., gm, *operands) whose outputs
// are the subgraph's outputs: invoke_subgraph, wrappers, checkpoint.
func decodeVariadic(name string, gmIndex, firstOperand int, forbidMutation, forbidAlias bool) hopDecoder {
	return func(n *ir.Node, sub subFn) (*HOPCall, error) {
		id, q, err := needSub(sub, n, gmIndex, "subgraph")
		if err != nil {
			return nil, err
		}
		var ops []Operand
		if firstOperand < len(n.Args) {
			ops = operands(n.Args[firstOperand:], false)
		}
		return &HOPCall{Subgraphs: []SubgraphCall{{Role: "subgraph", Name: name, GetAttr: id, Graph: q, Operands: ops,
			ForbidMutation: forbidMutation, ForbidAlias: forbidAlias, Outputs: identity(max(NumOutputs(n), 0))}}}, nil
	}
}

// decodeFlex: flex_attention(q, k, v, score_mod, block_mask, scale,
// kernel_options, score_mod_other_buffers, mask_mod_other_buffers). The
// mask_mod is block_mask's last element. PyTorch checks score_mod for
// mutation only; hopctl checks mask_mod the same way.
func decodeFlex(n *ir.Node, sub subFn) (*HOPCall, error) {
	id, q, err := needSub(sub, n, 3, "score_mod")
	if err != nil {
		return nil, err
	}
	scoreBufs, _ := seq(argAt(n, 7))
	maskBufs, _ := seq(argAt(n, 8))
	call := &HOPCall{Subgraphs: []SubgraphCall{{Role: "score_mod", Name: "score_mod", GetAttr: id, Graph: q,
		Operands: append(make([]Operand, 5), operands(scoreBufs, false)...), ForbidMutation: true,
		MutationMessage: "Mutations detected in score_mod"}}}
	if bm, ok := seq(argAt(n, 4)); ok && len(bm) > 0 {
		if mid, mq, ok := sub(&bm[len(bm)-1]); ok {
			call.Subgraphs = append(call.Subgraphs, SubgraphCall{Role: "mask_mod", Name: "mask_mod", GetAttr: mid, Graph: mq,
				Operands: append(make([]Operand, 4), operands(maskBufs, false)...), ForbidMutation: true,
				MutationMessage: "Mutations detected in mask_mod"})
		}
	}
	return call, nil
}

// CheckOperands checks that the subgraph sc calls takes as many inputs
// (placeholders) as the call passes it.
func CheckOperands(m *ir.Module, sc *SubgraphCall) error {
	callee := m.Graph(sc.Graph)
	if callee == nil {
		return fmt.Errorf("%s subgraph %s does not exist", sc.Role, sc.Graph)
	}
	nph := 0
	for i := range callee.Nodes {
		if callee.Nodes[i].Op == ir.OpPlaceholder {
			nph++
		}
	}
	if nph != len(sc.Operands) {
		return fmt.Errorf("%s subgraph %s takes %d inputs but the call passes %d", sc.Role, sc.Graph, nph, len(sc.Operands))
	}
	return nil
}

// CheckCall checks that node id of g, if it calls subgraphs, matches them:
// a HOP's subgraph arguments are get_attr nodes of existing subgraphs, its
// operand lists are lists, and each subgraph takes as many inputs as the
// call passes; with_effects names its op; a call_module of a graph
// submodule passes as many arguments as the graph has placeholders. A call
// that fails these cannot have come from tracing and cannot be analysed:
// the file is invalid. Calls of anything else are not judged.
func CheckCall(m *ir.Module, g *ir.Graph, id ir.NodeID) error {
	n := &g.Nodes[id]
	switch {
	case n.Op == ir.OpCallModule:
		q := ir.Qualify(g, n.Target)
		if m.Graph(q) == nil {
			return nil
		}
		sc := SubgraphCall{Role: "module", Graph: q, Operands: make([]Operand, len(n.Args))}
		return CheckOperands(m, &sc)
	case n.Op == ir.OpCallFunction && n.Target == "higher_order.with_effects":
		if len(n.Args) < 2 || n.Args[1].Kind != ir.ArgOp {
			return fmt.Errorf("with_effects call: argument 1 must be the op")
		}
		return nil
	}
	call, err := DecodeHOP(m, g, id)
	if err != nil || call == nil {
		return err
	}
	for i := range call.Subgraphs {
		if err := CheckOperands(m, &call.Subgraphs[i]); err != nil {
			return fmt.Errorf("%s call: %w", call.Op, err)
		}
	}
	return nil
}
