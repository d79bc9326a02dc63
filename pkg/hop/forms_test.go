package hop_test

import (
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// TestTorch26InvokeSubgraphForm: torch 2.6's invoke_subgraph(subgraph,
// identifier, operands), its operands one tuple, in real 2.6 traces
// (testdata/hops_real/torch2.6/joint, python/tools/hop_joint_corpus.py), is
// read by the HOP table's older form: the files open as every command
// opens them (validation's hop-call check once refused them), each call's
// subgraph gets the tuple's elements as operands, and a tuple one operand
// short is refused naming the node. torch 2.14's spread form
// (testdata/hops/invoke_subgraph.pbtxt) keeps the current row.
func TestTorch26InvokeSubgraphForm(t *testing.T) {
	for _, name := range []string{"invoke_twice", "invoke_no_grad_operand"} {
		path := "../../testdata/hops_real/torch2.6/joint/" + name + ".pb"
		f, err := load.Open(path, load.Strict)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g := f.Module.Root()
		calls := 0
		for i := range g.Nodes {
			n := &g.Nodes[i]
			h, ok := hop.Lookup(f.Registry, n)
			if !ok || h.Name != "invoke_subgraph" {
				continue
			}
			calls++
			if h.ParsedSchema().IsVararg || len(n.Args) != 3 || n.Args[2].Kind != ir.ArgTuple {
				t.Fatalf("%s: node %s read by %s", name, n.Name, h.Schema)
			}
			call, err := hop.DecodeIn(f.Registry, f.Module, g, ir.NodeID(i))
			if err != nil || call == nil || len(call.Subgraphs) != 1 {
				t.Fatalf("%s: node %s: %v", name, n.Name, err)
			}
			ops := call.Subgraphs[0].Operands
			if len(ops) != len(n.Args[2].Elems()) || len(ops) < 2 {
				t.Fatalf("%s: node %s: %d operands for a tuple of %d", name, n.Name, len(ops), len(n.Args[2].Elems()))
			}
			for k, op := range ops {
				if op.Group != "operands" || op.Arg.Kind != ir.ArgNode || op.Arg.Ref != n.Args[2].Elems()[k].Ref {
					t.Errorf("%s: node %s operand %d: %+v", name, n.Name, k, op)
				}
			}
		}
		if calls == 0 {
			t.Fatalf("%s: no invoke_subgraph call", name)
		}

		// The near miss: one operand short.
		m, err := ir.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Root().Nodes {
			if n := &m.Root().Nodes[i]; strings.HasPrefix(n.Name, "invoke_subgraph") && len(n.Args) == 3 {
				n.Args[2].SetElems(n.Args[2].Elems()[:len(n.Args[2].Elems())-1])
				_, err := load.Module(m, path, load.Strict)
				if err == nil || !strings.Contains(err.Error(), "node "+n.Name+": invoke_subgraph call: subgraph subgraph") ||
					!strings.Contains(err.Error(), "but the call passes 1") {
					t.Errorf("%s: a tuple one operand short: %v", name, err)
				}
				break
			}
		}
	}

	f, err := load.Open("../../testdata/hops/invoke_subgraph.pbtxt", load.Strict)
	if err != nil {
		t.Fatal(err)
	}
	g, seen := f.Module.Root(), false
	for i := range g.Nodes {
		if h, ok := hop.Lookup(f.Registry, &g.Nodes[i]); ok && h.Name == "invoke_subgraph" {
			seen = true
			if !h.ParsedSchema().IsVararg {
				t.Errorf("torch 2.14's call %s read by the older form %s", g.Nodes[i].Name, h.Schema)
			}
		}
	}
	if !seen {
		t.Error("no invoke_subgraph call in testdata/hops/invoke_subgraph.pbtxt")
	}
}
