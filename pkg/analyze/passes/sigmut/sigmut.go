// Package sigmut is the signature-mutation analyzer: on an exported
// program (a module with a graph signature) it cross-checks the inputs the
// root graph writes against the mutations the signature declares.
//
// torch.export has two forms (torch/export/exported_program.py): the
// default export (training IR, verifiers ["TRAINING"]) keeps in-place ops
// and declares no mutation outputs; run_decompositions() (functional ATen
// IR, verifiers ["ATEN"]) replaces every in-place write by a functional op
// whose result an output spec (buffer_mutation, parameter_mutation,
// user_input_mutation) tells the runtime to copy back. A program is
// functional when its verifiers say ATEN or it declares any mutation. In a
// functional program the signature lies when:
//
//   - the graph writes a root input in place (alias analysis, through
//     views and nested HOPs) that no spec declares: the program is not the
//     functional program it claims to be, and a runtime that trusts the
//     signature (AOTInductor, ExecuTorch) drops the write;
//   - the graph writes in place an input that a spec also declares: the
//     new value is written twice;
//   - a spec declares a mutation but the graph returns the input itself
//     there: the declared write writes nothing.
package sigmut

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Rule is the rule id of the findings this analyzer reports.
const Rule = "signature-mutation"

// Analyzer is the signature-mutation analyzer. It has no result.
var Analyzer = &analyze.Analyzer{
	Name: "sigmut",
	Doc:  "the inputs an exported program's graph writes vs the mutations its signature declares",
	Rules: []analyze.Rule{
		{ID: Rule, Name: "SignatureMutationMismatch", Severity: analyze.Error, Category: "signature",
			Short: "an exported program's graph writes inputs its signature does not declare (or declares writes it does not make)",
			Doc: "In a functional torch.export program (verifiers ATEN, or any mutation output spec) every input the root graph writes in place " +
				"must be declared by a buffer_mutation/parameter_mutation/user_input_mutation spec instead, and no declared mutation may return the input " +
				"itself. A mismatch means the exported program lies: a runtime that trusts its signature drops or doubles the write.",
			Example: `~~~
ep = torch.export.export(m, (x,)).run_decompositions()
# the graph still calls aten.add_.Tensor on buffer b, but the signature declares no buffer_mutation for it
~~~`,
			Fix: "re-export the program; do not edit an exported program's graph without updating its signature."},
	},
	Requires: []*analyze.Analyzer{alias.Analyzer},
	Run:      run,
}

// Functional reports whether an exported program claims to be functional:
// its verifiers name the ATen dialect, or it declares a mutation.
func Functional(m *ir.Module) bool {
	if m.Signature == nil {
		return false
	}
	if v, ok := m.Annotation("torch.export.verifiers"); ok {
		for _, d := range strings.Split(v, ",") {
			if d == "ATEN" {
				return true
			}
		}
	}
	for _, o := range m.Signature.Outputs {
		if o.Kind.IsMutation() {
			return true
		}
	}
	return false
}

func run(pass *analyze.Pass) (any, error) {
	m, g := pass.Module, pass.Graph
	if g.Name != "" || !Functional(m) {
		return nil, nil
	}
	sig := m.Signature
	sum, ok := pass.ResultOf[alias.Analyzer].(*alias.Summary)
	if !ok {
		return nil, nil
	}
	// declared: placeholder name → the spec that declares its mutation.
	declared := map[string]ir.OutputSpec{}
	for _, o := range sig.Outputs {
		switch o.Kind {
		case ir.OutputUserInputMutation:
			declared[o.Target] = o
		case ir.OutputBufferMutation, ir.OutputParameterMutation:
			want := ir.InputBuffer
			if o.Kind == ir.OutputParameterMutation {
				want = ir.InputParameter
			}
			for _, in := range sig.Inputs {
				if in.Kind == want && in.Target == o.Target {
					declared[in.Name] = o
				}
			}
		}
	}
	for _, mu := range sum.Mutations {
		name := sum.Inputs[mu.Input]
		what := describe(sig, name)
		prov := mu.Prov
		node := prov.Node
		if len(prov.Path) > 0 {
			node = prov.Path[0]
		}
		if spec, ok := declared[name]; ok {
			pass.Report(analyze.Finding{Rule: Rule, Severity: analyze.Error, Node: node, Provenance: &prov,
				Message: fmt.Sprintf("the graph writes %s in place and the signature also declares its mutation (%s: %s): the new value is written twice", what, spec.Name, spec.Kind)})
			continue
		}
		pass.Report(analyze.Finding{Rule: Rule, Severity: analyze.Error, Node: node, Provenance: &prov,
			Message: fmt.Sprintf("the graph writes %s in place, but the functional program's signature declares no mutation of it: a runtime that trusts the signature drops the write", what)})
	}
	// A declared mutation that returns the input itself writes nothing.
	if id := g.OutputNode(); id != ir.NoNode {
		outs := g.Nodes[id].Args
		if len(outs) == 1 && (outs[0].Kind == ir.ArgTuple || outs[0].Kind == ir.ArgList) {
			outs = outs[0].Elems()
		}
		for j, o := range sig.Outputs {
			if !o.Kind.IsMutation() || j >= len(outs) || outs[j].Kind != ir.ArgNode {
				continue
			}
			for _, in := range sig.Inputs {
				name := in.Name
				if spec, ok := declared[name]; ok && spec == o && outs[j].S == name {
					pass.Report(analyze.Finding{Rule: Rule, Severity: analyze.Error, Node: "output",
						Message: fmt.Sprintf("output %d declares a mutation of %s (%s) but returns the input itself: the declared write writes nothing", j, describe(sig, name), o.Kind)})
				}
			}
		}
	}
	return nil, nil
}

// describe names an input for a message: "buffer running (b_running)".
func describe(sig *ir.Signature, name string) string {
	if d := sig.Describe(name); d != "" {
		return d + " (" + name + ")"
	}
	return "user input " + name
}
