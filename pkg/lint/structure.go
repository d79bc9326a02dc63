package lint

import (
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
)

// structureRules classify ir.Verify's problems by their message, first
// match wins. ir.Problem carries no kind, so the messages are the contract;
// TestEveryVerifyDefectHasARule builds each defect and checks its rule.
var structureRules = []struct {
	prefix, contains string
	rule             string
}{
	{prefix: "use of ", contains: "before its definition", rule: RuleUseBeforeDef},
	{prefix: "dangling reference", rule: RuleDanglingRef},
	{prefix: "duplicate ", rule: RuleDuplicateName},
	{prefix: "missing output node", rule: RuleMissingOutput},
	{prefix: "extra output node", rule: RuleExtraOutput},
	{prefix: "output node is not last", rule: RuleExtraOutput},
	{prefix: "node uses itself", rule: RuleCycle},
	{prefix: "cycle through nodes", rule: RuleCycle},
	{prefix: "get_attr target", rule: RuleMissingAttr},
	{prefix: "call_module target", rule: RuleMissingAttr},
	// Tensor checks come with a path ("value[1]: ", "attribute \"w\": ").
	{contains: "has a negative size", rule: RuleBadShape},
	{contains: "overflows int64", rule: RuleBadShape},
}

// StructureRule returns the rule id of a Verify problem; problems no rule
// names (empty names, missing op kinds, a module without a root graph, the
// "... and N more problems" summary) are malformed-node.
func StructureRule(p ir.Problem) string {
	for _, r := range structureRules {
		if strings.HasPrefix(p.Msg, r.prefix) && strings.Contains(p.Msg, r.contains) {
			return r.rule
		}
	}
	return RuleMalformedNode
}

// structureFindings converts Verify's problems into findings.
func structureFindings(ve *ir.VerifyError) []analyze.Finding {
	out := make([]analyze.Finding, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		out = append(out, analyze.Finding{Rule: StructureRule(p), Severity: analyze.Error, Graph: p.Loc.Graph, Node: p.Loc.Node,
			Message: p.Msg, FileWide: !p.Loc.HasGraph})
	}
	return out
}
