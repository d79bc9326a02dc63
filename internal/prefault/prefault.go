// Package prefault has the kernel set up, in one system call, the pages of
// fresh heap a short run is about to write, instead of one page fault per
// 4 KiB page as the run first writes each.
//
// On the virtual machines hopctl is measured on, a page fault costs
// 10–20 µs, and a small command's time is mostly the first writes to
// fresh pages: `hopctl version` took ~400 faults, half in the heap, and a
// resnet18 `joint` ~900 (docs/performance-log.md, "Sixth pass").
// MADV_POPULATE_WRITE (Linux 5.14) makes those pages present, writable
// and zero at about 1 µs a page; the first write to each still costs the
// hypervisor's part (about 6 µs here, where a page fault costs 12–35 µs):
// reading the 206 KB resnet18 file into fresh memory took 0.66 ms, 0.38 ms
// after populating the buffer (median of 200 each, alternating).
//
// The runtime hands out the pages of its heap from low addresses up (each
// processor's page cache takes the lowest free 512 KiB-aligned chunk, and
// allocates from its bottom), and the heap is mapped in 4 MiB pieces
// inside 64 MiB arenas reserved for it. Heap populates from the start of
// the chunk that holds a newly allocated object up to n bytes past that
// object, never past its arena: the pages the runtime will hand out next.
// Pages in use are left as they are; past the mapped piece the kernel
// stops with an error, which Heap ignores (as it does an older kernel's
// EINVAL): what it populates is a guess, and a wrong one only costs time
// (about 1 µs a page populated and never used) and resident memory. The
// runtime takes populated pages for fresh ones, which they are: zero and
// never used, so it does not clear them again.
//
// The package's initialiser populates the heap of the start-up that
// follows it (Start), and the hopctl command populates that of a small
// input's decoding and work (internal/cli). The package imports only
// syscall and unsafe, so Go initialises it right after package syscall,
// before the libraries whose initialisers allocate most of the start-up's
// heap (TestImportsOnlySyscall); cmd/hopctl imports it. Elsewhere than on
// Linux it does nothing.
package prefault

import "unsafe"

const (
	chunk = 512 << 10 // the runtime's page cache: 64 pages of 8 KiB
	arena = 64 << 20  // the runtime's heap arenas (heapArenaBytes)
	page  = 4 << 10   // the kernel's pages
)

// Start is what the initialiser populates: the heap that package
// initialisers (jsonschema-go, yaml, protobuf-go, encoding/xml, unicode),
// cobra and the configuration use before a command starts its work,
// spread over about 1 MiB of pages. `hopctl version`, mean of 30 runs:
// page faults 408 with nothing populated, 337 with 512 KiB, 292 with
// 768 KiB, 284 with 1 MiB, 301 with 1.5 MiB.
const Start = 1 << 20

func init() { Heap(Start) }

// probe is the object Heap allocates to find where the heap's free pages
// are; a package variable, so it is allocated on the heap.
var probe *[page]byte

// Heap populates about n bytes of the heap the runtime will hand out next
// (the package comment says how and why).
func Heap(n uintptr) {
	probe = new([page]byte)
	p := uintptr(unsafe.Pointer(probe))
	lo := p &^ (chunk - 1)
	hi := min(p+n, p&^(arena-1)+arena) &^ (page - 1)
	if hi > lo {
		populate(lo, hi-lo)
	}
}
