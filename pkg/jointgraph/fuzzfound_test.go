package jointgraph

import (
	"errors"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
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
						a = &a.Elems[c.elem]
					}
					a.I, node = c.dim, n.Name
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
