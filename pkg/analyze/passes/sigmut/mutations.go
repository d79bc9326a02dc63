package sigmut

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Mutation is one write a program makes to one of a graph's inputs, with
// where the answer comes from: a node of the graph (Node, and Path through
// nested HOP bodies, as alias.Mutation's provenance), or the graph
// signature (Output, the root output whose value torch.export writes back,
// and Kind, its OutputKind). Output is -1 for an in-graph write.
type Mutation struct {
	Input  int
	Name   string
	Node   string
	Path   []string
	Output int
	Kind   string
}

// Declared reports whether the graph signature is the mutation's
// provenance.
func (m Mutation) Declared() bool { return m.Output >= 0 }

// Provenance is the write's source as reports print it: "node add_",
// "node cond → true_graph_0 → mul_" (the way through nested HOP bodies),
// or "declared by the graph signature, output 1 (BUFFER_MUTATION)".
func (m Mutation) Provenance() string {
	if m.Declared() {
		return fmt.Sprintf("declared by the graph signature, output %d (%s)", m.Output, m.Kind)
	}
	if len(m.Path) > 0 {
		return "node " + strings.Join(m.Path, " → ")
	}
	return "node " + m.Node
}

// Mutations are the writes the program makes to the inputs of graph s:
// the in-graph writes of the alias analysis (one per mutated input, first
// write) and, for the root graph of an exported program, the writes its
// signature declares (torch.export's buffers_to_mutate,
// parameters_to_mutate, user_inputs_to_mutate: after run_decompositions()
// the graph is functional and they live only there). In input order, the
// in-graph write before the declared one. This is the one place that
// joins the two; the analyze report and the HTML report read it.
func Mutations(m *ir.Module, s *alias.Summary) []Mutation {
	byInput := map[int][]Mutation{}
	for _, mu := range s.Mutations {
		if mu.Input < 0 || mu.Input >= len(s.Inputs) {
			continue
		}
		byInput[mu.Input] = append(byInput[mu.Input], Mutation{Input: mu.Input, Name: s.Inputs[mu.Input], Node: mu.Prov.Node, Path: mu.Prov.Path, Output: -1})
	}
	if sig := m.Signature; sig != nil && s.Graph == "" {
		index := map[string]int{}
		for i, name := range s.Inputs {
			index[name] = i
		}
		for j, o := range sig.Outputs {
			name := sig.MutatedInput(o)
			i, ok := index[name]
			if name == "" || !ok {
				continue
			}
			byInput[i] = append(byInput[i], Mutation{Input: i, Name: name, Output: j, Kind: o.Kind.String()})
		}
	}
	var out []Mutation
	for i := range s.Inputs {
		out = append(out, byInput[i]...)
	}
	return out
}
