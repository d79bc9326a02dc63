package viz

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	hopload "github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
	"github.com/hopctl/hopctl/pkg/synth"
)

func loadFile(t *testing.T, path string) (*ir.Module, *analyze.Result, File) {
	t.Helper()
	f, res, err := hopload.Analyze(path, passes.All()...)
	if err != nil {
		t.Fatal(err)
	}
	return f.Module, res, Build(path, f.Module, res, Options{})
}

// checkTree checks the box tree: every box reaches one top box without a
// cycle, and no box holds more than MaxChildren items.
func checkTree(t *testing.T, f *File) {
	t.Helper()
	gs := &f.Groups
	items := make([]int, len(gs.Parent))
	tops := 0
	for x := range gs.Parent {
		if gs.Parent[x] < 0 {
			tops++
		} else {
			items[gs.Parent[x]]++
		}
		steps := 0
		for y := int32(x); y >= 0; y = gs.Parent[y] {
			if steps++; steps > len(gs.Parent) {
				t.Fatalf("box %d (%s) is on a cycle", x, gs.Label[x])
			}
		}
	}
	for _, g := range f.Nodes.Group {
		items[g]++
	}
	if tops != 1 {
		t.Errorf("%d top boxes, want 1 (the root graph's)", tops)
	}
	for x, n := range items {
		if n > MaxChildren {
			t.Errorf("box %d (%s, %s) holds %d items, more than %d", x, gs.Kind[x], gs.Label[x], n, MaxChildren)
		}
	}
}

// TestFindingPath checks, on the corpus graph whose cond branch mutates an
// input three HOPs deep, that each finding's path is its provenance
// resolved to nodes of the right graphs, in order, with the subgraph boxes.
func TestFindingPath(t *testing.T) {
	m, res, f := loadFile(t, "../../testdata/hops/nested3_mutation.pbtxt")
	checkTree(t, &f)
	if len(res.Findings) == 0 || len(f.Findings) != len(res.Findings) {
		t.Fatalf("%d findings in the model, %d in the analysis", len(f.Findings), len(res.Findings))
	}
	for i, fd := range f.Findings {
		p := res.Findings[i].Provenance
		if p == nil {
			continue
		}
		// The expected path: the input in the finding's graph, then each
		// path item that is a node, in the graph the path has entered.
		graph := fd.Graph
		want := []string{ir.DisplayName(graph) + "/" + p.Input}
		var wantBoxes []string
		for _, item := range p.Path {
			if m.Graph(item) != nil {
				graph = item
				wantBoxes = append(wantBoxes, item)
				continue
			}
			want = append(want, ir.DisplayName(graph)+"/"+item)
		}
		// The path is the provenance's nodes in order, with the subgraph
		// placeholder the value enters after each call: a placeholder of
		// the graph the path enters, from which the next node of the path
		// is reachable.
		var got, gotBoxes, provenance []string
		for j, k := range fd.Path {
			name := ir.DisplayName(f.Graphs[f.Nodes.Graph[k]].Name) + "/" + f.Nodes.Name[k]
			got = append(got, name)
			if len(provenance) < len(want) && want[len(provenance)] == name {
				provenance = append(provenance, name)
				continue
			}
			if f.Nodes.Flags[k]&FlagPlaceholder == 0 || j == 0 || j == len(fd.Path)-1 {
				t.Errorf("finding %d: %s on the path is neither in the provenance nor an entered placeholder", i, name)
				continue
			}
			next := fd.Path[j+1]
			gi := int(f.Nodes.Graph[k])
			if int(f.Nodes.Graph[next]) != gi || !reaches(m.Graphs[gi], ir.NodeID(k-firstNode(&f, gi)), ir.NodeID(next-firstNode(&f, gi))) {
				t.Errorf("finding %d: the next path node %s is not reachable from the entered placeholder %s", i, f.Nodes.Name[next], name)
			}
		}
		for _, x := range fd.Boxes {
			gotBoxes = append(gotBoxes, f.Groups.Label[x])
		}
		if !slices.Equal(provenance, want) || !slices.Equal(gotBoxes, wantBoxes) || len(got) != len(want)+len(wantBoxes) {
			t.Errorf("finding %d (%s): path %v boxes %v, want %v with a placeholder after each call, boxes %v", i, fd.Message, got, gotBoxes, want, wantBoxes)
		}
		last := fd.Path[len(fd.Path)-1]
		if f.Nodes.Flags[last]&FlagWriter == 0 {
			t.Errorf("finding %d: the writing node %s is not flagged", i, f.Nodes.Name[last])
		}
		// The subgraph boxes nest: each inside the previous one's.
		for j := 1; j < len(fd.Boxes); j++ {
			inside := false
			for y := f.Groups.Parent[fd.Boxes[j]]; y >= 0; y = f.Groups.Parent[y] {
				inside = inside || y == fd.Boxes[j-1]
			}
			if !inside {
				t.Errorf("finding %d: box %s is not inside box %s", i, f.Groups.Label[fd.Boxes[j]], f.Groups.Label[fd.Boxes[j-1]])
			}
		}
	}
	// Mutated inputs are flagged as the analysis says, in every graph.
	for gi, g := range m.Graphs {
		s := res.Results[alias.Analyzer][g.Name].(*alias.Summary)
		for i, name := range s.Inputs {
			id, _ := g.Lookup(name)
			k := firstNode(&f, gi) + int32(id)
			if got, want := f.Nodes.Flags[k]&FlagMutatedInput != 0, slices.Contains(s.MutatedInputs, i); got != want {
				t.Errorf("graph %s input %s: flagged mutated %v, analysis says %v", ir.DisplayName(g.Name), name, got, want)
			}
		}
	}
}

