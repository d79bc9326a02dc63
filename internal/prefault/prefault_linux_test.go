package prefault

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestHeapPopulates: after Heap, the pages past its probe, which the
// runtime has not handed out yet, are resident.
func TestHeapPopulates(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if err := syscall.Madvise(m, madvPopulateWrite); err != nil {
		t.Skipf("the kernel does not populate (%v)", err)
	}
	const n = 256 << 10
	Heap(n)
	p := uintptr(unsafe.Pointer(probe))
	lo := p + page
	// The heap is mapped in 4 MiB pieces: past the probe's, nothing may be.
	hi := min(p+n, (p|(4<<20-1))+1) &^ (page - 1)
	if hi <= lo {
		t.Skip("the probe is at the end of a mapped piece of the heap")
	}
	resident := make([]byte, (hi-lo)/page)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&resident[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for i, r := range resident {
		if r&1 == 0 {
			t.Fatalf("page %d of %d past the probe is not resident", i+1, len(resident))
		}
	}
}
