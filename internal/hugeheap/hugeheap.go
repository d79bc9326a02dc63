// Package hugeheap backs the heap of a large job with transparent huge
// pages (Reserve), where the kernel leaves that to each program's advice.
//
// Every first write to a 4 KiB page of fresh memory is a page fault, and on
// the virtual machines hopctl is measured on each one costs 10–20 µs:
// touching a gigabyte took 3.1 s in 4 KiB pages and 0.3–1.9 s in 2 MiB
// ones (docs/performance-log.md, "Sixth pass"). The Go runtime no longer
// asks for huge pages for its heap (it stopped in Go 1.21.1), and it maps
// the heap in 4 MiB pieces as it grows, each a new mapping without advice,
// so the advice cannot be given once at start: Reserve makes the runtime
// map the memory a job will need at once, advises it, and hands it back to
// the runtime, which then allocates from it.
package hugeheap

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// MinReserve is the least reservation Reserve makes: reserving costs a
// garbage collection (about 2 ms on the bench machine, most of it the
// collector's own first use of memory), and a small job's heap fits in
// what the runtime mapped before it (not advised), so a job allocating
// less does not win it back. Measured whole commands, alternating with
// the binary before: the joint of the 4.4k-node stack (18 MB reserved,
// 11 MB allocated) took 27 % less time; resnet18's joint (8 MB reserved,
// 2.6 MB allocated) 16 % more, with as many page faults.
const MinReserve = 16 << 20

// hugePage is the size of a transparent huge page on the platforms this
// package advises (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

var state struct {
	sync.Mutex
	reserved uint64   // bytes advised so far
	head     [][]byte // the reservations' heads, kept unused
}

// Reserve makes the next n bytes the heap grows by come from memory the
// kernel backs with huge pages, when it backs only advised memory so
// (transparent_hugepage "madvise", the default of Debian's and many
// distributions' kernels); under "always" the heap has them already and
// under "never" it cannot, and Reserve does nothing, as it does for n under
// MinReserve and for what earlier reservations still cover.
//
// It allocates n bytes, which the runtime maps without touching them,
// advises their huge pages (MADV_HUGEPAGE), drops them and collects,
// returning them to the kernel (debug.FreeOSMemory), and allocates again,
// never to use, the part before their first huge page: the runtime then
// allocates from the advised memory first, and as memory returned to the
// kernel is zero, it does not clear it again (runtime.(*mheap).initSpan;
// after a plain collection the runtime cleared every page it reused, 0.6 s
// of processor time in a 1M-node joint). It is meant for a command about to
// decode a large input, while the heap is still small (the collection marks
// what is live). The memory is only mapped, not used, so the resident set
// does not grow; a memory limit (GOMEMLIMIT) caps the reservation.
func Reserve(n uint64) {
	if n < MinReserve || !advisable() {
		return
	}
	state.Lock()
	defer state.Unlock()
	// The heap's statistics are read only when they matter (a later
	// reservation, a memory limit): runtime.ReadMemStats stops the world
	// and flushes every processor's cached spans into the central span
	// lists, whose blocks it is the first to write (about 80 page faults
	// of the 4.4k-node stack's joint, 1 ms on the bench machine;
	// docs/performance-log.md, "Sixth pass").
	limit := uint64(debug.SetMemoryLimit(-1))
	var inuse, sys uint64
	if state.reserved > 0 || limit != math.MaxInt64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		inuse, sys = ms.HeapInuse, ms.HeapSys
	}
	// What earlier reservations advised and the heap has not used yet.
	free := state.reserved - min(state.reserved, inuse)
	if free >= n {
		return
	}
	n -= free
	if limit < sys+n {
		n = limit - min(limit, sys)
	}
	if n < MinReserve {
		return
	}
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(n)) &^ (hugePage - 1)
	advised := hi > lo && adviseHuge(lo, hi-lo)
	if advised {
		state.reserved += uint64(hi - lo)
	}
	runtime.KeepAlive(b) // b is garbage from here on
	debug.FreeOSMemory()
	// The runtime allocates from the lowest free address first, so the
	// reservation's head below its first huge page, [p, lo), would be the
	// first memory used, in 4 KiB pages: 0.5–1.5 MiB of the 4.4k-node
	// stack's joint, 100–250 page faults (docs/performance-log.md, "Sixth
	// pass"). It is allocated again (where it was, the lowest free run
	// that large, give or take a free run just below it) and kept, never
	// written: address space, not memory, as the runtime does not clear
	// memory it got back from the kernel.
	if advised && lo > p {
		state.head = append(state.head, make([]byte, lo-p))
	}
}
