// Package hopstruct is the HOP structure analyzer: the checks PyTorch makes
// on a HOP call's subgraphs when make_fx traces it (the make_fx/AOT level,
// aten graphs), other than aliasing/mutation (package alias) and the carry
// metadata check_meta_consistency compares (package hopmeta). Each finding
// carries PyTorch's message, and the function it comes from:
//
//	cond        branches return as many outputs       trace_cond (torch/_higher_order_ops/cond.py):
//	                                                  "Expected to return same number of outputs but got: ..."
//	cond        merged outputs agree in dtype, device, _merge_output → check_tensor_meta_match:
//	            layout, dim, storage_offset           "When merging two branches' output in torch.cond,
//	                                                  expected same <attr> but got <a> and <b>."
//	                                                  (sizes and strides that differ are merged into
//	                                                  unbacked SymInts, not flagged)
//	while_loop  cond_fn returns one boolean scalar    while_loop's _validate_cond_output
//	            tensor                                (torch/_higher_order_ops/while_loop.py):
//	                                                  "cond_fn must return a boolean scalar tensor or a
//	                                                  boolean but got ..."
//	map_impl    xs (operands the HOP table slices)    map() (torch/_higher_order_ops/map.py):
//	            share one leading dimension, not 0    "Leading dimensions of mapped xs must be consistent. ...",
//	                                                  "Leading dimensions of mapped xs cannot be 0."
//	map_impl    body outputs are tensors or None      2.6: map_impl ("Expect outputs of map only contains
//	                                                  tensors or None. Got types [...]"); 2.14: Dynamo
//	                                                  ("HOP: non torch.Tensor leaf"), opschema.DiffMapOutputs26
//	associative_scan xs leaves are dense              associative_scan()'s _validate_input (2.6, 2.14):
//	                                                  "xs leaves must dense Tensors, consider using `to_dense()`"
//	associative_scan combine_fn is pointwise          is_pointwise_use (torch/_inductor/utils.py), called by
//	                                                  Dynamo (2.14) or trace_associative_scan (2.6): "For
//	                                                  combine_mode='pointwise', the combine_fn needs to be pointwise"
//
//	scan        xs leaves share one scan dimension     scan()'s _validate_input (torch/_higher_order_ops/scan.py):
//	            size (zero-length accepted)           "All xs leaves must have the same scan dimension size"
//	scan        2.6 only: no zero-length scan         2.6's scan(): "All xs leaves must have a scan dimension > 0
//	            dimension                             but got ..." (opschema.DiffScanZeroLength26)
//
// The counts of scan's and associative_scan's combine_fn outputs are
// check_meta_consistency's (package hopmeta, rule hop-meta-mismatch).
//
// Before torch 2.14 (opschema.DiffCondSameMetadata) cond compared every
// output's metadata, shape and stride included ("Expected each tensor to
// have same metadata but got:"), and hopctl does so for files of those
// releases.
//
// On a Dynamo-level module (analyze.DynamoLevel) under torch 2.14, the
// while_loop check is Dynamo's, in its words ("Expected cond_fn to return a
// scalar tensor or a bool but got torch.Size([])."), and so is cond's output
// count ("Expected branches to return the same pytree structure.",
// CondHigherOrderVariable's comparison of the branches' output pytrees,
// torch/_dynamo/variables/higher_order_ops.py). Otherwise these are
// make_fx-level checks, which hopctl applies to every graph: torch
// 2.14 makes the while_loop one only in the user-facing while_loop, whose
// eager path runs Dynamo first, so a program calling it is refused with
// Dynamo's words ("Expected cond_fn to return a scalar tensor or a bool but
// got torch.Size([])."); the corpus records that verdict.
//
// The rules were read in torch 2.14.1's sources; the real-trace corpus
// (testdata/hops_real, python/tools/hop_corpus.py) carries a trigger and a
// near miss for each, and torch's message for the trigger.
package hopstruct

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// RuleStructure is the rule id of the findings this analyzer reports.
const RuleStructure = "hop-structure"

