package opschema

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestWithHOPClasses: a file's record of a HOP derived from BaseHOP adds
// BaseHOP's row for a HOP no table knows (one subgraph fed the variadic
// operands, outputs passed through, writes and aliasing forbidden by
// Dynamo only), keeps the table's row for a HOP it knows, and adds nothing
// for other classes or targets that name no HOP.
func TestWithHOPClasses(t *testing.T) {
	r, err := NewRegistryForTorch("2.6.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"m.MyHOP", BaseHOPClass, "torch._ops.HigherOrderOperator"}
	got := r.WithHOPClasses([]ir.HOPClass{
		{Target: "higher_order.my_hop", Classes: base},
		{Target: "higher_order.cond", Classes: base},                                                   // known: the table's row stays
		{Target: "higher_order.plain_hop", Classes: []string{"m.P", "torch._ops.HigherOrderOperator"}}, // not a BaseHOP
		{Target: "aten.add.Tensor", Classes: base},                                                     // not a HOP
		{Target: "higher_order.bad name", Classes: base},                                               // no valid row
	})
	if got.builtin != r.builtin {
		t.Errorf("the torch version's built-in table is lost")
	}
	h, ok := got.HOP("higher_order.my_hop")
	if !ok {
		t.Fatal("the recorded BaseHOP is unknown")
	}
	if err := CheckHOP(h); err != nil {
		t.Error(err)
	}
	if h.ArgIndex("subgraph") != 0 || len(h.Subgraphs) != 1 || h.Subgraphs[0].Operands[0].Arg != "*operands" || !h.FreeKwargs {
		t.Errorf("row %+v is not BaseHOP's call_subgraph_hop(subgraph, *operands, **kwargs)", h)
	}
	for _, kind := range []RestrictionKind{ForbidMutation, ForbidAlias} {
		found := false
		for _, res := range h.Subgraphs[0].Restrictions {
			found = found || res.Kind == kind && res.DynamoOnly
		}
		if !found {
			t.Errorf("restriction %d missing or not Dynamo's only: %+v", kind, h.Subgraphs[0].Restrictions)
		}
	}
	if _, _, ok := got.Lookup("higher_order.my_hop"); !ok {
		t.Error("no schema for the recorded BaseHOP")
	}
	if c, _ := got.HOP("higher_order.cond"); c == nil || c.Subgraphs[0].Name != "cond_true" {
		t.Errorf("a record replaced cond's row: %+v", c)
	}
	for _, tgt := range []string{"higher_order.plain_hop", "higher_order.bad name"} {
		if _, ok := got.HOP(tgt); ok {
			t.Errorf("%s: a row was made", tgt)
		}
	}
	if same := r.WithHOPClasses(nil); same != r {
		t.Error("no record: a new registry")
	}
	// The table's own BaseHOPs have the same row.
	for _, name := range []string{"foreach_map", "invoke_quant", "invoke_quant_packed"} {
		h, _ := LookupHOP(name)
		d, _ := DerivedHOP(HOPTarget(name), base)
		if h == nil || d == nil || h.Schema != d.Schema || len(h.Subgraphs) != 1 || h.Subgraphs[0].Operands[0] != d.Subgraphs[0].Operands[0] {
			t.Errorf("%s: not BaseHOP's row", name)
		}
	}
}
