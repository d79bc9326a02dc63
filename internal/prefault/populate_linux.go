package prefault

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (linux/mman-common.h), which
// package syscall does not name.
const madvPopulateWrite = 23

// Populate makes the n bytes at p, page-aligned, mapped, private and
// writable, present and writable, as writes would, without writing; it
// reports whether the kernel did (not: a part not mapped, a kernel older
// than 5.14). This package's Heap and internal/hugeheap's fault-in ahead
// of the heap both use it.
func Populate(p, n uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, madvPopulateWrite)
	return errno == 0
}

// madvHugepage is MADV_HUGEPAGE (linux/mman-common.h), which package
// syscall does not name.
const madvHugepage = 14

// AdviseHuge advises the n bytes at p, mapped and page-aligned, to be
// backed by transparent huge pages; it reports whether the kernel took the
// advice (under the "never" policy it takes it and does nothing). Heap
// and internal/hugeheap's reservations both use it.
func AdviseHuge(p, n uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, madvHugepage)
	return errno == 0
}