// Analyzer is the HOP structure analyzer. It has no result.
var Analyzer = hopcalls.Check("hopstruct",
	"HOP call sites whose subgraphs break PyTorch's structural checks (cond branch outputs, while_loop's cond_fn, map's xs and outputs, associative_scan's pointwise combine_fn)",
	analyze.Rule{ID: RuleStructure, Name: "HopSubgraphStructure",
		Short: "HOP subgraphs that break PyTorch's structural checks",
		Doc: "cond branches that return different numbers of outputs (trace_cond), or outputs that cannot be merged because they differ in " +
			"dtype, device, layout, rank or storage offset (_merge_output; different sizes and strides are merged, not flagged); a while_loop " +
			"cond_fn that does not return one boolean scalar tensor (_validate_cond_output); map xs with different leading dimensions, or a map body " +
			"returning non-tensors (map, map_impl); an associative_scan combine_fn using a value in an op torch does not tag pointwise " +
			"(is_pointwise_use). PyTorch refuses such programs when it traces them.",
		Example: `~~~python
torch.cond(pred, lambda x: x.sin(), lambda x: x.cos().long(), (x,))   # float32 vs int64 outputs
~~~`,
		Fix: "make both branches return the same number of tensors with the same dtype, device and rank; make cond_fn return a bool scalar."}, run)

func run(pass *analyze.Pass) (any, error) {
	for _, c := range hopcalls.Of(pass).Calls {
		var check func(*analyze.Pass, *hopcalls.Call) string
		switch c.HOP.Name {
		case "cond":
			check = checkCond
		case "while_loop", "while_loop_stack_output":
			check = checkWhileCond
		case "map_impl":
			check = checkMap
		case "associative_scan":
			check = checkAssociativeScan
		case "scan":
			check = checkScan
		default:
			continue
		}
		if c.Decoded == nil {
			continue // the alias analyzer reports malformed HOP calls (hop-call)
		}
		if msg := check(pass, &c); msg != "" {
			c.Report(pass, msg, c.Node.Name)
		}
	}
	return nil, nil
}

// dynamoChecks reports whether Dynamo makes the check, in its own words:
// a Dynamo-level module (analyze.DynamoLevel) under a release whose Dynamo
// checks HOP subgraphs (not opschema.DiffDynamoUnchecked26).
func dynamoChecks(pass *analyze.Pass) bool {
	return pass.DynamoLevel() && !opschema.TorchDiffers(opschema.DiffDynamoUnchecked26, pass.TorchVersion())
}

func subgraphOf(pass *analyze.Pass, c *hopcalls.Call, role string) *ir.Graph {
	if sc := c.Decoded.Subgraph(role); sc != nil {
		return pass.Subgraph(sc.Graph)
	}
	return nil
}

// checkCond is trace_cond's output count check and _merge_output's
// check_tensor_meta_match, pair by pair, in PyTorch's order (count first).
func checkCond(pass *analyze.Pass, c *hopcalls.Call) string {
	t, f := subgraphOf(pass, c, "true_fn"), subgraphOf(pass, c, "false_fn")
	if t == nil || f == nil {
		return ""
	}
	tl, _ := t.Outputs()
	fl, _ := f.Outputs()
	if len(tl) != len(fl) {
		if dynamoChecks(pass) {
			// Dynamo compares the branches' output pytrees itself
			// (CondHigherOrderVariable, torch/_dynamo/variables/higher_order_ops.py).
			return "Expected branches to return the same pytree structure."
		}
		return fmt.Sprintf("Expected to return same number of outputs but got:\n  true branch returns %d item(s)\n  false branch returns %d item(s)", len(tl), len(fl))
	}
	tv, fv := analyze.LeafValues(t, tl), analyze.LeafValues(f, fl)
	if opschema.TorchDiffers(opschema.DiffCondSameMetadata, pass.TorchVersion()) {
		// torch before 2.14: trace_cond compares every output's metadata,
		// shape and stride included.
		for k := range tv {
			a, b := tensorOf(tv[k]), tensorOf(fv[k])
			if a == nil || b == nil {
				continue
			}
			if _, _, _, differ := metaDiffers(a, b); differ || !ir.DimsEqual(a.Shape, b.Shape) || !ir.DimsEqual(a.Stride, b.Stride) {
				return "Expected each tensor to have same metadata but got:\n  true_fn returns " + metadiff.Format(tv[k]) +
					"\n  false_fn returns " + metadiff.Format(fv[k])
			}
		}
		return ""
	}
	for k := range tv {
		a, b := tensorOf(tv[k]), tensorOf(fv[k])
		if a == nil || b == nil {
			continue
		}
		if attr, l, r, differ := metaDiffers(a, b); differ {
			return fmt.Sprintf("When merging two branches' output in torch.cond,  expected same %s but got %s and %s.", attr, l, r)
		}
	}
	return ""
}

