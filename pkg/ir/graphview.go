package ir

import (
	"slices"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/iterator"
)

// graphNode and graphEdge are the nodes and edges of DefUse as a gonum
// graph, in place of gonum's simple.Node and simple.Edge, whose package
// links gonum's matrices (mat, blas, lapack) and their initialisers into
// every command.
type graphNode int64

// ID implements graph.Node.
func (n graphNode) ID() int64 { return int64(n) }

// graphEdge is a directed edge from F to T.
type graphEdge struct{ F, T graphNode }

// From implements graph.Edge.
func (e graphEdge) From() graph.Node { return e.F }

// To implements graph.Edge.
func (e graphEdge) To() graph.Node { return e.T }

// ReversedEdge implements graph.Edge.
func (e graphEdge) ReversedEdge() graph.Edge { return graphEdge{F: e.T, T: e.F} }

// DefUse is the def-use index of one graph: for each node the distinct nodes
// it reads (Operands) and the distinct nodes that read it (Users), both in
// node order. Self references and unresolved references are left out.
//
// DefUse implements gonum's graph.Directed (its digraph), with an edge from
// each definition to each of its users, so gonum's algorithms run on the
// IR directly.
type DefUse struct {
	digraph  // Out: Users, In: Operands
	Operands [][]NodeID
	Users    [][]NodeID
}

// NewDefUse builds the def-use index of g in one pass over its nodes.
func NewDefUse(g *Graph) *DefUse {
	n := len(g.Nodes)
	du := &DefUse{Operands: make([][]NodeID, n), Users: make([][]NodeID, n)}
	seen := make([]int32, n) // last user index+1 that recorded an edge to this def
	for i := range g.Nodes {
		uid := NodeID(i)
		g.Nodes[i].WalkRefs(func(a *Arg) {
			d := a.Ref
			if d < 0 || int(d) >= n || d == uid || seen[d] == int32(i)+1 {
				return
			}
			seen[d] = int32(i) + 1
			du.Operands[i] = append(du.Operands[i], d)
		})
	}
	for u, ops := range du.Operands {
		for _, d := range ops {
			du.Users[d] = append(du.Users[d], NodeID(u))
		}
	}
	du.digraph = digraph{Out: du.Users, In: du.Operands}
	return du
}

// digraph is a directed graph of the nodes 0 … len(Out)-1 given by its
// edges: Out[u] lists the nodes with an edge from u, In[v] those with an
// edge to v, each edge once. It implements gonum's graph.Directed.
type digraph struct{ Out, In [][]NodeID }

func (d *digraph) valid(id int64) bool { return id >= 0 && id < int64(len(d.Out)) }

func idsToNodes(ids []NodeID) graph.Nodes {
	if len(ids) == 0 {
		return graph.Empty
	}
	ns := make([]graph.Node, len(ids))
	for i, id := range ids {
		ns[i] = graphNode(id)
	}
	return iterator.NewOrderedNodes(ns)
}

// Node implements graph.Graph.
func (d *digraph) Node(id int64) graph.Node {
	if !d.valid(id) {
		return nil
	}
	return graphNode(id)
}

// Nodes implements graph.Graph, in node order.
func (d *digraph) Nodes() graph.Nodes {
	ns := make([]graph.Node, len(d.Out))
	for i := range ns {
		ns[i] = graphNode(i)
	}
	return iterator.NewOrderedNodes(ns)
}

// From implements graph.Graph: the nodes with an edge from id.
func (d *digraph) From(id int64) graph.Nodes {
	if !d.valid(id) {
		return graph.Empty
	}
	return idsToNodes(d.Out[id])
}

// To implements graph.Directed: the nodes with an edge to id.
func (d *digraph) To(id int64) graph.Nodes {
	if !d.valid(id) {
		return graph.Empty
	}
	return idsToNodes(d.In[id])
}

// HasEdgeFromTo implements graph.Directed.
func (d *digraph) HasEdgeFromTo(uid, vid int64) bool {
	return d.valid(uid) && d.valid(vid) && slices.Contains(d.In[vid], NodeID(uid))
}

// HasEdgeBetween implements graph.Graph.
func (d *digraph) HasEdgeBetween(xid, yid int64) bool {
	return d.HasEdgeFromTo(xid, yid) || d.HasEdgeFromTo(yid, xid)
}

// Edge implements graph.Graph.
func (d *digraph) Edge(uid, vid int64) graph.Edge {
	if !d.HasEdgeFromTo(uid, vid) {
		return nil
	}
	return graphEdge{F: graphNode(uid), T: graphNode(vid)}
}

var _ graph.Directed = (*DefUse)(nil)
