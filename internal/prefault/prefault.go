// Package prefault has the kernel set up, in one system call, the pages of
// fresh heap a short run is about to write, instead of one page fault per
// 4 KiB page as the run first writes each.
//
// On the virtual machines hopctl is measured on, a page fault costs
// 10–35 µs, and a small command's time is mostly the first writes to
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
// allocates from its bottom), and maps the heap in 4 MiB pieces as it
// grows; Go 1.26 starts the heap at a random page of the first piece, so
// anything from 0 to 4 MiB of it is left for the run. Heap populates from
// the start of the chunk holding a newly allocated object up to n bytes
// past that object: the pages the runtime will hand out next. When the
// piece has less than that left (what is not mapped yet cannot be
// populated, and is fresh when the runtime maps it), Heap populates the
// chunk, holds the rest of the piece in an object it never touches (no
// page of it becomes resident) and then allocates 128 KiB (again, while
// the runtime places that in a hole below), which the runtime can then
// only place on a newly mapped piece, and populates the rest of n past
// that. With the heap's first piece left as it was, resnet18's
// `joint` took 558 faults [418–772] (30 runs), and 434 [369–524] so.
// Pages in use are left as they are, and an error of the kernel (an older
// kernel's EINVAL) is ignored: what Heap populates is a guess, and a wrong
// one only costs time (about 1 µs a page populated and never used) and
// resident memory. The runtime takes populated pages for fresh ones, which
// they are: zero and never used, so it does not clear them again.
//
// Heap also advises the piece it populates in, and a piece it moves the
// heap to, to be backed by transparent huge pages (AdviseHuge; the Go
// runtime maps its heap without advice, and Debian's kernels give huge
// pages only where advised). The kernel then backs each 2 MiB half of the
// piece that has no page in use yet with one huge page when it is first
// populated or written, one fault instead of 512, while a half the
// start-up already wrote keeps its 4 KiB pages. A C program populating
// 1 MiB and 3 MiB of fresh memory, then writing each page, took 5.0 and
// 18.9 ms in 4 KiB pages and 0.19 and 0.72 ms in huge ones (medians of 15,
// under load). Interleaved (60 rounds): resnet18's joint with three
// outputs 22.84 → 17.74 ms, its analyze 15.38 → 14.37 ms, `version`
// unchanged (10.38 → 10.35 ms; docs/performance-log.md, "Thirteenth
// pass"). Moving the start-up's heap to a piece of its own, all of it
// advised, made `version` 0.9 ms slower and was dropped. A huge page costs
// its 2 MiB of resident memory however little of it is used.
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
	piece = 4 << 20   // the pieces the runtime maps its heap in (pallocChunkBytes)
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

// held are the objects that moved the heap to a new piece (Heap), never
// used.
var held [][]byte

// Heap populates about n bytes of the heap the runtime will hand out next
// (the package comment says how and why).
func Heap(n uintptr) {
	probe = new([page]byte)
	p := uintptr(unsafe.Pointer(probe))
	lo := p &^ (chunk - 1)
	end := (p | (piece - 1)) + 1 // the end of the piece holding p
	AdviseHuge(end-piece, piece) // before populating: see the package comment
	if p+n <= end {
		Populate(lo, (p+n-lo)&^(page-1))
		return
	}
	Populate(lo, chunk)
	if rest := end - (lo + chunk); rest > 0 {
		held = append(held, make([]byte, rest))
	}
	// 16 of the runtime's pages are too many for a page cache: the page
	// allocator places them at the lowest free run that long, which is on
	// a newly mapped piece once any holes below are held too.
	var q uintptr
	for range 16 {
		grow := make([]byte, 128<<10)
		held = append(held, grow)
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(grow))); at&^(piece-1) != p&^(piece-1) {
			q = at + uintptr(len(grow))
			break
		}
	}
	if q == 0 {
		return
	}
	AdviseHuge(q&^(piece-1), piece)
	Populate(q, (n-min(n, lo+chunk-p))&^(page-1))
}
