package ir

import (
	"reflect"
	"testing"
	"unsafe"
)

func argTree() Arg {
	ref := func(i NodeID) Arg { return NodeArg(i, "n") }
	return WithElems(Arg{Kind: ArgTuple}, []Arg{
		ref(1),
		WithElems(Arg{Kind: ArgList}, []Arg{IntArg(7), ref(2), DictArg([]string{"k"}, []Arg{ref(3)})}),
		WithElems(Arg{Kind: ArgList}, []Arg{IntArg(8)}),
		{Kind: ArgNone},
	})
}

func TestArgTree(t *testing.T) {
	a := argTree()
	var leaves []string
	for _, l := range a.Leaves() {
		switch l.Kind {
		case ArgNode:
			leaves = append(leaves, "ref")
		case ArgInt:
			leaves = append(leaves, "int")
		case ArgNone:
			leaves = append(leaves, "none")
		}
	}
	if want := []string{"ref", "int", "ref", "ref", "int", "none"}; !reflect.DeepEqual(leaves, want) {
		t.Errorf("Leaves = %v, want %v", leaves, want)
	}
	c := a.Clone()
	if !c.Equal(&a) {
		t.Fatal("Clone differs")
	}
	c.Elems()[1].Elems()[2].Elems()[0].Ref = 9
	if a.Elems()[1].Elems()[2].Elems()[0].Ref != 3 {
		t.Error("Clone shares elements")
	}
	m := MapRefs(a, nil, func(r Arg) Arg { r.Ref += 10; return r })
	var refs []NodeID
	m.WalkRefs(func(r *Arg) { refs = append(refs, r.Ref) })
	if !reflect.DeepEqual(refs, []NodeID{11, 12, 13}) {
		t.Errorf("MapRefs refs = %v", refs)
	}
	if orig := argTree(); !a.Equal(&orig) {
		t.Error("MapRefs modified its argument")
	}
	if &m.Elems()[2].Elems()[0] != &a.Elems()[2].Elems()[0] {
		t.Error("MapRefs copied a subtree without references")
	}
	if !a.HasRef() || a.Elems()[2].HasRef() {
		t.Error("HasRef")
	}
	if !a.Has(ArgDict) || !a.Has(ArgNone) || a.Elems()[2].Has(ArgDict) || a.Has(ArgStr) {
		t.Error("Has")
	}
}

// TestArgTreeDeep: the tree functions are iterative.
func TestArgTreeDeep(t *testing.T) {
	const depth = 1_000_000
	a := NodeArg(0, "x")
	for range depth {
		a = WithElems(Arg{Kind: ArgList}, []Arg{a})
	}
	if l := a.Leaves(); len(l) != 1 || l[0].Kind != ArgNode {
		t.Errorf("Leaves of a deep list = %v", l)
	}
	c := a.Clone()
	if c.Elems()[0].Elems()[0].Kind != ArgList {
		t.Error("deep Clone")
	}
	// MapRefs looks for references below every container it copies:
	// quadratic in the depth, which the decoder bounds.
	a = NodeArg(0, "x")
	for range 2000 {
		a = WithElems(Arg{Kind: ArgList}, []Arg{a})
	}
	m := MapRefs(a, nil, func(r Arg) Arg { r.Ref = 5; return r })
	n := 0
	m.WalkRefs(func(r *Arg) { n += int(r.Ref) })
	if n != 5 {
		t.Errorf("deep MapRefs: %d", n)
	}
}

// TestArgSize guards the size of Arg and Node: a 1M-node graph holds
// millions of each, and every byte is paid in memory and page faults.
func TestArgSize(t *testing.T) {
	if s := unsafe.Sizeof(Arg{}); s != 48 {
		t.Errorf("Arg is %d bytes, want 48", s)
	}
	if s := unsafe.Sizeof(Node{}); s != 104 {
		t.Errorf("Node is %d bytes, want 104", s)
	}
}

// TestArgEqual: Equal sees every field, the last element, the rare fields
// behind the extension, and nil against empty.
func TestArgEqual(t *testing.T) {
	sym := func(e string) *SymExpr { return &SymExpr{Kind: SymInt, Expr: e} }
	edits := map[string]func(a *Arg){
		"last element":  func(a *Arg) { a.Elems()[3] = IntArg(1) },
		"nested ref":    func(a *Arg) { a.Elems()[1].Elems()[2].Elems()[0].Ref = 4 },
		"dict key":      func(a *Arg) { a.Elems()[1].Elems()[2] = DictArg([]string{"j"}, []Arg{NodeArg(3, "n")}) },
		"fewer":         func(a *Arg) { a.SetElems(a.Elems()[:3]) },
		"int":           func(a *Arg) { a.Elems()[1].Elems()[0].SetInt(6) },
		"int to float":  func(a *Arg) { a.Elems()[1].Elems()[0] = FloatArg(7) },
		"name":          func(a *Arg) { a.Elems()[0].S = "m" },
		"imag":          func(a *Arg) { a.Elems()[3] = ComplexArg(0, -0.0) },
		"sym":           func(a *Arg) { a.Elems()[3] = SymArg(sym("s1")) },
		"empty not nil": func(a *Arg) { a.Elems()[2].SetElems([]Arg{}) },
	}
	for name, edit := range edits {
		a, b := argTree(), argTree()
		b.Elems()[2].SetElems(nil)
		a.Elems()[2].SetElems(nil)
		if !a.Equal(&b) {
			t.Fatalf("%s: equal trees differ", name)
		}
		edit(&b)
		if a.Equal(&b) || b.Equal(&a) {
			t.Errorf("%s: Equal does not see the change", name)
		}
	}
	x, y := SymArg(sym("s0")), SymArg(sym("s0"))
	if !x.Equal(&y) {
		t.Error("equal symbols differ")
	}
}
