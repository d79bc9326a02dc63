// Package viz turns a module and its analysis into views for people: the
// data model of `hopctl report`'s HTML page (Build, WriteHTML), Model
// Explorer's graph JSON and node data (WriteModelExplorer,
// WriteModelExplorerOverlay), and the neighbourhood filters of DOT output
// (Neighbourhood). Everything here is deterministic.
//
// The model groups a file's nodes into a tree of boxes the page draws
// collapsed or expanded: one box per graph; one per HOP call (or
// call_module) holding the call node and the boxes of the subgraphs it
// calls; one per nn_module_stack entry; and, where a box would hold more
// than MaxChildren items, boxes of consecutive items ("chunks"), so a
// 100,000-node graph opens as a few dozen boxes and every box the page
// lays out has at most MaxChildren items.
package viz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/partition"
	"github.com/hopctl/hopctl/pkg/report"
)

// DocVersion is the version of the data the page embeds (Doc). It changes
// when a key is removed or changes meaning.
const DocVersion = 1

// MaxChildren bounds the items (nodes and boxes) of one box.
const MaxChildren = 48

// Node flags.
const (
	FlagPlaceholder = 1 << iota
	FlagOutput
	FlagGetAttr
	FlagMutatedInput // an input the graph mutates (mutated_inputs)
	FlagWriter       // the node that writes an input, from a finding's provenance
	FlagForward      // joint view: a forward node
	FlagBackward     // joint view: a backward node
	FlagSaved        // joint view: saved for the backward
	FlagFinding      // the node a finding is reported at
)

// Group kinds.
const (
	KindGraph  = "graph"
	KindCall   = "call"   // a HOP call or call_module: the node and its subgraphs
	KindModule = "module" // an nn_module_stack entry
	KindChunk  = "chunk"  // consecutive items of an oversized box
	KindInputs = "inputs" // a graph's placeholders, when it has many
)

// MinInputsBox is the number of placeholders from which a graph's inputs
// get a box of their own (lifted parameters and buffers are most of a real
// model's placeholders). Placeholders are laid out side by side in one
// rank, so from a handful on they make a graph wider than a window at a
// legible scale; folded into one box, the report opens with the whole root
// graph in view (TestBrowserOpensFitted).
const MinInputsBox = 4

// Doc is everything the page shows.
type Doc struct {
	Version int    `json:"version"`
	Title   string `json:"title"`
	Files   []File `json:"files"`
}

// File is one input file.
type File struct {
	Path   string  `json:"path"`
	Graphs []Graph `json:"graphs"`
	// Nodes of every graph, columnar; node i of the file is Nodes.*[i].
	Nodes Nodes `json:"nodes"`
	// Edges are def-use edges as pairs of node indices, flattened.
	Edges  []int32 `json:"edges"`
	Groups Groups  `json:"groups"`
	// Strings holds the source lines nodes refer to (Nodes.Src).
	Strings  []string  `json:"strings"`
	Findings []Finding `json:"findings"`
	// AliasClasses lists, per alias class, the node indices in it.
	AliasClasses [][]int32 `json:"alias_classes"`
	Joint        *Joint    `json:"joint,omitempty"`
}

// Nodes are a file's nodes, one column per field.
type Nodes struct {
	Graph []int32  `json:"graph"`
	Name  []string `json:"name"`
	Label []string `json:"label"` // torch's style: "add_1: f32[4, 8] = aten.add.Tensor"
	Op    []string `json:"op"`    // the target for calls, else the node kind
	Group []int32  `json:"group"`
	Flags []int32  `json:"flags"`
	Alias []int32  `json:"alias"` // alias class, -1 for none
	Src   []int32  `json:"src"`   // index into Strings, -1 for none
}

// Groups are the boxes, one column per field; a parent of -1 is a top box.
type Groups struct {
	Parent []int32  `json:"parent"`
	Kind   []string `json:"kind"`
	Label  []string `json:"label"`
	Graph  []int32  `json:"graph"`
	// Node is the call node of a call box, -1 otherwise.
	Node []int32 `json:"node"`
}

