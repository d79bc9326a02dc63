package jointgraph

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// CoreATen lists the Core ATen operator set (PyTorch's torch.compiler IR
// page, the ops tagged "core"), as targets. Some are newer than torch
// 1.13; the coverage table says so.
var CoreATen = strings.Fields(`
aten._adaptive_avg_pool2d.default aten._adaptive_avg_pool2d_backward.default
aten._adaptive_avg_pool3d.default aten._cdist_forward.default aten._embedding_bag.default
aten._local_scalar_dense.default aten._log_softmax.default aten._native_batch_norm_legit.default
aten._native_batch_norm_legit.no_stats aten._native_batch_norm_legit_no_training.default
aten._pdist_forward.default aten._softmax.default aten._to_copy.default
aten.abs.default aten.acos.default aten.acosh.default aten.adaptive_avg_pool1d.default
aten.add.Scalar aten.add.Tensor aten.addmm.default aten.alias.default aten.amax.default
aten.amin.default aten.any.default aten.any.dim aten.any.dims aten.arange.start_step
aten.argmax.default aten.argmin.default aten.as_strided.default aten.asin.default
aten.asinh.default aten.atan.default aten.atan2.default aten.atanh.default
aten.avg_pool1d.default aten.avg_pool2d.default aten.avg_pool2d_backward.default
aten.avg_pool3d.default aten.bitwise_and.Scalar aten.bitwise_and.Tensor
aten.bitwise_not.default aten.bitwise_or.Scalar aten.bitwise_or.Tensor
aten.bitwise_xor.Scalar aten.bitwise_xor.Tensor aten.bmm.default aten.cat.default
aten.ceil.default aten.clamp.default aten.clamp.Tensor aten.clone.default aten.col2im.default
aten.constant_pad_nd.default aten.convolution.default aten.convolution_backward.default
aten.copy.default aten.cos.default aten.cosh.default aten.cumsum.default
aten.diagonal.default aten.div.Scalar aten.div.Scalar_mode aten.div.Tensor
aten.div.Tensor_mode aten.elu.default aten.embedding.default
aten.embedding_dense_backward.default aten.empty.memory_format aten.empty_strided.default
aten.eq.Scalar aten.eq.Tensor aten.erf.default aten.exp.default aten.expand.default
aten.expm1.default aten.fill.Scalar aten.flip.default aten.floor.default aten.fmod.Scalar
aten.fmod.Tensor aten.full.default aten.full_like.default aten.gather.default
aten.ge.Scalar aten.ge.Tensor aten.gelu.default aten.grid_sampler_2d.default
aten.gt.Scalar aten.gt.Tensor aten.hardtanh.default aten.index.Tensor
aten.index_put.default aten.index_select.default aten.isinf.default aten.isnan.default
aten.le.Scalar aten.le.Tensor aten.leaky_relu.default aten.log.default aten.log10.default
aten.log1p.default aten.log2.default aten.logical_and.default aten.logical_not.default
aten.logical_or.default aten.logical_xor.default aten.lt.Scalar aten.lt.Tensor
aten.masked_scatter.default aten.max.dim aten.max_pool2d_with_indices.default
aten.max_pool2d_with_indices_backward.default aten.max_pool3d_with_indices.default
aten.maximum.default aten.mean.default aten.mean.dim aten.min.dim aten.minimum.default
aten.mm.default aten.mul.Scalar aten.mul.Tensor aten.native_dropout.default
aten.native_group_norm.default aten.native_group_norm_backward.default
aten.native_layer_norm.default aten.native_layer_norm_backward.default aten.ne.Scalar
aten.ne.Tensor aten.neg.default aten.nonzero.default aten.permute.default
aten.pow.Scalar aten.pow.Tensor_Scalar aten.pow.Tensor_Tensor aten.prod.default
aten.prod.dim_int aten.rand.default aten.randn.default aten.randperm.default
aten.reciprocal.default aten.reflection_pad1d.default aten.reflection_pad2d.default
aten.reflection_pad3d.default aten.relu.default aten.remainder.Scalar
aten.remainder.Tensor aten.repeat.default aten.replication_pad2d.default
aten.replication_pad3d.default aten.resize_.default aten.round.default aten.rsqrt.default
aten.scalar_tensor.default aten.scatter.src aten.scatter.value aten.scatter_add.default
aten.scatter_reduce.two aten.select.int aten.select_scatter.default aten.sigmoid.default
aten.sign.default aten.sin.default aten.sinh.default aten.slice.Tensor
aten.slice_scatter.default aten.sort.default aten.split_with_sizes.default
aten.sqrt.default aten.squeeze.dim aten.squeeze.dims aten.sub.Scalar aten.sub.Tensor
aten.sum.dim_IntList aten.sym_numel.default aten.sym_size.int
aten.sym_storage_offset.default aten.sym_stride.int aten.tan.default aten.tanh.default
aten.topk.default aten.trunc.default aten.unsqueeze.default
aten.upsample_bilinear2d.vec aten.upsample_nearest2d.vec aten.var.correction
aten.var.dim aten.view.default aten.where.self
`)