func tensorOf(v *ir.Value) *ir.TensorMeta {
	if v != nil && v.Kind == ir.ValTensor {
		return v.Tensor
	}
	return nil
}

// metaDiffers compares what check_tensor_meta_match compares (cond.py's
// _meta_to_check: dtype, device, layout, dim, is_quantized, is_sparse,
// storage_offset; PyTorch iterates a set, hopctl this fixed order) and
// returns the first attribute that differs with both sides as torch prints
// them. Unrecorded or symbolic values never differ.
func metaDiffers(a, b *ir.TensorMeta) (attr, l, r string, differ bool) {
	if a.Dtype != "" && b.Dtype != "" && a.Dtype != b.Dtype {
		return "dtype", metadiff.FormatDtype(a.Dtype), metadiff.FormatDtype(b.Dtype), true
	}
	if a.Device != "" && b.Device != "" && a.Device != b.Device {
		return "device", a.Device, b.Device, true
	}
	if la, lb := layout(a), layout(b); la != lb {
		return "layout", "torch." + la, "torch." + lb, true
	}
	if len(a.Shape) != len(b.Shape) {
		return "dim", fmt.Sprint(len(a.Shape)), fmt.Sprint(len(b.Shape)), true
	}
	if a.IsQuantized != b.IsQuantized {
		return "is_quantized", pyBool(a.IsQuantized), pyBool(b.IsQuantized), true
	}
	if sa, sb := a.StorageOffset, b.StorageOffset; sa.Expr == "" && sb.Expr == "" && sa.Val != sb.Val {
		return "storage_offset", fmt.Sprint(sa.Val), fmt.Sprint(sb.Val), true
	}
	return "", "", "", false
}

