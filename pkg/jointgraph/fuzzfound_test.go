package jointgraph

import (
	"errors"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/fuzzedit"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// TestFuzzFindings: inputs FuzzJoint found Build panicking on, each with
// the refusal it must give now (an input error naming the node, never an
// internal error). Real traces, with every float placeholder requiring
// grad (the fuzz target's mode bit 0).
func TestFuzzFindings(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		// nc - len(outputs) was used as the count of ys: negative, it
		// indexed past the backward combine_fn's placeholders.
		{"../../testdata/hops_real/torch2.6/scan_count.pb", "node scan: scan has 2 carries (init) but 1 outputs"},
	} {
		t.Run(c.path, func(t *testing.T) {
			m := loadRequiringGrad(t, c.path)
			// torch 2.6 has no autograd for scan (row scan-grad-2.6): the
			// file is read as 2.14's, whose scan backward had the bug
			m.TorchVersion = "2.14.1"
			_, err := Build(m, Options{})
			var bug *ir.InternalError
			if err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build: %v, want an input error containing %q", err, c.want)
			}
		})
	}
}

// TestDimOutOfRange: a dimension argument outside [-rank, rank) — torch
// raises IndexError tracing one, so only an edited file holds it — is
// refused as input at its node; every formula indexed a shape with it
// (FuzzJoint's testdata/fuzz/FuzzJoint/mean_dim_out_of_range, convbn's
// mean.dim over dim -46500627). Real graphs with one dim edited.
func TestDimOutOfRange(t *testing.T) {
	for _, c := range []struct {
		model, target string
		arg, elem     int // elem -1: the argument is an int
		dim           int64
	}{
		{"convbn", "aten.mean.dim", 1, 0, -46500627},
		{"inplace_views", "aten.sum.dim_IntList", 1, 0, 5},
		{"attention", "aten.transpose.int", 2, -1, -7},
	} {
		t.Run(c.model+"/"+c.target, func(t *testing.T) {
			m := loadRequiringGrad(t, "../../testdata/models/"+c.model+".pb")
			g := m.Root()
			node := ""
			for i := range g.Nodes {
				if n := &g.Nodes[i]; n.Target == c.target {
					a := &n.Args[c.arg]
					if c.elem >= 0 {
						a = &a.Elems()[c.elem]
					}
					a.SetInt(c.dim)
					node = n.Name
					break
				}
			}
			if node == "" {
				t.Fatalf("%s has no %s", c.model, c.target)
			}
			_, err := Build(m, Options{})
			var bug *ir.InternalError
			if err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), "node "+node+": dimension out of range") {
				t.Fatalf("Build: %v, want an input error at node %s saying the dimension is out of range", err, node)
			}
		})
	}
}

// TestNegativeGetitemIndex: a getitem with a negative index (Python's
// t[-1], which no trace writes) is refused at its node; requiresGrad
// indexed the tuple's element list with it (found by FuzzJointEdits).
// convbn's
// batch-norm getitem, edited.
func TestNegativeGetitemIndex(t *testing.T) {
	m := loadRequiringGrad(t, "../../testdata/models/convbn.pb")
	g := m.Root()
	node := ""
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Target == "_operator.getitem" {
			n.Args[1].SetInt(-1)
			node = n.Name
			break
		}
	}
	_, err := Build(m, Options{})
	var bug *ir.InternalError
	if node == "" || err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), "node "+node+": getitem index -1 is negative") {
		t.Fatalf("Build: %v, want an input error at getitem node %q", err, node)
	}
}

// TestScanInitWithoutValue: a scan whose init operand has no recorded
// value (the format lets a node omit it) is refused at the operand
// (precheck); the forward's checkpointed carries were typed from it, a
// nil dereference (FuzzJointEdits' scan_init_without_value). A real 1.13
// scan trace, its clone's value dropped.
func TestScanInitWithoutValue(t *testing.T) {
	m := loadRequiringGrad(t, "../../testdata/hops_real/scan_count_ok.pb")
	g := m.Root()
	found := false
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Name == "clone" {
			n.Val, found = nil, true
		}
	}
	_, err := Build(m, Options{})
	var bug *ir.InternalError
	if !found || err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), "node clone: has no recorded value") {
		t.Fatalf("Build: %v, want an input error at the scan's init operand", err)
	}
}

