// Package validate decides whether a graph file is valid input, beyond the
// structure ir.Verify checks: its schema table parses, every call of an op
// with a schema fits it (arity, keyword names, argument kinds, as package
// schemacheck judges), and every HOP call matches its subgraphs (as
// hop.CheckCall judges). A file that fails cannot have come from
// tracing a torch program and cannot be analysed soundly — the alias
// analysis binds arguments by schema and walks into subgraphs by operand
// position — so it is invalid input (exit code 3), not a finding.
//
// Every command that reads graph files opens them through package load,
// which runs Check, so every command accepts and refuses the same files.
package validate

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/schemacheck"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Check checks every call of a verified module against its schema and
// every call of subgraphs against the subgraphs. It returns an
// *ir.VerifyError listing each problem (at most ir.MaxProblems), or nil.
func Check(m *ir.Module, file string, reg *opschema.Registry) error {
	var problems []ir.Problem
	dropped := 0
	add := func(graph, node, msg string) {
		if len(problems) >= ir.MaxProblems {
			dropped++
			return
		}
		problems = append(problems, ir.Problem{Loc: ir.At(file, graph, node), Msg: msg, Kind: ir.ProblemCall})
	}
	for _, g := range m.Graphs {
		for i := range g.Nodes {
			if err := hop.CheckCall(reg, m, g, ir.NodeID(i)); err != nil {
				add(g.Name, g.Nodes[i].Name, tagged(err.Error(), alias.RuleBadHOPCall))
			}
		}
	}
	res, err := analyze.Run(m, file, reg, schemacheck.Analyzer)
	if err != nil {
		return &ir.DecodeError{Loc: ir.Location{File: file}, Err: err}
	}
	for _, f := range res.Findings {
		add(f.Graph, f.Node, tagged(f.Message, f.Rule))
	}
	if len(problems) == 0 {
		return nil
	}
	if dropped > 0 {
		problems = append(problems, ir.Problem{Loc: ir.Location{File: file}, Msg: fmt.Sprintf("... and %d more problems", dropped)})
	}
	return &ir.VerifyError{Problems: problems}
}

// tagged appends the rule id, as hopctl lint shows it, to a message's
// first line.
func tagged(msg, rule string) string {
	first, rest, multi := strings.Cut(msg, "\n")
	if !multi {
		return msg + " [" + rule + "]"
	}
	return first + " [" + rule + "]\n" + rest
}
