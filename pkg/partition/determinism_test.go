package partition

import (
	"bytes"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
)

// TestDeterministic: two builds and min-cut partitions of a model are
// byte for byte equal.
func TestDeterministic(t *testing.T) {
	for _, name := range []string{"attention", "inplace_views"} {
		var prev []byte
		for range 2 {
			j := build(t, loadModel(t, name), jointgraph.Options{})
			p, err := Split(j, MinCut)
			if err != nil {
				t.Fatal(err)
			}
			var b []byte
			for _, m := range []*ir.Module{j.Module, p.Forward, p.Backward} {
				e, err := ir.Encode(m, ir.Binary)
				if err != nil {
					t.Fatal(err)
				}
				b = append(b, e...)
			}
			if prev != nil && !bytes.Equal(prev, b) {
				t.Errorf("%s: two builds differ", name)
			}
			prev = b
		}
	}
}
