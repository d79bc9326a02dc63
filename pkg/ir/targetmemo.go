package ir

// TargetMemo memoizes fn, a function of call targets, for a pass over the
// nodes of a module: Get(t) is fn(t), computed once per distinct target.
// Call targets are few and repeated (a graph of a million nodes calls a
// few dozen distinct ops), so a pass that derives something costly from
// each target (a parsed schema, an op's aliasing rules) derives it once
// per op, not once per node. Not safe for concurrent use; the zero value
// is not usable (NewTargetMemo).
type TargetMemo[V any] struct {
	fn    func(target string) V
	byStr map[string]V
}

// NewTargetMemo returns a memo of fn.
func NewTargetMemo[V any](fn func(target string) V) *TargetMemo[V] {
	return &TargetMemo[V]{fn: fn, byStr: map[string]V{}}
}

// Get returns fn(target), computing it on the first Get of the target.
func (m *TargetMemo[V]) Get(target string) V {
	v, ok := m.byStr[target]
	if !ok {
		v = m.fn(target)
		m.byStr[target] = v
	}
	return v
}
