package prefault

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestHeapPopulates: after Heap, the pages the runtime hands out next,
// past its probe, are resident: in the probe's chunk, and, when n is more
// than the probe's piece has left, past the object on the next piece.
func TestHeapPopulates(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if err := syscall.Madvise(m, madvPopulateWrite); err != nil {
		t.Skipf("the kernel does not populate (%v)", err)
	}
	Heap(256 << 10)
	p := uintptr(unsafe.Pointer(probe))
	if hi := min(p+256<<10, (p|(chunk-1))+1); hi > p+page {
		checkResident(t, "in the probe's chunk", p+page, hi)
	}
	Heap(piece) // more than any piece has left
	grow := held[len(held)-1]
	q := uintptr(unsafe.Pointer(unsafe.SliceData(grow))) + uintptr(len(grow))
	if q&^(piece-1) == p&^(piece-1) {
		t.Fatalf("the object at %#x is on the probe's piece (%#x)", q, p)
	}
	checkResident(t, "past the object on the next piece", q, q+64<<10)
}

// checkResident fails t unless every page in [lo, hi) is resident.
func checkResident(t *testing.T, where string, lo, hi uintptr) {
	t.Helper()
	resident := make([]byte, (hi-lo)/page)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&resident[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for i, r := range resident {
		if r&1 == 0 {
			t.Fatalf("%s: page %d of %d is not resident", where, i+1, len(resident))
		}
	}
}
