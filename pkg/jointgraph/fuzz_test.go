package jointgraph_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/fuzzedit"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
)

// fuzzSeedGlobs are the graphs the joint fuzz targets start from: the
// shipped models and HOP graphs, and the real HOP traces (torch 1.13,
// 2.6, 2.14, Dynamo, the joint corpus).
var fuzzSeedGlobs = []string{"../../testdata/models/*.pb", "../../testdata/hops/*.pbtxt", "../../testdata/hops_real/*.pb", "../../testdata/hops_real/*/*.pb", "../../testdata/hops_real/*/*/*.pb"}

// fuzzSeedFiles are the seed graphs under 64 KiB, by path.
func fuzzSeedFiles() (paths []string, data [][]byte) {
	for _, pat := range fuzzSeedGlobs {
		ps, _ := filepath.Glob(pat)
		for _, p := range ps {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				paths, data = append(paths, p), append(data, b)
			}
		}
	}
	return paths, data
}

// FuzzJoint: no graph that decodes and verifies makes Build or Split
// panic or hang, and on a valid graph (package validate) neither fails
// with an internal error: what Build cannot handle in a valid graph it
// refuses with an input error. Seeds: the seed graphs, the real HOP traces
// also with their placeholders requiring grad (mode bit 0), which is where
// the HOP backwards are built.
func FuzzJoint(f *testing.F) {
	paths, data := fuzzSeedFiles()
	for i, p := range paths {
		f.Add(data[i], filepath.Ext(p) == ".pbtxt", uint8(0))
		if strings.Contains(p, "hops_real") {
			f.Add(data[i], false, uint8(1))
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
		fuzzJoint(t, m, mode)
	})
}

// FuzzJointEdits is FuzzJoint on the seed graphs edited node by node
// (internal/fuzzedit: arguments pointed elsewhere, ints such as dimensions
// set to small signed values, values and requires_grad changed), which
// reaches the derivative formulas and HOP backwards far more often than
// flipped bytes.
//
// Nodes without values and values that disagree made the formulas panic
// within seconds (it ran only when asked); they are refused now
// (precheck, Ctx.dim, builder.dim; TestJointEditsFindings keeps each
// finding), and two runs of 5 minutes (170,000 executions each) found
// nothing more, so it runs in `make fuzz-short` like the others.
func FuzzJointEdits(f *testing.F) {
	paths, _ := fuzzSeedFiles()
	var seeds []*ir.Module
	for _, p := range paths {
		m, err := ir.LoadFile(p)
		if err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		seeds = append(seeds, m)
	}
	for i := range seeds {
		f.Add(uint16(i), uint8(1), []byte{})
	}
	f.Fuzz(func(t *testing.T, seed uint16, mode uint8, edits []byte) {
		if len(edits) > 64 {
			return
		}
		data, err := ir.Encode(seeds[int(seed)%len(seeds)], ir.Binary)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Decode(data, ir.Binary, "seed")
		if err != nil {
			t.Fatal(err)
		}
		fuzzedit.Apply(m, edits)
		// Re-encode so the edits' references by name resolve.
		if data, err = ir.Encode(m, ir.Binary); err != nil {
			return
		}
		if m, err = ir.Decode(data, ir.Binary, "fuzz"); err != nil || ir.Verify(m, "fuzz") != nil {
			return
		}
		fuzzJoint(t, m, mode)
	})
}

// fuzzJoint builds and partitions m in the options mode selects (bit 0:
// every placeholder requires grad; then the mask mode, the convention,
// the partition mode), failing on an internal error on a valid module
// and on an output of a valid module that does not verify.
func fuzzJoint(t *testing.T, m *ir.Module, mode uint8) {
	g := m.Root()
	for _, id := range g.Placeholders() {
		if v := g.Nodes[id].Val; v != nil && v.Kind == ir.ValTensor && mode&1 != 0 {
			c := *v.Tensor
			c.RequiresGrad = true
			g.Nodes[id].Val = &ir.Value{Kind: ir.ValTensor, Tensor: &c}
		}
	}
	reg, err := load.Registry(m, "fuzz")
	valid := err == nil && validate.Check(m, "fuzz", reg) == nil
	var bug *ir.InternalError
	j, err := jointgraph.Build(m, jointgraph.Options{MaskMode: jointgraph.MaskMode(mode>>1) % 2, Convention: jointgraph.Convention(mode>>2) % 3})
	if valid && errors.As(err, &bug) {
		t.Fatalf("Build on a valid graph: %v\n%s", err, bug.Stack)
	}
	if err != nil || !valid {
		// Commands build joints of valid input only (package load): on
		// invalid input Build must not panic or hang, and what it
		// returns is not checked (a Tensor argument given a tuple of
		// nodes left references to them dangling).
		return
	}
	if err := ir.Verify(j.Module, "joint"); err != nil {
		t.Fatalf("joint does not verify: %v", err)
	}
	if j.Convention == jointgraph.ConventionNone {
		p, err := partition.Split(j, partition.Mode(mode>>4)%2)
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
}
