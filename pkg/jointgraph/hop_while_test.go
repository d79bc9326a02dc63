package jointgraph

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// whileCorpus is what testdata/hops_real/joint/joint.json records for the
// while_loop programs and the programs with in-place ops in HOP bodies
// (python/tools/hop_joint_corpus.py, torch 2.14).
type whileCorpus struct {
	Programs map[string]struct {
		Test         string              `json:"pytorch_test"`
		TraceInPlace map[string][]string `json:"trace_inplace"`
		AOTInPlace   map[string][]string `json:"aot_inplace"`
		TorchJoint   *struct {
			WhileLoops []whileCall `json:"while_loops"`
		} `json:"torch_joint"`
	} `json:"programs"`
}

type whileCall struct {
	Op          string `json:"op"`
	Carried     int    `json:"carried"`
	Additional  int    `json:"additional"`
	BodyOutputs int    `json:"body_outputs"`
}

func loadWhileCorpus(t *testing.T) *whileCorpus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(jointCorpusDir, "joint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c whileCorpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// whileCalls returns the while_loop calls of g with their counts.
func whileCalls(m *ir.Module, g *ir.Graph) []whileCall {
	var out []whileCall
	for i := range g.Nodes {
		n := &g.Nodes[i]
		name, ok := strings.CutPrefix(n.Target, "higher_order.")
		if !ok || (name != "while_loop" && name != "while_loop_stack_output") || len(n.Args) != 4 {
			continue
		}
		c := whileCall{Op: name, Carried: len(n.Args[2].Elems()), Additional: len(n.Args[3].Elems())}
		if body := m.Graph(g.Nodes[n.Args[1].Ref].Target); body != nil {
			if o := body.OutputNode(); o != ir.NoNode {
				c.BodyOutputs = len(body.Nodes[o].Args[0].Elems())
			}
		}
		out = append(out, c)
	}
	return out
}

// TestWhileLoopBackwardRealTraces: on PyTorch's while_loop programs traced
// by torch 2.14 with grad, hopctl's joint has torch's structure: the
// forward's while_loop_stack_output, then one backward while_loop over
// (idx, *grad_carries, *grad_additional_inputs) with (*fw_carries,
// *additional_inputs), the same counts torch's make_fx joint has (int
// carries get no gradient slot). The gradients are checked in torch by
// python/tests/test_hop_joint.py.
func TestWhileLoopBackwardRealTraces(t *testing.T) {
	c := loadWhileCorpus(t)
	n := 0
	for name, p := range c.Programs {
		if p.TorchJoint == nil || len(p.TorchJoint.WhileLoops) == 0 {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			m := loadReal(t, name)
			if got := whileCalls(m, m.Root()); len(got) != 1 || got[0].Op != "while_loop_stack_output" {
				t.Fatalf("%s: the trace's loops are %v, want one while_loop_stack_output (make_fx with grad)", p.Test, got)
			}
			j := build(t, m, Options{File: name})
			got := whileCalls(j.Module, j.Module.Root())
			if !slices.Equal(got, p.TorchJoint.WhileLoops) {
				t.Errorf("%s: while_loop calls\n torch  %+v\n hopctl %+v", p.Test, p.TorchJoint.WhileLoops, got)
			}
		})
	}
	if n < 5 {
		t.Fatalf("%d while_loop programs in the corpus", n)
	}
}

// A stacked output used other than through its last element (the trigger:
// the stacked carries returned themselves) is refused, naming the node;
// the make_fx trace (near miss) is differentiated.
func TestWhileLoopStackedOutputUsed(t *testing.T) {
	m := loadReal(t, "while_simple")
	build(t, m, Options{File: "while_simple"})
	g := m.Root()
	o := g.OutputNode()
	var stacked ir.NodeID = ir.NoNode
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Target == "_operator.getitem" && g.Nodes[n.Args[0].Ref].Target == whileStackTarget {
			stacked = ir.NodeID(i)
		}
	}
	if stacked == ir.NoNode {
		t.Fatal("no stacked output in the trace")
	}
	out := g.Nodes[o].Args[0].Clone()
	out.SetElems(append(out.Elems(), ir.NodeArg(stacked, g.Nodes[stacked].Name)))
	g.Nodes[o].Args = []ir.Arg{out}
	_, err := Build(m, Options{File: "while_simple"})
	if err == nil || !strings.Contains(err.Error(), "used other than through its last element") {
		t.Fatalf("a stacked output returned: %v", err)
	}
}

