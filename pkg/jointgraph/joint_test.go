package jointgraph

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

var corpusModels = []string{"attention", "convbn", "embedding", "inplace_views", "mlp", "resnet18", "shared_storage"}

func loadModel(t *testing.T, name string) *ir.Module {
	t.Helper()
	m, err := ir.Load(filepath.Join("../../testdata/models", name+".pb"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func build(t *testing.T, m *ir.Module, opts Options) *Joint {
	t.Helper()
	j, err := Build(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(j.Module, "joint"); err != nil {
		t.Fatalf("joint graph does not verify: %v", err)
	}
	checkRefs(t, j.Module)
	return j
}

// checkRefs checks that every node reference names the node it points at
// (loaders resolve references by name).
func checkRefs(t *testing.T, m *ir.Module) {
	t.Helper()
	for _, g := range m.Graphs {
		for i := range g.Nodes {
			g.Nodes[i].WalkRefs(func(a *ir.Arg) {
				if a.Ref >= 0 && g.Nodes[a.Ref].Name != a.S {
					t.Errorf("graph %q node %s: reference %q points at %s", g.Name, g.Nodes[i].Name, a.S, g.Nodes[a.Ref].Name)
				}
			})
		}
	}
}

func placeholderNames(g *ir.Graph) []string {
	var out []string
	for _, id := range g.Placeholders() {
		out = append(out, g.Nodes[id].Name)
	}
	return out
}

func outputElems(g *ir.Graph) []ir.Arg { return g.Nodes[g.OutputNode()].Args[0].Elems() }

// TestJointCorpus builds every corpus model's joint graph and checks its
// shape: placeholders, outputs, masks, schemas, metadata.
func TestJointCorpus(t *testing.T) {
	wantMasks := map[string]string{
		"attention": "1", "convbn": "1", "embedding": "1,1", "inplace_views": "1,1,1,1",
		"mlp": "1", "resnet18": "1", "shared_storage": "0,0",
	}
	for _, name := range corpusModels {
		t.Run(name, func(t *testing.T) {
			src := loadModel(t, name)
			j := build(t, src, Options{File: name})
			g := j.Module.Root()
			if got := FormatMasks(j.Masks); got != wantMasks[name] {
				t.Errorf("masks %s, want %s", got, wantMasks[name])
			}
			if a, _ := j.Module.Annotation(AnnotationMasks); a != wantMasks[name] {
				t.Errorf("mask annotation %q", a)
			}
			nIn := len(src.Root().Placeholders())
			ph := placeholderNames(g)
			if len(ph) != nIn+j.NumTangents {
				t.Fatalf("%d placeholders, want %d primals + %d tangents", len(ph), nIn, j.NumTangents)
			}
			for i, n := range ph {
				want := "primals_" + strconv.Itoa(i+1)
				if i >= nIn {
					want = "tangents_" + strconv.Itoa(i-nIn+1)
				}
				if n != want {
					t.Errorf("placeholder %d is %s, want %s", i, n, want)
				}
			}
			if got := len(outputElems(g)); got != j.NumFwdOutputs+nIn {
				t.Errorf("%d outputs, want %d forward + %d gradients", got, j.NumFwdOutputs, nIn)
			}
			schemas := map[string]bool{}
			for _, s := range j.Module.Schemas {
				schemas[s.Name] = true
			}
			for i := range g.Nodes {
				n := &g.Nodes[i]
				if n.Op != ir.OpCallFunction || n.Target == "_operator.getitem" {
					continue
				}
				if _, ok := builtinSchema(n.Target); !ok {
					t.Errorf("node %s: %s does not exist in torch 1.13", n.Name, n.Target)
				}
				if sn, _ := ir.SchemaName(n.Target); !schemas[sn] {
					t.Errorf("node %s: no schema for %s in the module", n.Name, n.Target)
				}
				if s, _ := builtinSchema(n.Target); s != nil && s.IsMutable() && n.Target != "aten.copy_.default" &&
					n.Target != "aten.native_batch_norm.default" {
					t.Errorf("node %s: in-place op %s left after functionalization", n.Name, n.Target)
				}
			}
		})
	}
}

// TestBackwardMetadata: backward nodes name their forward node and carry
// its stack trace and nn_module_stack.
func TestBackwardMetadata(t *testing.T) {
	j := build(t, loadModel(t, "mlp"), Options{})
	g := j.Module.Root()
	id, ok := g.Lookup("gelu_backward")
	if !ok {
		t.Fatal("no gelu_backward node")
	}
	m := g.Nodes[id].Meta
	if m == nil || m.FwdSource != "gelu" {
		t.Fatalf("gelu_backward meta %+v, want fwd_source gelu", m)
	}
	fid, _ := g.Lookup("gelu")
	fm := g.Nodes[fid].Meta
	if m.StackTrace != fm.StackTrace || !slices.Equal(m.NNModuleStack, fm.NNModuleStack) {
		t.Errorf("gelu_backward does not carry gelu's stack trace and module stack")
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op == ir.OpCallFunction && ir.NodeID(i) > id && (n.Meta == nil || n.Meta.FwdSource == "") {
			t.Errorf("backward node %s has no fwd_source", n.Name)
		}
	}
}

func TestMasks(t *testing.T) {
	m := loadModel(t, "embedding")
	j := build(t, m, Options{MaskMode: MasksExplicit, Masks: []bool{false, true}})
	if j.NumTangents != 1 || FormatMasks(j.Masks) != "0,1" {
		t.Errorf("explicit masks: %d tangents, masks %s", j.NumTangents, FormatMasks(j.Masks))
	}
	for _, bad := range [][]bool{{true}, {true, true, true}} {
		_, err := Build(m, Options{MaskMode: MasksExplicit, Masks: bad})
		var me *MaskError
		if !errors.As(err, &me) {
			t.Errorf("masks %v: got %v, want a MaskError", bad, err)
		}
	}
	// all: every floating output of a graph with an input requiring grad.
	j = build(t, loadModel(t, "inplace_views"), Options{MaskMode: MasksAll})
	if FormatMasks(j.Masks) != "1,1,1,1" {
		t.Errorf("all masks %s", FormatMasks(j.Masks))
	}
	// No input requires grad: all masks are 0 even with "all".
	j = build(t, loadModel(t, "shared_storage"), Options{MaskMode: MasksAll})
	if FormatMasks(j.Masks) != "0,0" {
		t.Errorf("shared_storage all masks %s", FormatMasks(j.Masks))
	}
	for _, s := range []string{"", "auto", "all", "1,0", "true,false"} {
		if _, _, err := ParseMasks(s); err != nil {
			t.Errorf("ParseMasks(%q): %v", s, err)
		}
	}
	if _, _, err := ParseMasks("1,2"); err == nil {
		t.Error("ParseMasks(1,2) succeeded")
	}
}

func TestUnmaskNoneGradients(t *testing.T) {
	j := build(t, loadModel(t, "convbn"), Options{UnmaskNoneGradients: true})
	g := j.Module.Root()
	outs := outputElems(g)[j.NumFwdOutputs:]
	for i, a := range outs {
		if a.Kind == ir.ArgNone {
			t.Errorf("gradient %d is None with --unmask-none-gradients", i)
		}
	}
}

func TestHOPConventions(t *testing.T) {
	m := loadModel(t, "embedding")
	j := build(t, m, Options{Convention: ConventionCreateFwBwGraph})
	g := j.Module.Root()
	ph := placeholderNames(g)
	if !slices.Equal(ph[:2], []string{"tangents_1", "tangents_2"}) || ph[2] != "primals_1" {
		t.Errorf("create_fw_bw_graph placeholders %v: want tangents first", ph)
	}
	if n := len(outputElems(g)); n != 5 {
		t.Errorf("create_fw_bw_graph: %d outputs, want one gradient per primal (5)", n)
	}
	j = build(t, m, Options{Convention: ConventionCreateBwFn})
	g = j.Module.Root()
	ph = placeholderNames(g)
	if ph[0] != "primals_1" || ph[len(ph)-1] != "tangents_2" {
		t.Errorf("create_bw_fn placeholders %v: want primals first", ph)
	}
	for i, a := range outputElems(g) {
		if a.Kind == ir.ArgNone {
			t.Errorf("create_bw_fn gradient %d is None: want zeros", i)
		}
	}
}

func moduleOf(nodes ...ir.Node) *ir.Module {
	g := &ir.Graph{Nodes: nodes}
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) {
			id, _ := g.Lookup(a.S)
			a.Ref = id
		})
	}
	return &ir.Module{Graphs: []*ir.Graph{g}}
}

func f32(requiresGrad bool, shape ...int64) *ir.Value {
	m := newTensor(dims(shape...), "float32", "cpu")
	m.RequiresGrad = requiresGrad
	return &ir.Value{Kind: ir.ValTensor, Tensor: m}
}

func ref(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name} }