// Graph is one graph's summary: its box and the four alias/mutation maps.
type Graph struct {
	Name          string   `json:"name"`
	Group         int32    `json:"group"`
	Inputs        []string `json:"inputs"`
	Outputs       []string `json:"outputs"` // the output leaf's node name, "" for a constant
	InpInpAlias   [][2]int `json:"inp_inp_alias"`
	InpOutAlias   [][2]int `json:"inp_out_alias"`
	OutOutAlias   [][2]int `json:"out_out_alias"`
	MutatedInputs []int    `json:"mutated_inputs"`
	// Mutations are the writes to the mutated inputs, each with its
	// provenance (sigmut.Mutations): "node add_" or "declared by the graph
	// signature, output 1 (BUFFER_MUTATION)", in input order.
	Mutations []Mutation `json:"mutations"`
	// AOTKinds are the inputs and outputs whose AOTAutograd view and
	// mutation kind is not the plain one, as the text report prints them
	// (report.ViewMetaKinds).
	AOTKinds []report.ViewMetaKind `json:"aot_kinds"`
	NumNodes int                   `json:"num_nodes"`
}

// Mutation is one write to input Input, with its provenance as the text
// report prints it.
type Mutation struct {
	Input      int    `json:"input"`
	Provenance string `json:"provenance"`
}

// Finding is a finding with its provenance resolved to nodes and boxes.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Graph    string `json:"graph"`
	Node     int32  `json:"node"` // -1 for a file-wide finding
	Message  string `json:"message"`
	// Path is the provenance end to end as node indices: the input, its
	// views, each call node and the writing or returning node.
	Path []int32 `json:"path"`
	// Boxes are the subgraph boxes the path enters.
	Boxes []int32 `json:"boxes"`
	Text  string  `json:"text"` // the provenance as `hopctl analyze` prints it
	Stack string  `json:"stack,omitempty"`
}

// Joint is the forward/backward view of a joint graph.
type Joint struct {
	Source string       `json:"source"` // how the roles were found
	Saved  []SavedValue `json:"saved"`
	// TotalBytes sums the saved values of known size.
	TotalBytes int64 `json:"total_bytes"`
	// BySource sums the saved values per source line (layer and user
	// line, partition.SavedValue.Source), in the order each first appears:
	// the page's per-layer bars. Set from a partition only.
	BySource []SourceBytes `json:"by_source,omitempty"`
	// SaveAllCount and SaveAllBytes are what a partition saving every
	// forward value the backward reads keeps (the default partition), -1
	// when not known.
	SaveAllCount int   `json:"save_all_count"`
	SaveAllBytes int64 `json:"save_all_bytes"`
}

// SourceBytes is the saved values of one source line.
type SourceBytes struct {
	Source string `json:"source"`
	Count  int    `json:"count"`
	Bytes  int64  `json:"bytes"`
}

// SavedValue is one value saved for the backward.
type SavedValue struct {
	Node  int32  `json:"node"`
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Shape string `json:"shape"`
	Dtype string `json:"dtype"`
	Bytes int64  `json:"bytes"` // -1 when symbolic
	// Source and Why: where the program makes it and why it is saved
	// (from a partition; empty otherwise).
	Source string `json:"source,omitempty"`
	Why    string `json:"why,omitempty"`
}

// Label is a node as torch's graph printout shows it:
// "add_1: f32[4, 8] = aten.add.Tensor".
func Label(n *ir.Node) string {
	var b strings.Builder
	b.WriteString(n.Name)
	if n.Val != nil && n.Val.Kind != ir.ValUnset && n.Val.Kind != ir.ValNone {
		b.WriteString(": ")
		b.WriteString(ir.ShortValue(n.Val))
	}
	b.WriteString(" = ")
	b.WriteString(OpName(n))
	return b.String()
}

// OpName is what a node computes: the call target, or the node kind.
func OpName(n *ir.Node) string {
	switch n.Op {
	case ir.OpCallFunction, ir.OpCallMethod:
		return n.Target
	case ir.OpGetAttr:
		return "get_attr " + n.Target
	case ir.OpCallModule:
		return "call_module " + n.Target
	}
	return n.Op.String()
}

// Options choose what Build adds to the model.
type Options struct {
	// Partition, when set, is the partition of the joint graph m: nodes are
	// coloured forward/backward and the saved values listed from it.
	Partition *partition.Partition
	// SaveAll, when set, is the default partition of the same joint: the
	// saved values' comparison.
	SaveAll *partition.Partition
}

