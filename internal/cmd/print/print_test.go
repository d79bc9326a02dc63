package print

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hopctl/hopctl/internal/cmdtest"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdPrint(t *testing.T) {
	cmdtest.TestFlags(t, NewCmdPrint, func(o *Options, ios *iostreams.IOStreams) { o.IO = ios }, []cmdtest.FlagCase[Options]{
		{Args: "m.pb", Want: Options{File: "m.pb", Format: "fx", Depth: -1, Radius: 2}},
		{Args: "m.pb --format dot --graph true_graph_0.body", Want: Options{File: "m.pb", Format: "dot", Graph: "true_graph_0.body", Depth: -1, Radius: 2}},
		{Args: "--format=json m.json", Want: Options{File: "m.json", Format: "json", Depth: -1, Radius: 2}},
		{Args: "m.pb --format dot --depth 1 --around add --radius 3", Want: Options{File: "m.pb", Format: "dot", Depth: 1, Around: "add", Radius: 3}},
		{Args: "m.pb --format model-explorer --overlay o.json", Want: Options{File: "m.pb", Format: "model-explorer", Depth: -1, Radius: 2, Overlay: "o.json"}},
		{Args: "m.pb --depth 1", WantErr: "--depth, --around and --radius need --format dot"},
		{Args: "m.pb --format dot --radius 1", WantErr: "--radius needs --around NODE"},
		{Args: "m.pb --format dot --around x --radius -1", WantErr: "--radius must be at least 0"},
		{Args: "m.pb --overlay o.json", WantErr: "--overlay needs --format model-explorer"},
		{Args: "", WantErr: "print: missing FILE"},
		{Args: "a.pb b.pb", WantErr: "too many arguments"},
		{Args: "m.pb --format svg", WantErr: `invalid value "svg" for --format (want fx, dot, json or model-explorer)`},
	})
}

func TestSubmodule(t *testing.T) {
	graph := func(name string) *ir.Graph { return &ir.Graph{Name: name} }
	m := &ir.Module{
		Producer:   "p",
		Graphs:     []*ir.Graph{graph(""), graph("a"), graph("a.b"), graph("ab"), graph("a.b.c")},
		Attributes: []ir.Attribute{{Name: "a.w"}, {Name: "aw"}, {Name: "w"}},
		Schemas:    []ir.SchemaText{{Name: "aten::sin"}},
	}
	sub, err := Submodule("f.pb", m, "a")
	if err != nil {
		t.Fatal(err)
	}
	var names, attrs []string
	for _, g := range sub.Graphs {
		names = append(names, g.Name)
	}
	for _, a := range sub.Attributes {
		attrs = append(attrs, a.Name)
	}
	if want := []string{"", "b", "b.c"}; !cmp.Equal(names, want) {
		t.Errorf("graphs = %q, want %q", names, want)
	}
	if want := []string{"w"}; !cmp.Equal(attrs, want) {
		t.Errorf("attributes = %q, want %q", attrs, want)
	}
	if sub.Producer != "p" || len(sub.Schemas) != 1 {
		t.Errorf("module fields not kept: %+v", sub)
	}
	if m.Graphs[1].Name != "a" || m.Attributes[0].Name != "a.w" {
		t.Error("Submodule modified its input")
	}
	for _, root := range []string{"", "<root>"} {
		if got, err := Submodule("f.pb", m, root); err != nil || got != m {
			t.Errorf("Submodule(%q) = %v, %v; want the module itself", root, got, err)
		}
	}
	_, err = Submodule("f.pb", m, "nope")
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `no graph "nope" (the file has <root>, a, a.b, ab, a.b.c)`) {
		t.Errorf("Submodule(nope) = %v", err)
	}
	// A file of a thousand deeply nested graphs: a short message (it
	// listed every name, 1 MB on one line).
	many := &ir.Module{Graphs: []*ir.Graph{graph("")}}
	name := ""
	for range 1000 {
		name = strings.TrimPrefix(name+".g", ".")
		many.Graphs = append(many.Graphs, graph(name))
	}
	_, err = Submodule("f.pb", many, "nope")
	if err == nil || len(err.Error()) > 2048 || !strings.Contains(err.Error(), "and 991 more") {
		t.Errorf("Submodule(nope) of 1000 nested graphs: %.3000v", err)
	}
}

// runPrint runs printRun and returns stdout.
func runPrint(t *testing.T, opts Options) string {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	opts.IO = ios
	if err := printRun(&opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var dotNodeRE = regexp.MustCompile(`(?m)^    g(\d+)_n(\d+) \[label="%([^ ]+) `)

// dotNodes returns the "graph/node" names a DOT output draws.
func dotNodes(m *ir.Module, dot string) map[string]bool {
	got := map[string]bool{}
	for _, mm := range dotNodeRE.FindAllStringSubmatch(dot, -1) {
		gi, _ := strconv.Atoi(mm[1])
		got[ir.DisplayName(m.Graphs[gi].Name)+"/"+mm[3]] = true
	}
	return got
}

// TestDOTAround checks that --around NODE --radius K draws exactly the
// root-graph nodes within K def-use edges of NODE (found here by a
// breadth-first search of its own over the def-use index), on a real
// model, for several radii.
func TestDOTAround(t *testing.T) {
	const file = "../../../testdata/models/resnet18.pb"
	m, err := ir.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root := m.Root()
	du := ir.NewDefUse(root)
	center := ""
	for i := len(root.Nodes) / 2; i < len(root.Nodes); i++ {
		if len(du.Users[i]) > 0 && len(du.Operands[i]) > 0 {
			center = root.Nodes[i].Name
			break
		}
	}
	for _, radius := range []int{0, 1, 3} {
		want := map[string]bool{}
		start, _ := root.Lookup(center)
		frontier := []ir.NodeID{start}
		want["<root>/"+center] = true
		for range radius {
			var next []ir.NodeID
			for _, u := range frontier {
				for _, v := range append(append([]ir.NodeID{}, du.Operands[u]...), du.Users[u]...) {
					if name := "<root>/" + root.Nodes[v].Name; !want[name] {
						want[name] = true
						next = append(next, v)
					}
				}
			}
			frontier = next
		}
		got := dotNodes(m, runPrint(t, Options{File: file, Format: "dot", Depth: -1, Around: center, Radius: radius}))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("--around %s --radius %d (-want +got):\n%s", center, radius, diff)
		}
	}
}

// TestDOTDepth checks that --depth N draws the graphs nested at most N
// levels deep, all their nodes, and no others.
func TestDOTDepth(t *testing.T) {
	const file = "../../../testdata/hops/nested3_mutation.pbtxt"
	m, err := ir.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for depth := 0; depth <= 4; depth++ {
		want := map[string]bool{}
		for _, g := range m.Graphs {
			if g.Name == "" || strings.Count(g.Name, ".")+1 <= depth {
				for _, n := range g.Nodes {
					want[ir.DisplayName(g.Name)+"/"+n.Name] = true
				}
			}
		}
		got := dotNodes(m, runPrint(t, Options{File: file, Format: "dot", Depth: depth}))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("--depth %d (-want +got):\n%s", depth, diff)
		}
	}
	all := dotNodes(m, runPrint(t, Options{File: file, Format: "dot", Depth: -1}))
	if n := len(dotNodes(m, runPrint(t, Options{File: file, Format: "dot", Depth: 4}))); n != len(all) {
		t.Errorf("--depth 4 draws %d nodes, the whole file %d", n, len(all))
	}
}
