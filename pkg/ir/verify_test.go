package ir

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pbtxtModule wraps a root graph body (and optional extra top-level fields)
// into a text-format file.
func pbtxtModule(root string, extra string) string {
	return "format_version { major: 1 }\ngraph {\n" + root + "\n}\n" + extra
}

const validRoot = `
nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "sin" op: CALL_FUNCTION target: "aten.sin.default" args { node: "x" } }
nodes { name: "output" op: OUTPUT target: "output" args { tuple { items { node: "sin" } } } }
`

func decodeText(t *testing.T, src string) *Module {
	t.Helper()
	m, err := Decode([]byte(src), Text, "t.pbtxt")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return m
}

func TestVerifyValid(t *testing.T) {
	m := decodeText(t, pbtxtModule(validRoot, ""))
	if err := Verify(m, "t.pbtxt"); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
}

func TestVerifyDefects(t *testing.T) {
	cases := []struct {
		name  string
		root  string
		extra string
		want  []string // each must appear in some problem line
	}{
		{
			name: "use before definition",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "a" op: CALL_FUNCTION target: "aten.sin.default" args { node: "b" } }
nodes { name: "b" op: CALL_FUNCTION target: "aten.cos.default" args { node: "x" } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "a" } }`,
			want: []string{`t.pbtxt: graph <root>: node a: use of "b" before its definition`},
		},
		{
			name: "dangling reference",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "a" op: CALL_FUNCTION target: "aten.sin.default" args { list { items { node: "nope" } } } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "a" } }`,
			want: []string{`node a: dangling reference to "nope"`},
		},
		{
			name: "duplicate names",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "x" op: CALL_FUNCTION target: "aten.sin.default" }
nodes { name: "output" op: OUTPUT target: "output" args { node: "x" } }`,
			want: []string{`node x: duplicate node name`},
		},
		{
			name: "missing output",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }`,
			want: []string{`graph <root>: missing output node`},
		},
		{
			name: "extra output",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "output" op: OUTPUT target: "output" args { node: "x" } }
nodes { name: "output_1" op: OUTPUT target: "output" args { node: "x" } }`,
			want: []string{`node output: output node is not last`, `node output_1: extra output node`},
		},
		{
			name: "get_attr missing",
			root: `nodes { name: "g" op: GET_ATTR target: "true_graph_0" }
nodes { name: "output" op: OUTPUT target: "output" args { node: "g" } }`,
			want: []string{`node g: get_attr target "true_graph_0" does not exist`},
		},
		{
			name: "nested get_attr resolves relative to its graph",
			root: `nodes { name: "g" op: GET_ATTR target: "body" }
nodes { name: "output" op: OUTPUT target: "output" args { node: "g" } }`,
			extra: `submodules { qualified_name: "outer" graph {
  nodes { name: "inner" op: GET_ATTR target: "body" }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "inner" } } } }`,
			want: []string{`graph <root>: node g: get_attr target "body"`, `graph outer: node inner: get_attr target "body" does not exist: no submodule or attribute "outer.body"`},
		},
		{
			name: "cycle",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "a" op: CALL_FUNCTION target: "aten.add.Tensor" args { node: "x" } args { node: "b" } }
nodes { name: "b" op: CALL_FUNCTION target: "aten.sin.default" args { node: "a" } }
nodes { name: "c" op: CALL_FUNCTION target: "aten.sin.default" args { node: "c" } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "b" } }`,
			want: []string{`node a: use of "b" before its definition`, `node a: cycle through nodes a, b`, `node c: node uses itself (cycle)`},
		},
		{
			// (An empty name is refused by the decoders: TestDecodersRefuseNamelessNodes.)
			name: "no op kind",
			root: `nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { name: "y" target: "x" }
nodes { name: "output" op: OUTPUT target: "output" args { node: "y" } }`,
			want: []string{`node y: node has no op kind`},
		},
		{
			name:  "duplicate submodule",
			root:  validRoot,
			extra: `submodules { qualified_name: "s" graph { nodes { name: "output" op: OUTPUT target: "output" } } } submodules { qualified_name: "s" graph { nodes { name: "output" op: OUTPUT target: "output" } } }`,
			want:  []string{`graph s: duplicate submodule name`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := decodeText(t, pbtxtModule(tc.root, tc.extra))
			err := Verify(m, "t.pbtxt")
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want *VerifyError", err)
			}
			var ie InputError
			if !errors.As(err, &ie) {
				t.Fatalf("VerifyError is not an InputError")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in:\n%s", w, msg)
				}
			}
			if got, want := len(ve.Problems), len(tc.want); got != want {
				t.Errorf("got %d problems, want %d:\n%s", got, want, msg)
			}
		})
	}
}

func TestVerifyManyProblemsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`nodes { name: "a" op: CALL_FUNCTION target: "aten.cat.default" args { list {`)
	for i := 0; i < 3000; i++ {
		b.WriteString(` items { node: "missing" }`)
	}
	b.WriteString(` } } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "a" } }`)
	m := decodeText(t, pbtxtModule(b.String(), ""))
	var ve *VerifyError
	if err := Verify(m, "t.pbtxt"); !errors.As(err, &ve) {
		t.Fatalf("want VerifyError, got %v", err)
	}
	if len(ve.Problems) != MaxProblems+1 || !strings.Contains(ve.Problems[MaxProblems].Msg, "2000 more problems") {
		t.Fatalf("got %d problems, last %q", len(ve.Problems), ve.Problems[len(ve.Problems)-1].Msg)
	}
}

// TestNameIndexLargeGraph checks the sharded name index of large graphs
// (parallelNodes and up) against a plain map: Lookup finds the first node
// of each name, and Verify reports each later duplicate with the first.
func TestNameIndexLargeGraph(t *testing.T) {
	const n = parallelNodes + 5000
	g := &Graph{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		switch i {
		case n - 1, n - 7:
			name = "n100" // duplicates of an early name
		case n - 3:
			name = fmt.Sprintf("n%d", n-5) // duplicate of a late one
		}
		g.Nodes = append(g.Nodes, Node{Name: name, Op: OpPlaceholder, Target: name})
	}
	checkLookupsFirst(t, g)
	if _, ok := g.Lookup("missing"); ok {
		t.Error("Lookup found a missing name")
	}
	m := &Module{FormatMajor: 1, Graphs: []*Graph{g}}
	err := Verify(m, "big.pb")
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify = %v, want duplicate-name problems", err)
	}
	var got []string
	for _, p := range ve.Problems {
		if strings.Contains(p.Msg, "duplicate") {
			got = append(got, p.Loc.Node+": "+p.Msg)
		}
	}
	wantProblems := []string{
		"n100: duplicate node name (first defined as node #100)",
		fmt.Sprintf("n%d: duplicate node name (first defined as node #%d)", n-5, n-5),
		"n100: duplicate node name (first defined as node #100)",
	}
	if !slices.Equal(got, wantProblems) {
		t.Errorf("duplicate problems = %q, want %q", got, wantProblems)
	}
}

// TestNameIndexRaces: a large graph whose names repeat across the ranges the
// index's workers insert (each name 4 times, spread over the whole graph, so
// later nodes often claim a slot before the first one replaces them) indexes
// each name to its first node and counts every later node as a duplicate;
// run it with -race and -count to shake the orderings. Then a graph grown
// node by node (Graph.Append, FreshName) past several table sizes.
func TestNameIndexRaces(t *testing.T) {
	const n = 4 * parallelNodes
	const distinct = n / 4
	g := &Graph{}
	for i := range n {
		// Reversed in the first half: the first of a name's nodes is not
		// always in the first worker's range.
		k := i % distinct
		if i < n/2 {
			k = distinct - 1 - k
		}
		g.Nodes = append(g.Nodes, Node{Name: fmt.Sprintf("v%d", k)})
	}
	checkLookupsFirst(t, g)
	if x := g.names(); x.dups != n-distinct || x.used != distinct {
		t.Errorf("dups, used = %d, %d; want %d, %d", x.dups, x.used, n-distinct, distinct)
	}

	grown := NewGraph("")
	for i := range 3 * parallelNodes {
		name := grown.FreshName(fmt.Sprintf("w%d", i%1000))
		if id := grown.Append(Node{Name: name}); id != NodeID(i) {
			t.Fatalf("Append = %d, want %d", id, i)
		}
	}
	for i := range grown.Nodes {
		if got, ok := grown.Lookup(grown.Nodes[i].Name); !ok || got != NodeID(i) {
			t.Fatalf("after Append: Lookup(%q) = %d, %v; want %d", grown.Nodes[i].Name, got, ok, i)
		}
	}
	if _, ok := grown.Lookup("w1_999999"); ok {
		t.Error("Lookup found a name never added")
	}
	if x := grown.names(); x.dups != 0 || len(x.slots) < len(grown.Nodes)*4/3 {
		t.Errorf("grown index: dups %d, %d slots for %d nodes", x.dups, len(x.slots), len(grown.Nodes))
	}
}

