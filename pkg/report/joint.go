package report

// JointSchemaVersion is the version of the `hopctl joint --format json`
// document. Fields may be added within a version; a change of meaning or a
// removal bumps it.
const JointSchemaVersion = 1

// JointDoc is what `hopctl joint --format json` prints: the summary the
// text form gives, as data.
type JointDoc struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Masks has one entry per forward output: whether it gets a tangent.
	Masks []bool `json:"masks"`
	// MaskSource is how the masks were chosen: auto, all or explicit.
	MaskSource string `json:"mask_source"`
	// FrozenAttributes are tensor attributes that require grad but get no
	// gradient (get_attr constants).
	FrozenAttributes []string `json:"frozen_attributes"`
	// MutatedInputs are the inputs the joint writes back with copy_;
	// InPlaceInputs those updated in place as in the forward.
	MutatedInputs []JointInput `json:"mutated_inputs"`
	InPlaceInputs []JointInput `json:"in_place_inputs"`
	// Partition is present with --partition.
	Partition *JointPartition `json:"partition,omitempty"`
	// MetaDisagreements are the nodes whose recorded metadata names a
	// traced x.detach() (no grad) while their op requires grad in this
	// graph (jointgraph.MetaDisagreement); omitted when none.
	MetaDisagreements []JointMetaDisagreement `json:"meta_disagreements,omitempty"`
}

// JointMetaDisagreement is one such node: its name, op and the record.
type JointMetaDisagreement struct {
	Node     string `json:"node"`
	Target   string `json:"target"`
	Recorded string `json:"recorded"`
}

// JointInput is a forward input: its position and placeholder name.
type JointInput struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// ProgramName is the name the program knows the input by: its
	// state_dict key for a parameter or buffer, else the forward's
	// placeholder name.
	ProgramName string `json:"program_name,omitempty"`
}

// JointPartition is what the forward saves for the backward.
type JointPartition struct {
	Mode string `json:"mode"`
	// MemoryBudget is --memory-budget (mincut only; 1 is min-cut itself).
	MemoryBudget *float64     `json:"memory_budget,omitempty"`
	Saved        []SavedValue `json:"saved"`
	TotalBytes   int64        `json:"total_bytes"`
	// BySource sums the saved values per source line of the program, in
	// the order each first appears among them.
	BySource []SourceBytes `json:"by_source"`
	// SaveAll is what a partition saving every forward value the backward
	// reads keeps (the default partition).
	SaveAll *SaveAll `json:"save_all,omitempty"`
}

// SourceBytes is the saved values made at one source line (Source "" when
// the nodes carry none).
type SourceBytes struct {
	Source string `json:"source"`
	Count  int    `json:"count"`
	Bytes  int64  `json:"bytes"`
}

// SaveAll is a partition's size: its saved values and their bytes.
type SaveAll struct {
	Count      int   `json:"count"`
	TotalBytes int64 `json:"total_bytes"`
}

// SavedValue is one value the forward returns for the backward. Bytes is
// numel × element size, -1 when the shape is symbolic; Shape is empty for
// a SymInt.
type SavedValue struct {
	Name string `json:"name"`
	// ProgramName is, for a saved primal, the name the program knows it
	// by (JointInput.ProgramName).
	ProgramName string `json:"program_name,omitempty"`
	Kind        string `json:"kind"`
	Shape       string `json:"shape,omitempty"`
	Dtype       string `json:"dtype,omitempty"`
	Bytes       int64  `json:"bytes"`
	// Source is where the program makes it (partition.SavedValue.Source);
	// Why, why the partition saves it.
	Source string `json:"source"`
	Why    string `json:"why"`
}
