package opschema

import (
	"slices"
	"strings"
	"sync"
)

// HOP is hopctl's definition of one higher-order operator: data that the
// analyses interpret, not code. A HOP call is an FX call_function node whose
// target is torch.ops.higher_order.<Name>; its subgraphs are get_attr nodes
// naming GraphModule submodules. See shared/reference/hops.md for each HOP's
// calling convention and rules.
type HOP struct {
	// Name is the HOP's name; its target is "higher_order." + Name.
	Name string
	// Doc says in a line what the HOP does.
	Doc string
	// Schema is the calling convention in the schema language, with the
	// argument names torch's gen_schema uses where it has one. Subgraphs
	// and operators are typed Any (as in gen_schema); a trailing `...`
	// takes the HOP's variadic operands. Alias annotations are absent on
	// purpose: a HOP's aliasing and mutation come from its subgraphs.
	Schema string
	// Subgraphs lists the positional arguments that hold subgraphs.
	Subgraphs []SubgraphArg
	// OpArg is the index of the positional argument holding an operator
	// (an OpOverload or a HOP) the HOP applies to its other arguments, or
	// -1. with_effects and auto_functionalized have one.
	OpArg int
	// FreeKwargs is set when the node may carry keyword arguments beyond
	// the schema's (the op's own arguments for auto_functionalized,
	// checkpoint options for tag_activation_checkpoint, scheme= for
	// invoke_quant).
	FreeKwargs bool

	schema *Schema // Schema, parsed
}

// SubgraphArg locates one subgraph argument of a HOP call.
type SubgraphArg struct {
	Arg  int    // positional argument index
	Name string // the subgraph's role: "true_fn", "body_fn", "score_mod", ...
	// Last is set when the argument is a tuple whose last element is the
	// subgraph (flex_attention's block_mask ends with the mask_mod graph).
	Last bool
}

// Target returns the HOP's target spelling, "higher_order.<Name>".
func (h *HOP) Target() string { return HigherOrderNamespace + "." + h.Name }

// ParsedSchema returns Schema parsed, or nil if it does not parse (a bug the
// package tests rule out).
func (h *HOP) ParsedSchema() *Schema {
	hopsOnce.Do(parseHOPs)
	return h.schema
}

// IsSubgraphArg reports whether positional argument i holds a subgraph (or,
// for Last, a tuple ending in one).
func (h *HOP) IsSubgraphArg(i int) bool {
	return slices.ContainsFunc(h.Subgraphs, func(s SubgraphArg) bool { return s.Arg == i })
}