func layout(t *ir.TensorMeta) string {
	if t.Layout == "" {
		return "strided"
	}
	return t.Layout
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// checkWhileCond is _validate_cond_output: cond_fn returns one boolean
// scalar tensor (or a bool).
func checkWhileCond(pass *analyze.Pass, c *hopcalls.Call) string {
	g := subgraphOf(pass, c, "cond_fn")
	if g == nil {
		return ""
	}
	leaves, _ := g.Outputs()
	vals := analyze.LeafValues(g, leaves)
	if len(vals) == 1 {
		v := vals[0]
		if v == nil || v.Kind == ir.ValBool || v.Kind == ir.ValSym {
			return "" // unrecorded, a bool or a SymBool: accepted
		}
		if t := tensorOf(v); t != nil && len(t.Shape) == 0 && (t.Dtype == "bool" || t.Dtype == "") {
			return ""
		}
	}
	if len(vals) == 1 && dynamoChecks(pass) {
		if t := tensorOf(vals[0]); t != nil {
			// Dynamo's own check of a Dynamo-level cond_fn
			// (torch/_dynamo/variables/higher_order_ops.py, _call_while_loop).
			return "Expected cond_fn to return a scalar tensor or a bool but got " + metadiff.FormatSize(t.Shape) + "."
		}
	}
	got := "a tuple of " + fmt.Sprint(len(vals)) + " values"
	if len(vals) == 1 {
		got = metadiff.Format(vals[0])
	}
	return "cond_fn must return a boolean scalar tensor or a boolean but got " + got
}

// checkMap is map()'s check of its xs (torch/_higher_order_ops/map.py, the
// same words in 2.6 and 2.14): the operands the HOP table slices along dim
// 0 (Operands.Sliced) have one leading dimension; then the body's outputs
// are tensors or None: torch 2.6's map_impl raises "Expect outputs of map
// only contains tensors or None" (opschema.DiffMapOutputs26), torch 2.14's
// Dynamo refuses the body ("HOP: non torch.Tensor leaf").
func checkMap(pass *analyze.Pass, c *hopcalls.Call) string {
	for i := range c.HOP.Subgraphs {
		sg := &c.HOP.Subgraphs[i]
		switch zero, differ, shapes, ok := leadingDims(slicedValues(pass, c, sg)); {
		case ok && zero:
			return "Leading dimensions of mapped xs cannot be 0."
		case ok && differ:
			return "Leading dimensions of mapped xs must be consistent. Got shapes " + shapes + "."
		}
		sub := subgraphOf(pass, c, sg.RoleName())
		if sub == nil {
			continue
		}
		leaves, _ := sub.Outputs()
		outs := analyze.LeafValues(sub, leaves)
		bad := false
		for _, v := range outs {
			bad = bad || v != nil && v.Kind != ir.ValTensor && v.Kind != ir.ValNone
		}
		switch {
		case !bad:
		case opschema.TorchDiffers(opschema.DiffMapOutputs26, pass.TorchVersion()):
			types := make([]string, len(outs))
			for i, v := range outs {
				types[i] = pyType(v)
			}
			return "Expect outputs of map only contains tensors or None. Got types [" + strings.Join(types, ", ") + "]."
		default:
			return "HOP: non torch.Tensor leaf (map's " + sg.RoleName() + " returns " + strings.Join(formatAll(outs), ", ") + ")"
		}
	}
	return ""
}

// leadingDims compares the leading dimensions of the values xs, as map()
// and scan() do: zero is whether the first one's is 0, differ whether
// another's differs from it; symbolic and unrecorded sizes never differ.
// shapes is the sizes as torch prints them, ok false when some value is
// not a tensor with a dimension.
func leadingDims(xs []*ir.Value) (zero, differ bool, shapes string, ok bool) {
	var first *ir.Dim
	sizes := make([]string, 0, len(xs))
	for _, v := range xs {
		t := tensorOf(v)
		if t == nil || len(t.Shape) == 0 {
			return false, false, "", false
		}
		sizes = append(sizes, metadiff.FormatSize(t.Shape))
		d := t.Shape[0]
		switch {
		case d.IsSymbolic():
		case first == nil && len(sizes) == 1 && d.Val == 0:
			zero = true
			first = &d
		case first == nil:
			first = &d
		case d.Val != first.Val:
			differ = true
		}
	}
	return zero, differ, "[" + strings.Join(sizes, ", ") + "]", true
}

// slicedValues returns the values of the operands the HOP table slices
// along dim 0 (Operands.Sliced) for subgraph sg of call c, each group once.
func slicedValues(pass *analyze.Pass, c *hopcalls.Call, sg *opschema.Subgraph) []*ir.Value {
	var xs []*ir.Value
	seen := map[string]bool{}
	for _, op := range sg.Operands {
		if !op.Sliced || seen[op.Arg] {
			continue
		}
		seen[op.Arg] = true
		if elems, _, ok := c.Group(op.Arg); ok {
			xs = append(xs, analyze.ArgValues(pass.Graph, elems)...)
		}
	}
	return xs
}

// sparseMessage is associative_scan()'s refusal of sparse xs.
const sparseMessage = "xs leaves must dense Tensors, consider using `to_dense()`"

// checkAssociativeScan is associative_scan()'s _validate_input check that
// no xs leaf is sparse (x.is_sparse: the sparse COO layout; before the HOP
// is called, so no trace of it exists; torch 2.6's Dynamo refuses them
// first, opschema.DiffAssocSparse26), then
// the pointwise check. scan() and map() make no such check in either
// release.
func checkAssociativeScan(pass *analyze.Pass, c *hopcalls.Call) string {
	for i := range c.HOP.Subgraphs {
		for _, v := range slicedValues(pass, c, &c.HOP.Subgraphs[i]) {
			if v != nil && v.Kind == ir.ValTensor && v.Tensor != nil && strings.TrimPrefix(v.Tensor.Layout, "torch.") == "sparse_coo" {
				if opschema.TorchDiffers(opschema.DiffAssocSparse26, pass.TorchVersion()) {
					return "torch.compile does not support sparse Tensors"
				}
				return sparseMessage
			}
		}
	}
	return checkPointwise(pass, c)
}

// checkScan is scan()'s _validate_input (torch/_higher_order_ops/scan.py,
// torch 2.14): the xs leaves share one scan dimension size. A zero-length
// scan dimension is accepted. torch 2.6 does not check it
// (opschema.DiffScanXsLength26).
func checkScan(pass *analyze.Pass, c *hopcalls.Call) string {
	h := c.HOP
	if opschema.TorchDiffers(opschema.DiffScanZeroLength26, pass.TorchVersion()) {
		// torch 2.6's scan(): every xs leaf's scan dimension (dim, which
		// its call passes; 0 in 2.14's form) is not 0.
		dim := 0
		if a := c.Arg("dim"); a != nil && a.Kind == ir.ArgInt {
			dim = int(a.Int())
		}
		for i := range h.Subgraphs {
			for _, v := range slicedValues(pass, c, &h.Subgraphs[i]) {
				if t := tensorOf(v); t != nil && dim >= 0 && dim < len(t.Shape) && !t.Shape[dim].IsSymbolic() && t.Shape[dim].Val == 0 {
					return "All xs leaves must have a scan dimension > 0 but got " + metadiff.Format(v)
				}
			}
		}
	}
	if opschema.TorchDiffers(opschema.DiffScanXsLength26, pass.TorchVersion()) {
		return ""
	}
	for i := range h.Subgraphs {
		if _, differ, _, ok := leadingDims(slicedValues(pass, c, &h.Subgraphs[i])); ok && differ {
			return "All xs leaves must have the same scan dimension size"
		}
	}
	return ""
}

// pyType is type(v) as torch 2.6 prints it in map's output check.
func pyType(v *ir.Value) string {
	if v == nil {
		return "<class 'NoneType'>"
	}
	switch v.Kind {
	case ir.ValTensor:
		return "<class 'torch._subclasses.fake_tensor.FakeTensor'>"
	case ir.ValInt:
		return "<class 'int'>"
	case ir.ValFloat:
		return "<class 'float'>"
	case ir.ValBool:
		return "<class 'bool'>"
	case ir.ValSym:
		return "<class 'torch.SymInt'>"
	case ir.ValNone:
		return "<class 'NoneType'>"
	}
	return "<class 'object'>"
}

func formatAll(vs []*ir.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = metadiff.Format(v)
	}
	return out
}

