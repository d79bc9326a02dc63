package analyze

import (
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// lineBreakers returns the module's strings that hold a line break (CR or
// LF): graph names, node names, targets, keyword names and string
// arguments, longest first. A finding's message quotes them, and its own
// line breaks separate its lines (a fix, a schema), so the writers cannot
// tell a file's line break from the message's: quoteFileStrings escapes
// the file's before the finding is recorded.
func lineBreakers(m *ir.Module) []string {
	seen := map[string]bool{}
	add := func(s string) {
		if strings.ContainsAny(s, "\r\n") {
			seen[s] = true
		}
	}
	var arg func(a *ir.Arg)
	arg = func(a *ir.Arg) {
		if a.Kind == ir.ArgStr {
			add(a.S)
		}
		for i := range a.Elems() {
			arg(&a.Elems()[i])
		}
	}
	for _, g := range m.Graphs {
		add(g.Name)
		for i := range g.Nodes {
			n := &g.Nodes[i]
			add(n.Name)
			add(n.Target)
			for j := range n.Args {
				arg(&n.Args[j])
			}
			for j := range n.Kwargs {
				add(n.Kwargs[j].Name)
				arg(&n.Kwargs[j].Value)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return out
}

// quoteFileStrings writes every occurrence of the strings in file (from
// lineBreakers) in msg escaped (ir.Printable: "\n", "\r"), so a name
// holding a line break stays on its line in every report.
func quoteFileStrings(msg string, file []string) string {
	for _, s := range file {
		if strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, ir.Printable(s))
		}
	}
	return msg
}