// hops is the table of higher-order operators hopctl knows, sorted by name.
//
// map_impl, scan and while_loop(_stack_output) take torch 2.14's keyword
// mutated_arg_indices, a comma-separated string of the flat operand indices
// the body writes (torch/_higher_order_ops/{map,scan,while_loop}.py), which
// make_fx records when a body mutates an operand; the alias analysis sees
// those writes through the subgraph itself.
var hops = []*HOP{
	{
		Name:   "associative_scan",
		Doc:    "Inclusive scan of xs along dim 0 with an associative combine_fn(*lhs, *rhs, *additional_inputs).",
		Schema: "higher_order::associative_scan(Any combine_fn, Any xs, Any additional_inputs) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "combine_fn"},
		},
		OpArg: -1,
	},
	{
		Name:       "auto_functionalized",
		Doc:        "Functional form of a mutable op: returns (*op_outputs, *new_values_of_mutated_args); the op's arguments are keyword arguments.",
		Schema:     "higher_order::auto_functionalized(Any _mutable_op, ...) -> ...",
		OpArg:      0,
		FreeKwargs: true,
	},
	{
		Name:       "auto_functionalized_v2",
		Doc:        "Functional form of a mutable op or HOP over deduplicated bases (_all_bases); returns (*op_outputs, *new_bases).",
		Schema:     "higher_order::auto_functionalized_v2(Any _mutable_op, ...) -> ...",
		OpArg:      0,
		FreeKwargs: true,
	},
	{
		Name:   "cond",
		Doc:    "Runs true_fn(*operands) if pred else false_fn(*operands); branches must not mutate or alias their inputs.",
		Schema: "higher_order::cond(Any pred, Any true_fn, Any false_fn, Any operands) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 1, Name: "true_fn"},
			{Arg: 2, Name: "false_fn"},
		},
		OpArg: -1,
	},
	{
		Name:   "flex_attention",
		Doc:    "Attention with a score_mod subgraph and a block mask whose last element is the mask_mod subgraph; returns (out, logsumexp[, max_scores]).",
		Schema: "higher_order::flex_attention(Tensor query, Tensor key, Tensor value, Any score_mod, Any block_mask, Any scale, Any kernel_options, Any[] score_mod_other_buffers=[], Any[] mask_mod_other_buffers=[]) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 3, Name: "score_mod"},
			{Arg: 4, Name: "mask_mod", Last: true},
		},
		OpArg: -1,
	},
	{
		Name:   "flex_attention_backward",
		Doc:    "Backward of flex_attention; returns (grad_query, grad_key, grad_value, grads of score_mod buffers).",
		Schema: "higher_order::flex_attention_backward(Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, Tensor? grad_out, Tensor? grad_logsumexp, Any fw_graph, Any joint_graph, Any block_mask, Any scale, Any kernel_options, Any[] score_mod_other_buffers=[], Any[] mask_mod_other_buffers=[]) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 7, Name: "fw_graph"},
			{Arg: 8, Name: "joint_graph"},
			{Arg: 9, Name: "mask_mod", Last: true},
		},
		OpArg: -1,
	},
	{
		Name:   "invoke_quant",
		Doc:    "Calls subgraph(*operands) as a unit for quantization; scheme= is a keyword argument.",
		Schema: "higher_order::invoke_quant(Any subgraph, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "subgraph"},
		},
		OpArg:      -1,
		FreeKwargs: true,
	},
	{
		Name:   "invoke_quant_packed",
		Doc:    "Packed form of invoke_quant: subgraph(*operands) with scheme= and quant_options= keyword arguments.",
		Schema: "higher_order::invoke_quant_packed(Any subgraph, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "subgraph"},
		},
		OpArg:      -1,
		FreeKwargs: true,
	},
	{
		Name:   "invoke_subgraph",
		Doc:    "Calls subgraph(*operands); identifier names the (reusable) region. Input mutation is allowed, aliasing is not.",
		Schema: "higher_order::invoke_subgraph(Any subgraph, str? identifier, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "subgraph"},
		},
		OpArg: -1,
	},
	{
		Name:   "map_impl",
		Doc:    "Maps f over dim 0 of xs, with pos_args passed whole to every call; stacks the outputs.",
		Schema: "higher_order::map_impl(Any f, Any xs, Any pos_args, *, str mutated_arg_indices=\"\") -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "f"},
		},
		OpArg: -1,
	},
	{
		Name:   "scan",
		Doc:    "Scans combine_fn(*carry, *xs[i], *additional_inputs) -> (*next_carry, *y) over dim 0; returns (*final_carry, *stacked_ys).",
		Schema: "higher_order::scan(Any combine_fn, Any init, Any xs, Any additional_inputs, *, str mutated_arg_indices=\"\") -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "combine_fn"},
		},
		OpArg: -1,
	},
	{
		Name:   "tag_activation_checkpoint",
		Doc:    "Calls gmod(*args) under activation checkpointing; checkpoint options are keyword arguments.",
		Schema: "higher_order::tag_activation_checkpoint(Any gmod, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "gmod"},
		},
		OpArg:      -1,
		FreeKwargs: true,
	},
	{
		Name:   "while_loop",
		Doc:    "while cond_fn(*carried, *additional): carried = body_fn(*carried, *additional); returns the final carries.",
		Schema: "higher_order::while_loop(Any cond_fn, Any body_fn, Any carried_inputs, Any additional_inputs, *, str mutated_arg_indices=\"\") -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "cond_fn"},
			{Arg: 1, Name: "body_fn"},
		},
		OpArg: -1,
	},
	{
		Name:   "while_loop_stack_output",
		Doc:    "while_loop that returns every iteration's carries stacked along a new dim 0 (used by while_loop's backward).",
		Schema: "higher_order::while_loop_stack_output(Any cond_fn, Any body_fn, Any carried_inputs, Any additional_inputs, *, str mutated_arg_indices=\"\") -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 0, Name: "cond_fn"},
			{Arg: 1, Name: "body_fn"},
		},
		OpArg: -1,
	},
	{
		Name:   "with_effects",
		Doc:    "Runs the side-effecting op(*args, **kwargs) ordered by an effect token; returns (new_token, *op_results).",
		Schema: "higher_order::with_effects(Tensor token, Any op, ...) -> ...",
		OpArg:  1,
		// The op's keyword arguments pass through.
		FreeKwargs: true,
	},
	{
		Name:   "wrap_with_autocast",
		Doc:    "Calls wrapped_func(*args) under torch.autocast(device_type, dtype, enabled, cache_enabled); export inserts it.",
		Schema: "higher_order::wrap_with_autocast(str device_type, ScalarType? dtype, bool enabled, bool? cache_enabled, Any wrapped_func, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 4, Name: "wrapped_func"},
		},
		OpArg: -1,
	},
	{
		Name:   "wrap_with_set_grad_enabled",
		Doc:    "Calls wrapped_func(*args) with grad mode set to enable_grad; export inserts it.",
		Schema: "higher_order::wrap_with_set_grad_enabled(bool enable_grad, Any wrapped_func, ...) -> ...",
		Subgraphs: []SubgraphArg{
			{Arg: 1, Name: "wrapped_func"},
		},
		OpArg: -1,
	},
}

var (
	hopsOnce sync.Once
	hopErrs  []error
)

// parseHOPs parses every HOP's schema once; failures are kept for the tests.
func parseHOPs() {
	for _, h := range hops {
		s, err := Parse(h.Schema)
		if err != nil {
			hopErrs = append(hopErrs, err)
			continue
		}
		h.schema = s
	}
}

// HOPs returns hopctl's higher-order operator definitions, sorted by name.
// The definitions are shared: treat them as read-only.
func HOPs() []*HOP {
	hopsOnce.Do(parseHOPs)
	return slices.Clone(hops)
}

// LookupHOP returns the definition of the HOP with the given name ("cond").
func LookupHOP(name string) (*HOP, bool) {
	hopsOnce.Do(parseHOPs)
	i, ok := slices.BinarySearchFunc(hops, name, func(h *HOP, n string) int { return strings.Compare(h.Name, n) })
	if !ok {
		return nil, false
	}
	return hops[i], true
}