// checkPointwise is associative_scan's pointwise check, as
// torch/_inductor/utils.py is_pointwise_use makes it: every value of
// combine_fn is used only by the output or by ops torch tags pointwise
// (opschema.IsPointwise), looking through views and getitems to their own
// uses (a view that is returned is not a pointwise use). torch 2.14 makes
// it in Dynamo (AssociativeScanHigherOrderVariable), 2.6 in
// trace_associative_scan; a graph's associative_scan call comes from
// combine_mode="pointwise" either way (generic mode calls no HOP).
// Dynamo-level combine_fns (torch-level targets) are not checked: torch
// checks their ATen re-trace.
func checkPointwise(pass *analyze.Pass, c *hopcalls.Call) string {
	for _, sg := range c.HOP.Subgraphs {
		g := subgraphOf(pass, c, sg.RoleName())
		if g == nil || analyze.TorchLevelGraph(g) {
			continue
		}
		users := make([][]ir.NodeID, len(g.Nodes))
		for i := range g.Nodes {
			g.Nodes[i].WalkRefs(func(a *ir.Arg) {
				if int(a.Ref) < len(users) && (len(users[a.Ref]) == 0 || users[a.Ref][len(users[a.Ref])-1] != ir.NodeID(i)) {
					users[a.Ref] = append(users[a.Ref], ir.NodeID(i))
				}
			})
		}
		memo := map[ir.NodeID]bool{}
		var pointwiseUse func(id ir.NodeID) bool
		pointwiseUse = func(id ir.NodeID) bool {
			if r, ok := memo[id]; ok {
				return r
			}
			memo[id] = false // a cycle (malformed graph) is not pointwise
			u := &g.Nodes[id]
			r := false
			if u.Op == ir.OpCallFunction {
				if analyze.IsGetitem(u.Target) || isView(pass, u.Target) {
					r = true
					for _, v := range users[id] {
						r = r && pointwiseUse(v)
					}
				} else {
					r = opschema.IsPointwise(u.Target)
				}
			}
			memo[id] = r
			return r
		}
		for i := range g.Nodes {
			for _, u := range users[i] {
				if g.Nodes[u].Op != ir.OpOutput && !pointwiseUse(u) {
					return "For combine_mode='pointwise', the combine_fn needs to be pointwise"
				}
			}
		}
	}
	return ""
}

func isView(pass *analyze.Pass, target string) bool {
	s, _, ok := pass.Schemas.Lookup(target)
	return ok && s.IsView()
}
