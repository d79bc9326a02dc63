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
			_, err := Build(loadRequiringGrad(t, c.path), Options{})
			var bug *ir.InternalError
			if err == nil || errors.As(err, &bug) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build: %v, want an input error containing %q", err, c.want)
			}
		})
	}
}
