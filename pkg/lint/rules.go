package lint

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopargs"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopstruct"
	"github.com/hopctl/hopctl/pkg/analyze/passes/schemacheck"
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
	ID string
	// Name is the rule's name for people, in PascalCase (SARIF's
	// reportingDescriptor.name, which must differ from the id).
	Name     string
	Severity analyze.Severity
	// Category groups rules in listings: "hop", "schema", "structure".
	Category string
	Short    string // one line
	Doc      string // a paragraph
	// Example is a small example in Markdown: what triggers the rule and
	// how to fix it. docs/lint-rules.md and SARIF's rule help show it.
	Example string
	// Invalid marks rules whose findings mean the file is invalid input
	// (lint exits 3): structure defects (the other checks do not run), a
	// schema table that does not parse, calls that do not fit their schemas
	// or subgraphs. Every command refuses such files (package validate);
	// lint reports why, rule by rule.
	Invalid bool
}

// rules is the rule table, in listing order.
var rules = []Rule{
	{ID: alias.RuleHOPMutation, Name: "HopSubgraphMutatesInput", Severity: analyze.Error, Category: "hop",
		Short: "a HOP subgraph mutates one of its inputs",
		Doc: "A cond branch, while_loop cond_fn/body_fn, scan or associative_scan combine_fn, map body or flex_attention score_mod/mask_mod " +
			"writes one of its inputs (directly, through a view, or inside a nested HOP). PyTorch rejects this at functionalization " +
			"(\"<name> might be modifying the input!\"). The finding names the input, the views, the writing node and the path through nested subgraphs.",
		Example: `~~~python
def true_fn(x):
    x.add_(1)          # writes the branch's input
    return (x.sin(),)
torch.cond(pred, true_fn, false_fn, (x,))
~~~
Fix: compute out of place ('y = x + 1') and return the new value; write the caller's tensor outside the HOP.`},
	{ID: alias.RuleHOPAlias, Name: "HopSubgraphAliasesInput", Severity: analyze.Error, Category: "hop",
		Short: "a HOP subgraph aliases its inputs or outputs",
		Doc: "A HOP subgraph returns one of its inputs or a view of it, returns the same storage twice, or is called with two operands " +
			"that share a storage. PyTorch rejects this (\"<name> might be aliasing the input or the output!\").",
		Example: `~~~python
def body_fn(i, x):
    return i + 1, x.view(-1)   # returns a view of its input
~~~
Fix: return a fresh tensor ('x.clone()', or an out-of-place op) instead of the input or a view of it.`},
	{ID: hopmeta.RuleMetaMismatch, Name: "HopCarryMetadataMismatch", Severity: analyze.Error, Category: "hop",
		Short: "HOP carried values change metadata (check_meta_consistency)",
		Doc: "while_loop carried_inputs vs body_output, scan init vs carry, associative_scan first slices vs combine_fn outputs differ in " +
			"count, shape, dtype, stride, quantization or device, compared as PyTorch's check_meta_consistency does; every difference is listed.",
		Example: `~~~python
def body_fn(i, x):              # x: (2, 3)
    return i + 1, x.t()          # carry comes back as (3, 2)
torch._higher_order_ops.while_loop(cond_fn, body_fn, (i, x))
~~~
Fix: return carried values with the shape, dtype, stride and device they came in with ('x.t().contiguous().view(2, 3)' or a different carry).`},
	{ID: hopstruct.RuleStructure, Name: "HopSubgraphStructure", Severity: analyze.Error, Category: "hop",
		Short: "HOP subgraphs that break PyTorch's structural checks",
		Doc: "cond branches that return different numbers of outputs (trace_cond), or outputs that cannot be merged because they differ in " +
			"dtype, device, layout, rank or storage offset (_merge_output; different sizes and strides are merged, not flagged); a while_loop " +
			"cond_fn that does not return one boolean scalar tensor (_validate_cond_output). PyTorch refuses such programs when it traces them.",
		Example: `~~~python
torch.cond(pred, lambda x: x.sin(), lambda x: x.cos().long(), (x,))   # float32 vs int64 outputs
~~~
Fix: make both branches return the same number of tensors with the same dtype, device and rank; make cond_fn return a bool scalar.`},
	{ID: hopargs.RuleArgType, Name: "HopOperandType", Severity: analyze.Error, Category: "hop",
		Short: "HOP operand of a type PyTorch rejects (validate_subgraph_args_types)",
		Doc: "cond operands, while_loop carried and additional inputs, scan/associative_scan additional inputs and flex_attention buffers " +
			"may only be Tensor, int or SymInt (invoke_subgraph also allows Generator and script objects).",
		Example: `~~~python
torch.cond(pred, true_fn, false_fn, (x, 1.5))   # a float operand
~~~
Fix: pass tensors, ints or SymInts ('torch.tensor(1.5)'), or close over constants in the branch functions.`},
	{ID: alias.RuleBadHOPCall, Name: "MalformedHopCall", Severity: analyze.Error, Category: "hop", Invalid: true,
		Short: "malformed HOP call",
		Doc:   "A HOP call whose subgraph arguments are not get_attr nodes of existing subgraphs, whose operand lists are not lists, or whose subgraph takes a different number of inputs than the call passes. The file is invalid input.",
		Example: `~~~
cond = torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (x, y))
# true_graph_0 takes one placeholder, the call passes two operands
~~~
Fix: re-export the graph; a traced program cannot produce this.`},
	{ID: alias.RuleUnknownOp, Name: "UnknownOperator", Severity: analyze.Warning, Category: "schema",
		Short: "op with no schema: its aliasing and writes are unknown",
		Doc:   "No schema for the call target in the file's schema table, the built-in ATen table or the HOP definitions; the alias analysis treats its result as fresh and cannot see writes.",
		Example: `~~~
my_op = torch.ops.mylib.fused.default(x)   # no schema in the file
~~~
Fix: export with the bridge, which records 'str(op._schema)' of every op in the file, or register the op's schema.`},
	{ID: schemacheck.RuleArity, Name: "CallDoesNotFitSchema", Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "call does not fit the op's schema (arity, keyword names)",
		Doc:   "Too many positional arguments, an unknown keyword argument, an argument given twice, or a required argument missing. The file is invalid input.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x)   # add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)
~~~
Fix: re-export the graph; the file was edited or written by another tool.`},
	{ID: schemacheck.RuleArgType, Name: "ArgumentKindMismatch", Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "argument of an obviously wrong kind for its schema type",
		Doc:   "A list, string, dtype or None where a Tensor is expected, a tensor or list where an int is expected, and so on. Python scalars passed to Tensor parameters (wrapped numbers, as make_fx records aten.add.Tensor(x, 1)) are accepted. The file is invalid input.",
		Example: `~~~
view = torch.ops.aten.view.default(x, "2, 3")   # a string where int[] is expected
~~~
Fix: re-export the graph; the file was edited or written by another tool.`},
	{ID: RuleBadSchema, Name: "UnparsableSchemaEntry", Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "the file's schema table has an entry that does not parse",
		Doc:   "An entry of the file's op schema table does not parse, names a different op than its schema, or repeats an op with a different schema. The file is invalid input; the other checks run without that entry.",
		Example: `~~~
schemas { name: "aten::add.Tensor" schema: "aten::add.Tensor(Tensor self, Tensor other" }
~~~
Fix: re-export the graph so that the table holds 'str(op._schema)' verbatim.`},
	{ID: RuleUseBeforeDef, Name: "UseBeforeDefinition", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node uses a node defined after it",
		Doc:   "FX graphs are in topological order: every argument refers to an earlier node.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, mul)   # mul is defined below
mul = torch.ops.aten.mul.Tensor(x, x)
~~~
Fix: re-export the graph (FX graphs are topologically sorted).`},
	{ID: RuleDanglingRef, Name: "DanglingReference", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node refers to a node that does not exist in its graph",
		Doc:   "An argument names a node that is not in the same graph.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, y_9)   # no node y_9 in this graph
~~~
Fix: re-export the graph.`},
	{ID: RuleDuplicateName, Name: "DuplicateName", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "two nodes, submodules or attributes share a name",
		Doc:   "Node names are unique within a graph, submodule names and attribute names within a file.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, x)
add = torch.ops.aten.mul.Tensor(x, x)   # second node named add
~~~
Fix: re-export the graph.`},
	{ID: RuleMissingOutput, Name: "MissingOutputNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has no output node",
		Doc:   "Every graph ends with exactly one output node.",
		Example: `~~~
def forward(self, x):
    add = torch.ops.aten.add.Tensor(x, x)
    # no return
~~~
Fix: re-export the graph.`},
	{ID: RuleExtraOutput, Name: "ExtraOutputNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has more than one output node, or nodes after it",
		Doc:   "Every graph ends with exactly one output node.",
		Example: `~~~
return (add,)
mul = torch.ops.aten.mul.Tensor(x, x)   # a node after the output
~~~
Fix: re-export the graph.`},
	{ID: RuleCycle, Name: "GraphCycle", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "nodes (or subgraphs calling each other) form a cycle",
		Doc:   "A node that uses itself, a cycle of nodes, or subgraphs that call each other.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, add)   # uses itself
~~~
Fix: re-export the graph.`},
	{ID: RuleMissingAttr, Name: "MissingAttribute", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "get_attr or call_module target does not exist",
		Doc:   "A get_attr names no submodule or tensor attribute; a call_module names no submodule.",
		Example: `~~~
true_graph_0 = self.true_graph_0   # no submodule true_graph_0 in the file
~~~
Fix: re-export the graph with its subgraphs and attributes.`},
	{ID: RuleMalformedNode, Name: "MalformedNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "malformed node, submodule or module",
		Doc:   "A node with an empty name or no op kind, a submodule with an empty name, a module without a root graph, or subgraphs nested more than ir.MaxNesting (1000) levels deep (reported once, at the first such graph).",
		Example: `~~~
nodes { name: "" op: CALL_FUNCTION target: "aten.add.Tensor" }   # no name
~~~
Fix: re-export the graph.`},
	{ID: RuleBadShape, Name: "ImpossibleShape", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a tensor's recorded shape is impossible",
		Doc:   "A negative size, or an element count that overflows int64, in a node's value or an attribute's metadata.",
		Example: `~~~
val { tensor { shape: [2, -3] } }   # a negative size
~~~
Fix: re-export the graph; the recorded metadata is corrupt.`},
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

// DocsURL is the page that documents every rule, one section each
// (docs/lint-rules.md, generated from the rule table by RulesMarkdown).
const DocsURL = "https://github.com/hopctl/hopctl/blob/main/docs/lint-rules.md"

// HelpURI is the link to the rule's section of DocsURL.
func (r Rule) HelpURI() string { return DocsURL + "#" + r.ID }

// Help is the rule's help in Markdown: what it checks, then the example.
func (r Rule) Help() string {
	return r.Doc + "\n\n" + r.Example
}

// RulesMarkdown renders docs/lint-rules.md: every rule with its id, name,
// severity, category, whether its findings make the file invalid input,
// what it checks and an example. The section anchors are the rule ids.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from pkg/lint/rules.go by `go test ./pkg/lint -run TestRulesMarkdown -update`; do not edit. -->\n")
	b.WriteString("# hopctl lint rules\n\n")
	b.WriteString("Every rule of `hopctl lint` (`hopctl lint --list-rules`). SARIF output links each result here (`helpUri`).\n\n")
	b.WriteString("| rule | name | severity | category | invalid input |\n|---|---|---|---|---|\n")
	for _, r := range rules {
		inv := ""
		if r.Invalid {
			inv = "yes"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", r.ID, r.ID, r.Name, r.Severity, r.Category, inv)
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** (%s, %s", r.ID, r.Name, r.Severity, r.Category)
		if r.Invalid {
			b.WriteString(", the file is invalid input: exit 3")
		}
		fmt.Fprintf(&b, "): %s.\n\n%s\n", r.Short, r.Help())
	}
	return b.String()
}