// TestNoRuleError: an op without a rule on a path that needs a gradient is
// an input error naming the op and the node.
func TestNoRuleError(t *testing.T) {
	m := moduleOf(
		ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 3)},
		ir.Node{Name: "i1", Op: ir.OpCallFunction, Target: "aten.special_i1.default", Args: []ir.Arg{ref("x")}, Val: f32(true, 3)},
		ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("i1")})}},
	)
	_, err := Build(m, Options{File: "g.pbtxt"})
	var ie ir.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want an ir.InputError", err)
	}
	for _, want := range []string{"g.pbtxt", "node i1", "aten.special_i1.default", "no derivative rule"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Without requires_grad the same graph needs no rule.
	m.Root().Nodes[0].Val = f32(false, 3)
	if _, err := Build(m, Options{}); err != nil {
		t.Errorf("no input requires grad: %v", err)
	}
}

// TestFunctionalizeWriteThroughView: x.t().add_(1) on an intermediate is a
// transpose of an add; the graph's result is the mutated base.
func TestFunctionalizeWriteThroughView(t *testing.T) {
	m := moduleOf(
		ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 2, 3)},
		ir.Node{Name: "mul", Op: ir.OpCallFunction, Target: "aten.mul.Tensor", Args: []ir.Arg{ref("x"), ir.IntArg(2)}, Val: f32(true, 2, 3)},
		ir.Node{Name: "t", Op: ir.OpCallFunction, Target: "aten.t.default", Args: []ir.Arg{ref("mul")}, Val: f32(true, 3, 2)},
		ir.Node{Name: "add_", Op: ir.OpCallFunction, Target: "aten.add_.Tensor", Args: []ir.Arg{ref("t"), ir.IntArg(1)}, Val: f32(true, 3, 2)},
		ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref("mul")})}},
	)
	j := build(t, m, Options{})
	g := j.Module.Root()
	var targets []string
	for _, n := range g.Nodes {
		if n.Op == ir.OpCallFunction {
			targets = append(targets, n.Target)
		}
	}
	// Forward: mul, t, add, t (scatter back through the transpose).
	if !slices.Equal(targets[:4], []string{"aten.mul.Tensor", "aten.t.default", "aten.add.Tensor", "aten.t.default"}) {
		t.Errorf("forward ops %v", targets)
	}
	out := outputElems(g)[0]
	if g.Nodes[out.Ref].Target != "aten.t.default" {
		t.Errorf("output is %s, want the transposed-back add", g.Nodes[out.Ref].Name)
	}
}

