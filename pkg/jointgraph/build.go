package jointgraph

import (
	"reflect"

	"github.com/hopctl/hopctl/pkg/ir"
)

// V is a value in a graph under construction: a node (a tensor, with its
// metadata when known, or a tuple), or a constant argument (a Python
// scalar, list or None). The zero V is "undefined", PyTorch's undefined
// gradient.
type V struct {
	id   ir.NodeID
	ok   bool
	meta *ir.TensorMeta
	c    *ir.Arg
}

func nodeV(id ir.NodeID, m *ir.TensorMeta) V { return V{id: id, ok: true, meta: m} }
func constV(a ir.Arg) V                      { return V{c: &a} }

// Defined reports whether v is a node or a constant.
func (v V) Defined() bool { return v.ok || v.c != nil }

// IsNode reports whether v is a node of the graph.
func (v V) IsNode() bool { return v.ok }

// Meta returns the tensor metadata of a node, or nil.
func (v V) Meta() *ir.TensorMeta { return v.meta }

// Shape returns the tensor's shape (nil for constants).
func (v V) Shape() []ir.Dim {
	if v.meta == nil {
		return nil
	}
	return v.meta.Shape
}

// Rank returns the tensor's rank.
func (v V) Rank() int { return len(v.Shape()) }

// kw is a keyword argument in a builder.op argument list.
type kw struct {
	name string
	val  any
}

// builder appends nodes to a graph: unique FX-style names, values, and the
// metadata template of the forward node a backward node belongs to.
type builder struct {
	g     *ir.Graph
	names *names
	// meta is the metadata of every call node emitted while it is set
	// (shared: node metadata is never modified in place).
	meta *ir.Meta
	// arena holds the argument lists of the emitted nodes, kwArena their
	// keyword arguments: one allocation per chunk, not one per node.
	arena   argArena
	kwArena chunks[ir.Kwarg]
	// results holds tupleOp's results, not a slice per tuple node.
	results chunks[V]
	// metas interns the emitted nodes' tensor metadata (nil: none).
	metas *metaTable
	// ints interns the elements of the integer lists it emits (intsArg).
	ints map[intsKey][]ir.Arg
	// dims is scratch for the shapes and strides of metadata being
	// looked up (permuteMeta); what is kept is copied out of it.
	dims []ir.Dim
	// bad is the first dimension out of range an op was given (dim), ""
	// while none: the caller reports it at its node.
	bad string
}

func newBuilder(name string) *builder {
	return &builder{g: &ir.Graph{Name: name}, names: newNames(), metas: &metaTable{}}
}

func (b *builder) append(n ir.Node) ir.NodeID {
	b.g.Nodes = append(b.g.Nodes, n)
	return ir.NodeID(len(b.g.Nodes) - 1)
}

func (b *builder) ref(id ir.NodeID) ir.Arg { return ir.NodeArg(id, b.g.Nodes[id].Name) }

// placeholder appends a placeholder named name (made unique).
func (b *builder) placeholder(name string, val *ir.Value, meta *ir.Meta) V {
	n := b.names.fresh(name)
	id := b.append(ir.Node{Name: n, Op: ir.OpPlaceholder, Target: n, Val: val, Meta: meta})
	return nodeV(id, valueTensor(val))
}

// call appends a call_function node.
func (b *builder) call(target string, args []ir.Arg, kwargs []ir.Kwarg, val *ir.Value, name string) ir.NodeID {
	if name == "" {
		name = b.names.freshOp(target)
	} else {
		name = b.names.fresh(name)
	}
	return b.append(ir.Node{Name: name, Op: ir.OpCallFunction, Target: target,
		Args: args, Kwargs: kwargs, Val: val, Meta: b.meta})
}

// opArgs appends target(args) whose single tensor result has metadata
// out; args come from b.argList.
func (b *builder) opArgs(target string, out *ir.TensorMeta, args []ir.Arg) V {
	v := b.value(out)
	id := b.call(target, args, nil, v, "")
	return nodeV(id, valueTensor(v))
}

