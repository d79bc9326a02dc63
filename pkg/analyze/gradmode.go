package analyze

import (
	"github.com/hopctl/hopctl/pkg/ir"
)

// The grad mode a node runs under. PyTorch relaxes some HOP rules when
// grad is disabled: torch 2.14's Dynamo sets supports_input_mutation (and
// cond's supports_aliasing) to `not torch.is_grad_enabled()`
// (torch/_dynamo/variables/higher_order_ops.py), evaluated while it traces
// the HOP call, i.e. under the mode of the program region the call is in.
// torch.inference_mode() disables grad as well (c10::InferenceMode sets
// grad_mode to !enabled; inference_mode(False) enables it).
//
// The mode a module starts in is, in order: what the file records
// (File.inference_mode, File.grad_enabled), the run's Options.GradMode
// (--grad-mode), else grad enabled, the default, under which the rules
// are strictest. Within a graph it changes where the program changes it:
// Dynamo writes `torch._C._set_grad_enabled(b)` for no_grad/enable_grad/
// set_grad_enabled blocks and `torch.autograd.grad_mode._enter_inference_mode(b)`
// ... `_exit_inference_mode(h)` for inference_mode blocks; torch.export's
// training IR wraps such a block in higher_order.wrap_with_set_grad_enabled
// (its subgraph runs under the call's enable_grad argument). A subgraph
// starts in the mode of the calls that use it: disabled only when every
// call site runs with grad disabled.

// GradMode values of Options.GradMode and --grad-mode.
const (
	GradModeEnabled   = "enabled"
	GradModeDisabled  = "disabled"
	GradModeInference = "inference"
)

// GradModes are the values Options.GradMode accepts ("" for none).
var GradModes = []string{GradModeEnabled, GradModeDisabled, GradModeInference}

// ValidGradMode reports whether s is a grad mode Options.GradMode accepts.
func ValidGradMode(s string) bool {
	for _, m := range GradModes {
		if s == m {
			return true
		}
	}
	return s == ""
}

// Region-changing call targets, as FX writes them.
const (
	setGradEnabledTarget     = "torch._C._set_grad_enabled"
	enterInferenceModeTarget = "torch.autograd.grad_mode._enter_inference_mode"
	exitInferenceModeTarget  = "torch.autograd.grad_mode._exit_inference_mode"
	wrapSetGradEnabledTarget = "higher_order.wrap_with_set_grad_enabled"
)

// IsGradModeTarget reports whether a call_function target switches the
// grad mode (a region boundary): such a call reads and writes no tensor
// (_enter_inference_mode returns a context handle).
func IsGradModeTarget(target string) bool {
	switch target {
	case setGradEnabledTarget, enterInferenceModeTarget, exitInferenceModeTarget:
		return true
	}
	return false
}

// gradState is the autograd state at a point of a program.
type gradState struct{ grad, inference bool }

// ModuleGradMode returns the mode m starts in, and where that comes from:
// "file" (recorded), "option" (opts.GradMode), or "default".
func ModuleGradMode(m *ir.Module, opts Options) (mode, from string) {
	switch {
	case m != nil && m.HasInferenceMode && m.InferenceMode:
		return GradModeInference, "file"
	case m != nil && m.HasGradEnabled && !m.GradEnabled:
		return GradModeDisabled, "file"
	case m != nil && (m.HasGradEnabled || m.HasInferenceMode):
		return GradModeEnabled, "file"
	case opts.GradMode != "":
		return opts.GradMode, "option"
	}
	return GradModeEnabled, "default"
}

// gradRegions computes, per graph of m, whether grad is enabled at each
// node (before the node runs its own change).
func gradRegions(m *ir.Module, graphs map[string]*ir.Graph, opts Options) map[*ir.Graph][]bool {
	mode, _ := ModuleGradMode(m, opts)
	out := map[*ir.Graph][]bool{}
	if m == nil || len(m.Graphs) == 0 {
		return out
	}
	entry := map[*ir.Graph]gradState{m.Root(): {grad: mode == GradModeEnabled, inference: mode == GradModeInference}}
	// Graphs in file order after the root; a subgraph's callers come
	// earlier in the call order, so a worklist from the root reaches each
	// caller before its callees in the common case. Entry modes only go
	// from disabled to enabled (one enabled caller suffices), so the
	// worklist ends.
	work := []*ir.Graph{m.Root()}
	for len(work) > 0 {
		g := work[0]
		work = work[1:]
		st := entry[g]
		at := make([]bool, len(g.Nodes))
		var stack []gradState // inference-mode blocks entered
		for i := range g.Nodes {
			n := &g.Nodes[i]
			at[i] = st.grad
			if n.Op != ir.OpCallFunction {
				continue
			}
			callee := st
			switch n.Target {
			case setGradEnabledTarget:
				if b, ok := constBool(n, 0); ok {
					st.grad = b
				}
				continue
			case enterInferenceModeTarget:
				if b, ok := constBool(n, 0); ok {
					stack = append(stack, st)
					st = gradState{grad: !b, inference: b}
				}
				continue
			case exitInferenceModeTarget:
				if len(stack) > 0 {
					st, stack = stack[len(stack)-1], stack[:len(stack)-1]
				}
				continue
			case wrapSetGradEnabledTarget:
				if b, ok := constBool(n, 0); ok {
					callee.grad = b
				}
			}
			for k := range n.Args {
				forSubgraphs(g, &n.Args[k], graphs, func(sub *ir.Graph) {
					old, seen := entry[sub]
					next := callee
					if seen {
						next = gradState{grad: old.grad || callee.grad, inference: old.inference && callee.inference}
					}
					if !seen || next != old {
						entry[sub] = next
						work = append(work, sub)
					}
				})
			}
		}
		out[g] = at
	}
	return out
}

// constBool returns n's argument k when it is a bool constant.
func constBool(n *ir.Node, k int) (bool, bool) {
	if k >= len(n.Args) || n.Args[k].Kind != ir.ArgBool {
		return false, false
	}
	return n.Args[k].B, true
}

// forSubgraphs calls f for each graph submodule argument a reads through a
// get_attr node of g.
func forSubgraphs(g *ir.Graph, a *ir.Arg, graphs map[string]*ir.Graph, f func(*ir.Graph)) {
	switch a.Kind {
	case ir.ArgNode:
		if a.Ref >= 0 && int(a.Ref) < len(g.Nodes) {
			if src := &g.Nodes[a.Ref]; src.Op == ir.OpGetAttr {
				if sub := graphs[ir.Qualify(g, src.Target)]; sub != nil {
					f(sub)
				}
			}
		}
	case ir.ArgList, ir.ArgTuple:
		el := a.Elems()
		for i := range el {
			forSubgraphs(g, &el[i], graphs, f)
		}
	}
}

// GradEnabledAt reports whether grad is enabled when node id of graph g
// (of this pass's module) runs (see the comment at the top of this file).
func (p *Pass) GradEnabledAt(g *ir.Graph, id ir.NodeID) bool {
	if p.grad == nil {
		return p.GradEnabled()
	}
	at := p.grad()[g]
	if int(id) < 0 || int(id) >= len(at) {
		return p.GradEnabled()
	}
	return at[id]
}
