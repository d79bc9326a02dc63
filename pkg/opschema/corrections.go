package opschema

import (
	"slices"
	"sync"
)

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

// AliasCorrection records the other kind of schema lie: an op whose returns
// are views of an argument although its schema gives them no alias set. At
// runtime the returns share the argument's storage, so an in-place op on one
// writes the argument and returning one aliases it. A [Registry] returns the
// op's schema (the file's or the built-in one, so torch 1.13's `int` and 2.x's
// `SymInt` both stay) annotated as its view sibling is:
// `Tensor(a -> *) self ... -> Tensor(a)[]` for a list of pieces (split),
// `Tensor(a) self -> Tensor(a)` for one tensor (alias).
type AliasCorrection struct {
	Op       string // qualified name, "aten::unsafe_split"
	Overload string // "" for the default overload
	Argument string // the argument the returns are views of
	Why      string
}

// aliasCorrections lists the known missing alias annotations, the ones
// python/tests/test_schema_alias_audit.py finds by running every ATen op
// whose returns have no alias set on a real tensor and comparing storages
// (it fails when this table and torch's runtime disagree).
//
// The unsafe_* ops are split/chunk without autograd's view tracking: ATen
// implements them by calling split/chunk (aten/src/ATen/native/
// TensorShape.cpp), so every piece is a view of self. torch's LSTM and GRU
// cells (aten/src/ATen/native/RNN.cpp) call unsafe_chunk on the gate
// pre-activations and then write the pieces in place (sigmoid_, tanh_,
// add_). The others are CompositeImplicit ops that return self itself when
// there is nothing to do (atleast_Nd of a tensor of rank >= N, to_dense of
// a dense tensor, conj_physical of a real one, data, lift): the return may
// be self, so hopctl takes it to alias self, as torch's static checker does
// when it sees the fake result's storage.
var aliasCorrections = []AliasCorrection{
	{Op: "aten::unsafe_split", Overload: "Tensor", Argument: "self", Why: "returns views of self (implemented by split)"},
	{Op: "aten::unsafe_split_with_sizes", Argument: "self", Why: "returns views of self (implemented by split_with_sizes)"},
	{Op: "aten::unsafe_chunk", Argument: "self", Why: "returns views of self (implemented by chunk)"},
	{Op: "aten::atleast_1d", Argument: "self", Why: "returns self when it has a dimension"},
	{Op: "aten::atleast_2d", Argument: "self", Why: "returns self when it has two dimensions, else a view"},
	{Op: "aten::atleast_3d", Argument: "self", Why: "returns self when it has three dimensions, else a view"},
	{Op: "aten::to_dense", Argument: "self", Why: "returns self when it is already dense"},
	{Op: "aten::conj_physical", Argument: "self", Why: "returns self when it is not complex"},
	{Op: "aten::data", Argument: "self", Why: "returns a tensor sharing self's storage (Tensor.data)"},
	{Op: "aten::lift", Argument: "self", Why: "returns self (lift only marks a constant for tracing)"},
}

// AliasCorrections returns the table of missing alias annotations.
func AliasCorrections() []AliasCorrection { return slices.Clone(aliasCorrections) }

// HasAliasCorrection reports whether s is an op of the alias corrections
// table. Autograd does not track these returns as views (that is what the
// unsafe_ ops are for): a write to a piece does not rebase the argument's
// history, so differentiation treats the pieces as fresh tensors while the
// alias analysis treats them as the views they are at runtime.
func HasAliasCorrection(s *Schema) bool {
	if s == nil {
		return false
	}
	for i := range aliasCorrections {
		if aliasCorrections[i].Op == s.QualifiedName() && aliasCorrections[i].Overload == s.Overload {
			return true
		}
	}
	return false
}

// aliasCorrectedCache memoizes AliasCorrected per schema.
var aliasCorrectedCache sync.Map // *Schema → *Schema

// AliasCorrected returns s with the alias annotation the alias corrections
// table gives it, or s itself when the table has no entry for s (or s is
// already annotated).
func AliasCorrected(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	if !HasAliasCorrection(s) {
		return s
	}
	var c *AliasCorrection
	for i := range aliasCorrections {
		if aliasCorrections[i].Op == s.QualifiedName() && aliasCorrections[i].Overload == s.Overload {
			c = &aliasCorrections[i]
		}
	}
	if v, ok := aliasCorrectedCache.Load(s); ok {
		return v.(*Schema)
	}
	out := s
	ai := s.Argument(c.Argument)
	if ai >= 0 && s.Arguments[ai].Alias == nil && len(s.Returns) == 1 && s.Returns[0].Alias == nil {
		cs := *s
		cs.Arguments = slices.Clone(s.Arguments)
		cs.Returns = slices.Clone(s.Returns)
		switch s.Returns[0].Type.Kind {
		case KindList: // split's annotation: Tensor(a -> *) self -> Tensor(a)[]
			cs.Arguments[ai].Alias = &AliasInfo{BeforeSets: []string{"a"}, AfterSets: []string{Wildcard}}
			cs.Returns[0].Alias = &AliasInfo{Contained: []*AliasInfo{{BeforeSets: []string{"a"}, AfterSets: []string{"a"}}}}
			out = &cs
		case KindTensor: // alias's annotation: Tensor(a) self -> Tensor(a)
			cs.Arguments[ai].Alias = &AliasInfo{BeforeSets: []string{"a"}, AfterSets: []string{"a"}}
			cs.Returns[0].Alias = &AliasInfo{BeforeSets: []string{"a"}, AfterSets: []string{"a"}}
			out = &cs
		}
	}
	aliasCorrectedCache.Store(s, out)
	return out
}

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

// storageSources lists the ops whose return takes the storage of an
// argument the schema does not tie it to: set_(Tensor(a!) self, Tensor
// source) -> Tensor(a!) writes self (its storage, a metadata mutation,
// torch/_functorch/_aot_autograd/functional_utils.py "storage mutations
// coming from set_()") and returns self now sharing source's storage. Its
// result therefore aliases source, not self's old storage: torch's
// check_input_alias_and_mutation (torch/_higher_order_ops/utils.py) maps
// the output of `x.set_(y); return x` to input y, and finds no alias
// between the inputs x and y, whose recorded values keep their own storages.
var storageSources = map[string]string{
	"aten::set_.source_Tensor":                "source",
	"aten::set_.source_Tensor_storage_offset": "source",
}

// StorageSource returns the index of the argument whose storage s's
// single return takes over (storageSources), or -1.
func StorageSource(s *Schema) int {
	if s == nil || len(s.Returns) != 1 {
		return -1
	}
	if arg, ok := storageSources[s.QualifiedName()+"."+s.Overload]; ok {
		return s.Argument(arg)
	}
	return -1
}
