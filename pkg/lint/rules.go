package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/opschema"
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
// (passes.All) and lint's own, assembled by assemble on first use.
var rules = sync.OnceValue(func() []Rule { return assemble(ownRules) })

// categories orders the rules' categories in listings.
var categories = []string{"hop", "signature", "schema", "structure"}

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
	{ID: RuleBadSchema, Name: "UnparsableSchemaEntry", Severity: analyze.Error, Category: "schema", Invalid: true,
		Short: "the file's schema table has an entry that does not parse",
		Doc:   "An entry of the file's op schema table does not parse, names a different op than its schema, or repeats an op with a different schema. The file is invalid input; the other checks run without that entry.",
		Example: `~~~
schemas { name: "aten::add.Tensor" schema: "aten::add.Tensor(Tensor self, Tensor other" }
~~~`,
		Fix: "re-export the graph so that the table holds 'str(op._schema)' verbatim."},
	{ID: RuleUseBeforeDef, Name: "UseBeforeDefinition", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node uses a node defined after it",
		Doc:   "FX graphs are in topological order: every argument refers to an earlier node.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, mul)   # mul is defined below
mul = torch.ops.aten.mul.Tensor(x, x)
~~~`,
		Fix: "re-export the graph (FX graphs are topologically sorted)."},
	{ID: RuleDanglingRef, Name: "DanglingReference", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a node refers to a node that does not exist in its graph",
		Doc:   "An argument names a node that is not in the same graph.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, y_9)   # no node y_9 in this graph
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleDuplicateName, Name: "DuplicateName", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "two nodes, submodules or attributes share a name",
		Doc:   "Node names are unique within a graph, submodule names and attribute names within a file.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, x)
add = torch.ops.aten.mul.Tensor(x, x)   # second node named add
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleMissingOutput, Name: "MissingOutputNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has no output node",
		Doc:   "Every graph ends with exactly one output node.",
		Example: `~~~
def forward(self, x):
    add = torch.ops.aten.add.Tensor(x, x)
    # no return
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleExtraOutput, Name: "ExtraOutputNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a graph has more than one output node, or nodes after it",
		Doc:   "Every graph ends with exactly one output node.",
		Example: `~~~
return (add,)
mul = torch.ops.aten.mul.Tensor(x, x)   # a node after the output
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleCycle, Name: "GraphCycle", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "nodes (or subgraphs calling each other) form a cycle",
		Doc:   "A node that uses itself, a cycle of nodes, or subgraphs that call each other.",
		Example: `~~~
add = torch.ops.aten.add.Tensor(x, add)   # uses itself
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleMissingAttr, Name: "MissingAttribute", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "get_attr or call_module target does not exist",
		Doc:   "A get_attr names no submodule or tensor attribute; a call_module names no submodule.",
		Example: `~~~
true_graph_0 = self.true_graph_0   # no submodule true_graph_0 in the file
~~~`,
		Fix: "re-export the graph with its subgraphs and attributes."},
	{ID: RuleMalformedNode, Name: "MalformedNode", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "malformed node, submodule or module",
		Doc:   "A node with an empty name or no op kind, a submodule with an empty name, a module without a root graph, or subgraphs nested more than ir.MaxNesting (1000) levels deep (reported once, at the first such graph).",
		Example: `~~~
nodes { name: "" op: CALL_FUNCTION target: "aten.add.Tensor" }   # no name
~~~`,
		Fix: "re-export the graph."},
	{ID: RuleBadShape, Name: "ImpossibleShape", Severity: analyze.Error, Category: "structure", Invalid: true,
		Short: "a tensor's recorded shape is impossible",
		Doc:   "A negative size, an element count or a storage size in bytes that overflows int64, a negative or missing stride, or a dtype or layout torch does not have, in a node's value or an attribute's metadata.",
		Example: `~~~
val { tensor { shape: [2, -3] } }   # a negative size
~~~`,
		Fix: "re-export the graph; the recorded metadata is corrupt."},
}

// Rules returns every rule, in listing order.
func Rules() []Rule { return append([]Rule(nil), rules()...) }

// LookupRule returns the rule with the given id.
func LookupRule(id string) (Rule, bool) {
	for _, r := range rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// DocsURL is the page that documents every rule, one section each
// (docs/lint-rules.md, generated from the rule table by RulesMarkdown).
const DocsURL = analyze.RuleDocsURL

// RulesMarkdown renders docs/lint-rules.md: every rule with its id, name,
// severity, category, whether its findings make the file invalid input,
// what it checks and an example. The section anchors are the rule ids.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from the analyzers' rules (analyze.Analyzer.Rules) and pkg/lint/rules.go by `go test ./pkg/lint -run TestRulesMarkdown -update`; do not edit. -->\n")
	b.WriteString("# hopctl lint rules\n\n")
	b.WriteString("Every rule of `hopctl lint` (`hopctl lint --list-rules`). SARIF output links each result here (`helpUri`).\n\n")
	b.WriteString("| rule | name | severity | category | invalid input |\n|---|---|---|---|---|\n")
	for _, r := range rules() {
		inv := ""
		if r.Invalid {
			inv = "yes"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", r.ID, r.ID, r.Name, r.Severity, r.Category, inv)
	}
	for _, r := range rules() {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** (%s, %s", r.ID, r.Name, r.Severity, r.Category)
		if r.Invalid {
			b.WriteString(", the file is invalid input: exit 3")
		}
		fmt.Fprintf(&b, "): %s.\n\n%s\n", r.Short, r.Help())
		writeReleases(&b, r.ID)
	}
	return b.String()
}

// writeReleases lists, under a rule, the version table rows its checks
// consult: where the rule's verdict or words differ between torch
// releases (docs/hops.md#version-aware-rules; --torch-version 2.6,2.14
// says per finding).
func writeReleases(b *strings.Builder, rule string) {
	rows := opschema.RowsOfRule(rule, "")
	if len(rows) == 0 {
		return
	}
	byID := map[string]opschema.TorchDifference{}
	for _, d := range opschema.TorchDifferences() {
		byID[d.ID] = d
	}
	b.WriteString("\n**Torch releases.** Where this rule differs by release ([version table](hops.md#version-aware-rules)):\n\n")
	for _, id := range rows {
		d := byID[id]
		fmt.Fprintf(b, "- `%s`, torch %s: %s\n", id, releaseRange(d.Torch), d.What)
	}
}

// releaseRange writes a row's releases: "before 2.14", "2.6 and later", "2.0 up to 2.6".
func releaseRange(v opschema.TorchVersions) string {
	switch {
	case v.From == "" && v.Until != "":
		return "before " + v.Until
	case v.From != "" && v.Until == "":
		return v.From + " and later"
	case v.From != "" && v.Until != "":
		return v.From + " up to " + v.Until
	}
	return "every release"
}
