// Package hugeheap backs the heap of a large job with transparent huge
// pages (Reserve), where the kernel leaves that to each program's advice.
//
// Every first write to a 4 KiB page of fresh memory is a page fault, and on
// the virtual machines hopctl is measured on each one costs 10–35 µs:
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
	"time"
	"unsafe"

	"github.com/hopctl/hopctl/internal/gcpolicy"
	"github.com/hopctl/hopctl/internal/prefault"
)

// MinReserve is the least reservation Reserve makes: reserving costs a
// garbage collection (about 2 ms on the bench machine, most of it the
// collector's own first use of memory), and a small job's heap fits in
// what the runtime mapped before it (which internal/prefault advises, as
// far as it is not in use yet), so a job allocating less does not win it
// back. Measured whole commands, alternating with
// the binary before: the joint of the 4.4k-node stack (18 MB reserved,
// 11 MB allocated) took 27 % less time; resnet18's joint (8 MB reserved,
// 2.6 MB allocated) 16 % more, with as many page faults.
const MinReserve = 16 << 20

// MinPrefault is the least reservation Reserve faults in ahead of the
// heap: a small job's heap is a few huge pages, and faulting in ahead of
// it costs a thread and raises its resident set by up to prefaultAhead
// (the 4.4k-node stack's joint, 18 MiB reserved: 25 → 29 MiB), for a gain
// not measurable on the loaded bench machine (docs/performance-log.md,
// "Sixth pass").
const MinPrefault = 256 << 20

// hugePage is the size of a transparent huge page on the platforms this
// package advises (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// runtimePage is the Go runtime's page (runtime.pageSize): a byte slice
// that long takes a span of one page of its own, the lowest free one.
const runtimePage = 8 << 10

// maxHeld bounds the free heap below a first reservation that Reserve
// holds (a few hundred KiB seen): the runtime's first heap piece.
const maxHeld = 4 << 20

// adviseHuge is prefault.AdviseHuge; the tests record what Reserve
// advises through it (the heap's first piece is advised too, by
// internal/prefault, so an advised mapping alone does not say Reserve's).
var adviseHuge = prefault.AdviseHuge

var state struct {
	sync.Mutex
	reserved uint64   // bytes advised so far
	head     [][]byte // free heap below the reservations' huge pages, kept unused
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
// never to use, the part before their first huge page (and, the first
// time, the pages left free below it): the runtime then allocates from
// the advised memory first, and as memory returned to the
// kernel is zero, it does not clear it again (runtime.(*mheap).initSpan;
// after a plain collection the runtime cleared every page it reused, 0.6 s
// of processor time in a 1M-node joint). It is meant for a command about to
// decode a large input, while the heap is still small (the collection marks
// what is live). The memory is only mapped, not used, so the resident set
// does not grow; a memory limit (GOMEMLIMIT) caps the reservation.
//
// With ahead, the reservation is then faulted in on a goroutine of its
// own, a little ahead of the heap that grows into it: the faults' cost
// (the kernel clearing each fresh huge page, slow on the bench machine: a
// third of the 1M-node joint's Build, half its decoding, two fifths of
// its partition) moves to the other core, off the path of the
// single-threaded work that would otherwise take it. It stays at most
// prefaultAhead bytes ahead of the heap, so that memory faulted in and
// never used adds at most that to the resident set, and reservations
// under MinPrefault are not faulted in.
func Reserve(n uint64, ahead bool) {
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
	// Only the huge pages between the allocation's first and last
	// huge-page boundaries are advised: it is two huge pages larger, so
	// that they make at least n bytes. (With n allocated, up to 4 MiB of
	// the 4.4k-node stack's 18 MiB were not advised, and with the free
	// pages below held (below) its joint ran past the advised memory into
	// ~100 pages of 4 KiB in some runs; docs/performance-log.md, "Tenth
	// pass".)
	size := min(n+2*hugePage, limit-min(limit, sys))
	first := state.reserved == 0
	// Allocating more than the collector's target starts a collection,
	// which would mark the reservation as live and tell the collector's
	// policy it is (gcpolicy.KeepDecoded's target after a 1M-node
	// analyze's decoding came out at the heap then: one collection more,
	// freeing nothing): the collector is paused until it is garbage.
	resume := gcpolicy.Hold()
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(size)) &^ (hugePage - 1)
	advised := hi > lo && adviseHuge(lo, hi-lo)
	if advised {
		state.reserved += uint64(hi - lo)
	}
	runtime.KeepAlive(b) // b is garbage from here on
	// On one processor: the forced collection sweeps every span in turn
	// and yields after each (runtime.GC), and each yield with a processor
	// idle woke a thread to run it, 40–90 context switches in this call
	// alone; the 4.4k-node stack's load took 13.7–14.8 ms instead of
	// 15.2–16.9 (medians of 100 alternating runs at load 4–5), for ~70
	// more page faults in some runs (the other processor's span cache
	// flushed into new span lists; docs/performance-log.md, "Tenth pass").
	procs := runtime.GOMAXPROCS(1)
	debug.FreeOSMemory()
	runtime.GOMAXPROCS(procs)
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
	// So would the pages the collection left free in the heap below the
	// reservation, on the first (the runtime's start-up and the command's
	// set-up, under the first heap piece's 4 MiB; later reservations lie
	// above earlier ones, whose advised memory the heap is to use): in the
	// 4.4k-node stack's joint 0.5–0.7 MiB in holes between live spans,
	// 70–290 page faults of its decoding and Build (docs/performance-log.md,
	// "Tenth pass"); and before them the pages this processor's page cache
	// holds (up to 64, 512 KiB), which may lie past the reservation's end
	// when it took them while the reservation was live. They are allocated
	// a runtime page at a time, lowest first as the runtime hands out
	// pages, until one lies in the advised memory, and kept unused as the
	// head is.
	if advised && first {
		for held := 0; held < maxHeld; held += runtimePage {
			h := make([]byte, runtimePage)
			if at := uintptr(unsafe.Pointer(unsafe.SliceData(h))); lo <= at && at < hi {
				break
			}
			state.head = append(state.head, h)
		}
	}
	resume() // the collector held while the holding allocates
	if advised && ahead && n >= MinPrefault {
		// Only now: FreeOSMemory returns the reservation to the kernel.
		go faultIn(lo, hi-lo, released())
	}
}