// checkLookupsFirst requires g.Lookup to give every name's first node.
func checkLookupsFirst(t *testing.T, g *Graph) {
	t.Helper()
	want := map[string]NodeID{}
	for i := range g.Nodes {
		if _, ok := want[g.Nodes[i].Name]; !ok {
			want[g.Nodes[i].Name] = NodeID(i)
		}
	}
	for name, id := range want {
		if got, ok := g.Lookup(name); !ok || got != id {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", name, got, ok, id)
		}
	}
}

// TestVerifyParallelMatchesSequential: each variant of a large valid graph
// gives the same result on all cores as on one: nothing for the valid one;
// for the others, the same problems in the same order — a second output,
// none, a forward reference, a dangling one, a duplicate name, an empty one,
// a problem only near the end.
func TestVerifyParallelMatchesSequential(t *testing.T) {
	const n = parallelNodes*5/2 + 3
	valid := func() *Module {
		g := &Graph{}
		g.Nodes = append(g.Nodes, Node{Name: "x", Op: OpPlaceholder, Target: "x"})
		for i := 1; i < n-1; i++ {
			g.Nodes = append(g.Nodes, Node{Name: fmt.Sprintf("v%d", i), Op: OpCallFunction, Target: "aten.relu.default",
				Args: []Arg{NodeArg(NodeID(i-1), g.Nodes[i-1].Name)}})
		}
		g.Nodes = append(g.Nodes, Node{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{NodeArg(n-2, g.Nodes[n-2].Name)}})
		return &Module{FormatMajor: 1, Graphs: []*Graph{g}}
	}
	for _, tc := range []struct {
		name  string
		edit  func(g *Graph)
		valid bool
	}{
		{"valid", func(*Graph) {}, true},
		{"output in another range", func(g *Graph) { g.Nodes[n/4].Op = OpOutput }, false},
		{"no output", func(g *Graph) { g.Nodes[n-1].Op = OpCallFunction }, false},
		{"forward reference", func(g *Graph) { g.Nodes[n/2].Args[0] = NodeArg(n-5, g.Nodes[n-5].Name) }, false},
		{"dangling reference", func(g *Graph) { g.Nodes[n-3].Args[0] = NodeArg(NoNode, "gone") }, false},
		{"duplicate name", func(g *Graph) { g.Nodes[n-7].Name = "v3" }, false},
		{"empty name", func(g *Graph) { g.Nodes[n/3].Name = "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.edit(m.Graphs[0])
			m.Graphs[0].Reindex()
			par := Verify(m, "big.pb")
			prev := runtime.GOMAXPROCS(1)
			seq := Verify(m, "big.pb")
			runtime.GOMAXPROCS(prev)
			if (par == nil) != tc.valid {
				t.Fatalf("Verify = %v, want valid %v", par, tc.valid)
			}
			if fmt.Sprint(par) != fmt.Sprint(seq) {
				t.Errorf("on all cores:\n%v\non one:\n%v", par, seq)
			}
		})
	}
}