func TestMutatedInputCopyBack(t *testing.T) {
	j := build(t, loadModel(t, "inplace_views"), Options{})
	if !slices.Equal(j.MutatedInputs, []int{2}) {
		t.Errorf("mutated inputs %v, want [2] (buf)", j.MutatedInputs)
	}
	g := j.Module.Root()
	last := g.Nodes[g.OutputNode()-1]
	if last.Target != "aten.copy_.default" || last.Args[0].S != "primals_3" {
		t.Errorf("last node %s, want copy_(primals_3, ...)", ir.FormatNode(g, g.OutputNode()-1))
	}
	// shared_storage: window (a view of base) is written; base is written back.
	j = build(t, loadModel(t, "shared_storage"), Options{})
	if !slices.Equal(j.MutatedInputs, []int{0}) {
		t.Errorf("shared_storage mutated inputs %v, want [0] (base, the storage root)", j.MutatedInputs)
	}
}

// TestRequiresGradDeadNodes: dead nodes (no output or effect reads them)
// require no grad and need no rule: the error names the first live node
// without a rule, never a dead one.
func TestRequiresGradDeadNodes(t *testing.T) {
	x := ir.Node{Name: "x", Op: ir.OpPlaceholder, Target: "x", Val: f32(true, 3)}
	call := func(name, target string, args ...string) ir.Node {
		n := ir.Node{Name: name, Op: ir.OpCallFunction, Target: target, Val: f32(true, 3)}
		for _, a := range args {
			n.Args = append(n.Args, ref(a))
		}
		return n
	}
	out := func(name string) ir.Node {
		return ir.Node{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, []ir.Arg{ref(name)})}}
	}
	// neg (dead) would require grad, special_i1 (dead) has no rule.
	m := moduleOf(x, call("neg", "aten.neg.default", "x"), call("i1", "aten.special_i1.default", "x"),
		call("mul", "aten.mul.Tensor", "x", "x"), out("mul"))
	var at *ir.Node
	f, err := functionalize(m, "g.pbtxt", nil, &at, 0)
	if err != nil {
		t.Fatal(err)
	}
	rg, _, err := requiresGrad(m, f.b.g, f.ops, f.effect, f.outputs, "g.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false, false, true} // x, neg, i1, mul
	if !slices.Equal(rg, want) {
		t.Errorf("requires grad %v, want %v", rg, want)
	}
	// A live node without a rule after the dead one: the error is its.
	m = moduleOf(x, call("i1", "aten.special_i1.default", "x"), call("i1b", "aten.special_i1.default", "x"), out("i1b"))
	_, err = Build(m, Options{File: "g.pbtxt"})
	if err == nil || !strings.Contains(err.Error(), "node i1b") {
		t.Errorf("%v, want the error of node i1b", err)
	}
}