// torch 2.6 has no autograd for while_loop (version row
// while-loop-grad-2.6): the same trace recorded as 2.6's is refused with
// 2.6's message (python/tests/test_hop_joint.py compares it with 2.6's own
// refusal); as 2.14's it is differentiated.
func TestWhileLoopBackwardTorch26(t *testing.T) {
	for _, v := range []string{"2.6.0", "2.14.1"} {
		m := loadReal(t, "while_linear")
		m.TorchVersion = v
		_, err := Build(m, Options{})
		if refused := err != nil && strings.Contains(err.Error(), whileGradMessage26); refused != (v == "2.6.0") {
			t.Errorf("torch %s: %v", v, err)
		}
	}
}

// inPlaceOps returns the ops of m's subgraphs (not its root) that write an
// argument, by subgraph.
func inPlaceOps(m *ir.Module) map[string][]string {
	out := map[string][]string{}
	for _, g := range m.Graphs[1:] {
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if n.Op != ir.OpCallFunction {
				continue
			}
			if s, ok := builtinSchema(n.Target); ok && len(s.MutatedArguments()) > 0 && !slices.Contains(out[g.Name], n.Target) {
				out[g.Name] = append(out[g.Name], n.Target)
			}
		}
		sort.Strings(out[g.Name])
		if len(out[g.Name]) == 0 {
			delete(out, g.Name)
		}
	}
	return out
}

// TestHOPBodiesFunctionalized: the real traces whose HOP bodies make
// in-place ops on values they create (the triggers: the trace's bodies
// have them, as recorded from torch) get joints whose subgraphs have none,
// as the graphs AOTAutograd compiles for the same programs have none
// (aot_inplace); a trace without any (the near miss) keeps its bodies.
func TestHOPBodiesFunctionalized(t *testing.T) {
	c := loadWhileCorpus(t)
	triggers := 0
	for name, p := range c.Programs {
		if p.AOTInPlace == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := loadReal(t, name)
			trace := inPlaceOps(m)
			want := p.TraceInPlace
			if want == nil {
				want = map[string][]string{}
			}
			if !mapsEqual(trace, want) {
				t.Fatalf("in-place ops of the trace: hopctl reads %v, torch recorded %v", trace, want)
			}
			if len(trace) > 0 {
				triggers++
			}
			j := build(t, m, Options{File: name})
			if got := inPlaceOps(j.Module); len(got) > 0 || len(p.AOTInPlace) > 0 {
				t.Errorf("%s: in-place ops in the joint's subgraphs: hopctl %v, AOTAutograd %v", p.Test, got, p.AOTInPlace)
			}
		})
	}
	if triggers < 3 {
		t.Fatalf("%d programs with in-place ops in their bodies", triggers)
	}
	// Near miss: bodies without in-place ops are kept as they are (the
	// same nodes).
	m := loadReal(t, "while_simple")
	j := build(t, m, Options{File: "while_simple"})
	for _, name := range []string{"while_loop_body_graph_0", "while_loop_cond_graph_0"} {
		if a, b := m.Graph(name), j.Module.Graph(name); a == nil || b == nil || &a.Nodes[0] != &b.Nodes[0] {
			t.Errorf("%s: not the trace's own graph in the joint", name)
		}
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// A while_loop call whose operands require grad (the hand-written
// testdata/hops/while_loop.pbtxt, torch's make_fx trace of
// hops_testdata.py's p_while_loop without grad, its float inputs marked
// requiring grad: how Dynamo-level and hand-written graphs call it) is
// rewritten to while_loop_stack_output in the joint's forward, then
// differentiated as make_fx's trace is; without grad (near miss) it is
// copied as it is.
func TestWhileLoopRewrittenToStackOutput(t *testing.T) {
	for _, rg := range []bool{true, false} {
		m, err := ir.Load("../../testdata/hops/while_loop.pbtxt")
		if err != nil {
			t.Fatal(err)
		}
		g := m.Root()
		for _, p := range g.Placeholders() {
			if v := g.Nodes[p].Val; v != nil && v.Kind == ir.ValTensor && isFloatingDtype(v.Tensor.Dtype) {
				c := v.Clone()
				c.Tensor.RequiresGrad = rg
				g.Nodes[p].Val = c
			}
		}
		j := build(t, m, Options{File: "while_loop.pbtxt"})
		if err := ir.Verify(j.Module, "joint"); err != nil {
			t.Fatal(err)
		}
		got := whileCalls(j.Module, j.Module.Root())
		want := []whileCall{{Op: "while_loop", Carried: 2, Additional: 1, BodyOutputs: 2}}
		if rg {
			// (i, x) carried, w additional: the backward carries idx and
			// the gradients of x and w, and reads (fw_i, fw_x, w).
			want = []whileCall{{Op: "while_loop_stack_output", Carried: 2, Additional: 1, BodyOutputs: 2},
				{Op: "while_loop", Carried: 3, Additional: 3, BodyOutputs: 3}}
		}
		if !slices.Equal(got, want) {
			t.Errorf("requires_grad %v: while_loop calls %+v, want %+v", rg, got, want)
		}
	}
}
