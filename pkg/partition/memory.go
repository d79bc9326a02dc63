package partition

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
)

// What the backward keeps, grouped by where the user's program makes it:
// the per-layer view of saved-activation memory `hopctl joint --report`
// and the HTML report show.

// SourceBytes is the saved values of one source line (or module).
type SourceBytes struct {
	Source string
	Count  int
	Bytes  int64 // of the values of known size
}

// BySource groups saved values by Source, in the order each source first
// appears among them (the forward's order, so deterministic).
func BySource(saved []SavedValue) []SourceBytes {
	at := map[string]int{}
	var out []SourceBytes
	for _, s := range saved {
		i, ok := at[s.Source]
		if !ok {
			i = len(out)
			at[s.Source] = i
			out = append(out, SourceBytes{Source: s.Source})
		}
		out[i].Count++
		if s.Bytes > 0 {
			out[i].Bytes = satAdd(out[i].Bytes, s.Bytes)
		}
	}
	return out
}

// valueSource is SavedValue.Source of node n.
func valueSource(n *ir.Node) string {
	if n.Op == ir.OpPlaceholder {
		return "input"
	}
	if n.Meta == nil {
		return ""
	}
	if n.Meta.StackTrace != "" {
		if s, ok := ir.StackSummary(n.Meta.StackTrace); ok {
			return s
		}
	}
	if k := len(n.Meta.NNModuleStack); k > 0 {
		e := n.Meta.NNModuleStack[k-1]
		return fmt.Sprintf("module %s (%s)", e.Path, e.Type)
	}
	return ""
}
