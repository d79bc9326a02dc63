package viz

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Model Explorer (google-ai-edge/model-explorer) formats, as its Python
// package ai-edge-model-explorer 0.1.x defines them
// (src/server/package/src/model_explorer/graph_builder.py and
// node_data_builder.py) and its JSON loader reads them
// (src/ui/src/common/utils.ts, loadGraphsJson: a GraphCollection object
// {"label", "graphs"} is used as it is).

// MEGraphCollection is a GraphCollection: what `hopctl print --format
// model-explorer` writes, loadable in Model Explorer as a .json file.
type MEGraphCollection struct {
	Label  string    `json:"label"`
	Graphs []MEGraph `json:"graphs"`
}

// MEGraph is a Model Explorer Graph.
type MEGraph struct {
	ID    string   `json:"id"`
	Nodes []MENode `json:"nodes"`
	// GroupNodeAttributes are shown for a selected layer; "" is the graph.
	GroupNodeAttributes map[string]map[string]string `json:"groupNodeAttributes,omitempty"`
}

// MENode is a GraphNode.
type MENode struct {
	ID              string           `json:"id"`
	Label           string           `json:"label"`
	Namespace       string           `json:"namespace"`
	Attrs           []MEKeyValue     `json:"attrs"`
	IncomingEdges   []MEIncomingEdge `json:"incomingEdges"`
	OutputsMetadata []MEMetadataItem `json:"outputsMetadata"`
}

// MEKeyValue is a KeyValue attribute.
type MEKeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MEIncomingEdge is an IncomingEdge.
type MEIncomingEdge struct {
	SourceNodeID       string `json:"sourceNodeId"`
	SourceNodeOutputID string `json:"sourceNodeOutputId"`
	TargetNodeInputID  string `json:"targetNodeInputId"`
}

// MEMetadataItem is a MetadataItem of one output.
type MEMetadataItem struct {
	ID    string       `json:"id"`
	Attrs []MEKeyValue `json:"attrs"`
}

// MEGraphNodeData is GraphNodeData: one graph's per-node values; a
// ModelNodeData file maps graph ids to it.
type MEGraphNodeData struct {
	Results    map[string]MENodeDataResult `json:"results"`
	Thresholds []METhreshold               `json:"thresholds"`
}

// MENodeDataResult is a NodeDataResult.
type MENodeDataResult struct {
	Value   float64 `json:"value"`
	BgColor string  `json:"bgColor,omitempty"`
}

// METhreshold is a ThresholdItem: values up to Value get BgColor.
type METhreshold struct {
	Value   float64 `json:"value"`
	BgColor string  `json:"bgColor"`
}

// Overlay values, highest first wins: what the overlay's colours mean.
const (
	OverlayAliased  = 1 // an input or output in an alias class
	OverlaySaved    = 2 // saved for the backward (joint and partition files)
	OverlayMutated  = 3 // a mutated input, or the node that writes it
	OverlayFinding  = 4 // on a finding's provenance path, or where one is reported
	colourAliased   = "#90caf9"
	colourSaved     = "#ce93d8"
	colourMutated   = "#ffb74d"
	colourFinding   = "#ef5350"
	meIDSep         = ":"
	meNamespaceSep  = "/"
	meSubgraphLabel = "subgraph"
)

// maxNamed bounds the members of an alias class named in a node's
// attribute, so that the output stays linear in the graph.
const maxNamed = 8