// Build makes the model of one file from its module and analysis result
// (res may be nil).
func Build(path string, m *ir.Module, res *analyze.Result, opts Options) File {
	b := &builder{m: m, f: File{Path: path, Graphs: []Graph{}, Findings: []Finding{}, AliasClasses: [][]int32{}, Strings: []string{}}, strIdx: map[string]int32{}}
	b.nodes()
	b.groups()
	b.analysis(res)
	b.joint(opts.Partition, opts.SaveAll)
	return b.f
}

type builder struct {
	m        *ir.Module
	f        File
	base     []int32 // first node index of each graph
	graphIdx map[string]int
	strIdx   map[string]int32
	// callOf[g] is the call node of the first call site of graph g, -1.
	callOf []int32
}

func (b *builder) str(s string) int32 {
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	i := int32(len(b.f.Strings))
	b.f.Strings = append(b.f.Strings, s)
	b.strIdx[s] = i
	return i
}

// nodes fills the node table and the edges.
func (b *builder) nodes() {
	total := 0
	b.graphIdx = make(map[string]int, len(b.m.Graphs))
	b.base = make([]int32, len(b.m.Graphs))
	for gi, g := range b.m.Graphs {
		if _, dup := b.graphIdx[g.Name]; !dup {
			b.graphIdx[g.Name] = gi
		}
		b.base[gi] = int32(total)
		total += len(g.Nodes)
	}
	ns := &b.f.Nodes
	ns.Graph = make([]int32, 0, total)
	ns.Name = make([]string, 0, total)
	ns.Label = make([]string, 0, total)
	ns.Op = make([]string, 0, total)
	ns.Group = make([]int32, total)
	ns.Flags = make([]int32, total)
	ns.Alias = make([]int32, total)
	ns.Src = make([]int32, total)
	for gi, g := range b.m.Graphs {
		for i := range g.Nodes {
			n := &g.Nodes[i]
			k := b.base[gi] + int32(i)
			ns.Graph = append(ns.Graph, int32(gi))
			ns.Name = append(ns.Name, n.Name)
			ns.Label = append(ns.Label, Label(n))
			ns.Op = append(ns.Op, OpName(n))
			ns.Alias[k] = -1
			ns.Src[k] = -1
			if n.Meta != nil && n.Meta.StackTrace != "" {
				if s, ok := ir.StackSummary(n.Meta.StackTrace); ok {
					ns.Src[k] = b.str(s)
				}
			}
			switch n.Op {
			case ir.OpPlaceholder:
				ns.Flags[k] |= FlagPlaceholder
			case ir.OpOutput:
				ns.Flags[k] |= FlagOutput
			case ir.OpGetAttr:
				ns.Flags[k] |= FlagGetAttr
			}
		}
		du := ir.NewDefUse(g)
		for u, ops := range du.Operands {
			for _, d := range ops {
				b.f.Edges = append(b.f.Edges, b.base[gi]+int32(d), b.base[gi]+int32(u))
			}
		}
	}
	if b.f.Edges == nil {
		b.f.Edges = []int32{}
	}
}

// subgraphsOf returns the graphs node id of g calls: the subgraphs its
// arguments name through get_attr nodes, or its call_module target.
func (b *builder) subgraphsOf(g *ir.Graph, id ir.NodeID) []int {
	n := &g.Nodes[id]
	var out []int
	add := func(qual string) {
		if si, ok := b.graphIdx[qual]; ok && si != 0 {
			for _, o := range out {
				if o == si {
					return
				}
			}
			out = append(out, si)
		}
	}
	switch n.Op {
	case ir.OpCallModule:
		add(ir.Qualify(g, n.Target))
	case ir.OpCallFunction:
		n.WalkRefs(func(a *ir.Arg) {
			if a.Ref >= 0 && int(a.Ref) < len(g.Nodes) && g.Nodes[a.Ref].Op == ir.OpGetAttr {
				add(ir.Qualify(g, g.Nodes[a.Ref].Target))
			}
		})
	}
	return out
}

type groupKey struct {
	parent int32
	key    string
}

func (b *builder) newGroup(parent int32, kind, label string, graph int, node int32) int32 {
	gs := &b.f.Groups
	id := int32(len(gs.Parent))
	gs.Parent = append(gs.Parent, parent)
	gs.Kind = append(gs.Kind, kind)
	gs.Label = append(gs.Label, label)
	gs.Graph = append(gs.Graph, int32(graph))
	gs.Node = append(gs.Node, node)
	return id
}

