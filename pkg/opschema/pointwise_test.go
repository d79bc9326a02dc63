package opschema

import (
	"strings"
	"testing"
)

// TestPointwiseList: every overload of torch 2.14's pointwise list has a
// schema in torch 2.14's table (both are dumps of the same torch), so the
// check reads torch's tags, not names hopctl guesses.
func TestPointwiseList(t *testing.T) {
	tab := BuiltinTableFor("2.14.1")
	n := 0
	for _, line := range strings.Split(atenPointwise214, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		name, err := ParseTarget(line)
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		// (aten::positive is tagged pointwise and is a view: is_pointwise_use
		// tests is_view first, as hopstruct does.)
		if _, ok := tab.Lookup(name); !ok {
			t.Errorf("%s is tagged pointwise but has no schema in torch 2.14's table", line)
			continue
		}
		if !IsPointwise(name.Target()) {
			t.Errorf("IsPointwise(%q) = false", name.Target())
		}
	}
	if n < 400 {
		t.Errorf("only %d pointwise overloads", n)
	}
	for target, want := range map[string]bool{
		"aten.add.Tensor": true, "aten.sin.default": true, "torch.ops.aten.mul.Tensor": true, "aten::where.self": true,
		"aten.mm.default": false, "aten.sum.dim_IntList": false, "aten.view.default": false, "_operator.getitem": false,
		"higher_order.cond": false,
	} {
		if got := IsPointwise(target); got != want {
			t.Errorf("IsPointwise(%q) = %v, want %v", target, got, want)
		}
	}
}
