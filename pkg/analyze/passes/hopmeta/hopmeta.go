// Package hopmeta is the HOP metadata analyzer: at every HOP call site where
// PyTorch calls check_meta_consistency, it compares the same two lists of
// values with package metadiff and reports every difference, in PyTorch's
// wording, at the HOP call node.
//
// The call sites and names are those of the make_fx (proxy-mode) path, which
// is what exported graphs come from (shared/reference/hops.md §4):
//
//	HOP                       lhs                         rhs                          contiguity
//	while_loop(_stack_output) carried_inputs              body_output (body_fn outputs) False
//	scan                      init                        carry (first len(init) combine_fn outputs) False
//	associative_scan          init (first slice of each xs) carry (combine_fn outputs)  False
//
// Values are the recorded values (meta["val"]) of the operands and of the
// nodes the subgraph's output node returns. The first slice of an xs is
// computed as torch.select_copy(x, 0, 0) makes it: the shape without its
// first dimension, contiguous strides.
//
// Not checked, as PyTorch does not check them: map_impl (no
// check_meta_consistency call), cond (current versions merge branch outputs
// of different sizes into unbacked SymInts instead; only the oldest cond
// compared shape, dtype and stride), invoke_subgraph and the wrappers.
// Dynamo's own checks of the same HOPs (body_fn_output vs carried_inputs,
// initial_xs vs combine_fn_output, and scan's extra include_contiguity=True
// check for user functools.partial combine_fns) happen before a graph is
// exported and use Dynamo's names; hopctl reports the make_fx names.
package hopmeta

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/ir"
)

// RuleMetaMismatch is the rule id of the findings this analyzer reports.
const RuleMetaMismatch = "hop-meta-mismatch"

// Analyzer is the HOP metadata analyzer. It has no result.
var Analyzer = &analyze.Analyzer{
	Name: "hopmeta",
	Doc:  "HOP call sites whose carried values change metadata (PyTorch's check_meta_consistency)",
	Run:  run,
}

// check describes one check_meta_consistency call of PyTorch.
type check struct {
	lhsName, rhsName  string
	includeContiguity bool
	// role is the subgraph whose outputs are the rhs.
	role string
	// sides builds the two lists; ok is false when the call is not in the
	// form the check applies to.
	sides func(g *ir.Graph, n *ir.Node, sub *ir.Graph) (lhs, rhs metadiff.List, ok bool)
	// lengthMessage, when set, replaces metadiff's length message: PyTorch
	// asserts the count before it compares metadata.
	lengthMessage func(lhs, rhs int) string
}

// checks lists the HOPs PyTorch checks, by HOP name.
var checks = map[string]check{
	"while_loop":              whileCheck,
	"while_loop_stack_output": whileCheck,
	"scan": {lhsName: "init", rhsName: "carry", role: "combine_fn",
		sides: func(g *ir.Graph, n *ir.Node, sub *ir.Graph) (metadiff.List, metadiff.List, bool) {
			init, ok := seqArg(n, 1)
			if !ok {
				return metadiff.List{}, metadiff.List{}, false
			}
			leaves, tuple := analyze.Outputs(sub)
			carry := leaves[:min(len(init.Elems), len(leaves))]
			return metadiff.List{Values: analyze.ArgValues(g, init.Elems), Tuple: init.Kind == ir.ArgTuple},
				metadiff.List{Values: analyze.ArgValues(sub, carry), Tuple: tuple}, true
		}},
	"associative_scan": {lhsName: "init", rhsName: "carry", role: "combine_fn",
		sides: func(g *ir.Graph, n *ir.Node, sub *ir.Graph) (metadiff.List, metadiff.List, bool) {
			xs, ok := seqArg(n, 1)
			if _, newer := seqArg(n, 2); !ok || !newer {
				return metadiff.List{}, metadiff.List{}, false // the older (combine_fn, input, dim) form
			}
			slices := make([]*ir.Value, len(xs.Elems))
			for i, v := range analyze.ArgValues(g, xs.Elems) {
				slices[i] = FirstSlice(v)
			}
			leaves, _ := analyze.Outputs(sub)
			return metadiff.List{Values: slices}, metadiff.List{Values: analyze.ArgValues(sub, leaves)}, true
		},
		lengthMessage: func(lhs, rhs int) string {
			return fmt.Sprintf("expected combine_fn to return %d results but got %d", lhs, rhs)
		}},
}