// TestVerifySharedValues: values shared between nodes, as decoders share
// them, are judged for every node: a bad one is reported at each node that
// has it, beside good ones remembered as checked (verifier.checkValue).
func TestVerifySharedValues(t *testing.T) {
	good := &Value{Kind: ValTensor, Tensor: &TensorMeta{Shape: []Dim{{Val: 2}}}}
	bad := &Value{Kind: ValTuple, Elems: []Value{*good, {Kind: ValTensor, Tensor: &TensorMeta{Shape: []Dim{{Val: -1}}}}}}
	g := &Graph{}
	g.Nodes = append(g.Nodes, Node{Name: "x", Op: OpPlaceholder, Target: "x", Val: good})
	for i := 1; i <= 6; i++ {
		val := good
		if i%3 == 0 {
			val = bad
		}
		g.Nodes = append(g.Nodes, Node{Name: fmt.Sprintf("v%d", i), Op: OpCallFunction, Target: "aten.relu.default",
			Args: []Arg{NodeArg(NodeID(i-1), g.Nodes[i-1].Name)}, Val: val})
	}
	g.Nodes = append(g.Nodes, Node{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{NodeArg(6, "v6")}})
	err := Verify(&Module{FormatMajor: 1, Graphs: []*Graph{g}}, "t.pb")
	var ve *VerifyError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Fatalf("Verify = %v, want the bad value at v3 and v6", err)
	}
	for i, node := range []string{"v3", "v6"} {
		if p := ve.Problems[i]; p.Loc.Node != node || !strings.Contains(p.Msg, "value[1]: tensor shape [-1] has a negative size") {
			t.Errorf("problem %d: %v, want the bad value at %s", i, p, node)
		}
	}
}

// TestNameIndexDuplicates: the name index counts a repeated name wherever
// it stands and however many nodes share it; and Verify reports a large
// graph's duplicate names as it does with the index built first.
func TestNameIndexDuplicates(t *testing.T) {
	for _, n := range []int{1, 2, 255, 256, 257, 5000, parallelNodes} {
		g := &Graph{Nodes: make([]Node, n)}
		for i := range g.Nodes {
			g.Nodes[i] = Node{Name: "n_" + strconv.Itoa(i), Op: OpPlaceholder, Target: "t"}
		}
		if d := buildNameIndex(g).dups; d != 0 {
			t.Errorf("%d distinct names: %d duplicates", n, d)
		}
		for _, dup := range [][2]int{{0, n - 1}, {n / 2, n/2 + 1}, {n - 2, n - 1}, {1, n / 3}} {
			i, j := dup[0], dup[1]
			if i < 0 || j <= i || j >= n {
				continue
			}
			c := &Graph{Nodes: slices.Clone(g.Nodes)}
			c.Nodes[j].Name = c.Nodes[i].Name
			if d := buildNameIndex(c).dups; d != 1 {
				t.Errorf("%d names, node %d named as node %d: %d duplicates, want 1", n, j, i, d)
			}
		}
		if n > 1 { // every name twice (a graph appended to itself)
			c := &Graph{Nodes: append(slices.Clone(g.Nodes[:n/2]), g.Nodes[:n/2]...)}
			if d := buildNameIndex(c).dups; d != n/2 {
				t.Errorf("%d names, each twice: %d duplicates, want %d", n, d, n/2)
			}
		}
	}
	m := chainModule(parallelNodes + 10)
	g := m.Root()
	g.Nodes[parallelNodes/2].Name = g.Nodes[7].Name
	built := &Module{Graphs: []*Graph{{Nodes: g.Nodes}}}
	built.Root().Lookup("x")
	want := Verify(built, "f")
	got := Verify(&Module{Graphs: []*Graph{{Nodes: g.Nodes}}}, "f")
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("a repeated name in a large graph: Verify %v, with the index built %v", got, want)
	}
}

// chainModule is a graph of n nodes: a placeholder, n-2 calls each of the
// one before, the output.
func chainModule(n int) *Module {
	g := &Graph{Nodes: make([]Node, n)}
	g.Nodes[0] = Node{Name: "x", Op: OpPlaceholder, Target: "x"}
	for i := 1; i < n-1; i++ {
		g.Nodes[i] = Node{Name: "relu_" + strconv.Itoa(i), Op: OpCallFunction, Target: "aten.relu.default",
			Args: []Arg{{Kind: ArgNode, S: g.Nodes[i-1].Name, Ref: NodeID(i - 1)}}}
	}
	g.Nodes[n-1] = Node{Name: "output", Op: OpOutput, Target: "output",
		Args: []Arg{{Kind: ArgNode, S: g.Nodes[n-2].Name, Ref: NodeID(n - 2)}}}
	return &Module{Graphs: []*Graph{g}}
}
