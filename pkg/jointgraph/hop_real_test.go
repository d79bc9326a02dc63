package jointgraph

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// The real-trace joint corpus (testdata/hops_real/joint, made by
// python/tools/hop_joint_corpus.py in torch 2.14): forward graphs with
// associative_scan, cond over a SymInt operand and invoke_subgraph, and
// the structure of torch's own backward for each (make_fx of
// torch.autograd.grad through the program). python/tests/test_hop_joint.py
// checks the gradients of hopctl's joints against autograd in torch.

type jointCorpus struct {
	TorchVersion string `json:"torch_version"`
	Programs     map[string]struct {
		Test       string  `json:"pytorch_test"`
		Error      *string `json:"error"`
		TorchJoint *struct {
			Invoke []struct {
				Identifier  string   `json:"identifier"`
				Graph       string   `json:"graph"`
				Inner       []string `json:"inner"`
				Operands    int      `json:"operands"`
				NoneOutputs []int    `json:"none_outputs"`
				Outputs     int      `json:"outputs"`
			} `json:"invoke_subgraph"`
			CondBackwardOutputs []int    `json:"cond_backward_outputs"`
			Ops                 []string `json:"ops"`
		} `json:"torch_joint"`
	} `json:"programs"`
}

// The corpora: torch 2.14's, and the programs torch 2.6 differentiates,
// traced by 2.6 (its files record 2.6.0: its rules apply).
const (
	jointCorpusDir   = "../../testdata/hops_real/joint"
	jointCorpusDir26 = "../../testdata/hops_real/torch2.6/joint"
)

func loadJointCorpus(t *testing.T, dir string) *jointCorpus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "joint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c jointCorpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Programs) < 4 {
		t.Fatalf("joint corpus %s has %d programs", dir, len(c.Programs))
	}
	return &c
}

func loadReal(t *testing.T, name string) *ir.Module { return loadRealIn(t, jointCorpusDir, name) }

