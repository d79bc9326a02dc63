package prefault

import (
	"bufio"
	"os"
	"slices"
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
// advised to be backed by huge pages ("hg" in their VmFlags), and the
// moved-to piece, advised before Heap populated it, is backed by at least
// one huge page (where the kernel gives huge pages to advised memory).
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
	if flags, _ := mapping(t, p); !slices.Contains(flags, "hg") {
		t.Fatalf("the probe's piece (%#x) is not advised for huge pages: VmFlags %v", p, flags)
	}
	// Heap moves the heap to a new piece on a best effort (at most 16
	// objects of 128 KiB past what it holds of the probe's piece); in a
	// test process, earlier allocations may leave the piece with more
	// room, so it is asked again.
	var q uintptr
	for range 4 {
		held = nil
		Heap(piece + page) // more than any piece has left
		p = uintptr(unsafe.Pointer(probe))
		if len(held) > 0 {
			at := uintptr(unsafe.Pointer(unsafe.SliceData(held[len(held)-1])))
			if at&^(piece-1) != p&^(piece-1) {
				q = at
				break
			}
		}
	}
	if q == 0 {
		t.Skip("Heap did not move the heap to a new piece in 4 calls")
	}
	flags, hugeKiB := mapping(t, q)
	if !slices.Contains(flags, "hg") {
		t.Fatalf("the next piece (%#x) is not advised for huge pages: VmFlags %v", q, flags)
	}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && !strings.Contains(string(b), "[never]") && hugeKiB < 2048 {
		t.Errorf("the next piece (%#x), populated after its advice, has %d KiB of huge pages; want at least 2048", q, hugeKiB)
	}
}

// mapping returns the VmFlags and the AnonHugePages (KiB) of the mapping
// holding addr, from /proc/self/smaps.
func mapping(t *testing.T, addr uintptr) (flags []string, hugeKiB int) {
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
		switch {
		case in && fields[0] == "AnonHugePages:" && len(fields) > 1:
			hugeKiB, _ = strconv.Atoi(fields[1])
		case in && fields[0] == "VmFlags:":
			return fields[1:], hugeKiB
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return nil, 0
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