// own returns a with its lists that hold references copied (arg): dce
// renumbers each node's references where they are, and a list a rule
// passed on from the forward node (index's indices to index_put) was
// renumbered twice, its references then naming a removed node, or the
// wrong one, to the partition, which reads them. Lists without references
// stay shared.
func (b *builder) own(a ir.Arg) ir.Arg {
	if len(a.Elems()) == 0 {
		return a
	}
	return ir.MapRefs(a, b.arena.alloc, sameRef)
}

func sameRef(a ir.Arg) ir.Arg { return a }

// argList returns a fresh argument list of n elements from the arena.
func (b *builder) argList(n int) []ir.Arg { return b.arena.alloc(n) }

// refArg is b.arg(v) for a value that is a node or a constant.
func (b *builder) refArg(v V) ir.Arg {
	switch {
	case v.ok:
		return b.ref(v.id)
	case v.c != nil:
		return *v.c
	}
	return ir.Arg{Kind: ir.ArgNone}
}

// op appends target(args...) whose single tensor result has metadata out.
// Arguments are V, int, int64, float64, bool, string, nil, []int64, []ir.Dim,
// []bool, []V, ir.Arg, or kw{name, value} for keyword arguments.
func (b *builder) op(target string, out *ir.TensorMeta, args ...any) V {
	pos, kws := b.args(args)
	v := b.value(out)
	id := b.call(target, pos, kws, v, "")
	return nodeV(id, valueTensor(v))
}

// tupleOp appends target(args...) returning a tuple of tensors with the
// given metadata, and a getitem node for each element whose want is true
// (nil want: every element). Unwanted elements are undefined.
func (b *builder) tupleOp(target string, outs []*ir.TensorMeta, want []bool, args ...any) []V {
	pos, kws := b.args(args)
	id := b.call(target, pos, kws, b.metas.tuple(outs), "")
	res := b.results.alloc(len(outs))
	for i := range outs {
		if want == nil || want[i] {
			res[i] = b.getitem(nodeV(id, nil), i, outs[i])
		}
	}
	return res
}

// getitem appends operator.getitem(tuple, i).
func (b *builder) getitem(tuple V, i int, m *ir.TensorMeta) V {
	args := b.argList(2)
	args[0], args[1] = b.ref(tuple.id), ir.IntArg(int64(i))
	v := b.value(m)
	id := b.call("_operator.getitem", args, nil, v, "getitem")
	return nodeV(id, valueTensor(v))
}

func (b *builder) args(args []any) ([]ir.Arg, []ir.Kwarg) {
	nk := 0
	for _, a := range args {
		if _, ok := a.(kw); ok {
			nk++
		}
	}
	var pos []ir.Arg
	if len(args) > nk {
		pos = b.arena.alloc(len(args) - nk)
	}
	var kws []ir.Kwarg
	if nk > 0 {
		kws = b.kwArena.alloc(nk)
	}
	i, ki := 0, 0
	for _, a := range args {
		if k, ok := a.(kw); ok {
			kws[ki] = ir.Kwarg{Name: k.name, Value: b.arg(k.val)}
			ki++
			continue
		}
		pos[i] = b.arg(a)
		i++
	}
	return pos, kws
}

func (b *builder) arg(a any) ir.Arg {
	switch x := a.(type) {
	case nil:
		return ir.Arg{Kind: ir.ArgNone}
	case V:
		if x.c != nil {
			return b.own(*x.c)
		}
		return b.refArg(x)
	case ir.Arg:
		return b.own(x)
	case int:
		return ir.IntArg(int64(x))
	case int64:
		return ir.IntArg(x)
	case float64:
		return ir.FloatArg(x)
	case bool:
		return ir.Arg{Kind: ir.ArgBool, B: x}
	case string:
		return ir.Arg{Kind: ir.ArgStr, S: x}
	case []int64:
		return b.intsArg(x)
	case []ir.Dim:
		return b.dimsArg(x)
	case ir.Dim:
		return dimArg(x)
	case []bool:
		l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, b.arena.alloc(len(x)))
		for i, v := range x {
			l.Elems()[i] = ir.Arg{Kind: ir.ArgBool, B: v}
		}
		return l
	case []V:
		l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, b.arena.alloc(len(x)))
		for i, v := range x {
			l.Elems()[i] = b.arg(v)
		}
		return l
	case dtypeArg:
		return ir.Arg{Kind: ir.ArgDtype, S: string(x)}
	}
	panic("jointgraph: unsupported builder argument " + reflect.TypeOf(a).String())
}

