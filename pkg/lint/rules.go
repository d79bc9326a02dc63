package lint

import (
	"cmp"
	"slices"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
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

// Rule documents one rule (see analyze.Rule).
type Rule = analyze.Rule

// rules is the rule table, in listing order: every analyzer's rules
// (passes.All) and lint's own, assembled by assemble.
var rules = assemble(ownRules)

// categories orders the rules' categories in listings.
var categories = []string{"hop", "schema", "structure"}

// assemble returns the analyzers' rules and own in listing order: by
// category, then rules whose findings are findings before those that make
// a file invalid, then in the order of the analyzers and of own.
func assemble(own []Rule) []Rule {
	var out []Rule
	for _, a := range passes.All() {
		out = append(out, a.Rules...)
	}
	out = append(out, own...)
	slices.SortStableFunc(out, func(a, b Rule) int {
		if c := cmp.Compare(slices.Index(categories, a.Category), slices.Index(categories, b.Category)); c != 0 {
			return c
		}
		if a.Invalid != b.Invalid {
			if a.Invalid {
				return 1
			}
			return -1
		}
		return 0
	})
	return out
}

// ownRules are the rules of the findings lint makes itself: the schema
// table (bad-schema) and ir.Verify's defects.
var ownRules = []Rule{
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
