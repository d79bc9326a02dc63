package ir

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteDOT writes m as a Graphviz digraph: one "subgraph cluster_<n>" per
// graph (n its index in m.Graphs), labelled with the graph's qualified name
// ("<root>" for the root), one DOT node per IR node labelled with
// FormatNode, a solid edge from each definition to each of its users, and
// a dashed edge from each get_attr or call_module node to the cluster of the
// subgraph it names. Output depends only on m.
func WriteDOT(w io.Writer, m *Module) error {
	return WriteDOTWith(w, m, DOTOptions{Depth: -1})
}

// DOTOptions select part of a module for WriteDOTWith, so that a large
// graph's neighbourhood of interest renders.
type DOTOptions struct {
	// Depth is how many levels of subgraphs below the root are drawn: 0
	// the root graph only; negative, all.
	Depth int
	// Around, when set, names a node of the root graph: only the nodes at
	// most Radius def-use edges away from it (either direction) are drawn
	// there, and the subgraphs only those nodes call. Kept nodes with a
	// neighbour left out are drawn dashed.
	Around string
	Radius int
}

// WriteDOTWith is WriteDOT restricted by opts. An Around node the root
// graph does not have is an error.
func WriteDOTWith(w io.Writer, m *Module, opts DOTOptions) error {
	if m == nil || len(m.Graphs) == 0 {
		return fmt.Errorf("dot: module has no root graph")
	}
	bw := bufio.NewWriter(w)
	byName := make(map[string]int, len(m.Graphs))
	for i, g := range m.Graphs {
		if _, dup := byName[g.Name]; !dup {
			byName[g.Name] = i
		}
	}
	// Which graphs and nodes are drawn.
	keepGraph := make([]bool, len(m.Graphs))
	for i, g := range m.Graphs {
		keepGraph[i] = opts.Depth < 0 || i == 0 || strings.Count(g.Name, ".")+1 <= opts.Depth
	}
	dus := make([]*DefUse, len(m.Graphs))
	for gi, g := range m.Graphs {
		if keepGraph[gi] {
			dus[gi] = NewDefUse(g)
		}
	}
	var keepNode []bool // root graph nodes; nil keeps all
	cut := map[int]bool{}
	if opts.Around != "" {
		root := m.Root()
		start, ok := root.Lookup(opts.Around)
		if !ok {
			return fmt.Errorf("dot: graph %s has no node %q", DisplayName(root.Name), opts.Around)
		}
		du := dus[0]
		dist := make([]int, len(root.Nodes))
		for i := range dist {
			dist[i] = -1
		}
		dist[start] = 0
		queue := []NodeID{start}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			if dist[u] >= opts.Radius {
				continue
			}
			for _, v := range append(append([]NodeID(nil), du.Operands[u]...), du.Users[u]...) {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					queue = append(queue, v)
				}
			}
		}
		keepNode = make([]bool, len(root.Nodes))
		for i, d := range dist {
			keepNode[i] = d >= 0
		}
		for i := range root.Nodes {
			if !keepNode[i] {
				continue
			}
			for _, v := range append(append([]NodeID(nil), du.Operands[i]...), du.Users[i]...) {
				if !keepNode[v] {
					cut[i] = true
				}
			}
		}
		// Subgraphs: only those a kept node calls, and theirs.
		called := make([]bool, len(m.Graphs))
		var mark func(gi int)
		mark = func(gi int) {
			g := m.Graphs[gi]
			for i := range g.Nodes {
				n := &g.Nodes[i]
				if gi == 0 && !keepNode[i] || n.Op != OpGetAttr && n.Op != OpCallModule {
					continue
				}
				if si, ok := byName[Qualify(g, n.Target)]; ok && si != 0 && !called[si] {
					called[si] = true
					mark(si)
				}
			}
		}
		mark(0)
		for i := 1; i < len(m.Graphs); i++ {
			keepGraph[i] = keepGraph[i] && called[i]
		}
	}
	kept := func(gi, i int) bool { return gi != 0 || keepNode == nil || keepNode[i] }
	fmt.Fprintln(bw, "digraph hopctl {")
	fmt.Fprintln(bw, "  compound=true;")
	fmt.Fprintln(bw, "  rankdir=TB;")
	fmt.Fprintln(bw, `  node [shape=box, fontname="monospace", fontsize=10];`)
	fmt.Fprintln(bw, `  edge [fontname="monospace", fontsize=9];`)
	for gi, g := range m.Graphs {
		if !keepGraph[gi] {
			continue
		}
		fmt.Fprintf(bw, "  subgraph cluster_%d {\n", gi)
		fmt.Fprintf(bw, "    label=%s;\n", dotQuote(DisplayName(g.Name)))
		fmt.Fprintln(bw, `    style=rounded; color=gray50; fontname="monospace";`)
		if len(g.Nodes) == 0 {
			// An anchor so edges into an empty graph have somewhere to go.
			fmt.Fprintf(bw, "    %s [label=\"(empty)\", shape=plaintext];\n", dotID(gi, 0))
		}
		for i := range g.Nodes {
			if !kept(gi, i) {
				continue
			}
			attrs := "label=" + dotQuote(FormatNode(g, NodeID(i)))
			switch g.Nodes[i].Op {
			case OpPlaceholder:
				attrs += ", shape=ellipse"
			case OpOutput:
				attrs += ", shape=ellipse, peripheries=2"
			case OpGetAttr:
				attrs += ", shape=note"
			}
			if gi == 0 && cut[i] {
				attrs += ", style=dashed"
			}
			if gi == 0 && opts.Around != "" && g.Nodes[i].Name == opts.Around {
				attrs += ", penwidth=3"
			}
			fmt.Fprintf(bw, "    %s [%s];\n", dotID(gi, i), attrs)
		}
		fmt.Fprintln(bw, "  }")
	}
	for gi, g := range m.Graphs {
		if !keepGraph[gi] {
			continue
		}
		for u, ops := range dus[gi].Operands {
			for _, d := range ops {
				if kept(gi, u) && kept(gi, int(d)) {
					fmt.Fprintf(bw, "  %s -> %s;\n", dotID(gi, int(d)), dotID(gi, u))
				}
			}
		}
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if !kept(gi, i) || n.Op != OpGetAttr && n.Op != OpCallModule {
				continue
			}
			si, ok := byName[Qualify(g, n.Target)]
			if !ok || si == 0 || !keepGraph[si] {
				continue
			}
			fmt.Fprintf(bw, "  %s -> %s [style=dashed, lhead=cluster_%d];\n", dotID(gi, i), dotID(si, 0), si)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func dotID(graph, node int) string { return fmt.Sprintf("g%d_n%d", graph, node) }

// dotQuote quotes s as a DOT string. A line feed is DOT's line break in
// a label; every other control character, bidirectional override and
// invalid byte is written as its Go escape (Printable) with the backslash
// escaped, so the label shows "\x1b" and the DOT text holds no raw control
// byte for a terminal or a viewer to interpret.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == utf8.RuneError && !validAt(s, i):
			fmt.Fprintf(&b, `\\x%02x`, s[i])
		case needsEscape(r):
			b.WriteByte('\\')
			b.WriteString(Printable(string(r)))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