// TestAliasClasses checks that inputs and outputs the analysis says share
// storage get one class, and that classes are not merged beyond that, on
// the real models that alias.
func TestAliasClasses(t *testing.T) {
	any := false
	for _, path := range []string{"../../testdata/models/inplace_views.pb", "../../testdata/models/shared_storage.pb"} {
		m, res, f := loadFile(t, path)
		for gi, g := range m.Graphs {
			s := res.Results[alias.Analyzer][g.Name].(*alias.Summary)
			in := func(i int) int32 { id, _ := g.Lookup(s.Inputs[i]); return f.Nodes.Alias[firstNode(&f, gi)+int32(id)] }
			leaves, _ := g.Outputs()
			out := func(j int) int32 { return f.Nodes.Alias[firstNode(&f, gi)+int32(leaves[j].Ref)] }
			check := func(what string, a, b int32) {
				any = true
				if a < 0 || a != b {
					t.Errorf("%s: %s: classes %d and %d, want one class", path, what, a, b)
				}
			}
			for _, p := range s.InpInpAlias {
				check("inp_inp_alias", in(p.From), in(p.To))
			}
			for _, p := range s.InpOutAlias {
				check("inp_out_alias", in(p.From), out(p.To))
			}
			for _, p := range s.OutOutAlias {
				check("out_out_alias", out(p.From), out(p.To))
			}
		}
		for c, members := range f.AliasClasses {
			if len(members) < 2 {
				t.Errorf("%s: alias class %d has %d member(s)", path, c, len(members))
			}
		}
	}
	if !any {
		t.Fatal("no alias pairs in the corpus models: the test checks nothing")
	}
}

// TestChunksBoundBoxes checks the box tree of a 20,000-node synthetic
// graph with HOPs: every box, chunks included, within MaxChildren items.
func TestChunksBoundBoxes(t *testing.T) {
	m := synth.Generate(synth.Options{Nodes: 20000, HOPs: true})
	f := Build("synth.pb", m, nil, Options{})
	checkTree(t, &f)
	chunks := 0
	for _, k := range f.Groups.Kind {
		if k == KindChunk {
			chunks++
		}
	}
	if chunks == 0 {
		t.Error("no chunk boxes in a 20,000-node graph")
	}
	// The root graph's many placeholders are all inside its inputs box.
	inputs := int32(-1)
	for x, k := range f.Groups.Kind {
		if k == KindInputs && f.Groups.Graph[x] == 0 {
			inputs = int32(x)
		}
	}
	if inputs < 0 {
		t.Fatal("no inputs box for the root graph")
	}
	for k, name := range f.Nodes.Name {
		if f.Nodes.Graph[k] != 0 {
			continue
		}
		in := false
		for y := f.Nodes.Group[k]; y >= 0; y = f.Groups.Parent[y] {
			in = in || y == inputs
		}
		if in != (f.Nodes.Flags[k]&FlagPlaceholder != 0) {
			t.Errorf("node %s: in the inputs box %v, placeholder %v", name, in, f.Nodes.Flags[k]&FlagPlaceholder != 0)
			break
		}
	}
}

