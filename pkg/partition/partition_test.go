package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/graph/network"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/synth"
)

// TestPartitionStructure checks both partitioners on every corpus model:
// the forward takes the primals and returns the outputs then the saved
// values; the backward takes the saved values then the tangents and
// returns one gradient per primal; both verify; min-cut saves no more
// bytes than the default partition.
func TestPartitionStructure(t *testing.T) {
	for _, name := range corpusModels {
		t.Run(name, func(t *testing.T) {
			j := build(t, loadModel(t, name), jointgraph.Options{})
			bytes := map[Mode]int64{}
			for _, mode := range []Mode{Default, MinCut} {
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
				var savedBytes int64
				for _, s := range p.Saved() {
					saved = append(saved, s.Name)
					savedBytes += max(s.Bytes, 0)
				}
				if p.NumSaved() != len(saved) || p.TotalBytes() != savedBytes {
					t.Errorf("%s: NumSaved %d, TotalBytes %d; the saved values: %d, %d bytes", mode, p.NumSaved(), p.TotalBytes(), len(saved), savedBytes)
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
			if bytes[MinCut] > bytes[Default] {
				t.Errorf("min-cut saves %d bytes, default %d", bytes[MinCut], bytes[Default])
			}
		})
	}
}

// TestMinCutRecomputes: on mlp min-cut recomputes gelu in the backward
// instead of saving it.
func TestMinCutRecomputes(t *testing.T) {
	j := build(t, loadModel(t, "mlp"), jointgraph.Options{})
	p, err := Split(j, MinCut)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Saved() {
		if s.Name == "gelu" {
			t.Error("min-cut saves gelu")
		}
	}
	if _, ok := p.Backward.Root().Lookup("gelu"); !ok {
		t.Error("the backward does not recompute gelu")
	}
	d, _ := Split(j, Default)
	if !slices.ContainsFunc(d.Saved(), func(s SavedValue) bool { return s.Name == "gelu" }) {
		t.Error("the default partition does not save gelu")
	}
}

func TestPartitionNeedsDefaultConvention(t *testing.T) {
	j := build(t, loadModel(t, "mlp"), jointgraph.Options{Convention: jointgraph.ConventionCreateBwFn})
	if _, err := Split(j, Default); err == nil {
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

// TestCutNetMatchesFlowNet compares min-cut's network solver (cutNet)
// with flowNet on random networks of its shape: the same sink side when
// the flow is bounded, none (nil) when it is not. Capacities include 0 and
// flowInf; edges mostly go to later nodes, some to earlier ones.
func TestCutNetMatchesFlowNet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	unbounded := 0
	for trial := range 2000 {
		k := 1 + r.IntN(12)
		var ints pool[int32]
		var bools pool[bool]
		ws := make([]int64, k)
		g := newCutNet(ws, 4*k, &ints, &bools)
		net := newFlowNet(2*k + 2)
		s, sink := 2*k, 2*k+1
		for i := range k {
			w := int64(r.IntN(6))
			if r.IntN(6) == 0 {
				w = flowInf
			}
			src, toSink := r.IntN(3) == 0, r.IntN(3) == 0
			ws[i] = w
			g.addNode(src, toSink)
			if src {
				net.addEdge(s, 2*i, flowInf)
			}
			if toSink {
				net.addEdge(2*i+1, sink, flowInf)
			}
			net.addEdge(2*i, 2*i+1, w)
			seen := map[int]bool{}
			for range r.IntN(4) {
				j := i + 1 + r.IntN(k)
				if j >= k || r.IntN(8) == 0 {
					j = r.IntN(k)
				}
				if j == i || seen[j] {
					continue
				}
				seen[j] = true
				g.addEdge(int32(j))
				net.addEdge(2*i+1, 2*j, flowInf)
			}
		}
		got := g.sinkSide()
		flow := net.maxFlow(s, sink)
		if flow >= flowInf {
			unbounded++
			if got != nil {
				t.Fatalf("trial %d: unbounded flow, but cutNet found a cut", trial)
			}
			continue
		}
		if want := net.sinkSide(sink); !slices.Equal(got, want) {
			t.Fatalf("trial %d: sink side %v, flowNet's %v", trial, got, want)
		}
	}
	if unbounded == 0 || unbounded > 1000 {
		t.Errorf("%d of 2000 networks unbounded: want some, not most", unbounded)
	}
}

// TestSplitKeepsJoint: Split only reads the joint graph (min-cut's CSE
// used to rewrite its arguments in place), so one joint can be split
// twice, and written after it was split.
func TestSplitKeepsJoint(t *testing.T) {
	for _, name := range corpusModels {
		j := build(t, loadModel(t, name), jointgraph.Options{})
		before, err := ir.Encode(j.Module, ir.Binary)
		if err != nil {
			t.Fatal(err)
		}
		var saved [2][]SavedValue
		for k := range saved {
			p, err := Split(j, MinCut)
			if err != nil {
				t.Fatal(err)
			}
			saved[k] = p.Saved()
		}
		after, _ := ir.Encode(j.Module, ir.Binary)
		if !slices.Equal(before, after) {
			t.Errorf("%s: Split changed the joint graph", name)
		}
		if err := ir.Verify(j.Module, name); err != nil {
			t.Errorf("%s: joint after Split: %v", name, err)
		}
		if len(saved[0]) != len(saved[1]) {
			t.Errorf("%s: the second split saves %d values, the first %d", name, len(saved[1]), len(saved[0]))
		}
	}
}

// TestSynthGraphs: the scaling benchmarks' graphs (pkg/synth, without
// HOPs) differentiate and partition into graphs that verify.
func TestSynthGraphs(t *testing.T) {
	for seed := range uint64(3) {
		m := synth.Generate(synth.Options{Nodes: 3000, Seed: seed + 1})
		j, err := jointgraph.Build(m, jointgraph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(j.Module, "joint"); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Default, MinCut} {
			p, err := Split(j, mode)
			if err != nil {
				t.Fatal(err)
			}
			for _, pm := range []*ir.Module{p.Forward, p.Backward} {
				if err := ir.Verify(pm, mode.String()); err != nil {
					t.Fatalf("seed %d %s: %v", seed+1, mode, err)
				}
			}
		}
	}
}

// TestMinCutMergedSinkEqualsFullNetwork checks the min-cut's network, with
// the backward merged into the sink, against AOTAutograd's construction
// (every node split in two, the backward's joined to the sink): the same
// saved values on the real models, the HOP graphs and synthetic graphs.
func TestMinCutMergedSinkEqualsFullNetwork(t *testing.T) {
	var mods []*ir.Module
	var names []string
	paths, _ := filepath.Glob("../../testdata/models/*.pb")
	for _, p := range paths {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		mods, names = append(mods, m), append(names, filepath.Base(p))
	}
	for seed := range uint64(3) {
		mods = append(mods, synth.Generate(synth.Options{Nodes: 5000, Seed: seed + 1}))
		names = append(names, fmt.Sprintf("synth seed %d", seed+1))
	}
	for i, m := range mods {
		for _, unmask := range []bool{false, true} {
			j, err := jointgraph.Build(m, jointgraph.Options{UnmaskNoneGradients: unmask})
			if err != nil {
				t.Fatalf("%s: %v", names[i], err)
			}
			merged := newPartitioner(j.Module.Root(), j, true).minCutSaved()
			full := newPartitioner(j.Module.Root(), j, true)
			full.fullNetwork = true
			if want := full.minCutSaved(); !slices.Equal(merged, want) {
				t.Errorf("%s (unmask %v): saved %v, the full network saves %v", names[i], unmask, merged, want)
			}
		}
	}
}

// TestSplitLazyEncodesAsSplit: the forward and backward graphs SplitLazy
// reads from the joint in place encode to the bytes Split's copies do, in
// all three encodings, and every reference resolves where the copy's
// points — on every model of testdata/models, the HOP graphs and
// synthetic graphs (with HOPs), for both partitioners. It also checks the
// cases exist that renaming covers: a reference to a node CSE merged, and
// a constant fill.
func TestSplitLazyEncodesAsSplit(t *testing.T) {
	var mods []*ir.Module
	var names []string
	paths, _ := filepath.Glob("../../testdata/models/*.pb")
	hops, _ := filepath.Glob("../../testdata/hops/*.pbtxt")
	for _, p := range append(paths, hops...) {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		mods, names = append(mods, m), append(names, filepath.Base(p))
	}
	for seed := range uint64(2) {
		mods = append(mods, synth.Generate(synth.Options{Nodes: 3000, Seed: seed + 1, HOPs: seed == 1}))
		names = append(names, fmt.Sprintf("synth seed %d", seed+1))
	}
	renamed, fills := 0, 0
	for i, m := range mods {
		j, err := jointgraph.Build(m, jointgraph.Options{})
		if err != nil {
			continue // a HOP graph the joint refuses (its own tests)
		}
		for _, mode := range []Mode{Default, MinCut} {
			p, err := Split(j, mode)
			if err != nil {
				continue
			}
			lazy, err := SplitLazy(j, mode)
			if err != nil {
				t.Fatalf("%s %s: SplitLazy: %v, Split succeeded", names[i], mode, err)
			}
			for _, backward := range []bool{false, true} {
				want, wantNodes := p.Source(backward)
				shell, nodes := lazy.Source(backward)
				g := want.Root()
				if wantNodes.Len() != len(g.Nodes) || nodes.Len() != len(g.Nodes) {
					t.Fatalf("%s %s: %d nodes in place, %d copied", names[i], mode, nodes.Len(), len(g.Nodes))
				}
				if e := lazy.fw; backward {
					fills += len(lazy.bw.fills)
				} else {
					fills += len(e.fills)
				}
				type ref struct {
					id   ir.NodeID
					name string
				}
				for k := range g.Nodes {
					var got []ref
					nodes.Node(k).WalkRefs(func(a *ir.Arg) {
						id, name := nodes.Ref(a)
						if name != a.S {
							renamed++
						}
						got = append(got, ref{id, name})
					})
					var copied []ref
					g.Nodes[k].WalkRefs(func(a *ir.Arg) { copied = append(copied, ref{a.Ref, a.S}) })
					if !slices.Equal(got, copied) {
						t.Fatalf("%s %s: node %s: references %v in place, %v copied", names[i], mode, g.Nodes[k].Name, got, copied)
					}
				}
				for _, enc := range []ir.Encoding{ir.Binary, ir.JSON, ir.Text} {
					a, err := ir.Encode(want, enc)
					if err != nil {
						t.Fatal(err)
					}
					b, err := ir.EncodeSource(shell, nodes, enc)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("%s %s backward=%v %s: in place %d bytes, copied %d bytes, differ", names[i], mode, backward, enc, len(b), len(a))
					}
				}
			}
		}
	}
	if renamed == 0 || fills == 0 {
		t.Errorf("the graphs cover %d references renamed (CSE) and %d constant fills; want some of both", renamed, fills)
	}
}

// TestPlaceholdersInPlace: an emission's placeholders, read in place from
// the joint (the forward's primals) or made, are the nodes prepare used to
// make of every input — its name as name and target, its value and
// metadata, nothing else — on synthetic joints for both partitioners, and
// on inputs whose joint node has another target or arguments.
func TestPlaceholdersInPlace(t *testing.T) {
	check := func(what string, p *partitioner, e *emission) {
		t.Helper()
		for k, c := range e.sp.inputs {
			nd := p.nd(c)
			want := ir.Node{Name: nd.Name, Op: ir.OpPlaceholder, Target: nd.Name, Val: nd.Val, Meta: nd.Meta}
			got := e.Node(k)
			if !reflect.DeepEqual(*got, want) || got.Val != nd.Val || got.Meta != nd.Meta {
				t.Fatalf("%s: placeholder %d is %+v, want %+v", what, k, *got, want)
			}
		}
	}
	inPlace, made := 0, 0
	for seed := range uint64(2) {
		j, err := jointgraph.Build(synth.Generate(synth.Options{Nodes: 3000, Seed: seed + 1, HOPs: seed == 1}), jointgraph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Default, MinCut} {
			lazy, err := SplitLazy(j, mode)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []*emission{lazy.fw, lazy.bw} {
				check(fmt.Sprintf("seed %d %s", seed+1, mode), lazy.p, e)
				if e.ph == nil {
					inPlace++
				} else {
					made++
				}
			}
		}
	}
	if inPlace == 0 || made == 0 {
		t.Fatalf("%d emissions with placeholders in place, %d made: both cases must be covered", inPlace, made)
	}
	ref := ir.Arg{Kind: ir.ArgNode, S: "x"}
	g := &ir.Graph{Nodes: []ir.Node{
		{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 2)},
		{Name: "y", Op: ir.OpPlaceholder, Target: "input_y", Val: f32(true, 3)},
		{Name: "z", Op: ir.OpCallFunction, Target: "aten.neg.default", Args: []ir.Arg{ref}, Val: f32(true, 2)},
	}}
	p := &partitioner{g: g, n: len(g.Nodes)}
	for _, inputs := range [][]int32{{0}, {0, 1}, {2, 0}} {
		sp := &subgraphPlan{inputs: inputs, isIn: make([]bool, len(g.Nodes)), live: make([]bool, len(g.Nodes))}
		for _, c := range inputs {
			sp.isIn[c] = true
		}
		e := p.prepare(sp)
		if want := len(inputs) == 1; (e.ph == nil) != want {
			t.Errorf("inputs %v: placeholders in place %v, want %v", inputs, e.ph == nil, want)
		}
		check(fmt.Sprintf("inputs %v", inputs), p, e)
	}
}