// dtypeArg is a ScalarType argument.
type dtypeArg string

func dimArg(d ir.Dim) ir.Arg {
	if d.Expr != "" {
		return ir.SymArg(&ir.SymExpr{Kind: ir.SymInt, Expr: d.Expr})
	}
	return ir.IntArg(d.Val)
}

func (b *builder) dimsArg(ds []ir.Dim) ir.Arg {
	if k, ok := dimsKey(ds); ok {
		return b.internInts(&k)
	}
	l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, b.arena.alloc(len(ds)))
	for i, d := range ds {
		l.Elems()[i] = dimArg(d)
	}
	return l
}

func dimsArg(ds []ir.Dim) ir.Arg {
	l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, make([]ir.Arg, len(ds)))
	for i, d := range ds {
		l.Elems()[i] = dimArg(d)
	}
	return l
}

// intsKey is an integer list's contents, for interning (at most
// maxInternRank of them).
type intsKey struct {
	n int
	v [maxInternRank]int64
}

func dimsKey(ds []ir.Dim) (k intsKey, ok bool) {
	if len(ds) == 0 || len(ds) > maxInternRank {
		return k, false
	}
	for i, d := range ds {
		if d.Expr != "" {
			return k, false
		}
		k.v[i] = d.Val
	}
	k.n = len(ds)
	return k, true
}

// intsArg returns the list argument of the integers xs.
func (b *builder) intsArg(xs []int64) ir.Arg {
	if len(xs) > 0 && len(xs) <= maxInternRank {
		k := intsKey{n: len(xs)}
		copy(k.v[:], xs)
		return b.internInts(&k)
	}
	l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, b.arena.alloc(len(xs)))
	for i, v := range xs {
		l.Elems()[i] = ir.IntArg(v)
	}
	return l
}

// internInts returns the list argument of k's integers, its elements
// shared with every equal list the builder emitted: argument lists are
// never modified in place, and the backward repeats each layer's sizes and
// dimensions.
func (b *builder) internInts(k *intsKey) ir.Arg {
	l, ok := b.ints[*k]
	if !ok {
		l = b.arena.alloc(k.n)
		for i := range l {
			l[i] = ir.IntArg(k.v[i])
		}
		if b.ints == nil {
			b.ints = map[intsKey][]ir.Arg{}
		}
		if len(b.ints) < maxInterned {
			b.ints[*k] = l
		}
	}
	return ir.WithElems(ir.Arg{Kind: ir.ArgList}, l)
}

// output appends the output node returning a tuple of vals.
func (b *builder) output(vals []V) {
	t := ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, make([]ir.Arg, len(vals)))
	for i, v := range vals {
		t.Elems()[i] = b.arg(v)
	}
	b.append(ir.Node{Name: b.names.fresh("output"), Op: ir.OpOutput, Target: "output", Args: []ir.Arg{t}})
}

// argArena hands out argument slices from shared chunks, one allocation
// per chunk instead of one per node (chunks).
type argArena = chunks[ir.Arg]

// chunks hands out slices from shared chunks. Chunks double from 8
// elements to 256 (a small-object size class for arguments and keyword
// arguments): a joint builds two builders per HOP subgraph's backward,
// most of a few nodes, and a fixed first chunk of 256 would leave
// thousands of HOP calls holding mostly empty chunks.
// A slice's capacity is its length: appending to it copies.
type chunks[T any] struct {
	buf  []T
	next int // the next chunk's size
}

// alloc returns n zero elements (an empty, not nil, slice for 0).
func (a *chunks[T]) alloc(n int) []T {
	if n == 0 {
		return []T{}
	}
	if len(a.buf)+n > cap(a.buf) {
		size := max(a.next, 8)
		a.next = min(2*size, 256)
		a.buf = make([]T, 0, max(size, n))
	}
	l := len(a.buf)
	a.buf = a.buf[:l+n]
	return a.buf[l : l+n : l+n]
}