// groups builds the box tree: graph boxes, call boxes, module boxes, then
// chunks wherever a box holds more than MaxChildren items.
func (b *builder) groups() {
	m := b.m
	ns := &b.f.Nodes
	b.f.Groups = Groups{Parent: []int32{}, Kind: []string{}, Label: []string{}, Graph: []int32{}, Node: []int32{}}
	graphGroup := make([]int32, len(m.Graphs))
	for gi, g := range m.Graphs {
		graphGroup[gi] = b.newGroup(-1, KindGraph, ir.DisplayName(g.Name), gi, -1)
	}
	// The first call site of each graph: subgraphs nest in its call box.
	b.callOf = make([]int32, len(m.Graphs))
	for i := range b.callOf {
		b.callOf[i] = -1
	}
	callGroup := map[int32]int32{} // call node -> its box
	for gi, g := range m.Graphs {
		moduleGroups := map[groupKey]int32{}
		inputs := int32(-1)
		if ph := g.Placeholders(); len(ph) >= MinInputsBox {
			inputs = b.newGroup(graphGroup[gi], KindInputs, "inputs of "+ir.DisplayName(g.Name), gi, -1)
		}
		for i := range g.Nodes {
			k := b.base[gi] + int32(i)
			parent := graphGroup[gi]
			if inputs >= 0 && g.Nodes[i].Op == ir.OpPlaceholder {
				ns.Group[k] = inputs
				continue
			}
			if meta := g.Nodes[i].Meta; meta != nil {
				for _, e := range meta.NNModuleStack {
					key := groupKey{parent, e.Key + "\x00" + e.Path}
					grp, ok := moduleGroups[key]
					if !ok {
						label := e.Path
						if label == "" {
							label = e.Key
						}
						if t := shortType(e.Type); t != "" {
							label += " (" + t + ")"
						}
						grp = b.newGroup(parent, KindModule, label, gi, -1)
						moduleGroups[key] = grp
					}
					parent = grp
				}
			}
			subs := b.subgraphsOf(g, ir.NodeID(i))
			if len(subs) > 0 {
				cg := b.newGroup(parent, KindCall, g.Nodes[i].Name, gi, k)
				callGroup[k] = cg
				parent = cg
				for _, si := range subs {
					if b.callOf[si] < 0 {
						b.callOf[si] = k
					}
				}
			}
			ns.Group[k] = parent
		}
	}
	for gi := 1; gi < len(m.Graphs); gi++ {
		if c := b.callOf[gi]; c >= 0 {
			b.f.Groups.Parent[graphGroup[gi]] = callGroup[c]
		} else {
			b.f.Groups.Parent[graphGroup[gi]] = graphGroup[0]
		}
	}
	for gi, g := range m.Graphs {
		b.f.Graphs = append(b.f.Graphs, Graph{Name: g.Name, Group: graphGroup[gi], NumNodes: len(g.Nodes),
			Inputs: []string{}, Outputs: []string{}, InpInpAlias: [][2]int{}, InpOutAlias: [][2]int{}, OutOutAlias: [][2]int{}, MutatedInputs: []int{}, Mutations: []Mutation{}})
	}
	b.chunk()
}

// chunk splits every box with more than MaxChildren items into boxes of
// consecutive items (in node order), repeatedly, until none has more.
func (b *builder) chunk() {
	gs := &b.f.Groups
	ns := &b.f.Nodes
	for {
		// Items of each box in order: nodes by index, boxes by their
		// first node.
		ng := len(gs.Parent)
		first := make([]int32, ng)
		for i := range first {
			first[i] = -1
		}
		for k, g := range ns.Group {
			for x := g; x >= 0; x = gs.Parent[x] {
				if first[x] >= 0 && first[x] <= int32(k) {
					break
				}
				first[x] = int32(k)
			}
		}
		type item struct {
			group int32 // -1 for a node
			node  int32
			key   int32
		}
		items := make([][]item, ng)
		for k, g := range ns.Group {
			items[g] = append(items[g], item{-1, int32(k), int32(k)})
		}
		for x := 0; x < ng; x++ {
			if p := gs.Parent[x]; p >= 0 {
				items[p] = append(items[p], item{int32(x), -1, first[x]})
			}
		}
		changed := false
		for x := 0; x < ng; x++ {
			its := items[x]
			if len(its) <= MaxChildren {
				continue
			}
			changed = true
			sortItems := func() {
				// Insertion-free: stable sort by key.
				sortSlice(its, func(i, j int) bool {
					if its[i].key != its[j].key {
						return its[i].key < its[j].key
					}
					return its[i].group < its[j].group
				})
			}
			sortItems()
			size := MaxChildren
			for (len(its)+size-1)/size > MaxChildren {
				size *= MaxChildren
			}
			for lo := 0; lo < len(its); lo += size {
				hi := min(lo+size, len(its))
				label := itemName(ns, gs, its[lo].node, its[lo].group, first) + " … " +
					itemName(ns, gs, its[hi-1].node, its[hi-1].group, first)
				c := b.newGroup(int32(x), KindChunk, label, int(gs.Graph[x]), -1)
				for _, it := range its[lo:hi] {
					if it.group >= 0 {
						gs.Parent[it.group] = c
					} else {
						ns.Group[it.node] = c
					}
				}
			}
		}
		if !changed {
			return
		}
	}
}