// CoverageRow is one line of the coverage table.
type CoverageRow struct {
	Op     string
	Status string // "rule", "non-differentiable", "functionalized", "no rule", "not in torch 1.13 or 2.14"
	Family string // the rule's family, or the non-differentiable reason
	Core   bool   // in the Core ATen set
	Corpus bool   // used by a corpus model (testdata/models)
}

// Coverage returns a row for every op that has a rule, is in the
// non-differentiable list, is in the Core ATen set, or is in extra (ops the
// corpus uses), sorted by op.
func Coverage(corpus []string) []CoverageRow {
	family := map[string]string{}
	for _, f := range Families() {
		for _, r := range f.Rules {
			family[r.Op] = f.Name
		}
	}
	ops := map[string]*CoverageRow{}
	row := func(op string) *CoverageRow {
		if r, ok := ops[op]; ok {
			return r
		}
		r := &CoverageRow{Op: op}
		ops[op] = r
		return r
	}
	for op := range family {
		row(op)
	}
	for _, n := range nonDifferentiable {
		row(n.Op)
	}
	for _, op := range CoreATen {
		row(op).Core = true
	}
	for _, op := range corpus {
		row(op).Corpus = true
	}
	var out []CoverageRow
	for op, r := range ops {
		switch {
		case family[op] != "":
			r.Status, r.Family = "rule", family[op]
		case IsNonDifferentiable(op):
			r.Status, r.Family = "non-differentiable", builtinRules().nondiff[op]
		case functionalVariant(op) != "" && family[functionalVariant(op)] != "":
			r.Status, r.Family = "functionalized", "rule of "+functionalVariant(op)
		default:
			r.Family = unsupported[op]
			if _, ok := builtinSchema(op); ok || op == "aten.sym_size" {
				r.Status = "no rule"
			} else {
				r.Status = "not in torch 1.13 or 2.14"
			}
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b CoverageRow) int { return strings.Compare(a.Op, b.Op) })
	return out
}

// WriteCoverage writes the coverage table as Markdown.
func WriteCoverage(w io.Writer, rows []CoverageRow) error {
	count := map[string]int{}
	core := map[string]int{}
	for _, r := range rows {
		count[r.Status]++
		if r.Core {
			core[r.Status]++
		}
	}
	var b strings.Builder
	b.WriteString("# Derivative rule coverage\n\n")
	b.WriteString("Generated by `go test ./pkg/jointgraph -run TestCoverageFile -update` from the rule\n")
	b.WriteString("table (`rules_<family>.go`) and the non-differentiable list (`nondiff.go`); do not edit.\n\n")
	fmt.Fprintf(&b, "- %d ops with a derivative rule (%d of the Core ATen set)\n", count["rule"], core["rule"])
	fmt.Fprintf(&b, "- %d ops that are not differentiable (%d of the Core ATen set)\n", count["non-differentiable"], core["non-differentiable"])
	fmt.Fprintf(&b, "- %d Core ATen ops without a rule yet\n", core["no rule"])
	fmt.Fprintf(&b, "- %d Core ATen ops that neither torch 1.13 nor 2.14 has\n\n", core["not in torch 1.13 or 2.14"])
	b.WriteString("An op with no rule fails `hopctl joint` (exit code 3) when a tensor that requires\n")
	b.WriteString("grad flows into it; without one it is copied into the joint graph as it is.\n\n")
	b.WriteString("| op | status | family / reason | core ATen | corpus |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Op, r.Status, r.Family, yes(r.Core), yes(r.Corpus))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
