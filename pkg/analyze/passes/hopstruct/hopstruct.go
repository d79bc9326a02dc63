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
//
// Before torch 2.14 (opschema.DiffCondSameMetadata) cond compared every
// output's metadata, shape and stride included ("Expected each tensor to
// have same metadata but got:"), and hopctl does so for files of those
// releases.
//
// These are make_fx-level checks, which hopctl applies to every graph: torch
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

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// RuleStructure is the rule id of the findings this analyzer reports.
const RuleStructure = "hop-structure"

// Analyzer is the HOP structure analyzer. It has no result.
var Analyzer = &analyze.Analyzer{
	Name: "hopstruct",
	Doc:  "HOP call sites whose subgraphs break PyTorch's structural checks (cond branch outputs, while_loop's cond_fn)",
	Rules: []analyze.Rule{
		{ID: RuleStructure, Name: "HopSubgraphStructure", Severity: analyze.Error, Category: "hop",
			Short: "HOP subgraphs that break PyTorch's structural checks",
			Doc: "cond branches that return different numbers of outputs (trace_cond), or outputs that cannot be merged because they differ in " +
				"dtype, device, layout, rank or storage offset (_merge_output; different sizes and strides are merged, not flagged); a while_loop " +
				"cond_fn that does not return one boolean scalar tensor (_validate_cond_output). PyTorch refuses such programs when it traces them.",
			Example: `~~~python
torch.cond(pred, lambda x: x.sin(), lambda x: x.cos().long(), (x,))   # float32 vs int64 outputs
~~~
Fix: make both branches return the same number of tensors with the same dtype, device and rank; make cond_fn return a bool scalar.`},
	},
	Run: run,
}

func run(pass *analyze.Pass) (any, error) {
	g := pass.Graph
	for i := range g.Nodes {
		n := &g.Nodes[i]
		h, ok := hop.Lookup(pass.Schemas, n)
		if !ok {
			continue
		}
		var check func(*analyze.Pass, *ir.Node, *hop.Call) string
		switch h.Name {
		case "cond":
			check = checkCond
		case "while_loop", "while_loop_stack_output":
			check = checkWhileCond
		default:
			continue
		}
		call, err := pass.DecodeHOP(ir.NodeID(i))
		if err != nil || call == nil {
			continue // the alias analyzer reports malformed HOP calls (hop-call)
		}
		if msg := check(pass, n, call); msg != "" {
			prov := &analyze.Provenance{InputIndex: -1, Node: n.Name, Path: []string{n.Name}}
			if n.Meta != nil {
				prov.StackTrace = n.Meta.StackTrace
			}
			pass.Report(analyze.Finding{Rule: RuleStructure, Severity: analyze.Error, Node: n.Name, Message: msg, Provenance: prov})
		}
	}
	return nil, nil
}

func subgraphOf(pass *analyze.Pass, call *hop.Call, role string) *ir.Graph {
	if sc := call.Subgraph(role); sc != nil {
		return pass.Subgraph(sc.Graph)
	}
	return nil
}

// checkCond is trace_cond's output count check and _merge_output's
// check_tensor_meta_match, pair by pair, in PyTorch's order (count first).
func checkCond(pass *analyze.Pass, n *ir.Node, call *hop.Call) string {
	t, f := subgraphOf(pass, call, "true_fn"), subgraphOf(pass, call, "false_fn")
	if t == nil || f == nil {
		return ""
	}
	tl, _ := t.Outputs()
	fl, _ := f.Outputs()
	if len(tl) != len(fl) {
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
func checkWhileCond(pass *analyze.Pass, n *ir.Node, call *hop.Call) string {
	c := subgraphOf(pass, call, "cond_fn")
	if c == nil {
		return ""
	}
	leaves, _ := c.Outputs()
	vals := analyze.LeafValues(c, leaves)
	if len(vals) == 1 {
		v := vals[0]
		if v == nil || v.Kind == ir.ValBool || v.Kind == ir.ValSym {
			return "" // unrecorded, a bool or a SymBool: accepted
		}
		if t := tensorOf(v); t != nil && len(t.Shape) == 0 && (t.Dtype == "bool" || t.Dtype == "") {
			return ""
		}
	}
	got := "a tuple of " + fmt.Sprint(len(vals)) + " values"
	if len(vals) == 1 {
		got = metadiff.Format(vals[0])
	}
	return "cond_fn must return a boolean scalar tensor or a boolean but got " + got
}
