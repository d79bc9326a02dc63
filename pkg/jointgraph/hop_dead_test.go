package jointgraph

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Dead code beside HOP calls in real traces is removed before
// differentiation (requiresGrad's liveNodes). torch 2.14's make_fx writes
// a dead select_copy(xs, 0, 0) beside associative_scan (the wrapper's
// metadata probe), reading an input that requires grad, and a dead
// empty_strided beside map_impl (MapAutogradOp). hopctl has no derivative
// rule for select_copy: were the dead node differentiated, the joint would
// fail; it builds, and neither node is in it.
func TestDeadCodeBesideHOPsRealTraces(t *testing.T) {
	if _, ok := LookupRule("aten.select_copy.int"); ok {
		t.Fatal("select_copy has a derivative rule: the trigger no longer tests that dead code is not differentiated")
	}
	for name, dead := range map[string]string{"assoc_grad": "aten.select_copy.int", "map_inplace": "aten.empty_strided.default"} {
		t.Run(name, func(t *testing.T) {
			m := loadReal(t, name)
			g := m.Root()
			used := make([]bool, len(g.Nodes))
			for i := range g.Nodes {
				g.Nodes[i].WalkRefs(func(a *ir.Arg) {
					if a.Ref >= 0 {
						used[a.Ref] = true
					}
				})
			}
			found := false
			for i := range g.Nodes {
				if g.Nodes[i].Target == dead {
					found = true
					if used[i] {
						t.Fatalf("the trace's %s is read", g.Nodes[i].Name)
					}
				}
			}
			if !found {
				t.Fatalf("the trace has no %s", dead)
			}
			j := build(t, m, Options{File: name})
			jg := j.Module.Root()
			for i := range jg.Nodes {
				if jg.Nodes[i].Target == dead {
					t.Errorf("the joint keeps %s", jg.Nodes[i].Name)
				}
			}
		})
	}
}