// TestTransposeOfVector: t of a 1-d tensor (legal in torch: the identity)
// keeps its shape; t's backward, t again, indexed the shape with dim 1
// (found by an edit fuzzer: a sin retargeted to aten.t.default).
func TestTransposeOfVector(t *testing.T) {
	b := newBuilder("")
	for _, shape := range [][]ir.Dim{{{Val: 4}}, {}} {
		x := b.placeholder("x", tensorValue(&ir.TensorMeta{Shape: shape, Stride: ir.ContiguousStrides(shape), Dtype: "float32", Device: "cpu"}), nil)
		if y := b.t(x); y.meta == nil || !ir.DimsEqual(y.Shape(), shape) {
			t.Errorf("t of %v: %v", shape, y.meta)
		}
	}
}

// TestJointEditsFindings: what FuzzJointEdits found, each as the real
// graph it started from and its edits (internal/fuzzedit: four bytes
// each, op graph node operand), every placeholder requiring grad, and the
// refusal it must give now: an input error naming the node, never an
// internal error (exit 4). The files the fuzzer wrote index its seed
// list, which changes with the corpus, so the findings are kept here.
func TestJointEditsFindings(t *testing.T) {
	for _, c := range []struct {
		name, path, edits, want string
	}{
		// x.mul(2) retargeted to split.Tensor(x, 2) keeping its tensor
		// value, read by slice_1 (validate judges the argument by that
		// value): functionalize wrote through it as a split of 0 pieces.
		{"split_with_tensor_value", "../../testdata/models/inplace_views.pb", "y012",
			"node mul: has a recorded value that is a tensor, but aten.split.Tensor returns a list of tensors"},
		// max_pool2d_with_indices' tuple value edited to (f32[4], f32[4]):
		// the functional getitem takes the tuple's element, so mean.dim's
		// input became 1-d under dims [-1, -2] checked against 4-d.
		{"getitem_value_not_element", "../../testdata/models/convbn.pb", "\xb91.10",
			"node getitem_3: recorded value f32[2, 8, 8, 8] is not element 0 of max_pool2d_with_indices's, f32[4]"},
		// A stack of two 2-d tensors over dim 1 recorded as f32[4]: in
		// range of its inputs, not of the result the formula selects from.
		{"stack_value_rank", "../../testdata/hops_real/assoc_alias.pb", "7012",
			"node stack: derivative of aten.stack.default: dimension 1 is out of range for rank 1"},
		// A mul recorded as f32[4] written through a slice over dim 1:
		// the builder's slice (no Ctx) indexed the 1-d shape with it.
		{"slice_scatter_value_rank", "../../testdata/models/inplace_views.pb", "7022",
			"node slice_scatter: derivative of aten.slice_scatter.default: dimension 1 is out of range for rank 1"},
		// permute_1's input recorded as f32[4] (rank 1), the permutation
		// [0, 1]: inverting it indexed past the rank.
		{"permute_value_rank", "../../testdata/hops_real/assoc_alias.pb", "7092",
			"node permute_1: derivative of aten.permute.default: permutation of 2 dims for a tensor of rank 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := loadRequiringGrad(t, c.path)
			fuzzedit.Apply(m, []byte(c.edits))
			data, err := ir.Encode(m, ir.Binary)
			if err != nil {
				t.Fatal(err)
			}
			if m, err = ir.Decode(data, ir.Binary, "edited"); err != nil {
				t.Fatal(err)
			}
			reg, err := load.Registry(m, "edited")
			if err == nil {
				err = validate.Check(m, "edited", reg)
			}
			if err != nil {
				t.Fatalf("the edited graph is not valid input any more (the finding needs new edits): %v", err)
			}
			_, err = Build(m, Options{})
			var bug *ir.InternalError
			if err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build: %v, want an input error containing %q", err, c.want)
			}
		})
	}
}
