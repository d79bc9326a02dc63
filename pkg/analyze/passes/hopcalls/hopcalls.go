// Package hopcalls is the infrastructure analyzer that finds a graph's
// higher-order operator calls and decodes each once by the HOP convention
// table (package hop), as golang.org/x/tools/go/analysis/passes/inspect
// prepares the syntax tree for the analyzers that require it. It reports
// nothing; the HOP checks (alias, hopmeta, hopstruct, hopargs) read its
// result instead of each walking the graph and decoding calls again.
package hopcalls

import (
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Analyzer finds and decodes the HOP calls of a graph. Its result is a
// *Result.
var Analyzer = &analyze.Analyzer{
	Name: "hopcalls",
	Doc:  "the graph's HOP calls, each decoded once by the HOP convention table",
	Run:  run,
}

// Call is one call_function node whose target is a HOP of the registry's
// convention table.
type Call struct {
	ID   ir.NodeID
	Node *ir.Node
	// HOP is the convention row the call follows (hop.Lookup: an older
	// form's row when the call fits it).
	HOP *opschema.HOP
	// Decoded is the decoded call (hop.Decode): nil for HOPs with an
	// operator instead of subgraphs, opaque HOPs, and when Err is set.
	Decoded *hop.Call
	// Err is why the call does not follow the convention; the alias
	// analyzer reports it (rule hop-call), the other checks skip the call.
	Err error
}

// Result is a graph's HOP calls, in node order.
type Result struct {
	Calls []Call
	index map[ir.NodeID]int
}

// At returns the call at node id, or nil when the node is not a HOP call.
func (r *Result) At(id ir.NodeID) *Call {
	if i, ok := r.index[id]; ok {
		return &r.Calls[i]
	}
	return nil
}

// Of returns the result for the graph of pass, whose analyzer must require
// Analyzer.
func Of(pass *analyze.Pass) *Result {
	return pass.ResultOf[Analyzer].(*Result)
}

// Provenance is the provenance of a finding at the call, through path (the
// call's node, subgraphs): the node and its stack trace.
func (c *Call) Provenance(path ...string) *analyze.Provenance {
	p := &analyze.Provenance{InputIndex: -1, Node: c.Node.Name, Path: path}
	if c.Node.Meta != nil {
		p.StackTrace = c.Node.Meta.StackTrace
	}
	return p
}

// Check returns a HOP check: the analyzer name that requires Analyzer and
// reports the one rule, an error of category "hop", from run (which reads
// Of(pass) and reports with Call.Report).
func Check(name, doc string, rule analyze.Rule, run func(*analyze.Pass) (any, error)) *analyze.Analyzer {
	rule.Severity, rule.Category = analyze.Error, "hop"
	return &analyze.Analyzer{Name: name, Doc: doc, Rules: []analyze.Rule{rule}, Requires: []*analyze.Analyzer{Analyzer}, Run: run}
}

// Group returns the elements of the call's argument name (hop.Group).
func (c *Call) Group(name string) (elems []ir.Arg, tuple, ok bool) {
	return hop.Group(c.HOP, c.Node, name)
}

// Arg returns the call's argument name (hop.Arg), nil when it is missing.
func (c *Call) Arg(name string) *ir.Arg { return hop.Arg(c.HOP, c.Node, name) }

// Report reports msg at the call as a finding of the rule of pass's HOP
// check (Check), with the call's provenance through path.
func (c *Call) Report(pass *analyze.Pass, msg string, path ...string) {
	pass.Report(analyze.Finding{Rule: pass.Analyzer.Rules[0].ID, Severity: analyze.Error, Node: c.Node.Name, Message: msg, Provenance: c.Provenance(path...)})
}

func run(pass *analyze.Pass) (any, error) {
	g := pass.Graph
	res := &Result{index: map[ir.NodeID]int{}}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		h, ok := hop.Lookup(pass.Schemas, n)
		if !ok {
			continue
		}
		id := ir.NodeID(i)
		c := Call{ID: id, Node: n, HOP: h}
		c.Decoded, c.Err = pass.DecodeHOP(id)
		res.index[id] = len(res.Calls)
		res.Calls = append(res.Calls, c)
	}
	return res, nil
}
