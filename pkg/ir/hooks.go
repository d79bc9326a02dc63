package ir

import "sync/atomic"

// Hooks let the program using this package act around its work. They
// change no result, and a library user need not set any. The hopctl
// command sets them before its work (internal/cli): it backs the heap a
// large input will fill with huge pages (internal/hugeheap.Reserve) and
// populates a small one's (internal/prefault.Heap), pauses the garbage
// collector while a large binary file decodes
// (internal/gcpolicy.Pause) and counts nodes for its progress line
// (internal/progress.Add). All are process policies, which is why they
// are not this package's to decide.
type Hooks struct {
	// Input runs when LoadFile is about to read and decode a regular,
	// non-empty file of size bytes, before it allocates anything for it
	// (streams, whose size is unknown, do not run it).
	Input func(size int64)
	// Decoding runs when LoadFile starts to decode a large binary file
	// (one it maps into memory); the function it returns runs when the
	// decoding ends. Nearly everything that decoder allocates is the
	// module itself and stays live.
	Decoding func() (done func())
	// Nodes reports n more nodes decoded or encoded, in batches of
	// progressBatch+1, from any goroutine.
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

// decodingStarts runs the Decoding hook, if any, and returns what to run
// when decoding ends.
func decodingStarts() (done func()) {
	if h := hooks.Load(); h != nil && h.Decoding != nil {
		if done := h.Decoding(); done != nil {
			return done
		}
	}
	return func() {}
}

// inputSized runs the Input hook, if any.
func inputSized(size int64) {
	if h := hooks.Load(); h != nil && h.Input != nil {
		h.Input(size)
	}
}

// nodesDone reports n nodes to the Nodes hook, if any.
func nodesDone(n int) {
	if h := hooks.Load(); h != nil && h.Nodes != nil {
		h.Nodes(n)
	}
}
