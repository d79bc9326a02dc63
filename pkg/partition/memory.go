package partition

import (
	"fmt"
	"strings"

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

// valueSource is SavedValue.Source of node n: its layer, the innermost
// nn_module_stack entry ("fc1 (Linear)"), and its line in the user's
// program, the innermost frame of its stack trace outside torch's own
// package ("model.py:12 in forward: return self.fc1(x)"; torch's frames,
// such as nn/modules/linear.py, are the same for every layer of a kind),
// joined by " · "; "input" for a primal, "" when the node carries neither.
func valueSource(n *ir.Node) string {
	if n.Op == ir.OpPlaceholder {
		return "input"
	}
	if n.Meta == nil {
		return ""
	}
	var parts []string
	if k := len(n.Meta.NNModuleStack); k > 0 {
		e := n.Meta.NNModuleStack[k-1]
		typ := e.Type
		if i := strings.LastIndexByte(typ, '.'); i >= 0 {
			typ = typ[i+1:]
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", e.Path, typ))
	}
	if line := userFrame(n.Meta.StackTrace); line != "" {
		parts = append(parts, line)
	}
	return strings.Join(parts, " · ")
}

// userFrame is the innermost frame of a Python stack trace outside torch's
// package, as "file:line in function: code", or "" if there is none.
func userFrame(trace string) string {
	f, ok := ir.InnermostFrame(trace, func(file string) bool { return strings.Contains(file, "/torch/") })
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%s in %s: %s", f.File, f.Line, f.Func, f.Code)
}

// why is the reason a partition saves a value (SavedValue.Why), by the
// test that decided it in AOTAutograd's partitioners
// (torch/_functorch/partitioners.py: default_partition, solve_min_cut's
// should_ban_recomputation and its cut, choose_saved_values_set).
type why uint8

const (
	whyCut              why = iota // the minimum cut crosses its arc
	whyInput                       // a primal: an input is never recomputed
	whyRead                        // default_partition: the backward reads it
	whyEffect                      // a side-effecting op: recomputing repeats the effect
	whyRandom                      // a random op: recomputing draws other numbers
	whyNotRecomputable             // not in min-cut's list of recomputable ops
	whyComputeIntensive            // a matrix product, convolution or attention
	whyNonATen                     // a HOP or other non-ATen call
	whyReduction                   // its output is less than a quarter of its inputs
)

// String is the reason as the reports give it: a short head (before the
// colon: what the HTML table shows) and its explanation.
func (w why) String() string {
	switch w {
	case whyInput:
		return "input: never recomputed"
	case whyRead:
		return "read: the backward reads it (default partition)"
	case whyEffect:
		return "side effect: recomputing would repeat its writes"
	case whyRandom:
		return "random: recomputing would draw other numbers"
	case whyNotRecomputable:
		return "not recomputable: the op is not in min-cut's recomputable list"
	case whyComputeIntensive:
		return "compute-intensive: matrix products and convolutions are never recomputed"
	case whyNonATen:
		return "non-ATen: HOP and other non-ATen calls are never recomputed"
	case whyReduction:
		return "reduction: its output is under a quarter of its inputs' bytes"
	}
	return "min-cut: saving it costs fewer bytes than what recomputing it needs"
}

// resetWhy sets every node's reason to w (the array made once).
func (p *partitioner) resetWhy(w why) {
	if len(p.why) != p.n {
		p.why = make([]why, p.n)
	}
	for i := range p.why {
		p.why[i] = w
	}
}
