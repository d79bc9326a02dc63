package prefault

import (
	"bufio"
	"os"
	"strconv"
	"strings"
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

// TestHeapAdvisesHugePages: after Heap, the mapping holding the probe's
// piece, and the one holding the piece Heap moved the heap to, are
// advised to be backed by huge pages ("hg" in their VmFlags).
func TestHeapAdvisesHugePages(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 2*piece, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if !AdviseHuge(uintptr(unsafe.Pointer(&m[0])), uintptr(len(m))) {
		t.Skip("the kernel takes no huge-page advice (no transparent huge pages)")
	}
	Heap(256 << 10)
	p := uintptr(unsafe.Pointer(probe))
	checkAdvised(t, "the probe's piece", p&^(piece-1))
	Heap(piece) // more than any piece has left
	grow := held[len(held)-1]
	q := uintptr(unsafe.Pointer(unsafe.SliceData(grow)))
	checkAdvised(t, "the next piece", q&^(piece-1))
}

// checkAdvised fails t unless the mapping holding addr has the VmFlag hg
// (MADV_HUGEPAGE) in /proc/self/smaps.
func checkAdvised(t *testing.T, where string, addr uintptr) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= l && uint64(addr) < h
			continue
		}
		if in && fields[0] == "VmFlags:" {
			for _, fl := range fields[1:] {
				if fl == "hg" {
					return
				}
			}
			t.Fatalf("%s (%#x): the mapping is not advised for huge pages: %s", where, addr, sc.Text())
		}
	}
	t.Fatalf("%s (%#x): no mapping holds it in /proc/self/smaps", where, addr)
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
