package jointgraph

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// loadHOP loads a testdata/hops graph with every floating input marked
// requires_grad (the files carry no requires_grad).
func loadHOP(t *testing.T, name string) *ir.Module {
	t.Helper()
	return loadRequiringGrad(t, filepath.Join("../../testdata/hops", name+".pbtxt"))
}

func dump(t *testing.T, m *ir.Module) string {
	var b bytes.Buffer
	if err := ir.PrintReadable(&b, m); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HOPCTL_DUMP") != "" {
		t.Log("\n" + b.String())
	}
	return b.String()
}

func TestHOPCond(t *testing.T) {
	j := build(t, loadHOP(t, "cond"), Options{})
	g := j.Module.Root()
	var names []string
	for _, h := range j.Module.Graphs[1:] {
		names = append(names, h.Name)
	}
	if !slices.Equal(names, []string{"false_graph_0", "false_graph_1", "true_graph_0", "true_graph_1"}) {
		t.Errorf("subgraphs %v", names)
	}
	var conds []string
	for i := range g.Nodes {
		if g.Nodes[i].Target == "higher_order.cond" {
			conds = append(conds, ir.FormatNode(g, ir.NodeID(i)))
		}
	}
	if len(conds) != 2 || !strings.Contains(conds[1], "[%primals_1, %primals_2, %tangents_1]") {
		t.Errorf("cond calls:\n%s", strings.Join(conds, "\n"))
	}
	tb := j.Module.Graph("true_graph_1")
	if got := placeholderNames(tb); !slices.Equal(got, []string{"primals_1", "primals_2", "tangents_1"}) {
		t.Errorf("true_graph_1 placeholders %v (create_bw_fn: primals then tangents)", got)
	}
	if n := len(outputElems(tb)); n != 2 {
		t.Errorf("true_graph_1 returns %d values, want one gradient per operand", n)
	}
	dump(t, j.Module)
}

func TestHOPMap(t *testing.T) {
	j := build(t, loadHOP(t, "map"), Options{})
	bw := j.Module.Graph("body_graph_1")
	if bw == nil {
		t.Fatal("no body_graph_1")
	}
	if got := placeholderNames(bw); !slices.Equal(got, []string{"primals_1", "tangents_1", "primals_2"}) {
		t.Errorf("body_graph_1 placeholders %v, want (*xs, *grads, *pos_args)", got)
	}
	dump(t, j.Module)
}

func TestHOPScan(t *testing.T) {
	j := build(t, loadHOP(t, "scan"), Options{})
	dump(t, j.Module)
	g := j.Module.Root()
	var scans []string
	for i := range g.Nodes {
		if g.Nodes[i].Target == "higher_order.scan" {
			scans = append(scans, ir.FormatNode(g, ir.NodeID(i)))
		}
	}
	if len(scans) != 2 {
		t.Fatalf("scan calls:\n%s", strings.Join(scans, "\n"))
	}
}

// A cond whose branches return different numbers of outputs (torch's
// trace_cond refuses it; the real trace testdata/hops_real/cond_count.pb
// is the trigger of hopctl lint's hop-structure rule) is refused as
// invalid input: the branches' backwards would take different numbers of
// tangents, and the joint hopctl built did not validate (an internal
// error, exit 4, before).
func TestJointCondOutputCountRefused(t *testing.T) {
	m := loadRequiringGrad(t, "../../testdata/hops_real/cond_count.pb")
	_, err := Build(m, Options{File: "cond_count.pb"})
	var ie ir.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "cond branches return different numbers of outputs (true_fn 2, false_fn 1)") {
		t.Fatalf("got %v, want an ir.InputError on the branches' output counts", err)
	}
}

// TestFunctionalBodyLeavesSource: a HOP body with an in-place op is
// functionalized in the joint, and dce removes its dead node: the input
// module's body, whose argument lists the functional graph shares where
// they map to themselves, keeps its references pointing at their nodes
// (dce renumbered the shared lists).
func TestFunctionalBodyLeavesSource(t *testing.T) {
	m := loadHOP(t, "cond")
	tg := m.Graph("true_graph_0")
	// arg0_1, arg1_1, sin, add, output → arg0_1, arg1_1, dead, sin, add,
	// mul_ (in place), output
	nd := tg.Nodes
	dead := ir.Node{Name: "dead", Op: ir.OpCallFunction, Target: "aten.relu.default", Args: []ir.Arg{ref("arg0_1")}, Val: nd[2].Val}
	mul := ir.Node{Name: "mul_", Op: ir.OpCallFunction, Target: "aten.mul_.Tensor", Args: []ir.Arg{ref("add"), ref("arg1_1")}, Val: nd[3].Val}
	out := ir.Node{Name: nd[4].Name, Op: ir.OpOutput, Target: nd[4].Target, Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("mul_")})}}
	tg.Nodes = slices.Concat(nd[:2], []ir.Node{dead}, nd[2:4], []ir.Node{mul, out})
	tg.Reindex()
	for i := range tg.Nodes {
		tg.Nodes[i].WalkRefs(func(a *ir.Arg) { a.Ref, _ = tg.Lookup(a.S) })
	}
	checkRefs(t, m)
	j := build(t, m, Options{})
	if body := j.Module.Graph("true_graph_0"); body == nil || len(body.Nodes) != len(tg.Nodes)-1 {
		t.Fatalf("the joint's true_graph_0 is not the functional body without its dead node")
	}
	checkRefs(t, m)
}
