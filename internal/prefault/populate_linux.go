package prefault

import "syscall"

// The madvise(2) advice this package gives (linux/mman-common.h), which
// package syscall does not name.
const (
	madvHugepage      = 14 // MADV_HUGEPAGE
	madvPopulateWrite = 23 // MADV_POPULATE_WRITE, Linux 5.14
)

// Populate makes the n bytes at p, page-aligned, mapped, private and
// writable, present and writable, as writes would, without writing; it
// reports whether the kernel did (not: a part not mapped, a kernel older
// than 5.14). This package's Heap and internal/hugeheap's fault-in ahead
// of the heap both use it.
func Populate(p, n uintptr) bool { return madvise(p, n, madvPopulateWrite) }

// AdviseHuge advises the n bytes at p, mapped and page-aligned, to be
// backed by transparent huge pages; it reports whether the kernel took the
// advice (under the "never" policy it takes it and does nothing). Heap
// and internal/hugeheap's reservations both use it.
func AdviseHuge(p, n uintptr) bool { return madvise(p, n, madvHugepage) }

// madvise gives the kernel advice about the n bytes at p and reports
// whether it took it.
func madvise(p, n, advice uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, advice)
	return errno == 0
}
