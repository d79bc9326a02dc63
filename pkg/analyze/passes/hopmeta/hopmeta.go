// Package hopmeta is the HOP metadata analyzer: at every HOP call site where
// PyTorch calls check_meta_consistency (the MetaChecks of the HOP
// convention table, opschema.HOP), it compares the same two lists of values
// with package metadiff and reports every difference, in PyTorch's wording,
// at the HOP call node.
//
// The call sites and names are those of the make_fx (proxy-mode) path, which
// is what exported graphs come from (torch/_higher_order_ops/while_loop.py,
// scan.py, associative_scan.py):
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
// Dynamo makes the same checks on its torch-level graphs with its own names
// and order (check_meta_consistency_vt: body_fn_output vs carried_inputs,
// initial_xs vs combine_fn_output, lists rather than tuples); on a
// Dynamo-level module (analyze.DynamoLevel) hopctl reports those
// (MetaCheck.DynamoLHS). scan's extra include_contiguity=True check for
// user functools.partial combine_fns is not made.
//
// Checks hold for the torch release the pass selects (MetaCheck.Torch):
// torch 2.6's while_loop compares zipped pairs in its own words
// (opschema.DiffWhileMeta26, MetaCheck.Carry26), and so does its scan, in
// device, dtype and shape only (opschema.DiffScanCarry26, MetaCheck.Init26).
package hopmeta

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// RuleMetaMismatch is the rule id of the findings this analyzer reports.
const RuleMetaMismatch = "hop-meta-mismatch"

// Analyzer is the HOP metadata analyzer. It has no result.
var Analyzer = hopcalls.Check("hopmeta",
	"HOP call sites whose carried values change metadata (PyTorch's check_meta_consistency)",
	analyze.Rule{ID: RuleMetaMismatch, Name: "HopCarryMetadataMismatch",
		Short: "HOP carried values change metadata (check_meta_consistency)",
		Doc: "while_loop carried_inputs vs body_output, scan init vs carry, associative_scan first slices vs combine_fn outputs differ in " +
			"count, shape, dtype, stride, quantization or device, compared as PyTorch's check_meta_consistency does; every difference is listed.",
		Example: `~~~python
def body_fn(i, x):              # x: (2, 3)
    return i + 1, x.t()          # carry comes back as (3, 2)
torch._higher_order_ops.while_loop(cond_fn, body_fn, (i, x))
~~~`,
		Fix: "return carried values with the shape, dtype, stride and device they came in with ('x.t().contiguous().view(2, 3)' or a different carry)."}, run)

func run(pass *analyze.Pass) (any, error) {
	version := pass.TorchVersion()
	for _, hc := range hopcalls.Of(pass).Calls {
		if hc.Decoded == nil {
			continue // validation refuses malformed HOP calls (hop-call)
		}
		for _, c := range hc.HOP.MetaChecks {
			if c.Torch.Holds(version) {
				check(pass, &hc, &c)
			}
		}
	}
	return nil, nil
}

// check makes one check_meta_consistency call of the table at call n.
func check(pass *analyze.Pass, hc *hopcalls.Call, c *opschema.MetaCheck) {
	sc := hc.Decoded.Subgraph(c.Subgraph)
	if sc == nil {
		return
	}
	lhs, rhs, ok := sides(pass.Graph, hc, pass.Subgraph(sc.Graph), c)
	if !ok {
		return
	}
	lhs.Name, rhs.Name = c.LHS, c.RHS
	switch {
	case c.Carry26:
		check26(pass, hc, sc, lhs, rhs)
		return
	case c.Init26:
		checkInit26(pass, hc, sc, lhs, rhs)
		return
	}
	lengthMessage := c.LengthMessage
	if pass.DynamoLevel() && c.DynamoLHS != "" {
		// Dynamo's own check, in its names and order; Dynamo's count
		// message is check_meta_consistency's.
		if c.DynamoSwap {
			lhs, rhs = rhs, lhs
		}
		lhs.Name, rhs.Name, lengthMessage = c.DynamoLHS, c.DynamoRHS, ""
		lhs.Tuple, rhs.Tuple = false, false // Dynamo passes lists
	}
	res := metadiff.Compare(lhs, rhs, metadiff.Options{IncludeContiguity: c.IncludeContiguity})
	if res.Equal() {
		return
	}
	msg := res.Message()
	if res.LengthMismatch && lengthMessage != "" {
		msg = fmt.Sprintf(lengthMessage, len(lhs.Values), len(rhs.Values))
		if len(res.Pairs) > 0 {
			msg += "\n" + (&metadiff.Result{LHS: lhs, RHS: rhs, Pairs: res.Pairs}).Message()
		}
	}
	report(pass, hc, sc, msg)
}