// meGraphID is the id of the one graph hopctl writes per file: the file's
// base name without extension. The overlay is keyed by it.
func meGraphID(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// meNodeID is a node's id: its name in the root graph, "qualname:name" in
// a subgraph (FX names have no ':').
func meNodeID(graph, node string) string {
	if graph == "" {
		return node
	}
	return graph + meIDSep + node
}

// ModelExplorer converts a file's model (Build) and module to one Model
// Explorer graph: every graph's nodes in one graph, HOP bodies nested as
// namespaces under their call node's namespace ("cond/true_graph_0/…"),
// nn_module_stack entries as namespaces, the analysis as node attributes.
func ModelExplorer(f *File, m *ir.Module) *MEGraphCollection {
	g := MEGraph{ID: meGraphID(f.Path), Nodes: make([]MENode, 0, len(f.Nodes.Name))}
	// The namespace each graph's nodes live under: its first caller's
	// namespace, the caller's name and the graph's own name.
	graphNS := make([]string, len(m.Graphs))
	done := make([]bool, len(m.Graphs))
	done[0] = true
	nodeNS := func(gi int, n *ir.Node) string {
		parts := []string{}
		if graphNS[gi] != "" {
			parts = append(parts, graphNS[gi])
		}
		if n.Meta != nil {
			for _, e := range n.Meta.NNModuleStack {
				p := e.Path
				if p == "" {
					p = e.Key
				}
				parts = append(parts, strings.ReplaceAll(p, meNamespaceSep, "_"))
			}
		}
		return strings.Join(parts, meNamespaceSep)
	}
	// A subgraph's namespace is its caller's node namespace, the call
	// node's name and its own short name; a graph no node calls is named
	// by its qualified name.
	callerOf := make([]int32, len(m.Graphs)) // the call node a subgraph nests under
	for i := range callerOf {
		callerOf[i] = -1
	}
	var resolve func(si int) string
	resolve = func(si int) string {
		if done[si] {
			return graphNS[si]
		}
		done[si] = true // a cycle (not in a verified file) ends here
		graphNS[si] = strings.ReplaceAll(m.Graphs[si].Name, ".", meNamespaceSep)
		x := f.Groups.Parent[f.Graphs[si].Group]
		for x >= 0 && f.Groups.Kind[x] != KindCall {
			x = f.Groups.Parent[x]
		}
		if x < 0 {
			return graphNS[si]
		}
		k := f.Groups.Node[x]
		callerOf[si] = k
		gk := int(f.Nodes.Graph[k])
		resolve(gk)
		n := &m.Graphs[gk].Nodes[k-firstNode(f, gk)]
		short := m.Graphs[si].Name
		if dot := strings.LastIndexByte(short, '.'); dot >= 0 {
			short = short[dot+1:]
		}
		graphNS[si] = strings.Trim(nodeNS(gk, n)+meNamespaceSep+n.Name+meNamespaceSep+short, meNamespaceSep)
		return graphNS[si]
	}
	for si := range m.Graphs {
		resolve(si)
	}
	findingsAt := map[int32][]string{}
	for _, fd := range f.Findings {
		if fd.Node >= 0 {
			findingsAt[fd.Node] = append(findingsAt[fd.Node], fd.Severity+": "+fd.Message+" ["+fd.Rule+"] via "+fd.Text)
		}
	}
	saved := map[int32]SavedValue{}
	if f.Joint != nil {
		for _, s := range f.Joint.Saved {
			saved[s.Node] = s
		}
	}
	for gi, gr := range m.Graphs {
		base := firstNode(f, gi)
		for i := range gr.Nodes {
			n := &gr.Nodes[i]
			k := base + int32(i)
			node := MENode{ID: meNodeID(gr.Name, n.Name), Label: OpName(n), Namespace: nodeNS(gi, n),
				Attrs:         []MEKeyValue{{"name", n.Name}, {"op", n.Op.String()}, {"graph", ir.DisplayName(gr.Name)}},
				IncomingEdges: []MEIncomingEdge{}, OutputsMetadata: []MEMetadataItem{}}
			if n.Op != ir.OpPlaceholder && n.Op != ir.OpOutput {
				node.Attrs = append(node.Attrs, MEKeyValue{"target", n.Target})
			}
			node.Attrs = append(node.Attrs, MEKeyValue{"fx", ir.FormatNode(gr, ir.NodeID(i))})
			if n.Meta != nil {
				if n.Meta.StackTrace != "" {
					node.Attrs = append(node.Attrs, MEKeyValue{"stack_trace", n.Meta.StackTrace})
				}
				if len(n.Meta.NNModuleStack) > 0 {
					var ps []string
					for _, e := range n.Meta.NNModuleStack {
						ps = append(ps, e.Path+": "+e.Type)
					}
					node.Attrs = append(node.Attrs, MEKeyValue{"nn_module_stack", strings.Join(ps, "\n")})
				}
			}
			fl := f.Nodes.Flags[k]
			if fl&FlagMutatedInput != 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.mutated_input", "true"})
			}
			if fl&FlagWriter != 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.writes_input", "true"})
			}
			if c := f.Nodes.Alias[k]; c >= 0 {
				// A class can hold every input of a graph: name a few.
				members := f.AliasClasses[c]
				var names []string
				for _, o := range members[:min(len(members), maxNamed)] {
					names = append(names, f.Nodes.Name[o])
				}
				if len(members) > maxNamed {
					names = append(names, fmt.Sprintf("… %d more", len(members)-maxNamed))
				}
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.alias_class", strconv.Itoa(int(c)) + " (" + strings.Join(names, ", ") + ")"})
			}
			if fl&FlagBackward != 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.joint", "backward"})
			} else if fl&FlagForward != 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.joint", "forward"})
			}
			if s, ok := saved[k]; ok && fl&FlagSaved != 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.saved_bytes", strconv.FormatInt(s.Bytes, 10)})
			}
			if fs := findingsAt[k]; len(fs) > 0 {
				node.Attrs = append(node.Attrs, MEKeyValue{"hopctl.findings", strings.Join(fs, "\n")})
			}
			// Incoming edges in argument order, one per reference.
			pos := 0
			n.WalkRefs(func(a *ir.Arg) {
				if a.Ref >= 0 && int(a.Ref) < len(gr.Nodes) && a.Ref != ir.NodeID(i) {
					node.IncomingEdges = append(node.IncomingEdges, MEIncomingEdge{
						SourceNodeID: meNodeID(gr.Name, gr.Nodes[a.Ref].Name), SourceNodeOutputID: "0", TargetNodeInputID: strconv.Itoa(pos)})
				}
				pos++
			})
			if n.Val != nil && n.Val.Kind != ir.ValUnset && n.Op != ir.OpOutput {
				md := MEMetadataItem{ID: "0", Attrs: []MEKeyValue{{"tensor_shape", ir.ShortValue(n.Val)}}}
				if n.Val.Kind == ir.ValTensor && n.Val.Tensor != nil {
					t := n.Val.Tensor
					md.Attrs = append(md.Attrs, MEKeyValue{"dtype", t.Dtype}, MEKeyValue{"stride", dimsString(t.Stride)})
				}
				node.OutputsMetadata = append(node.OutputsMetadata, md)
			}
			g.Nodes = append(g.Nodes, node)
		}
	}
	// Dataflow into HOP bodies: each subgraph placeholder gets an edge from
	// the caller's operand that feeds it (at the call it nests under).
	index := make(map[string]int, len(g.Nodes))
	for i := range g.Nodes {
		index[g.Nodes[i].ID] = i
	}
	for si := 1; si < len(m.Graphs); si++ {
		k := callerOf[si]
		if k < 0 {
			continue
		}
		gk := int(f.Nodes.Graph[k])
		caller := m.Graphs[gk]
		sub := m.Graphs[si]
		for _, fd := range feeds(m, caller, ir.NodeID(k-firstNode(f, gk)), sub) {
			dst := &g.Nodes[index[meNodeID(sub.Name, sub.Nodes[fd.placeholder].Name)]]
			dst.IncomingEdges = append(dst.IncomingEdges, MEIncomingEdge{
				SourceNodeID: meNodeID(caller.Name, caller.Nodes[fd.operand].Name), SourceNodeOutputID: "0", TargetNodeInputID: "0"})
		}
	}
	g.GroupNodeAttributes = map[string]map[string]string{"": {"file": f.Path, "producer": "hopctl", "graphs": strconv.Itoa(len(m.Graphs)), "findings": strconv.Itoa(len(f.Findings))}}
	for si := 1; si < len(m.Graphs); si++ {
		g.GroupNodeAttributes[graphNS[si]] = map[string]string{meSubgraphLabel: m.Graphs[si].Name}
	}
	return &MEGraphCollection{Label: filepath.Base(f.Path), Graphs: []MEGraph{g}}
}

