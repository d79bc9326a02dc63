package ir

import (
	"reflect"
	"testing"
	"unsafe"
)

func argTree() Arg {
	ref := func(i NodeID) Arg { return NodeArg(i, "n") }
	return Arg{Kind: ArgTuple, Elems: []Arg{
		ref(1),
		{Kind: ArgList, Elems: []Arg{IntArg(7), ref(2), DictArg([]string{"k"}, []Arg{ref(3)})}},
		{Kind: ArgList, Elems: []Arg{IntArg(8)}},
		{Kind: ArgNone},
	}}
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
	if !reflect.DeepEqual(c, a) {
		t.Fatal("Clone differs")
	}
	c.Elems[1].Elems[2].Elems[0].Ref = 9
	if a.Elems[1].Elems[2].Elems[0].Ref != 3 {
		t.Error("Clone shares elements")
	}
	m := MapRefs(a, nil, func(r Arg) Arg { r.Ref += 10; return r })
	var refs []NodeID
	m.WalkRefs(func(r *Arg) { refs = append(refs, r.Ref) })
	if !reflect.DeepEqual(refs, []NodeID{11, 12, 13}) {
		t.Errorf("MapRefs refs = %v", refs)
	}
	if !reflect.DeepEqual(a, argTree()) {
		t.Error("MapRefs modified its argument")
	}
	if &m.Elems[2].Elems[0] != &a.Elems[2].Elems[0] {
		t.Error("MapRefs copied a subtree without references")
	}
	if !a.HasRef() || a.Elems[2].HasRef() {
		t.Error("HasRef")
	}
	if !a.Has(ArgDict) || !a.Has(ArgNone) || a.Elems[2].Has(ArgDict) || a.Has(ArgStr) {
		t.Error("Has")
	}
}

// TestArgTreeDeep: the tree functions are iterative.
func TestArgTreeDeep(t *testing.T) {
	const depth = 1_000_000
	a := NodeArg(0, "x")
	for range depth {
		a = Arg{Kind: ArgList, Elems: []Arg{a}}
	}
	if l := a.Leaves(); len(l) != 1 || l[0].Kind != ArgNode {
		t.Errorf("Leaves of a deep list = %v", l)
	}
	c := a.Clone()
	if c.Elems[0].Elems[0].Kind != ArgList {
		t.Error("deep Clone")
	}
	// MapRefs looks for references below every container it copies:
	// quadratic in the depth, which the decoder bounds.
	a = NodeArg(0, "x")
	for range 2000 {
		a = Arg{Kind: ArgList, Elems: []Arg{a}}
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
	if s := unsafe.Sizeof(Arg{}); s != 64 {
		t.Errorf("Arg is %d bytes, want 64", s)
	}
	if s := unsafe.Sizeof(Node{}); s != 104 {
		t.Errorf("Node is %d bytes, want 104", s)
	}
}