func report(pass *analyze.Pass, hc *hopcalls.Call, sc *hop.SubgraphCall, msg string) {
	hc.Report(pass, msg, hc.Node.Name, sc.Graph)
}

// check26 is torch 2.6's while_loop check (check_outputs_carry_consistency,
// torch/_higher_order_ops/while_loop.py): zip(outs, carries), so only the
// pairs both lists have; diff_tensor_meta with requires_grad and
// _extract_tensor_metadata's memory_format; one line per differing pair.
func check26(pass *analyze.Pass, hc *hopcalls.Call, sc *hop.SubgraphCall, lhs, rhs metadiff.List) {
	k := min(len(lhs.Values), len(rhs.Values))
	lhs.Values, rhs.Values = lhs.Values[:k], rhs.Values[:k]
	res := metadiff.Compare(lhs, rhs, metadiff.Options{IncludeContiguity: true, CheckGrad: true})
	var lines []string
	for _, p := range res.Pairs {
		parts := make([]string, 0, len(p.Fields))
		for _, f := range p.Fields {
			if f.Field != "type" { // zip of tensors only: 2.6 compares no ints
				parts = append(parts, f.String())
			}
		}
		if len(parts) > 0 {
			lines = append(lines, strings.Join(parts, ","))
		}
	}
	if len(lines) == 0 {
		return
	}
	report(pass, hc, sc, fmt.Sprintf("Expected %s and %s return tensors with same metadata but found:\n%s", lhs.Name, rhs.Name, strings.Join(lines, "\n")))
}

// checkInit26 is torch 2.6's scan check (trace_scan,
// torch/_higher_order_ops/scan.py): for ini, ca in zip(init, carry), the
// first pair whose device, dtype or shape differ raises with the carry's
// TensorMetadata (meta["tensor_meta"]) and the init's repr. Stride, memory
// format and requires_grad are not compared; nor are values that are not
// two tensors (2.6's scan() takes only tensor inits).
func checkInit26(pass *analyze.Pass, hc *hopcalls.Call, sc *hop.SubgraphCall, lhs, rhs metadiff.List) {
	for i := range min(len(lhs.Values), len(rhs.Values)) {
		ini, ca := lhs.Values[i], rhs.Values[i]
		if ini == nil || ca == nil || ini.Kind != ir.ValTensor || ca.Kind != ir.ValTensor || ini.Tensor == nil || ca.Tensor == nil {
			continue
		}
		a, b := ini.Tensor, ca.Tensor
		diff := metadiff.DeviceDiffers(a.Device, b.Device) ||
			a.Dtype != "" && b.Dtype != "" && metadiff.FormatDtype(a.Dtype) != metadiff.FormatDtype(b.Dtype) ||
			!ir.DimsEqual(a.Shape, b.Shape)
		if diff {
			report(pass, hc, sc, "Expected metadata of the combine_fn result "+metadiff.FormatTensorMetadata(b)+
				" to be the same as the metadata of init with "+metadiff.Format(ini))
			return
		}
	}
}

// sides builds the two lists check c compares at call hc of g whose
// subgraph is sub; ok is false when the call is not in the form the check
// applies to.
func sides(g *ir.Graph, hc *hopcalls.Call, sub *ir.Graph, c *opschema.MetaCheck) (lhs, rhs metadiff.List, ok bool) {
	elems, tuple, ok := hc.Group(c.Arg)
	if !ok {
		return lhs, rhs, false
	}
	if c.Requires != "" {
		if _, _, ok := hc.Group(c.Requires); !ok {
			return lhs, rhs, false // an older form of the call
		}
	}
	leaves, outTuple := sub.Outputs()
	if c.Carries {
		leaves = leaves[:min(len(elems), len(leaves))]
	}
	lhs.Values = analyze.ArgValues(g, elems)
	if c.FirstSlice {
		for i, v := range lhs.Values {
			lhs.Values[i] = FirstSlice(v)
		}
	}
	rhs.Values = analyze.LeafValues(sub, leaves)
	if !c.Lists {
		lhs.Tuple, rhs.Tuple = tuple, outTuple
	}
	return lhs, rhs, true
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
	t.Stride = ir.ContiguousStrides(t.Shape)
	t.StorageOffset = ir.Dim{}
	t.MemoryFormat = "contiguous_format"
	t.Layout = "strided"
	t.RequiresGrad = false
	t.HasStorageID, t.StorageID = false, 0
	return &ir.Value{Kind: ir.ValTensor, Tensor: &t}
}
