package alias_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestUnknownBaseHOPFromItsRecord: torch 2.14's traces of a BaseHOP
// subclass no HOP table knows (corpus_base_hop, python/tools/hop_corpus.py
// and hop_corpus_dynamo.py) are analysed by BaseHOP's rules because the
// file records its classes (File.hop_classes): at the Dynamo level a write
// in its subgraph gets Dynamo's refusal, at the make_fx level (which torch
// accepts: it functionalizes the write) the write reaches the caller's
// input. Without the record, or with a record naming no BaseHOP, the HOP
// is unknown: an unknown-op finding and no HOP rule.
func TestUnknownBaseHOPFromItsRecord(t *testing.T) {
	const target = "higher_order.corpus_base_hop"
	run := func(path string, edit func(m *ir.Module)) (*analyze.Result, *ir.Module) {
		t.Helper()
		m, err := ir.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(m.HOPClasses, func(c ir.HOPClass) bool {
			return c.Target == target && slices.Contains(c.Classes, opschema.BaseHOPClass)
		}) {
			t.Fatalf("%s records no BaseHOP class for %s: %+v", path, target, m.HOPClasses)
		}
		edit(m)
		reg, err := opschema.NewRegistryForModule(m)
		if err != nil {
			t.Fatal(err)
		}
		res, err := analyze.Run(m, path, reg, alias.Analyzer)
		if err != nil {
			t.Fatal(err)
		}
		return res, m
	}
	rules := func(res *analyze.Result) (hop, unknown []string) {
		for _, f := range res.Findings {
			switch f.Rule {
			case alias.RuleHOPMutation, alias.RuleHOPAlias:
				hop = append(hop, f.Message)
			case alias.RuleUnknownOp:
				if strings.Contains(f.Message, target) {
					unknown = append(unknown, f.Message)
				}
			}
		}
		return hop, unknown
	}
	keep := func(*ir.Module) {}
	forget := func(m *ir.Module) { m.HOPClasses = nil }
	notBase := func(m *ir.Module) {
		for i := range m.HOPClasses {
			m.HOPClasses[i].Classes = slices.DeleteFunc(slices.Clone(m.HOPClasses[i].Classes), func(c string) bool { return c == opschema.BaseHOPClass })
		}
	}

	dynamo := "../../../../testdata/hops_real/dynamo/basehop_mutate_grad.pb"
	if res, _ := run(dynamo, keep); !slices.Equal(func() []string { h, _ := rules(res); return h }(), []string{opschema.DynamoMutationMessage}) {
		t.Errorf("%s with its record: %v, want Dynamo's refusal", dynamo, res.Findings)
	}
	makeFx := "../../../../testdata/hops_real/basehop_mutate.pb"
	res, m := run(makeFx, keep)
	if hop, unknown := rules(res); len(hop)+len(unknown) > 0 {
		t.Errorf("%s (make_fx level, torch accepts it): hopctl reports %q %q", makeFx, hop, unknown)
	}
	if sum, _ := res.Results[alias.Analyzer][m.Root().Name].(*alias.Summary); sum == nil || !slices.Equal(sum.MutatedInputs, []int{0}) {
		t.Errorf("%s: the subgraph's write does not reach the caller's input: %+v", makeFx, sum)
	}
	for _, path := range []string{dynamo, makeFx} {
		for name, edit := range map[string]func(*ir.Module){"no record": forget, "no BaseHOP in the record": notBase} {
			res, _ := run(path, edit)
			if hop, unknown := rules(res); len(hop) > 0 || len(unknown) == 0 {
				t.Errorf("%s, %s: HOP findings %q, unknown-op %q; want the HOP unknown", path, name, hop, unknown)
			}
		}
	}
}
