package jointgraph

// The options of Build: output masks, the calling convention of the
// joint, and the annotations written into the joint module.

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/opschema"
)

// MaskMode says how output masks are chosen.
type MaskMode int

// The mask modes.
const (
	// MasksAuto: an output gets a tangent iff it is a tensor that requires
	// grad (prepare_fw_with_masks).
	MasksAuto MaskMode = iota
	// MasksAll: if any input requires grad, every floating-point tensor
	// output gets a tangent (prepare_fw_with_masks_all_requires_grad).
	MasksAll
	// MasksExplicit: Options.Masks, one per flat output.
	MasksExplicit
)

// Convention selects the calling convention of the joint graph.
type Convention int

// The conventions.
const (
	// ConventionNone is AOTAutograd's joint: (*primals, *tangents) →
	// (*forward outputs, *gradients); tangents only for masked outputs.
	ConventionNone Convention = iota
	// ConventionCreateFwBwGraph is the older HOP helper create_fw_bw_graph:
	// (*tangents, *primals) → gradients, a tangent for every output, zeros
	// for missing tensor gradients, outputs aliasing inputs cloned.
	ConventionCreateFwBwGraph
	// ConventionCreateBwFn is the newer HOP helper create_bw_fn:
	// (*primals, *tangents) → gradients, a tangent for every output, masks
	// as MasksAll, zeros for missing tensor gradients, aliasing outputs
	// cloned.
	ConventionCreateBwFn
)

// ParseConvention parses "none", "create_fw_bw_graph" or "create_bw_fn".
func ParseConvention(s string) (Convention, error) {
	switch s {
	case "", "none":
		return ConventionNone, nil
	case "create_fw_bw_graph":
		return ConventionCreateFwBwGraph, nil
	case "create_bw_fn":
		return ConventionCreateBwFn, nil
	}
	return 0, fmt.Errorf("unknown HOP convention %q (want none, create_fw_bw_graph or create_bw_fn)", s)
}

func (c Convention) String() string {
	return [...]string{"none", "create_fw_bw_graph", "create_bw_fn"}[c]
}

// ParseMasks parses a --masks value: "" or "auto", "all", or a list of
// 0/1 (also true/false) separated by commas.
func ParseMasks(s string) (MaskMode, []bool, error) {
	switch s {
	case "", "auto":
		return MasksAuto, nil, nil
	case "all":
		return MasksAll, nil, nil
	}
	var out []bool
	for _, p := range strings.Split(s, ",") {
		switch strings.TrimSpace(p) {
		case "1", "true", "True":
			out = append(out, true)
		case "0", "false", "False":
			out = append(out, false)
		default:
			return 0, nil, fmt.Errorf("invalid mask %q in %q (want auto, all, or 0/1 per output, e.g. 1,0,1)", p, s)
		}
	}
	return MasksExplicit, out, nil
}

// FormatMasks renders masks as "1,0,1".
func FormatMasks(m []bool) string {
	parts := make([]string, len(m))
	for i, b := range m {
		parts[i] = "0"
		if b {
			parts[i] = "1"
		}
	}
	return strings.Join(parts, ",")
}

// Options configure Build.
type Options struct {
	// File names the input in error messages.
	File       string
	MaskMode   MaskMode
	Masks      []bool // for MasksExplicit
	Convention Convention
	// UnmaskNoneGradients returns zeros instead of None for tensor inputs
	// that get no gradient (PyTorch's unmask_none_gradients). The HOP
	// conventions imply it.
	UnmaskNoneGradients bool
	// Registry resolves the module's call targets (load.File.Registry:
	// the module's schema table over the built-in tables). Nil builds one
	// from the module's schema table, leaving out entries that do not
	// parse.
	Registry *opschema.Registry

	// cache holds the backward joints of HOP subgraphs built so far; the
	// builds of nested subgraphs share it (subJoint).
	cache *subJoints
}

// MaskError is an explicit mask list that does not fit the graph (a usage
// error, not an input error).
type MaskError struct{ Msg string }

func (e *MaskError) Error() string { return e.Msg }

// Annotation keys hopctl joint writes into the output module.
const (
	AnnotationMasks         = "hopctl.joint.masks"
	AnnotationConvention    = "hopctl.joint.convention"
	AnnotationNumFwdOutputs = "hopctl.joint.num_fwd_outputs"
	AnnotationMutatedInputs = "hopctl.joint.mutated_inputs"
	AnnotationRole          = "hopctl.joint.role"
)
