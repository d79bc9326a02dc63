package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/lint"
)

// TestSARIFLongProvenance: a chain of thousands of views becomes a codeFlow
// of at most 1,000 locations that keeps both ends and says how many steps
// it left out.
func TestSARIFLongProvenance(t *testing.T) {
	const views = 5000
	steps := []lint.Step{{Kind: lint.StepInput, Node: "x"}}
	for i := range views {
		steps = append(steps, lint.Step{Kind: lint.StepView, Node: fmt.Sprintf("view_%d", i), Target: "aten.view.default"})
	}
	steps = append(steps, lint.Step{Kind: lint.StepCall, Node: "cond", Target: "higher_order.cond"},
		lint.Step{Kind: lint.StepNode, Graph: "true_graph_0", Node: "add_", Target: "aten.add_.Tensor"})
	doc := &LintDoc{Files: []LintFile{{Path: "g.pb", Status: StatusOK,
		Findings: []Finding{{Rule: "hop-input-mutation", Severity: "error", Node: "cond", Message: "m", Provenance: &Provenance{}}},
		details:  []lint.Detail{{Steps: steps}}}}}
	log := NewSARIF(doc, lint.Rules(), "test")
	locs := log.Runs[0].Results[0].CodeFlows[0].ThreadFlows[0].Locations
	text := func(i int) string { return locs[i].Location.Message.Text }
	if len(locs) != maxFlowSteps || text(0) != "input x" || text(len(locs)-1) != "node add_ (aten.add_.Tensor)" ||
		text(len(locs)-2) != "HOP call cond (higher_order.cond)" || locs[len(locs)-1].NestingLevel != 1 {
		t.Fatalf("%d locations: first %q, last %q", len(locs), text(0), text(len(locs)-1))
	}
	want := fmt.Sprintf("… %d steps omitted …", len(steps)-maxFlowSteps+1)
	if text(maxFlowSteps/2) != want {
		t.Errorf("location %d: %q, want %q", maxFlowSteps/2, text(maxFlowSteps/2), want)
	}
}

// TestGitHubEscapesControlCharacters: annotations are printed in the
// job's log, which interprets escape sequences: a file name or message
// with one is escaped (ir.Printable); the workflow command's own escapes
// (%0A for a message's newline) are kept.
func TestGitHubEscapesControlCharacters(t *testing.T) {
	prop := ghProp("m\x1b[2J.pb")
	data := ghData("line one\x1b[31m\nline two")
	if strings.Contains(prop, "\x1b") || strings.Contains(data, "\x1b") {
		t.Errorf("escape sequence kept: %q, %q", prop, data)
	}
	if prop != `m\x1b[2J.pb` || data != `line one\x1b[31m%0Aline two` {
		t.Errorf("ghProp = %q, ghData = %q", prop, data)
	}
}
