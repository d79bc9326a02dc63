// Package startstack grows the main goroutine's stack once, before any
// other package initialiser runs, to the size a hopctl run reaches anyway.
//
// A goroutine starts with a 2 KiB stack that is copied to one twice as
// large whenever a call needs more (runtime.newstack); every copy walks
// and adjusts every frame on the stack. hopctl's main goroutine (package
// initialisers, cobra, decoding) reached 64 KiB in five copies in every
// command, `hopctl version` included, each deeper than the last: 5 % of
// the processor samples of a resnet18 `analyze` (perf; README,
// Performance). Entering a function whose frame needs nearly 64 KiB while
// the stack is still shallow makes the runtime grow it in one step, with
// one frame to copy. The stack pages are touched only as they are used,
// and a stack is shrunk again by the collector, which a small run never
// starts (gcpolicy).
//
// The package imports nothing, so it is initialised among the first
// (packages are initialised in import-path order once their imports are);
// cmd/hopctl imports it for this effect.
package startstack

// frame is the size of reserve's frame: with what the stack holds when
// it is entered and the runtime's guard, the stack grows from 2 KiB to
// exactly 64 KiB.
const frame = 60 << 10

func init() { reserve(0) }

// reserve has a frame of frame bytes, which the runtime makes room for on
// entry. The array is used (so the compiler keeps it) only when n is
// non-zero, which it never is: its memory is not even zeroed.
//
//go:noinline
func reserve(n int) byte {
	if n != 0 {
		var buf [frame]byte
		buf[n%frame] = byte(n)
		return buf[(n/2)%frame]
	}
	return 0
}
