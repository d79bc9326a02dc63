package jointgraph

import (
	"unsafe"

	"github.com/hopctl/hopctl/pkg/ir"
)

// addrMemo is a small direct-mapped memo of a value per string, the string
// known by the address and length of its bytes, not by its contents: the
// builders and passes see a few dozen distinct op names and targets (string
// constants, or the decoder's interned targets) a million times over, and
// hashing or comparing their contents for a map was several per cent of
// Build's instructions at 100k nodes (docs/performance-log.md, Eighth
// pass). Equal contents at another address only miss. A string's bytes
// never change, and a slot holds them (data), so an address is not reused
// while it is remembered.
type addrMemo[V any] [64]struct {
	data *byte
	n    int
	v    V
	set  bool // not the zero slot, which an empty string would match
}

// memoSlot is s's slot in an addrMemo.
func memoSlot(s string) int {
	h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))*0x9e3779b97f4a7c15 + uint64(len(s))
	return int(h >> 58)
}

// get returns the value remembered for s, if any.
func (m *addrMemo[V]) get(s string) (V, bool) {
	e := &m[memoSlot(s)]
	if e.set && e.data == unsafe.StringData(s) && e.n == len(s) {
		return e.v, true
	}
	var zero V
	return zero, false
}

// put remembers v for s, in place of what its slot held.
func (m *addrMemo[V]) put(s string, v V) {
	e := &m[memoSlot(s)]
	e.data, e.n, e.v, e.set = unsafe.StringData(s), len(s), v, true
}

// ptrMemo is a small direct-mapped memo of a value per metadata pointer
// and derivation (op): interned metadata is shared, so the builders ask
// for the value, or the metadata derived (like, t), of a few dozen
// pointers a million times over: remembering them, not looking each up
// in a map or building the derivation's intern key, took 5 % fewer of
// Build's instructions at 100k nodes (docs/performance-log.md, Twelfth
// pass). Metadata is never modified in place, and a slot holds its
// pointer, so an address is not reused while it is remembered.
type ptrMemo[V any] [64]struct {
	m  *ir.TensorMeta
	op uint8
	v  V
}

// ptrSlot is (m, op)'s slot in a ptrMemo.
func ptrSlot(m *ir.TensorMeta, op uint8) int {
	h := (uint64(uintptr(unsafe.Pointer(m))) + uint64(op)) * 0x9e3779b97f4a7c15
	return int(h >> 58)
}

// get returns the value remembered for (m, op), if any (m is not nil).
func (p *ptrMemo[V]) get(m *ir.TensorMeta, op uint8) (V, bool) {
	e := &p[ptrSlot(m, op)]
	if e.m == m && e.op == op {
		return e.v, true
	}
	var zero V
	return zero, false
}

// put remembers v for (m, op), in place of what its slot held.
func (p *ptrMemo[V]) put(m *ir.TensorMeta, op uint8, v V) {
	e := &p[ptrSlot(m, op)]
	e.m, e.op, e.v = m, op, v
}
