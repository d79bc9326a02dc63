package ir

import (
	"math"
	"slices"
)

// Argument trees: the one implementation of walking, copying and
// rewriting them (see also Arg.WalkRefs and Node.WalkRefs). Everything here
// is iterative: a file may nest an argument as deep as the decoder allows.

// Leaves returns the pytree leaves of the argument tree, in order: lists,
// tuples and dicts are flattened (as torch.utils._pytree does), every other
// argument is a leaf.
func (a *Arg) Leaves() []*Arg {
	if !a.isContainer() {
		return []*Arg{a}
	}
	var out []*Arg
	stack := []*Arg{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !x.isContainer() {
			out = append(out, x)
			continue
		}
		for i := len(x.Elems()) - 1; i >= 0; i-- {
			stack = append(stack, &x.Elems()[i])
		}
	}
	return out
}

func (a *Arg) isContainer() bool {
	return a.Kind == ArgList || a.Kind == ArgTuple || a.Kind == ArgDict
}

// Outputs returns the pytree leaves of g's output node argument, in order,
// and whether the output is a tuple (as opposed to a list or a bare value):
// a graph's outputs as PyTorch's analyses read them.
func (g *Graph) Outputs() (leaves []*Arg, tuple bool) {
	out := g.OutputNode()
	if out < 0 || len(g.Nodes[out].Args) == 0 {
		return nil, false
	}
	a := &g.Nodes[out].Args[0]
	return a.Leaves(), a.Kind == ArgTuple
}

// HasRef reports whether the tree holds a node reference.
func (a *Arg) HasRef() bool { return a.Has(ArgNode) }

// Has reports whether the tree holds an argument of kind k (a itself
// included).
func (a *Arg) Has(k ArgKind) bool {
	return a.Kind == k || elemsHave(a.Elems(), k)
}

// elemsHave is Has over a list of elements. It takes the elements, not
// their parent, so that a caller's Arg does not escape to the heap for the
// walk (the stack's pointers do, and they point into element slices).
func elemsHave(elems []Arg, k ArgKind) bool {
	deep := false
	for i := range elems {
		if elems[i].Kind == k {
			return true
		}
		deep = deep || len(elems[i].Elems()) > 0
	}
	if !deep {
		return false
	}
	var stack []*Arg
	for i := range elems {
		if len(elems[i].Elems()) > 0 {
			stack = append(stack, &elems[i])
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Kind == k {
			return true
		}
		for i := range x.Elems() {
			stack = append(stack, &x.Elems()[i])
		}
	}
	return false
}

// Clone returns a deep copy of the argument tree: no element slice is
// shared with a (strings, symbolic expressions and dict keys are).
func (a *Arg) Clone() Arg {
	out := *a
	if len(a.Elems()) == 0 {
		return out
	}
	stack := []*Arg{&out}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Elems() == nil {
			continue
		}
		elems := make([]Arg, len(x.Elems()))
		copy(elems, x.Elems())
		x.SetElems(elems)
		for i := range elems {
			if len(elems[i].Elems()) > 0 {
				stack = append(stack, &elems[i])
			}
		}
	}
	return out
}

// MapRefs returns a with every node reference r replaced by ref(r). Lists,
// tuples and dicts that hold a reference are copied, their element slices
// from alloc (nil: make); subtrees without references are shared, and a is
// never modified.
func MapRefs(a Arg, alloc func(n int) []Arg, ref func(Arg) Arg) Arg {
	if a.Kind == ArgNode {
		return ref(a)
	}
	if !elemsHave(a.Elems(), ArgNode) {
		return a
	}
	if alloc == nil {
		alloc = func(n int) []Arg { return make([]Arg, n) }
	}
	if a.flat() { // the common case, without a stack
		elems := alloc(len(a.Elems()))
		for i := range a.Elems() {
			if a.Elems()[i].Kind == ArgNode {
				elems[i] = ref(a.Elems()[i])
			} else {
				elems[i] = a.Elems()[i]
			}
		}
		a.SetElems(elems)
		return a
	}
	return mapRefsDeep(a, alloc, ref)
}

// mapRefsDeep is MapRefs of a nested tree. It is a function of its own so
// that MapRefs's argument stays on the stack in the common, flat case:
// here out escapes (the stack holds its address), an allocation per call.
func mapRefsDeep(a Arg, alloc func(n int) []Arg, ref func(Arg) Arg) Arg {
	out := a
	// Each container on the stack is a copy whose Elems still are the
	// original's; it gets its own slice, its elements mapped or pushed.
	stack := []*Arg{&out}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		orig := x.Elems()
		x.SetElems(alloc(len(orig)))
		for i := range orig {
			e := &orig[i]
			switch {
			case e.Kind == ArgNode:
				x.Elems()[i] = ref(*e)
			case len(e.Elems()) > 0 && e.HasRef():
				x.Elems()[i] = *e
				stack = append(stack, &x.Elems()[i])
			default:
				x.Elems()[i] = *e
			}
		}
	}
	return out
}

// Equal reports whether the argument trees a and b are equal, field by
// field and element by element (a symbolic expression by its fields;
// floats by their bits, so NaN equals NaN of the same bits). Use it, not
// reflect.DeepEqual, which follows the elements' pointer to the first only.
func (a *Arg) Equal(b *Arg) bool {
	type pair struct{ a, b *Arg }
	stack := []pair{{a, b}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := p.a, p.b
		if x.Kind != y.Kind || x.B != y.B || x.Ref != y.Ref || x.S != y.S ||
			(x.elems == nil) != (y.elems == nil) || x.num != y.num {
			return false
		}
		xs, ys := x.Sym(), y.Sym()
		if (xs == nil) != (ys == nil) || xs != nil && *xs != *ys {
			return false
		}
		if math.Float64bits(x.Imag()) != math.Float64bits(y.Imag()) || !slices.Equal(x.Keys(), y.Keys()) ||
			(x.Keys() == nil) != (y.Keys() == nil) {
			return false
		}
		xe, ye := x.Elems(), y.Elems()
		for i := range xe {
			stack = append(stack, pair{&xe[i], &ye[i]})
		}
	}
	return true
}