// firstNode is the file-wide index of graph gi's first node.
func firstNode(f *File, gi int) int32 {
	// Nodes are stored graph after graph.
	lo, hi := 0, len(f.Nodes.Graph)
	for lo < hi {
		mid := (lo + hi) / 2
		if int(f.Nodes.Graph[mid]) < gi {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int32(lo)
}

// ModelExplorerOverlay is the node data (ModelNodeData) of the analysis:
// per node id, the highest of OverlayFinding, OverlayMutated, OverlaySaved
// and OverlayAliased that applies, with its colour; nodes with none are
// left out.
func ModelExplorerOverlay(f *File, m *ir.Module) map[string]MEGraphNodeData {
	res := map[string]MENodeDataResult{}
	set := func(k int32, v float64, colour string) {
		if k < 0 {
			return
		}
		id := meNodeID(m.Graphs[f.Nodes.Graph[k]].Name, f.Nodes.Name[k])
		if old, ok := res[id]; ok && old.Value >= v {
			return
		}
		res[id] = MENodeDataResult{Value: v, BgColor: colour}
	}
	for k := range f.Nodes.Name {
		fl := f.Nodes.Flags[k]
		if f.Nodes.Alias[k] >= 0 {
			set(int32(k), OverlayAliased, colourAliased)
		}
		if fl&FlagSaved != 0 {
			set(int32(k), OverlaySaved, colourSaved)
		}
		if fl&(FlagMutatedInput|FlagWriter) != 0 {
			set(int32(k), OverlayMutated, colourMutated)
		}
		if fl&FlagFinding != 0 {
			set(int32(k), OverlayFinding, colourFinding)
		}
	}
	for _, fd := range f.Findings {
		for _, k := range fd.Path {
			set(k, OverlayFinding, colourFinding)
		}
	}
	return map[string]MEGraphNodeData{meGraphID(f.Path): {Results: res, Thresholds: []METhreshold{
		{OverlayAliased, colourAliased}, {OverlaySaved, colourSaved}, {OverlayMutated, colourMutated}, {OverlayFinding, colourFinding}}}}
}
