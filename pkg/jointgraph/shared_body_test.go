package jointgraph

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestJointSharedHOPBody: a graph whose two map_impl calls share one body
// (python/tools/make_shared_body.py: torch 2.14's trace of
// test_map_functionalized's body mapped twice, the second call pointed at
// the first body; torch computes the same outputs and gradients as with
// two bodies) gets the joint of the traced graph with two bodies: the
// body's backward, cached after the first call, is not rewritten in place
// for the second (permutePlaceholders).
func TestJointSharedHOPBody(t *testing.T) {
	load := func(name string) *ir.Module {
		return loadRequiringGrad(t, "../../testdata/hops_real/shared/"+name+".pb")
	}
	// The backward graphs the joint installs, printed, in order.
	bodies := func(name string) []string {
		j := build(t, load(name), Options{File: name, MaskMode: MasksAll})
		var out []string
		for _, g := range j.Module.Graphs[1:] {
			var b bytes.Buffer
			if err := ir.PrintReadable(&b, &ir.Module{Graphs: []*ir.Graph{g}}); err != nil {
				t.Fatal(err)
			}
			out = append(out, regexp.MustCompile(`class \w+`).ReplaceAllString(b.String(), "class G"))
		}
		return out
	}
	// Each call gets a backward body (a graph taking tangents), equal to
	// the traced two-body graph's.
	backwards := func(gs []string) (out []string) {
		for _, s := range gs {
			if strings.Contains(s, "tangents_1") {
				out = append(out, s)
			}
		}
		return out
	}
	two, shared := backwards(bodies("map_two_bodies")), backwards(bodies("map_shared_body"))
	if len(two) != 2 || len(shared) != 2 {
		t.Fatalf("backward bodies: %d with two bodies, %d with one shared, want 2", len(two), len(shared))
	}
	for k := range two {
		if two[k] != shared[k] {
			t.Errorf("backward body %d differs:\ntwo bodies:\n%s\nshared body:\n%s", k, two[k], shared[k])
		}
	}
}