func itemName(ns *Nodes, gs *Groups, node, group int32, first []int32) string {
	if group < 0 {
		return ns.Name[node]
	}
	if first[group] >= 0 {
		return ns.Name[first[group]]
	}
	return gs.Label[group]
}

func shortType(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSuffix(t, "'>")
}

// analysis adds the four maps, mutated inputs, alias classes and findings.
func (b *builder) analysis(res *analyze.Result) {
	if res == nil {
		return
	}
	ns := &b.f.Nodes
	sums := res.Results[alias.Analyzer]
	for gi, g := range b.m.Graphs {
		s, ok := sums[g.Name].(*alias.Summary)
		if !ok {
			continue
		}
		gr := &b.f.Graphs[gi]
		gr.AOTKinds = report.ViewMetaKinds(report.NewAnalyzeGraph(b.m, g, s))
		gr.Inputs = append(gr.Inputs, s.Inputs...)
		inNode := make([]int32, len(s.Inputs))
		for i, name := range s.Inputs {
			inNode[i] = -1
			if id, ok := g.Lookup(name); ok {
				inNode[i] = b.base[gi] + int32(id)
			}
		}
		leaves, _ := g.Outputs()
		outNode := make([]int32, len(leaves))
		for j := range leaves {
			outNode[j] = -1
			name := ""
			if leaves[j].Kind == ir.ArgNode && leaves[j].Ref >= 0 {
				outNode[j] = b.base[gi] + int32(leaves[j].Ref)
				name = g.Nodes[leaves[j].Ref].Name
			}
			gr.Outputs = append(gr.Outputs, name)
		}
		for _, p := range s.InpInpAlias {
			gr.InpInpAlias = append(gr.InpInpAlias, [2]int{p.From, p.To})
		}
		for _, p := range s.InpOutAlias {
			gr.InpOutAlias = append(gr.InpOutAlias, [2]int{p.From, p.To})
		}
		for _, p := range s.OutOutAlias {
			gr.OutOutAlias = append(gr.OutOutAlias, [2]int{p.From, p.To})
		}
		gr.MutatedInputs = append(gr.MutatedInputs, s.MutatedInputs...)
		declared := false
		for _, mu := range sigmut.Mutations(b.m, s) {
			gr.Mutations = append(gr.Mutations, Mutation{Input: mu.Input, Provenance: mu.Provenance()})
			if mu.Declared() && !slices.Contains(gr.MutatedInputs, mu.Input) {
				gr.MutatedInputs = append(gr.MutatedInputs, mu.Input)
				declared = true
			}
		}
		if declared {
			slices.Sort(gr.MutatedInputs)
		}
		for _, i := range gr.MutatedInputs {
			if i < len(inNode) && inNode[i] >= 0 {
				ns.Flags[inNode[i]] |= FlagMutatedInput
			}
		}
		// Alias classes: inputs and outputs joined by the three maps.
		uf := newUnionFind(len(s.Inputs) + len(outNode))
		for _, p := range s.InpInpAlias {
			uf.union(p.From, p.To)
		}
		for _, p := range s.InpOutAlias {
			uf.union(p.From, len(s.Inputs)+p.To)
		}
		for _, p := range s.OutOutAlias {
			uf.union(len(s.Inputs)+p.From, len(s.Inputs)+p.To)
		}
		classOf := map[int]int32{}
		for x := 0; x < uf.n(); x++ {
			if uf.size(x) < 2 {
				continue
			}
			var node int32
			if x < len(s.Inputs) {
				node = inNode[x]
			} else {
				node = outNode[x-len(s.Inputs)]
			}
			if node < 0 || ns.Alias[node] >= 0 {
				continue
			}
			r := uf.find(x)
			c, ok := classOf[r]
			if !ok {
				c = int32(len(b.f.AliasClasses))
				classOf[r] = c
				b.f.AliasClasses = append(b.f.AliasClasses, nil)
			}
			ns.Alias[node] = c
			b.f.AliasClasses[c] = append(b.f.AliasClasses[c], node)
		}
	}
	for _, f := range res.Findings {
		b.f.Findings = append(b.f.Findings, b.finding(f))
	}
}

