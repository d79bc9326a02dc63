package ir

import "unsafe"

// Call targets are few and repeated: a graph of a million nodes calls a
// few dozen distinct ops. The binary decoder interns them (each decoding
// goroutine keeps one copy of each target, wireDecoder.target), so the
// nodes calling one op share one string, and TargetMemo can find what a
// pass made of a target by the string's address instead of hashing it.

// TargetMemo memoizes fn, a function of call targets, for a pass over the
// nodes of a module: Get(t) is fn(t), computed once per distinct target.
// A target whose string an earlier Get saw at the same address (interned
// targets: the binary decoder's) is found in a small table indexed by the
// address, one comparison of string headers; any other target through a
// map keyed by its text. So the result is fn's for every string, however
// the module was made; only the speed depends on interning. Not safe for
// concurrent use; the zero value is not usable (NewTargetMemo).
type TargetMemo[V any] struct {
	fn    func(target string) V
	slots [memoSlots]memoSlot[V]
	byStr map[string]V
}

type memoSlot[V any] struct {
	key string
	v   V
	ok  bool
}

// memoSlots is the size of TargetMemo's table by address: room for a few
// dozen targets decoded by up to four goroutines, each with its own copy.
const memoSlots = 256

// NewTargetMemo returns a memo of fn.
func NewTargetMemo[V any](fn func(target string) V) *TargetMemo[V] {
	return &TargetMemo[V]{fn: fn, byStr: map[string]V{}}
}

// Get returns fn(target), computing it on the first Get of the target.
func (m *TargetMemo[V]) Get(target string) V {
	// Fibonacci hashing of the address: its high bits pick the slot.
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(target))))
	s := &m.slots[(p*0x9E3779B97F4A7C15)>>56]
	// Equal strings at one address compare without reading their bytes;
	// the comparison is of the text all the same, so a slot holding
	// another string at a reused address cannot give its value.
	if s.ok && s.key == target {
		return s.v
	}
	v, ok := m.byStr[target]
	if !ok {
		v = m.fn(target)
		m.byStr[target] = v
	}
	*s = memoSlot[V]{key: target, v: v, ok: true}
	return v
}
