package ir

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteDOT writes m as a Graphviz digraph: one "subgraph cluster_<n>" per
// graph (n its index in m.Graphs), labelled with the graph's qualified name
// ("<root>" for the root), one DOT node per IR node labelled with
// FormatNode, a solid edge from each definition to each of its users, and
// a dashed edge from each get_attr or call_module node to the cluster of the
// subgraph it names. Output depends only on m.
func WriteDOT(w io.Writer, m *Module) error {
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
	fmt.Fprintln(bw, "digraph hopctl {")
	fmt.Fprintln(bw, "  compound=true;")
	fmt.Fprintln(bw, "  rankdir=TB;")
	fmt.Fprintln(bw, `  node [shape=box, fontname="monospace", fontsize=10];`)
	fmt.Fprintln(bw, `  edge [fontname="monospace", fontsize=9];`)
	for gi, g := range m.Graphs {
		fmt.Fprintf(bw, "  subgraph cluster_%d {\n", gi)
		fmt.Fprintf(bw, "    label=%s;\n", dotQuote(DisplayName(g.Name)))
		fmt.Fprintln(bw, `    style=rounded; color=gray50; fontname="monospace";`)
		if len(g.Nodes) == 0 {
			// An anchor so edges into an empty graph have somewhere to go.
			fmt.Fprintf(bw, "    %s [label=\"(empty)\", shape=plaintext];\n", dotID(gi, 0))
		}
		for i := range g.Nodes {
			attrs := "label=" + dotQuote(FormatNode(g, NodeID(i)))
			switch g.Nodes[i].Op {
			case OpPlaceholder:
				attrs += ", shape=ellipse"
			case OpOutput:
				attrs += ", shape=ellipse, peripheries=2"
			case OpGetAttr:
				attrs += ", shape=note"
			}
			fmt.Fprintf(bw, "    %s [%s];\n", dotID(gi, i), attrs)
		}
		fmt.Fprintln(bw, "  }")
	}
	for gi, g := range m.Graphs {
		du := NewDefUse(g)
		for u, ops := range du.Operands {
			for _, d := range ops {
				fmt.Fprintf(bw, "  %s -> %s;\n", dotID(gi, int(d)), dotID(gi, u))
			}
		}
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if n.Op != OpGetAttr && n.Op != OpCallModule {
				continue
			}
			si, ok := byName[Qualify(g, n.Target)]
			if !ok || si == 0 {
				continue
			}
			fmt.Fprintf(bw, "  %s -> %s [style=dashed, lhead=cluster_%d];\n", dotID(gi, i), dotID(si, 0), si)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func dotID(graph, node int) string { return fmt.Sprintf("g%d_n%d", graph, node) }

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
