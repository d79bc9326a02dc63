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
}

// StructureRule returns the rule id of a Verify problem, by its kind;
// problems of no structure kind are malformed-node.
func StructureRule(p ir.Problem) string {
	if r, ok := structureRules[p.Kind]; ok {
		return r
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