var whileCheck = check{lhsName: "carried_inputs", rhsName: "body_output", role: "body_fn",
	sides: func(g *ir.Graph, n *ir.Node, sub *ir.Graph) (metadiff.List, metadiff.List, bool) {
		carried, ok := seqArg(n, 2)
		if !ok {
			return metadiff.List{}, metadiff.List{}, false
		}
		leaves, tuple := analyze.Outputs(sub)
		return metadiff.List{Values: analyze.ArgValues(g, carried.Elems), Tuple: carried.Kind == ir.ArgTuple},
			metadiff.List{Values: analyze.ArgValues(sub, leaves), Tuple: tuple}, true
	}}

func seqArg(n *ir.Node, i int) (*ir.Arg, bool) {
	if i < len(n.Args) && (n.Args[i].Kind == ir.ArgList || n.Args[i].Kind == ir.ArgTuple) {
		return &n.Args[i], true
	}
	return nil, false
}

func run(pass *analyze.Pass) (any, error) {
	g := pass.Graph
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpCallFunction || !analyze.IsHOP(n.Target) {
			continue
		}
		c, ok := checks[strings.TrimPrefix(n.Target, "higher_order.")]
		if !ok {
			continue
		}
		call, err := pass.DecodeHOP(ir.NodeID(i))
		if err != nil || call == nil {
			continue // the alias analyzer reports malformed HOP calls (hop-call)
		}
		var sc *analyze.SubgraphCall
		for j := range call.Subgraphs {
			if call.Subgraphs[j].Role == c.role {
				sc = &call.Subgraphs[j]
			}
		}
		if sc == nil {
			continue
		}
		sub := pass.Subgraph(sc.Graph)
		lhs, rhs, ok := c.sides(g, n, sub)
		if !ok {
			continue
		}
		lhs.Name, rhs.Name = c.lhsName, c.rhsName
		res := metadiff.Compare(lhs, rhs, metadiff.Options{IncludeContiguity: c.includeContiguity})
		if res.Equal() {
			continue
		}
		msg := res.Message()
		if res.LengthMismatch && c.lengthMessage != nil {
			msg = c.lengthMessage(len(lhs.Values), len(rhs.Values))
			if len(res.Pairs) > 0 {
				msg += "\n" + (&metadiff.Result{LHS: lhs, RHS: rhs, Pairs: res.Pairs}).Message()
			}
		}
		prov := &analyze.Provenance{InputIndex: -1, Node: n.Name, Path: []string{n.Name, sc.Graph}}
		if n.Meta != nil {
			prov.StackTrace = n.Meta.StackTrace
		}
		pass.Report(analyze.Finding{Rule: RuleMetaMismatch, Severity: analyze.Error, Node: n.Name, Message: msg, Provenance: prov})
	}
	return nil, nil
}

// FirstSlice is the value of torch.select_copy(x, 0, 0) for a tensor value
// x: its shape without the first dimension, with contiguous strides. It
// returns nil for anything else (and for 0-dim tensors).
func FirstSlice(v *ir.Value) *ir.Value {
	if v == nil || v.Kind != ir.ValTensor || v.Tensor == nil || len(v.Tensor.Shape) == 0 {
		return nil
	}
	t := *v.Tensor
	t.Shape = append([]ir.Dim(nil), t.Shape[1:]...)
	t.Stride = ContiguousStrides(t.Shape)
	t.StorageOffset = ir.Dim{}
	t.MemoryFormat = "contiguous_format"
	t.Layout = "strided"
	t.RequiresGrad = false
	t.HasStorageID, t.StorageID = false, 0
	return &ir.Value{Kind: ir.ValTensor, Tensor: &t}
}

// ContiguousStrides returns the row-major strides of shape. Symbolic
// products are written coefficient first, symbols sorted ("3*s0*s1"), the
// way sympy prints them in the common cases.
func ContiguousStrides(shape []ir.Dim) []ir.Dim {
	out := make([]ir.Dim, len(shape))
	coef := int64(1)
	var syms []string
	for i := len(shape) - 1; i >= 0; i-- {
		out[i] = product(coef, syms)
		d := shape[i]
		if d.Expr == "" {
			coef *= d.Val
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(d.Expr), 10, 64); err == nil {
			coef *= v
			continue
		}
		e := strings.TrimSpace(d.Expr)
		if strings.ContainsAny(e, "+- /") {
			e = "(" + e + ")"
		}
		syms = append(syms, e)
		sort.Strings(syms)
	}
	return out
}

func product(coef int64, syms []string) ir.Dim {
	if len(syms) == 0 {
		return ir.Dim{Val: coef}
	}
	s := strings.Join(syms, "*")
	if coef != 1 {
		s = strconv.FormatInt(coef, 10) + "*" + s
	}
	return ir.Dim{Expr: s}
}
