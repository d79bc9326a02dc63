package lint

import (
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
)

// structureRules are the rule ids of ir.Verify's problem kinds.
var structureRules = map[ir.ProblemKind]string{
	ir.ProblemMalformed:     RuleMalformedNode,
	ir.ProblemUseBeforeDef:  RuleUseBeforeDef,
	ir.ProblemDanglingRef:   RuleDanglingRef,
	ir.ProblemDuplicateName: RuleDuplicateName,
	ir.ProblemMissingOutput: RuleMissingOutput,
	ir.ProblemExtraOutput:   RuleExtraOutput,
	ir.ProblemCycle:         RuleCycle,
	ir.ProblemMissingAttr:   RuleMissingAttr,
	ir.ProblemBadShape:      RuleBadShape,
	ir.ProblemSchema:        RuleBadSchema,
}

// StructureRule returns the rule id of a problem load found, by its kind
// (ir.Verify's defects, the schema table's entries); problems of no such
// kind are malformed-node.
func StructureRule(p ir.Problem) string {
	if r, ok := structureRules[p.Kind]; ok {
		return r
	}
	return RuleMalformedNode
}

// problemFindings converts the problems load found into findings.
func problemFindings(ps []ir.Problem) []analyze.Finding {
	out := make([]analyze.Finding, 0, len(ps))
	for _, p := range ps {
		out = append(out, analyze.Finding{Rule: StructureRule(p), Severity: analyze.Error, Graph: p.Loc.Graph, Node: p.Loc.Node,
			Message: p.Msg, FileWide: !p.Loc.HasGraph})
	}
	return out
}
