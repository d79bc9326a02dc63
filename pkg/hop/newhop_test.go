package hop_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// myLoop is a HOP hopctl does not know, defined by one table row and
// nothing else: a loop whose step function takes the carries and one
// slice of xs, and returns the next carries. The graphs below are the
// shipped while_loop graphs with the call retargeted to it.
var myLoop = &opschema.HOP{
	Name:   "my_loop",
	Doc:    "A test HOP: carries = step_fn(*carries, *xs[i]) for each i; returns the final carries.",
	Schema: "higher_order::my_loop(Any stop_fn, Any step_fn, Any carries, Any xs) -> ...",
	Subgraphs: []opschema.Subgraph{
		{Arg: "stop_fn", Name: "my_stop", Operands: []opschema.Operands{{Arg: "carries"}, {Arg: "xs", Sliced: true}},
			Restrictions: []opschema.Restriction{{Kind: opschema.ForbidMutation}, {Kind: opschema.ForbidAlias}}},
		{Arg: "step_fn", Name: "my_step", Operands: []opschema.Operands{{Arg: "carries"}, {Arg: "xs", Sliced: true}},
			Outputs:      &opschema.Outputs{Count: "carries"},
			Restrictions: []opschema.Restriction{{Kind: opschema.ForbidMutation}, {Kind: opschema.ForbidAlias}}},
	},
	MetaChecks:    []opschema.MetaCheck{{LHS: "my_carries", RHS: "my_step_output", Arg: "carries", Subgraph: "step_fn"}},
	ArgTypeChecks: []opschema.ArgTypeCheck{{Args: []string{"carries"}}},
}

// replaceFirst replaces the first match of the regexp pattern in s (the
// text encoding's layout, one line or many, does not matter).
func replaceFirst(t *testing.T, s, pattern, repl string) string {
	t.Helper()
	loc := regexp.MustCompile(pattern).FindStringIndex(s)
	if loc == nil {
		t.Fatalf("no match for %s", pattern)
	}
	return s[:loc[0]] + repl + s[loc[1]:]
}

// myLoopGraph reads a shipped while_loop graph with its call retargeted to
// my_loop, after edit.
func myLoopGraph(t *testing.T, name string, edit func(string) string) *ir.Module {
	t.Helper()
	data, err := os.ReadFile("../../testdata/hops/" + name)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), `target: "higher_order.while_loop"`, `target: "higher_order.my_loop"`)
	if text == string(data) {
		t.Fatalf("%s calls no while_loop", name)
	}
	if edit != nil {
		text = edit(text)
	}
	m, err := ir.Decode([]byte(text), ir.Text, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m, name); err != nil {
		t.Fatal(err)
	}
	return m
}

func rules(fs []analyze.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+": "+strings.SplitN(f.Message, "\n", 2)[0])
	}
	return out
}

// TestNewHOPFromTableRow adds a HOP with one row of the convention table
// (Registry.WithHOPs) and nothing else, and checks that every consumer of
// the table — the alias analysis and its restrictions, the metadata check,
// the operand type check and validation — handles its calls. Without the
// row the same graphs only get an unknown-op warning.
func TestNewHOPFromTableRow(t *testing.T) {
	base, err := opschema.NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := base.WithHOPs(myLoop)
	if err != nil {
		t.Fatal(err)
	}
	run := func(m *ir.Module, reg *opschema.Registry) *analyze.Result {
		t.Helper()
		if err := validate.Check(m, "f.pbtxt", reg); err != nil {
			t.Fatalf("validation refused a well-formed call: %v", err)
		}
		res, err := analyze.Run(m, "f.pbtxt", reg, passes.All()...)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// The step mutates a carry: the row's restriction, in the row's name;
	// the caller's input is mutated through the call.
	m := myLoopGraph(t, "while_body_mutates_carry.pbtxt", nil)
	res := run(m, reg)
	if got, want := rules(res.Findings), []string{"hop-input-mutation: my_step might be modifying the input!"}; !slices.Equal(got, want) {
		t.Errorf("with the row: findings %q, want %q", got, want)
	}
	if sum := res.Results[alias.Analyzer][""].(*alias.Summary); !slices.Equal(sum.MutatedInputs, []int{1}) {
		t.Errorf("with the row: root mutated inputs %v, want [1]", sum.MutatedInputs)
	}
	res = run(m, base)
	if got := rules(res.Findings); len(got) != 1 || !strings.HasPrefix(got[0], "unknown-op: unknown higher-order operator higher_order.my_loop") {
		t.Errorf("without the row: findings %q, want one unknown-op", got)
	}

	// The decoder follows the row: carries then slices of xs, the carries
	// passed through.
	id, _ := m.Root().Lookup("while_loop")
	call, err := hop.DecodeIn(reg, m, m.Root(), id)
	if err != nil || call == nil || call.Op != "my_loop" || len(call.Subgraphs) != 2 {
		t.Fatalf("Decode = %+v, %v", call, err)
	}
	step := call.Subgraph("step_fn")
	if step == nil || step.Name != "my_step" || len(step.Operands) != 3 || step.Operands[1].Sliced || !step.Operands[2].Sliced ||
		!slices.Equal(step.Outputs, []int{0, 1}) || step.Forbids(opschema.ForbidAlias, "") == nil {
		t.Errorf("step_fn = %+v", step)
	}

	// Metadata check, in the row's names.
	m = myLoopGraph(t, "while_loop_meta_mismatch.pbtxt", nil)
	res = run(m, reg)
	if got, want := rules(res.Findings), []string{"hop-meta-mismatch: Expected my_carries and my_step_output to have same metadata but found:"}; !slices.Equal(got, want) {
		t.Errorf("meta mismatch: findings %q, want %q", got, want)
	}

	// Operand types: a float carry.
	m = myLoopGraph(t, "while_loop.pbtxt", func(s string) string {
		return replaceFirst(t, s, `args\s*\{\s*tuple\s*\{\s*items\s*\{\s*node:\s*"i_1"\s*\}`, `args {tuple {items {float: 1.5}`)
	})
	res = run(m, reg)
	if got := rules(res.Findings); !slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "hop-arg-type: (1.5, ") && strings.Contains(s, "can only be of")
	}) {
		t.Errorf("float carry: findings %q, want hop-arg-type", got)
	}

	// Validation: a call passing the step one operand too few is invalid
	// with the row, and not judged without it.
	m = myLoopGraph(t, "while_loop.pbtxt", func(s string) string {
		return replaceFirst(t, s, `args\s*\{\s*tuple\s*\{\s*items\s*\{\s*node:\s*"i_1"\s*\}\s*items\s*\{\s*node:\s*"x_1"\s*\}\s*\}\s*\}`,
			`args {tuple {items {node: "x_1"}}}`)
	})
	err = validate.Check(m, "f.pbtxt", reg)
	if err == nil || !strings.Contains(err.Error(), "my_loop call: stop_fn subgraph while_loop_cond_graph_0 takes 3 inputs but the call passes 2 [hop-call]") {
		t.Errorf("validation of a short call: %v", err)
	}
	if err := validate.Check(m, "f.pbtxt", base); err != nil {
		t.Errorf("validation without the row judged the unknown HOP: %v", err)
	}
}
