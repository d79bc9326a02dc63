package ir

import "sync/atomic"

// Hooks let the program using this package act around its work. They
// change no result, and a library user need not set any. The hopctl
// command counts nodes for its progress line (internal/progress).
type Hooks struct {
	// Nodes reports n more nodes decoded or encoded, in batches, from any
	// goroutine.
	Nodes func(n int)
}

var hooks atomic.Pointer[Hooks]

// SetHooks installs h for the whole process and returns the hooks it
// replaces.
func SetHooks(h Hooks) (previous Hooks) {
	if p := hooks.Swap(&h); p != nil {
		return *p
	}
	return Hooks{}
}

// nodesDone reports n nodes to the Nodes hook, if any.
func nodesDone(n int) {
	if h := hooks.Load(); h != nil && h.Nodes != nil {
		h.Nodes(n)
	}
}
