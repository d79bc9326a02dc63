package opschema

import (
	"slices"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

func TestBind(t *testing.T) {
	s, err := Parse("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None, *, int[] dims=[1, 2]) -> Tensor")
	if err != nil {
		t.Fatal(err)
	}
	x := ir.Arg{Kind: ir.ArgNode, S: "x", Ref: 0}
	one := ir.IntArg(1)
	two := ir.IntArg(2)
	args := []ir.Arg{x, one}
	kwargs := []ir.Kwarg{{Name: "max", Value: two}, {Name: "max", Value: one}}
	if err := s.CheckBind(args, kwargs); err != nil {
		t.Fatal(err)
	}
	bound := s.Bind(args, kwargs)
	if bound[0] != &args[0] || bound[1] != &args[1] || bound[2] != &kwargs[1].Value || bound[3] != nil {
		t.Errorf("Bind = %v", bound)
	}
	for i := range s.Arguments {
		if got := s.BoundAt(args, kwargs, i); got != bound[i] {
			t.Errorf("BoundAt(%d) = %v, Bind %v", i, got, bound[i])
		}
	}
	want := []ir.Arg{x, one, one, ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{one, two})}
	vals, err := s.BindValues(args, kwargs)
	if err != nil || !slices.EqualFunc(vals, want, func(a, b ir.Arg) bool { return a.Equal(&b) }) {
		t.Errorf("BindValues = %v, %v; want %v", vals, err, want)
	}
	into, err := s.BindValuesInto(make([]ir.Arg, 1, 8), args, kwargs)
	if err != nil || !slices.EqualFunc(into, want, func(a, b ir.Arg) bool { return a.Equal(&b) }) {
		t.Errorf("BindValuesInto = %v, %v; want %v", into, err, want)
	}
	// Every parameter positional: the arguments themselves.
	plain, _ := Parse("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
	all := []ir.Arg{x, one, two}
	if into, err := plain.BindValuesInto(nil, all, nil); err != nil || &into[0] != &all[0] {
		t.Error("BindValuesInto copied a complete positional call")
	}
	// Omitted without a default: None.
	if vals, _ := s.BindValues(nil, nil); vals[0].Kind != ir.ArgNone {
		t.Errorf("unbound self = %v", vals[0])
	}
	for _, bad := range []struct {
		args   []ir.Arg
		kwargs []ir.Kwarg
		msg    string
	}{
		{[]ir.Arg{x, one, two, one, one}, nil, "5 positional arguments for aten::clamp, which takes 3"},
		// A keyword-only parameter cannot be given positionally.
		{[]ir.Arg{x, one, two, {Kind: ir.ArgList}}, nil, "4 positional arguments for aten::clamp, which takes 3"},
		{args, []ir.Kwarg{{Name: "mx", Value: one}}, `aten::clamp has no argument "mx"`},
	} {
		if err := s.CheckBind(bad.args, bad.kwargs); err == nil || err.Error() != bad.msg {
			t.Errorf("CheckBind = %v, want %s", err, bad.msg)
		}
		if _, err := s.BindValues(bad.args, bad.kwargs); err == nil || err.Error() != bad.msg {
			t.Errorf("BindValues = %v, want %s", err, bad.msg)
		}
		if _, err := s.BindValuesInto(nil, bad.args, bad.kwargs); err == nil || err.Error() != bad.msg {
			t.Errorf("BindValuesInto = %v, want %s", err, bad.msg)
		}
	}
}
