package jointgraph

import "github.com/hopctl/hopctl/pkg/ir"

// dce removes call_function and get_attr nodes whose results nobody
// uses, except nodes with side effects (keep, renumbered in place), until
// none is left: it keeps exactly the nodes the other nodes and keep reach.
// It returns the compacted graph (a new Graph; g's nodes are reused) and
// its graphRefs.
func dce(g *ir.Graph, keep map[ir.NodeID]bool) (*ir.Graph, graphRefs) {
	n := len(g.Nodes)
	d := &dceState{live: make([]bool, n)}
	for i := n - 1; i >= 0; i-- {
		nd := &g.Nodes[i]
		if !d.live[i] && (nd.Op == ir.OpCallFunction || nd.Op == ir.OpGetAttr) && !keep[ir.NodeID(i)] {
			continue
		}
		d.live[i] = true
		d.visit(g, ir.NodeID(i))
	}
	live := d.live
	// Number the live nodes first, so that one pass moves each and
	// renumbers its references.
	newID := make([]ir.NodeID, n)
	kept := 0
	for i := range n {
		if live[i] {
			newID[i] = ir.NodeID(kept)
			kept++
		} else {
			newID[i] = ir.NoNode
		}
	}
	nodes := g.Nodes[:0]
	var refs graphRefs
	// The call targets in order of first use.
	seen := map[string]bool{}
	for i := range n {
		if !live[i] {
			continue
		}
		nd := &g.Nodes[i]
		switch nd.Op {
		case ir.OpCallFunction:
			if t := nd.Target; !seen[t] {
				seen[t] = true
				refs.calls = append(refs.calls, t)
			}
		case ir.OpGetAttr:
			refs.getAttrs = append(refs.getAttrs, nd.Target)
		}
		if kept < n {
			renumberRefs(nd, newID)
		}
		if len(nodes) != i {
			nodes = append(nodes, *nd)
		} else {
			nodes = nodes[:i+1] // in place already
		}
	}
	if kept < n {
		newKeep := map[ir.NodeID]bool{}
		for k := range keep {
			if newID[k] != ir.NoNode {
				newKeep[newID[k]] = true
			}
		}
		clear(keep)
		for k := range newKeep {
			keep[k] = true
		}
	}
	return &ir.Graph{Name: g.Name, Nodes: nodes}, refs
}

// renumberRefs rewrites nd's references through newID.
func renumberRefs(nd *ir.Node, newID []ir.NodeID) {
	for k := range nd.Args {
		renumberArg(&nd.Args[k], newID)
	}
	for k := range nd.Kwargs {
		renumberArg(&nd.Kwargs[k].Value, newID)
	}
}

// renumberArg rewrites a's references through newID, recursing into its
// elements.
func renumberArg(a *ir.Arg, newID []ir.NodeID) {
	if a.Kind == ir.ArgNode {
		if a.Ref >= 0 {
			a.Ref = newID[a.Ref]
		}
		return
	}
	for i := range a.Elems() {
		if e := &a.Elems()[i]; e.Kind == ir.ArgNode || len(e.Elems()) > 0 {
			renumberArg(e, newID)
		}
	}
}

type dceState struct {
	live []bool
	cur  ir.NodeID   // the node whose turn it is
	late []ir.NodeID // live nodes found after their turn (forward references)
}

// visit marks what live node i refers to, in a pass from the last node
// to the first: what the later nodes it marks refer to too.
func (d *dceState) visit(g *ir.Graph, i ir.NodeID) {
	d.cur = i
	d.late = d.late[:0]
	d.markNode(&g.Nodes[i])
	// References to later nodes (not in a valid graph): visit those now.
	for k := 0; k < len(d.late); k++ {
		d.markNode(&g.Nodes[d.late[k]])
	}
}

func (d *dceState) markNode(nd *ir.Node) {
	for k := range nd.Args {
		d.mark(&nd.Args[k])
	}
	for k := range nd.Kwargs {
		d.mark(&nd.Kwargs[k].Value)
	}
}

func (d *dceState) mark(a *ir.Arg) {
	if a.Kind != ir.ArgNode {
		for i := range a.Elems() {
			d.mark(&a.Elems()[i])
		}
		return
	}
	if r := a.Ref; r >= 0 && int(r) < len(d.live) && !d.live[r] {
		d.markRef(r)
	}
}

// markRef marks node r, not yet live, live.
func (d *dceState) markRef(r ir.NodeID) {
	d.live[r] = true
	if r > d.cur {
		d.late = append(d.late, r)
	}
}
