package lint

import (
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopargs"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/analyze/passes/schemacheck"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
)

// Rule ids of the graph-structure rules (ir.Verify's defects) and of the
// schema table rule. Findings of these rules make a file invalid input.
const (
	RuleUseBeforeDef  = "use-before-def"
	RuleDanglingRef   = "dangling-ref"
	RuleDuplicateName = "duplicate-name"
	RuleMissingOutput = "missing-output"
	RuleExtraOutput   = "extra-output"
	RuleCycle         = "cycle"
	RuleMissingAttr   = "missing-attr"
	RuleMalformedNode = "malformed-node"
	RuleBadShape      = "impossible-shape"
	RuleBadSchema     = "bad-schema"
)

// Rule documents one rule: its stable id, default severity and what it
// checks.
type Rule struct {
	ID       string
	Severity analyze.Severity
	// Category groups rules in listings: "hop", "schema", "structure".
	Category string
	Short    string // one line
	Doc      string // a paragraph
	// Invalid marks rules whose findings mean the file is invalid input
	// (lint exits 3): structure defects (the other checks do not run), a
	// schema table that does not parse, calls that do not fit their schemas
	// or subgraphs. Every command refuses such files (package validate);
	// lint reports why, rule by rule.
	Invalid bool
}

// rules is the rule table, in listing order.
var rules = []Rule{
	{ID: alias.RuleHOPMutation, Severity: analyze.Error, Category: "hop",
		Short: "a HOP subgraph mutates one of its inputs",
		Doc: "A cond branch, while_loop cond_fn/body_fn, scan or associative_scan combine_fn, map body or flex_attention score_mod/mask_mod " +
			"writes one of its inputs (directly, through a view, or inside a nested HOP). PyTorch rejects this at functionalization " +
			"(\"<name> might be modifying the input!\"). The finding names the input, the views, the writing node and the path through nested subgraphs."},
	{ID: alias.RuleHOPAlias, Severity: analyze.Error, Category: "hop",
		Short: "a HOP subgraph aliases its inputs or outputs",
		Doc: "A HOP subgraph returns one of its inputs or a view of it, returns the same storage twice, or is called with two operands " +
			"that share a storage. PyTorch rejects this (\"<name> might be aliasing the input or the output!\")."},
	{ID: hopmeta.RuleMetaMismatch, Severity: analyze.Error, Category: "hop",
		Short: "HOP carried values change metadata (check_meta_consistency)",
		Doc: "while_loop carried_inputs vs body_output, scan init vs carry, associative_scan first slices vs combine_fn outputs differ in " +
			"count, shape, dtype, stride, quantization or device, compared as PyTorch's check_meta_consistency does; every difference is listed."},
	{ID: hopargs.RuleArgType, Severity: analyze.Error, Category: "hop",
		Short: "HOP operand of a type PyTorch rejects (validate_subgraph_args_types)",
		Doc: "cond operands, while_loop carried and additional inputs, scan/associative_scan additional inputs and flex_attention buffers " +
			"may only be Tensor, int or SymInt (invoke_subgraph also allows Generator and script objects)."},
	{ID: alias.RuleBadHOPCall, Severity: analyze.Error, Category: "hop", Invalid: true,
		Short: "malformed HOP call",
		Doc:   "A HOP call whose subgraph arguments are not get_attr nodes of existing subgraphs, whose operand lists are not lists, or whose subgraph takes a different number of inputs than the call passes. The file is invalid input."},
	{ID: sigmut.Rule, Severity: analyze.Error, Category: "signature",
		Short: "an exported program's graph writes inputs its signature does not declare (or declares writes it does not make)",
		Doc: "In a functional torch.export program (verifiers ATEN, or any mutation output spec) every input the root graph writes in place " +
			"must be declared by a buffer_mutation/parameter_mutation/user_input_mutation spec instead, and no declared mutation may return the input " +
			"itself. A mismatch means the exported program lies: a runtime that trusts its signature drops or doubles the write."},
	{ID: alias.RuleUnknownOp, Severity: analyze.Warning, Category: "schema",
		Short: "op with no schema: its aliasing and writes are unknown",
		Doc:   "No schema for the call target in the file's schema table, the built-in ATen table or the HOP definitions; the alias analysis treats its result as fresh and cannot see writes."},
	{ID: schemacheck.RuleArity, Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "call does not fit the op's schema (arity, keyword names)",
		Doc:   "Too many positional arguments, an unknown keyword argument, an argument given twice, or a required argument missing. The file is invalid input."},
	{ID: schemacheck.RuleArgType, Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "argument of an obviously wrong kind for its schema type",
		Doc:   "A list, string, dtype or None where a Tensor is expected, a tensor or list where an int is expected, and so on. Python scalars passed to Tensor parameters (wrapped numbers, as make_fx records aten.add.Tensor(x, 1)) are accepted. The file is invalid input."},
	{ID: RuleBadSchema, Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "the file's schema table has an entry that does not parse",
		Doc:   "An entry of the file's op schema table does not parse, names a different op than its schema, or repeats an op with a different schema. The file is invalid input; the other checks run without that entry."},
	{ID: RuleUseBeforeDef, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node uses a node defined after it",
		Doc:   "FX graphs are in topological order: every argument refers to an earlier node."},
	{ID: RuleDanglingRef, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node refers to a node that does not exist in its graph",
		Doc:   "An argument names a node that is not in the same graph."},
	{ID: RuleDuplicateName, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "two nodes, submodules or attributes share a name",
		Doc:   "Node names are unique within a graph, submodule names and attribute names within a file."},
	{ID: RuleMissingOutput, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has no output node",
		Doc:   "Every graph ends with exactly one output node."},
	{ID: RuleExtraOutput, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has more than one output node, or nodes after it",
		Doc:   "Every graph ends with exactly one output node."},
	{ID: RuleCycle, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "nodes (or subgraphs calling each other) form a cycle",
		Doc:   "A node that uses itself, a cycle of nodes, or subgraphs that call each other."},
	{ID: RuleMissingAttr, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "get_attr or call_module target does not exist",
		Doc:   "A get_attr names no submodule or tensor attribute; a call_module names no submodule."},
	{ID: RuleMalformedNode, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "malformed node, submodule or module",
		Doc:   "A node with an empty name or no op kind, a submodule with an empty name, a module without a root graph, or subgraphs nested more than ir.MaxNesting (1000) levels deep (reported once, at the first such graph)."},
	{ID: RuleBadShape, Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a tensor's recorded shape is impossible",
		Doc:   "A negative size, or an element count that overflows int64, in a node's value or an attribute's metadata."},
}

// Rules returns every rule, in listing order.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// LookupRule returns the rule with the given id.
func LookupRule(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