// finding resolves a finding's provenance to nodes and boxes.
func (b *builder) finding(f analyze.Finding) Finding {
	out := Finding{Rule: f.Rule, Severity: f.Severity.String(), Graph: f.Graph, Node: -1, Message: f.Message, Path: []int32{}, Boxes: []int32{}}
	gi, ok := b.graphIdx[f.Graph]
	if !ok || f.FileWide {
		return out
	}
	g := b.m.Graphs[gi]
	lookup := func(gi int, name string) int32 {
		if id, ok := b.m.Graphs[gi].Lookup(name); ok {
			return b.base[gi] + int32(id)
		}
		return -1
	}
	out.Node = lookup(gi, f.Node)
	if out.Node >= 0 {
		b.f.Nodes.Flags[out.Node] |= FlagFinding
	}
	p := f.Provenance
	if p == nil {
		if out.Node >= 0 {
			out.Path = append(out.Path, out.Node)
		}
		return out
	}
	out.Stack = p.StackTrace
	out.Text = p.Chain()
	add := func(k int32) {
		if k >= 0 && (len(out.Path) == 0 || out.Path[len(out.Path)-1] != k) {
			out.Path = append(out.Path, k)
		}
	}
	// The value the path follows: the input, then each view of it in the
	// finding's graph; at each HOP call it enters the subgraph placeholder
	// the call's operand feeds (feeds), so the path runs
	// input → views → call → placeholder → … → writing node. Views only
	// the innermost graph has come after its placeholder.
	val := int32(-1)
	if p.Input != "" {
		val = lookup(gi, p.Input)
		add(val)
	}
	inner := gi
	for _, item := range p.Path {
		if si, ok := b.graphIdx[item]; ok && si != 0 {
			inner = si
		}
	}
	var innerViews []string
	for _, v := range p.Views {
		if k := lookup(gi, v); k >= 0 {
			add(k)
			val = k
		} else {
			innerViews = append(innerViews, v)
		}
	}
	cur, call := gi, int32(-1)
	for i, item := range p.Path {
		if si, ok := b.graphIdx[item]; ok && si != 0 && b.m.Graphs[si] != g {
			out.Boxes = append(out.Boxes, b.f.Graphs[si].Group)
			val = b.enter(cur, call, val, si)
			add(val)
			cur = si
			if si == inner {
				for _, v := range innerViews {
					add(lookup(inner, v))
				}
			}
			continue
		}
		k := lookup(cur, item)
		add(k)
		call = k
		if i == len(p.Path)-1 && k >= 0 {
			b.f.Nodes.Flags[k] |= FlagWriter
		}
	}
	if len(p.Path) == 0 && p.Node != "" {
		if k := lookup(gi, p.Node); k >= 0 {
			add(k)
			b.f.Nodes.Flags[k] |= FlagWriter
		}
	}
	return out
}

// enter returns the placeholder of subgraph si that HOP call `call` (a
// node of graph gi) feeds with the value val, or -1 when the call does not
// pass val to si (or is not a HOP hopctl decodes).
func (b *builder) enter(gi int, call, val int32, si int) int32 {
	if call < 0 || val < 0 || b.f.Nodes.Graph[val] != int32(gi) {
		return -1
	}
	for _, fd := range feeds(b.m, b.m.Graphs[gi], ir.NodeID(call-b.base[gi]), b.m.Graphs[si]) {
		if b.base[gi]+int32(fd.operand) == val {
			return b.base[si] + int32(fd.placeholder)
		}
	}
	return -1
}

