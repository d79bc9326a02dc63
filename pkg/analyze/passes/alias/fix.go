package alias

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/hop"
)

// The fixes of the HOP alias and mutation findings follow PyTorch's own
// advice: torch/_higher_order_ops/utils.py (2.14.1) refuses with "...
// might be aliasing the input or the output!", cond.py (2.6.0) adds "If
// you are returning a view of the input, please make sure to clone it" and
// "Consider cloning the input before modifying it", and Dynamo's graph
// break (torch/_dynamo/variables/higher_order_ops.py, 2.14.1) hints
// "Replace `return input` with `return input.clone()` to avoid aliasing".

// aliasFix is the fix of an aliasing finding of call sc with provenance
// prov: which output aliases which input (or output), and the .clone()
// that breaks it. It follows aliasAtCall's choice of the pair reported.
func aliasFix(sc *hop.SubgraphCall, sum *Summary, prov analyze.Provenance, inputOnly bool) *analyze.Fix {
	in := func(i int) string {
		if i >= 0 && i < len(sum.Inputs) {
			return fmt.Sprintf("input %d (%s)", i, sum.Inputs[i])
		}
		return fmt.Sprintf("input %d", i)
	}
	f := &analyze.Fix{Graph: sc.Graph, Node: prov.Node}
	switch {
	case inputOnly && len(sum.InpOutAlias) > 0 && (sum.FirstAlias == nil || sum.FirstAlias.Input != sum.InpOutAlias[0].From):
		p := sum.InpOutAlias[0]
		f.Node = ""
		f.Text = fmt.Sprintf("output %d of %s aliases its %s: return a .clone() of it", p.To, sc.Graph, in(p.From))
		return f
	case sum.FirstAlias != nil && sum.FirstAlias.Input >= 0:
		a := sum.FirstAlias
		f.Text = fmt.Sprintf("output %d of %s is a view of its %s, made by %s: return %s.clone() instead (or compute it out of place)",
			a.Output, sc.Graph, in(a.Input), prov.Node, prov.Node)
	case sum.FirstAlias != nil:
		a := sum.FirstAlias
		f.Text = fmt.Sprintf("outputs %d and %d of %s share a storage (%s): return a .clone() of one of them", a.Output, a.Other, sc.Graph, prov.Node)
	default:
		// Inputs or operands sharing a storage: the caller passes one
		// tensor twice.
		f.Graph, f.Node = "", ""
		f.Text = fmt.Sprintf("operands of %s share a storage: pass a .clone() of one of them", sc.Graph)
		return f
	}
	f.Source, f.Code = innermostFrame(prov.StackTrace)
	if m := returnRE().FindStringSubmatch(f.Code); m != nil && !strings.Contains(m[1], ",") {
		f.Suggestion = "return " + m[1] + ".clone()"
	}
	return f
}

// mutationFix is the fix of a mutation finding of call sc: the written
// input, the writing node, and the clone (or out-of-place op) that keeps
// the write off the operand.
func mutationFix(sc *hop.SubgraphCall, sum *Summary, m phMutation, prov analyze.Provenance) *analyze.Fix {
	name := fmt.Sprintf("placeholder %d", m.Pos)
	for i, pos := range sum.InputPos {
		if pos == m.Pos && i < len(sum.Inputs) {
			name = fmt.Sprintf("input %d (%s)", i, sum.Inputs[i])
		}
	}
	f := &analyze.Fix{Graph: sc.Graph, Node: prov.Node}
	f.Text = fmt.Sprintf("%s writes its %s: write a .clone() of it (x = x.clone() first) or use the out-of-place op", prov.Node, name)
	if op := outOfPlace(prov.Node); op != "" {
		f.Text = fmt.Sprintf("%s writes its %s: write a .clone() of it (x = x.clone() first) or use the out-of-place %s", prov.Node, name, op)
	}
	f.Source, f.Code = innermostFrame(prov.StackTrace)
	return f
}

// outOfPlace is the out-of-place op of an in-place node's name ("add_",
// "add__1" → "add"), "" for other names.
func outOfPlace(node string) string {
	if m := inplaceRE().FindStringSubmatch(node); m != nil {
		return m[1]
	}
	return ""
}

var (
	returnRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^return\s+(\S.*?)\s*$`) })
	inplaceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z][a-z0-9_]*?[a-z0-9])_(?:_[0-9]+)?$`) })
	frameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*File "([^"]+)", line ([0-9]+)`) })
)

// innermostFrame is the last frame of a Python stack trace as "FILE:LINE"
// and the code line under it (FX records the user's frames, outermost
// first, then the line).
func innermostFrame(trace string) (source, code string) {
	lines := strings.Split(strings.TrimRight(trace, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := frameRE().FindStringSubmatch(lines[i]); m != nil {
			source = m[1] + ":" + m[2]
			if i+1 < len(lines) && frameRE().FindStringSubmatch(lines[i+1]) == nil {
				code = strings.TrimSpace(lines[i+1])
			}
			return source, code
		}
	}
	return "", ""
}