func loadRealIn(t *testing.T, dir, name string) *ir.Module {
	t.Helper()
	m, err := ir.Load(filepath.Join(dir, name+".pb"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The ops of associative_scan's backward that build the transition
// matrix (AssociativeScanAutogradOp.backward's compute_grad), in-place
// forms named by their functional ones.
var assocScanBackwardOps = []string{"aten.roll.default", "aten.ones_like.default", "aten.stack.default",
	"aten.select.int", "aten.fill.Scalar", "aten.ones.default", "aten.tril.default", "aten.masked_fill.Scalar",
	"aten.cumprod.default", "aten.sum.dim_IntList", "aten.unbind.int"}

func TestHOPJointRealTraces(t *testing.T) {
	for _, dir := range []string{jointCorpusDir, jointCorpusDir26} {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) { testJointCorpus(t, dir) })
	}
}

func testJointCorpus(t *testing.T, dir string) {
	c := loadJointCorpus(t, dir)
	for name, p := range c.Programs {
		t.Run(name, func(t *testing.T) {
			m := loadRealIn(t, dir, name)
			if p.Error != nil {
				_, err := Build(m, Options{File: name})
				if err == nil || !strings.Contains(err.Error(), *p.Error) {
					t.Fatalf("%s: torch refuses with %q, hopctl joint says %v", p.Test, *p.Error, err)
				}
				return
			}
			j := build(t, m, Options{File: name})
			tj := p.TorchJoint
			if tj == nil {
				t.Fatal("no torch joint recorded")
			}
			g := j.Module.Root()
			ops := map[string]bool{}
			var invokes, conds []ir.NodeID
			for i := range g.Nodes {
				switch n := &g.Nodes[i]; {
				case n.Target == "higher_order.invoke_subgraph":
					invokes = append(invokes, ir.NodeID(i))
				case n.Target == "higher_order.cond":
					conds = append(conds, ir.NodeID(i))
				case n.Op == ir.OpCallFunction:
					ops[n.Target] = true
				}
			}

			// invoke_subgraph: the same calls (identifier, operand count),
			// the same None slots and output counts of the backward
			// graphs, and as many distinct backward graphs.
			type call struct {
				ident          string
				operands, outs int
				none           string
				inner          string // the calls inside the called graph
			}
			var want, got []call
			wantGraphs, gotGraphs := map[string]bool{}, map[string]bool{}
			for _, k := range tj.Invoke {
				c := call{ident: k.Identifier, operands: k.Operands, inner: fmt.Sprint(k.Inner)}
				if strings.HasPrefix(k.Identifier, "bw_") {
					c.outs, c.none = k.Outputs, fmt.Sprint(k.NoneOutputs)
					wantGraphs[k.Graph] = true
				}
				want = append(want, c)
			}
			for _, id := range invokes {
				n := &g.Nodes[id]
				c := call{ident: n.Args[1].S, operands: len(n.Args) - 2}
				var inner []string
				if sub := j.Module.Graph(g.Nodes[n.Args[0].Ref].Target); sub != nil {
					for k := range sub.Nodes {
						if s := &sub.Nodes[k]; s.Target == "higher_order.invoke_subgraph" {
							inner = append(inner, s.Args[1].S)
						}
					}
				}
				slices.Sort(inner)
				c.inner = fmt.Sprint(inner)
				if strings.HasPrefix(c.ident, "bw_") {
					sub := j.Module.Graph(g.Nodes[n.Args[0].Ref].Target)
					gotGraphs[g.Nodes[n.Args[0].Ref].Target] = true
					res := sub.Nodes[sub.OutputNode()].Args[0].Elems()
					c.outs = len(res)
					var none []int
					for k, a := range res {
						if a.Kind == ir.ArgNone {
							none = append(none, k)
						}
					}
					c.none = fmt.Sprint(none)
				}
				got = append(got, c)
			}
			less := func(a, b call) int { return strings.Compare(a.ident+a.none, b.ident+b.none) }
			slices.SortFunc(want, less)
			slices.SortFunc(got, less)
			if !slices.Equal(want, got) {
				t.Errorf("invoke_subgraph calls:\n torch  %v\n hopctl %v", want, got)
			}
			if len(wantGraphs) != len(gotGraphs) {
				t.Errorf("%d backward graphs, torch has %d", len(gotGraphs), len(wantGraphs))
			}

			// cond: one gradient per tensor operand in the backward branches.
			var condOuts []int
			for _, id := range conds[min(1, len(conds)):] {
				n := &g.Nodes[id]
				for _, a := range n.Args[1:3] {
					sub := j.Module.Graph(g.Nodes[a.Ref].Target)
					condOuts = append(condOuts, len(sub.Nodes[sub.OutputNode()].Args[0].Elems()))
				}
			}
			var wantCond []int
			for _, k := range tj.CondBackwardOutputs {
				wantCond = append(wantCond, k, k) // both branches
			}
			if !slices.Equal(condOuts, wantCond) {
				t.Errorf("backward cond branches return %v values, torch's %v", condOuts, wantCond)
			}

			// associative_scan: the transition-matrix ops torch's backward has.
			torchOps := map[string]bool{}
			for _, o := range tj.Ops {
				parts := strings.Split(o, ".")
				parts[1] = strings.TrimSuffix(parts[1], "_")
				torchOps[strings.Join(parts, ".")] = true
			}
			for _, o := range assocScanBackwardOps {
				if torchOps[o] != ops[o] {
					t.Errorf("%s: in torch's backward %v, in hopctl's %v", o, torchOps[o], ops[o])
				}
			}
		})
	}
}

// torch 2.6 has no autograd for associative_scan (version row
// associative-scan-grad-2.6): the same trace, recorded as 2.6's, is refused
// with 2.6's message; as 2.14's it is differentiated.
func TestAssocScanBackwardTorch26(t *testing.T) {
	for _, v := range []string{"2.6.0", "2.14.1"} {
		m := loadReal(t, "assoc_grad")
		m.TorchVersion = v
		_, err := Build(m, Options{})
		if refused := err != nil && strings.Contains(err.Error(), "Autograd not implemented for associative_scan"); refused != (v == "2.6.0") {
			t.Errorf("torch %s: %v", v, err)
		}
	}
}