// TestJointPartition checks the joint view of a real model against its
// partition: forward nodes are the forward graph's, saved values are the
// partition's, and each saved value is a forward node.
func TestJointPartition(t *testing.T) {
	in, err := hopload.Open("../../testdata/models/mlp.pb", hopload.Strict)
	if err != nil {
		t.Fatal(err)
	}
	m := in.Module
	j, err := jointgraph.Build(m, jointgraph.Options{File: "mlp.pb"})
	if err != nil {
		t.Fatal(err)
	}
	part, err := partition.Split(j, partition.MinCut)
	if err != nil {
		t.Fatal(err)
	}
	f := Build("mlp.pb", j.Module, nil, Options{Partition: part})
	if f.Joint == nil || len(f.Joint.Saved) != len(part.Saved()) {
		t.Fatalf("joint view %+v, partition saves %d values", f.Joint, len(part.Saved()))
	}
	fwd := map[string]bool{}
	for _, n := range part.Forward.Root().Nodes {
		fwd[n.Name] = true
	}
	nbw := 0
	for k, name := range f.Nodes.Name {
		if f.Nodes.Graph[k] != 0 || f.Nodes.Flags[k]&FlagOutput != 0 {
			continue
		}
		fl := f.Nodes.Flags[k]
		if (fl&FlagForward != 0) == (fl&FlagBackward != 0) {
			t.Errorf("%s: forward %v, backward %v", name, fl&FlagForward != 0, fl&FlagBackward != 0)
		}
		if fl&FlagBackward != 0 {
			nbw++
		} else if !fwd[name] {
			t.Errorf("%s is coloured forward but is not in the forward graph", name)
		}
	}
	if nbw == 0 {
		t.Error("no backward node")
	}
	var total int64
	saved := part.Saved()
	for i, s := range f.Joint.Saved {
		if s.Name != saved[i].Name || s.Bytes != saved[i].Bytes {
			t.Errorf("saved %d: %s %d bytes, partition says %s %d", i, s.Name, s.Bytes, saved[i].Name, saved[i].Bytes)
		}
		if s.Node < 0 || f.Nodes.Flags[s.Node]&(FlagSaved|FlagForward) != FlagSaved|FlagForward {
			t.Errorf("saved value %s is not a flagged forward node", s.Name)
		}
		if s.Bytes > 0 {
			total += s.Bytes
		}
	}
	if total != f.Joint.TotalBytes || total != part.TotalBytes() {
		t.Errorf("total %d, model says %d, partition %d", total, f.Joint.TotalBytes, part.TotalBytes())
	}
}