// prefaultChunk is the memory faultIn asks the kernel to fault in per
// call: two huge pages.
const prefaultChunk = 4 << 20

// prefaultAhead is how far faultIn runs ahead of the heap: enough for the
// heap's growth between two looks at it (prefaultPoll; a 1M-node joint's
// grows by about half a gigabyte a second), little beside a resident set
// of gigabytes.
const prefaultAhead = 32 << 20

// prefaultPoll and prefaultIdle bound the pause between two looks at the
// heap while faultIn is ahead: the first after the heap grew, doubling up
// to the second while it does not.
const (
	prefaultPoll = 5 * time.Millisecond
	prefaultIdle = 160 * time.Millisecond
)

// released is the heap memory the runtime holds as returned to the
// kernel. runtime.ReadMemStats stops the world to read it, but briefly,
// and faultIn reads it at most once per prefaultPoll while it waits and
// once per prefaultAhead faulted in (runtime/metrics reads it without a
// stop, but its initialisation would cost every hopctl run 95
// allocations).
func released() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapReleased
}

// faultIn faults in the n bytes at lo, reserved heap the runtime holds
// as returned to the kernel (released0 bytes of such memory in all), from
// the lowest address up, the order in which the runtime's page allocator
// (lowest address first) hands them out. How far the heap has grown into
// them is what the runtime has taken from its returned memory since
// (released0 less released(), an underestimate when it returns more). It
// writes nothing: the kernel maps zeroed pages where none are
// (MADV_POPULATE_WRITE) and leaves the pages the heap already uses as
// they are, so the memory stays zero as the runtime takes it to be, and a
// page the runtime returns to the kernel meanwhile is merely mapped
// again. It stops at the end, or at the first error (a kernel before
// Linux 5.14 does not know the advice). Where it is behind the heap it
// still goes through every page: a large object the heap took at once
// (the joint's node list, 300 MB at 1M nodes) is written from its start,
// and faulting in pages already there costs little.
func faultIn(lo, n uintptr, released0 uint64) {
	var used uint64 // the heap's growth into the n bytes, last seen
	wait := prefaultPoll
	for off := uintptr(0); off < n; {
		if u := released0 - min(released0, released()); u > used {
			used, wait = u, prefaultPoll
		}
		if uint64(off) >= used+prefaultAhead {
			time.Sleep(wait)
			wait = min(2*wait, prefaultIdle)
			continue
		}
		for ; off < n && uint64(off) < used+prefaultAhead; off += prefaultChunk {
			if !prefault.Populate(lo+off, min(prefaultChunk, n-off)) {
				return
			}
		}
	}
}
