// Package hopcalls is the analyzer the HOP analyzers build on, as
// golang.org/x/tools/go/analysis/passes/inspect is for Go's: it finds the
// graph's HOP call sites once, by the registry's convention table
// (hop.Lookup), and the analyzers that require it read them with Calls
// and report at a call with Report.
package hopcalls

import (
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Call is one HOP call site of a graph.
type Call struct {
	ID   ir.NodeID
	Node *ir.Node
	HOP  *opschema.HOP
}

// Analyzer finds the HOP call sites of a graph. Its result is a []Call in
// node order. It reports nothing.
var Analyzer = &analyze.Analyzer{
	Name: "hopcalls",
	Doc:  "the HOP call sites of a graph, for the analyzers that check them",
	Run: func(pass *analyze.Pass) (any, error) {
		var calls []Call
		g := pass.Graph
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if h, ok := hop.Lookup(pass.Schemas, n); ok {
				calls = append(calls, Call{ID: ir.NodeID(i), Node: n, HOP: h})
			}
		}
		return calls, nil
	},
}

// Calls returns the HOP call sites of pass's graph, for an analyzer that
// requires Analyzer.
func Calls(pass *analyze.Pass) []Call {
	calls, _ := pass.ResultOf[Analyzer].([]Call)
	return calls
}

// Report reports a finding of rule at call c: located at its node, with
// the node's stack trace as provenance, and the node as the provenance's
// path when path is set (a finding about the call's subgraphs).
func Report(pass *analyze.Pass, c Call, rule, msg string, path bool) {
	n := c.Node
	prov := &analyze.Provenance{InputIndex: -1, Node: n.Name}
	if path {
		prov.Path = []string{n.Name}
	}
	if n.Meta != nil {
		prov.StackTrace = n.Meta.StackTrace
	}
	pass.Report(analyze.Finding{Rule: rule, Severity: analyze.Error, Node: n.Name, Message: msg, Provenance: prov})
}