// TestModelExplorer checks the graph JSON is consistent the way Model
// Explorer needs it — unique node ids, edges between existing nodes,
// subgraph nodes nested in namespaces under their call node — and that the
// overlay colours each finding's path.
func TestModelExplorer(t *testing.T) {
	m, _, f := loadFile(t, "../../testdata/hops/nested3_mutation.pbtxt")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(ModelExplorer(&f, m)); err != nil {
		t.Fatal(err)
	}
	// Read back as plain JSON, the way a loader would.
	var coll struct {
		Label  string
		Graphs []struct {
			ID    string
			Nodes []struct {
				ID, Label, Namespace string
				IncomingEdges        []struct{ SourceNodeID, SourceNodeOutputID, TargetNodeInputID string }
				OutputsMetadata      []struct{ ID string }
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &coll); err != nil {
		t.Fatal(err)
	}
	if coll.Label == "" || len(coll.Graphs) != 1 {
		t.Fatalf("want one graph in a labelled collection, got %d (%q)", len(coll.Graphs), coll.Label)
	}
	g := coll.Graphs[0]
	ids := map[string]string{} // id -> namespace
	for _, n := range g.Nodes {
		if _, dup := ids[n.ID]; dup {
			t.Errorf("duplicate node id %s", n.ID)
		}
		ids[n.ID] = n.Namespace
	}
	if len(ids) != len(f.Nodes.Name) {
		t.Errorf("%d nodes, the file has %d", len(ids), len(f.Nodes.Name))
	}
	for _, n := range g.Nodes {
		for _, e := range n.IncomingEdges {
			if _, ok := ids[e.SourceNodeID]; !ok {
				t.Errorf("node %s: edge from missing node %s", n.ID, e.SourceNodeID)
			}
		}
	}
	// Each subgraph's nodes sit in a namespace under the namespace of the
	// call node that calls it, named after the call and the subgraph.
	for _, gr := range m.Graphs[1:] {
		for _, n := range gr.Nodes {
			ns := ids[meNodeID(gr.Name, n.Name)]
			short := gr.Name[strings.LastIndexByte(gr.Name, '.')+1:]
			if !strings.HasSuffix(ns, "/"+short) {
				t.Errorf("%s:%s in namespace %q, want one ending in /%s", gr.Name, n.Name, ns, short)
			}
		}
	}
	// Every subgraph placeholder is fed by one operand of the call its
	// namespace nests under: a node whose namespace is a prefix of its own.
	byID := map[string]int{}
	for i, n := range g.Nodes {
		byID[n.ID] = i
	}
	for _, gr := range m.Graphs[1:] {
		for _, id := range gr.Placeholders() {
			n := g.Nodes[byID[meNodeID(gr.Name, gr.Nodes[id].Name)]]
			if len(n.IncomingEdges) != 1 {
				t.Errorf("placeholder %s has %d incoming edges, want 1 from the call's operand", n.ID, len(n.IncomingEdges))
				continue
			}
			src := n.IncomingEdges[0].SourceNodeID
			if !strings.HasPrefix(n.Namespace, ids[src]) || n.Namespace == ids[src] {
				t.Errorf("placeholder %s (namespace %s) is fed by %s (namespace %s), not from its caller's graph", n.ID, n.Namespace, src, ids[src])
			}
		}
	}
	ov := ModelExplorerOverlay(&f, m)
	data, ok := ov[g.ID]
	if !ok || len(ov) != 1 {
		t.Fatalf("overlay keyed %v, want the graph id %s", ov, g.ID)
	}
	for id := range data.Results {
		if _, ok := ids[id]; !ok {
			t.Errorf("overlay names node %s the graph does not have", id)
		}
	}
	for _, fd := range f.Findings {
		for _, k := range fd.Path {
			id := meNodeID(m.Graphs[f.Nodes.Graph[k]].Name, f.Nodes.Name[k])
			if data.Results[id].Value != OverlayFinding {
				t.Errorf("finding path node %s has overlay value %v, want %d", id, data.Results[id].Value, OverlayFinding)
			}
		}
	}
}

// TestWriteHTMLSelfContained checks the page loads nothing from outside
// (no src or href attribute, a Content-Security-Policy forbidding it) and
// that data holding "</script>" cannot end a script element early.
func TestWriteHTMLSelfContained(t *testing.T) {
	_, _, f := loadFile(t, "../../testdata/hops/nested3_mutation.pbtxt")
	f.Findings[0].Message = `</script><script>alert(1)</script>`
	var buf bytes.Buffer
	if err := WriteHTML(&buf, &Doc{Version: DocVersion, Title: "t</title>", Files: []File{f}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "</script>"); n != 3 {
		t.Errorf("%d </script> tags, want the page's 3", n)
	}
	if regexp.MustCompile(`(?i)\s(src|href)\s*=`).MatchString(page) {
		t.Error("the page has a src or href attribute")
	}
	if !strings.Contains(page, `content="default-src 'none';`) {
		t.Error("no Content-Security-Policy forbidding requests")
	}
	if strings.Contains(page, "t</title>") {
		t.Error("the title is not escaped")
	}
}

// TestJointFileRoles checks that a joint graph read without its partition
// (a file hopctl joint wrote) is coloured from its role annotation: the
// values it lists as saved include every value the default partition
// saves, and are forward values a backward node reads.
func TestJointFileRoles(t *testing.T) {
	for _, model := range []string{"mlp", "attention", "convbn", "embedding", "resnet18", "inplace_views"} {
		in, err := hopload.Open("../../testdata/models/"+model+".pb", hopload.Strict)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jointgraph.Build(in.Module, jointgraph.Options{File: model})
		if err != nil {
			t.Fatal(err)
		}
		part, err := partition.Split(j, partition.Default)
		if err != nil {
			t.Fatal(err)
		}
		f := Build(model, j.Module, nil, Options{})
		if f.Joint == nil {
			t.Fatalf("%s: no joint view of a joint graph", model)
		}
		var got []string
		for _, s := range f.Joint.Saved {
			got = append(got, s.Name)
			if f.Nodes.Flags[s.Node]&FlagForward == 0 {
				t.Errorf("%s: saved value %s is not a forward node", model, s.Name)
			}
			readByBackward := false
			for _, u := range ir.NewDefUse(j.Module.Root()).Users[s.Node] {
				readByBackward = readByBackward || f.Nodes.Flags[u]&FlagBackward != 0
			}
			if !readByBackward {
				t.Errorf("%s: saved value %s is read by no backward node", model, s.Name)
			}
		}
		for _, s := range part.Saved() {
			if !slices.Contains(got, s.Name) {
				t.Errorf("%s: the default partition saves %s; the joint view lists %v", model, s.Name, got)
			}
		}
	}
}

// reaches reports whether node to is reachable from node from along
// def-use edges of g.
func reaches(g *ir.Graph, from, to ir.NodeID) bool {
	du := ir.NewDefUse(g)
	seen := map[ir.NodeID]bool{from: true}
	for stack := []ir.NodeID{from}; len(stack) > 0; {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == to {
			return true
		}
		for _, v := range du.Users[u] {
			if !seen[v] {
				seen[v] = true
				stack = append(stack, v)
			}
		}
	}
	return false
}
