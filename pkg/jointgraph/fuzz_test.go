package jointgraph

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// FuzzJoint: no graph that decodes and verifies makes Build or Split
// panic or hang, and on a valid graph (package validate) neither fails
// with an internal error: what Build cannot handle in a valid graph it
// refuses with an input error.
func FuzzJoint(f *testing.F) {
	// Seeds: the shipped models and HOP graphs, and the real HOP traces
	// (torch 1.13, 2.6, 2.14, Dynamo) under 64 KiB, these also with their
	// placeholders requiring grad (mode bit 0), which is where the HOP
	// backwards are built.
	for _, pat := range []string{"../../testdata/models/*.pb", "../../testdata/hops/*.pbtxt", "../../testdata/hops_real/*.pb", "../../testdata/hops_real/*/*.pb", "../../testdata/hops_real/*/*/*.pb"} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil && len(data) < 64<<10 {
				f.Add(data, filepath.Ext(p) == ".pbtxt", uint8(0))
				if strings.Contains(p, "hops_real") {
					f.Add(data, false, uint8(1))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, text bool, mode uint8) {
		enc := ir.Binary
		if text {
			enc = ir.Text
		}
		m, err := ir.Decode(data, enc, "fuzz")
		if err != nil || ir.Verify(m, "fuzz") != nil {
			return
		}
		g := m.Root()
		for _, id := range g.Placeholders() {
			if tm := valueTensor(g.Nodes[id].Val); tm != nil && mode&1 != 0 {
				c := *tm
				c.RequiresGrad = true
				g.Nodes[id].Val = tensorValue(&c)
			}
		}
		reg, err := load.Registry(m, "fuzz")
		valid := err == nil && validate.Check(m, "fuzz", reg) == nil
		var bug *ir.InternalError
		j, err := Build(m, Options{MaskMode: MaskMode(mode>>1) % 2, Convention: Convention(mode>>2) % 3})
		if valid && errors.As(err, &bug) {
			t.Fatalf("Build on a valid graph: %v\n%s", err, bug.Stack)
		}
		if err != nil {
			return
		}
		if err := ir.Verify(j.Module, "joint"); err != nil {
			t.Fatalf("joint does not verify: %v", err)
		}
		if j.Convention == ConventionNone {
			p, err := Split(j, PartitionMode(mode>>4)%2)
			if valid && errors.As(err, &bug) {
				t.Fatalf("Split on a valid graph: %v\n%s", err, bug.Stack)
			}
			if err != nil {
				return
			}
			for _, pm := range []*ir.Module{p.Forward, p.Backward} {
				if err := ir.Verify(pm, "part"); err != nil {
					t.Fatalf("partition does not verify: %v", err)
				}
			}
		}
	})
}