// feed is one caller value a HOP call passes to a subgraph placeholder.
type feed struct{ operand, placeholder ir.NodeID }

// feeds lists, for HOP call `call` of graph g, which of g's nodes feeds
// each placeholder of subgraph sub (by pkg/hop's conventions); nil when
// the call is not a HOP hopctl decodes or does not call sub.
func feeds(m *ir.Module, g *ir.Graph, call ir.NodeID, sub *ir.Graph) []feed {
	hc, err := hop.DecodeIn(nil, m, g, call)
	if err != nil || hc == nil {
		return nil
	}
	for _, sc := range hc.Subgraphs {
		if sc.Graph != sub.Name {
			continue
		}
		var out []feed
		ph := sub.Placeholders()
		for j, op := range sc.Operands {
			if j < len(ph) && op.Arg != nil && op.Arg.Kind == ir.ArgNode && op.Arg.Ref >= 0 && int(op.Arg.Ref) < len(g.Nodes) {
				out = append(out, feed{op.Arg.Ref, ph[j]})
			}
		}
		return out
	}
	return nil
}

// joint marks forward/backward nodes and the saved values of a joint
// graph: from the partition when there is one, else from the file's
// annotations (a joint, forward or backward graph hopctl wrote).
func (b *builder) joint(part, saveAll *partition.Partition) {
	root := b.m.Root()
	ns := &b.f.Nodes
	role, _ := b.m.Annotation(jointgraph.AnnotationRole)
	switch {
	case part != nil:
		fwd := map[string]bool{}
		for _, n := range part.Forward.Root().Nodes {
			if n.Op != ir.OpPlaceholder && n.Op != ir.OpOutput {
				fwd[n.Name] = true
			}
		}
		j := &Joint{Source: "partition (" + part.Mode.String() + ")", Saved: []SavedValue{}, SaveAllCount: -1, SaveAllBytes: -1}
		if part.Mode == partition.Default {
			saveAll = part
		}
		if saveAll != nil {
			j.SaveAllCount, j.SaveAllBytes = saveAll.NumSaved(), saveAll.TotalBytes()
		}
		for i := range root.Nodes {
			n := &root.Nodes[i]
			switch {
			case n.Op == ir.OpOutput:
			case n.Op == ir.OpPlaceholder && strings.HasPrefix(n.Name, "tangents_"):
				ns.Flags[i] |= FlagBackward
			case n.Op == ir.OpPlaceholder || fwd[n.Name]:
				ns.Flags[i] |= FlagForward
			default:
				ns.Flags[i] |= FlagBackward
			}
		}
		saved := part.Saved()
		for _, g := range partition.BySource(saved) {
			j.BySource = append(j.BySource, SourceBytes{Source: g.Source, Count: g.Count, Bytes: g.Bytes})
		}
		for _, s := range saved {
			k := int32(-1)
			if id, ok := root.Lookup(s.Name); ok {
				k = int32(id)
				ns.Flags[k] |= FlagSaved
			}
			sv := SavedValue{Node: k, Name: s.Name, Kind: s.Kind, Dtype: s.Dtype, Bytes: s.Bytes, Source: s.Source, Why: s.Why}
			if s.Kind == "tensor" {
				sv.Shape = dimsString(s.Shape)
			}
			j.Saved = append(j.Saved, sv)
		}
		j.TotalBytes = part.TotalBytes()
		b.f.Joint = j
	case role == "joint":
		// The forward is what the forward outputs (the first
		// hopctl.joint.num_fwd_outputs outputs) and the write-backs need,
		// with the primals, as AOTAutograd's default partition reads a
		// joint graph; the rest is the backward. The forward values the
		// backward reads (a tuple's getitems rather than the tuple) are
		// what a partition saves at most: jointgraph's partitioners may
		// save fewer (a value the backward reads only for its shape).
		du := ir.NewDefUse(root)
		nfStr, _ := b.m.Annotation(jointgraph.AnnotationNumFwdOutputs)
		var nf int
		fmt.Sscanf(nfStr, "%d", &nf)
		fwd := make([]bool, len(root.Nodes))
		var stack []ir.NodeID
		leaves, _ := root.Outputs()
		for i := 0; i < nf && i < len(leaves); i++ {
			if leaves[i].Kind == ir.ArgNode && leaves[i].Ref >= 0 {
				stack = append(stack, leaves[i].Ref)
			}
		}
		// Nodes that depend on a tangent are never forward.
		tangent := make([]bool, len(root.Nodes))
		for i := range root.Nodes {
			n := &root.Nodes[i]
			tangent[i] = n.Op == ir.OpPlaceholder && strings.HasPrefix(n.Name, "tangents_")
			for _, d := range du.Operands[i] {
				tangent[i] = tangent[i] || tangent[d]
			}
		}
		out := root.OutputNode()
		for i := range root.Nodes {
			n := &root.Nodes[i]
			// Primals, and side effects that need no tangent (the copy_
			// write-backs of mutated inputs, which nothing reads).
			if n.Op == ir.OpPlaceholder && !tangent[i] || ir.NodeID(i) != out && len(du.Users[i]) == 0 && !tangent[i] {
				stack = append(stack, ir.NodeID(i))
			}
		}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if fwd[u] {
				continue
			}
			fwd[u] = true
			stack = append(stack, du.Operands[u]...)
		}
		// A forward tuple's getitems are forward.
		for i := range root.Nodes {
			if root.Nodes[i].Target == "_operator.getitem" && len(du.Operands[i]) > 0 && fwd[du.Operands[i][0]] && !tangent[i] {
				fwd[i] = true
			}
		}
		j := &Joint{Source: "joint graph: the forward values the backward reads (a partition saves at most these)", Saved: []SavedValue{}, SaveAllCount: -1, SaveAllBytes: -1}
		for i := range root.Nodes {
			if ir.NodeID(i) == out {
				continue
			}
			if !fwd[i] {
				ns.Flags[i] |= FlagBackward
				continue
			}
			ns.Flags[i] |= FlagForward
			readByBackward := false
			for _, u := range du.Users[i] {
				readByBackward = readByBackward || !fwd[u] && u != out
			}
			if !readByBackward {
				continue
			}
			if v := root.Nodes[i].Val; v != nil && (v.Kind == ir.ValTuple || v.Kind == ir.ValList) {
				continue // a tuple is not saved: its getitems are
			}
			b.addSaved(j, int32(i))
		}
		b.f.Joint = j
	case role == "forward" || role == "backward":
		nstr, _ := b.m.Annotation("hopctl.partition.num_saved")
		var nsaved int
		fmt.Sscanf(nstr, "%d", &nsaved)
		j := &Joint{Source: role + " graph of a partition", Saved: []SavedValue{}, SaveAllCount: -1, SaveAllBytes: -1}
		flag := int32(FlagForward)
		if role == "backward" {
			flag = FlagBackward
		}
		for i := range root.Nodes {
			ns.Flags[i] |= flag
		}
		var cands []int32
		if role == "forward" {
			leaves, _ := root.Outputs()
			for i := max(0, len(leaves)-nsaved); i < len(leaves); i++ {
				if leaves[i].Kind == ir.ArgNode && leaves[i].Ref >= 0 {
					cands = append(cands, int32(leaves[i].Ref))
				}
			}
		} else {
			ph := root.Placeholders()
			for i := 0; i < nsaved && i < len(ph); i++ {
				cands = append(cands, int32(ph[i]))
			}
		}
		for _, k := range cands {
			b.addSaved(j, k)
		}
		b.f.Joint = j
	}
}

func (b *builder) addSaved(j *Joint, k int32) {
	n := &b.m.Root().Nodes[k]
	b.f.Nodes.Flags[k] |= FlagSaved
	sv := SavedValue{Node: k, Name: n.Name, Kind: "other", Bytes: -1}
	if n.Val != nil {
		switch n.Val.Kind {
		case ir.ValTensor:
			t := n.Val.Tensor
			sv.Kind, sv.Shape, sv.Dtype = "tensor", dimsString(t.Shape), t.Dtype
			if n, ok := jointgraph.TensorBytes(t); ok {
				sv.Bytes = n
			}
		case ir.ValSym, ir.ValInt:
			sv.Kind = "symint"
		}
	}
	j.Saved = append(j.Saved, sv)
	if sv.Bytes > 0 {
		j.TotalBytes += sv.Bytes
	}
}

func dimsString(ds []ir.Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		if d.IsSymbolic() {
			parts[i] = d.Expr
		} else {
			parts[i] = fmt.Sprint(d.Val)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
