package opschema

import "slices"

// Correction records a schema lie: an op that writes arguments its schema
// does not annotate with `!`. Corrections are data; ConditionalWrites applies
// them to a schema.
type Correction struct {
	Op        string   // qualified name, "aten::native_batch_norm"
	Overload  string   // "" for the default overload
	Arguments []string // the arguments written
	// Condition names a bool argument that must be true for the writes to
	// happen ("training"); empty when they always happen (when the written
	// argument is not None).
	Condition string
	Why       string
}

// corrections lists the known schema lies. Every op here takes optional
// running statistics (Tensor? running_mean, Tensor? running_var) and updates
// them in place -- when they are given and, for the batch-norm family, in
// training mode -- although torch 1.13's schemas mark them read-only. Newer
// torch split out _native_batch_norm_legit with `Tensor(a!) running_mean`;
// an entry whose argument is already write-annotated is not applied.
var corrections = []Correction{
	{Op: "aten::native_batch_norm", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::native_batch_norm", Overload: "out", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::_native_batch_norm_legit", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::_native_batch_norm_legit", Overload: "out", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::batch_norm", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode (through native_batch_norm)"},
	{Op: "aten::_batch_norm_impl_index", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::cudnn_batch_norm", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::cudnn_batch_norm", Overload: "out", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::miopen_batch_norm", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::miopen_batch_norm", Overload: "out", Arguments: runningStats, Condition: "training",
		Why: "updates running_mean/running_var in training mode"},
	{Op: "aten::instance_norm", Arguments: runningStats, Condition: "use_input_stats",
		Why: "updates running_mean/running_var when it normalises with the input's statistics"},
	{Op: "aten::batch_norm_update_stats", Arguments: runningStats,
		Why: "updates running_mean/running_var"},
	{Op: "aten::batch_norm_update_stats", Overload: "out", Arguments: runningStats,
		Why: "updates running_mean/running_var"},
	{Op: "aten::batch_norm_gather_stats", Arguments: runningStats,
		Why: "updates running_mean/running_var (SyncBatchNorm)"},
	{Op: "aten::batch_norm_gather_stats", Overload: "out", Arguments: runningStats,
		Why: "updates running_mean/running_var (SyncBatchNorm)"},
	{Op: "aten::batch_norm_gather_stats_with_counts", Arguments: runningStats,
		Why: "updates running_mean/running_var (SyncBatchNorm)"},
	{Op: "aten::batch_norm_gather_stats_with_counts", Overload: "out", Arguments: runningStats,
		Why: "updates running_mean/running_var (SyncBatchNorm)"},
}

var runningStats = []string{"running_mean", "running_var"}

// Corrections returns the corrections table.
func Corrections() []Correction {
	out := make([]Correction, len(corrections))
	for i, c := range corrections {
		c.Arguments = slices.Clone(c.Arguments)
		out[i] = c
	}
	return out
}

// ConditionalWrite is a correction as it applies to one schema: writes the
// schema does not annotate but the op performs.
type ConditionalWrite struct {
	Arguments []string // the written arguments, in schema order
	Indices   []int    // their indices in Schema.Arguments
	// Condition names the bool argument that must be true for the writes
	// ("training"); "" when they always happen.
	Condition      string
	ConditionIndex int // index of Condition in Schema.Arguments; -1 when Condition is ""
	Why            string
}

// ConditionalWrites returns the unannotated writes of schema s from the
// corrections table, in table order. A correction applies when s is the
// corrected overload and has the condition argument; it lists the written
// arguments s has and does not already annotate as written, and is left out
// when none remain (newer torch annotates some of these ops).
func ConditionalWrites(s *Schema) []ConditionalWrite {
	if s == nil {
		return nil
	}
	var out []ConditionalWrite
	for _, c := range corrections {
		if c.Op != s.QualifiedName() || c.Overload != s.Overload {
			continue
		}
		cw := ConditionalWrite{Condition: c.Condition, ConditionIndex: -1, Why: c.Why}
		if c.Condition != "" {
			if cw.ConditionIndex = s.Argument(c.Condition); cw.ConditionIndex < 0 {
				continue
			}
		}
		for i := range s.Arguments {
			if slices.Contains(c.Arguments, s.Arguments[i].Name) && !s.Arguments[i].IsWrite() {
				cw.Arguments = append(cw.Arguments, s.Arguments[i].Name)
				cw.Indices = append(cw.Indices, i)
			}
		}
		if len(cw.Arguments) > 0 {
			out = append(out, cw)
		}
	}
	return out
}
