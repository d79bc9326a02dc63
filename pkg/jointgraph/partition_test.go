package jointgraph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/graph/network"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestPartitionStructure checks both partitioners on every corpus model:
// the forward takes the primals and returns the outputs then the saved
// values; the backward takes the saved values then the tangents and
// returns one gradient per primal; both verify; min-cut saves no more
// bytes than the default partition.
func TestPartitionStructure(t *testing.T) {
	for _, name := range corpusModels {
		t.Run(name, func(t *testing.T) {
			j := build(t, loadModel(t, name), Options{})
			bytes := map[PartitionMode]int64{}
			for _, mode := range []PartitionMode{PartitionDefault, PartitionMinCut} {
				p, err := Split(j, mode)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []*ir.Module{p.Forward, p.Backward} {
					if err := ir.Verify(m, mode.String()); err != nil {
						t.Fatalf("%s: %v", mode, err)
					}
					checkRefs(t, m)
				}
				fw, bw := p.Forward.Root(), p.Backward.Root()
				jph := placeholderNames(j.Module.Root())
				if got := placeholderNames(fw); !slices.Equal(got, jph[:j.NumPrimals]) {
					t.Errorf("%s: forward placeholders %v", mode, got)
				}
				var saved []string
				for _, s := range p.Saved {
					saved = append(saved, s.Name)
				}
				if got := placeholderNames(bw); !slices.Equal(got, slices.Concat(saved, jph[j.NumPrimals:])) {
					t.Errorf("%s: backward placeholders %v, want saved %v then tangents", mode, got, saved)
				}
				fouts := outputElems(fw)
				if len(fouts) != j.NumFwdOutputs+len(saved) {
					t.Errorf("%s: forward returns %d values, want %d outputs + %d saved", mode, len(fouts), j.NumFwdOutputs, len(saved))
				}
				for k, s := range saved {
					if a := fouts[j.NumFwdOutputs+k]; a.S != s {
						t.Errorf("%s: forward output %d is %s, want saved %s", mode, j.NumFwdOutputs+k, a.S, s)
					}
				}
				if n := len(outputElems(bw)); n != j.NumPrimals {
					t.Errorf("%s: backward returns %d values, want %d", mode, n, j.NumPrimals)
				}
				// The write-back copy_ stays in the forward.
				for _, e := range j.Effects {
					if _, ok := fw.Lookup(e); !ok {
						t.Errorf("%s: side-effecting node %s is not in the forward", mode, e)
					}
					if _, ok := bw.Lookup(e); ok {
						t.Errorf("%s: side-effecting node %s is in the backward", mode, e)
					}
				}
				bytes[mode] = p.TotalBytes()
			}
			if bytes[PartitionMinCut] > bytes[PartitionDefault] {
				t.Errorf("min-cut saves %d bytes, default %d", bytes[PartitionMinCut], bytes[PartitionDefault])
			}
		})
	}
}

// TestMinCutRecomputes: on mlp min-cut recomputes gelu in the backward
// instead of saving it.
func TestMinCutRecomputes(t *testing.T) {
	j := build(t, loadModel(t, "mlp"), Options{})
	p, err := Split(j, PartitionMinCut)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Saved {
		if s.Name == "gelu" {
			t.Error("min-cut saves gelu")
		}
	}
	if _, ok := p.Backward.Root().Lookup("gelu"); !ok {
		t.Error("the backward does not recompute gelu")
	}
	d, _ := Split(j, PartitionDefault)
	if !slices.ContainsFunc(d.Saved, func(s SavedValue) bool { return s.Name == "gelu" }) {
		t.Error("the default partition does not save gelu")
	}
}

func TestPartitionNeedsDefaultConvention(t *testing.T) {
	j := build(t, loadModel(t, "mlp"), Options{Convention: ConventionCreateBwFn})
	if _, err := Split(j, PartitionDefault); err == nil {
		t.Error("partitioning a create_bw_fn joint succeeded")
	}
}

// TestMaxFlowMatchesGonum compares the partitioner's max-flow with gonum's
// network.MaxFlowDinic on random graphs.
func TestMaxFlowMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 2 + r.IntN(12)
		net := newFlowNet(n)
		g := simple.NewWeightedDirectedGraph(0, 0)
		type edge struct {
			u, v int
			c    int64
		}
		var edges []edge
		for i := range n {
			g.AddNode(simple.Node(i))
		}
		for range r.IntN(4 * n) {
			u, v := r.IntN(n), r.IntN(n)
			if u == v || g.HasEdgeFromTo(int64(u), int64(v)) {
				continue
			}
			c := int64(r.IntN(20))
			net.addEdge(u, v, c)
			edges = append(edges, edge{u, v, c})
			g.SetWeightedEdge(g.NewWeightedEdge(simple.Node(u), simple.Node(v), float64(c)))
		}
		got := net.maxFlow(0, n-1)
		want := network.MaxFlowDinic(g, simple.Node(0), simple.Node(n-1), 0)
		if float64(got) != want {
			t.Fatalf("trial %d: max flow %d, gonum %g", trial, got, want)
		}
		// The cut separates source and sink, and its capacity is the flow.
		side := net.sinkSide(n - 1)
		if side[0] {
			t.Fatalf("trial %d: the source is on the sink side", trial)
		}
		var cut int64
		for _, e := range edges {
			if !side[e.u] && side[e.v] {
				cut += e.c
			}
		}
		if cut != got {
			t.Fatalf("trial %d: cut capacity %d, flow %d", trial, cut, got)
		}
	}
}
