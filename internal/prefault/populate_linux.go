package prefault

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (linux/mman-common.h), which
// package syscall does not name.
const madvPopulateWrite = 23

// populate makes the n bytes at p, page-aligned, present and writable; an
// error (a part not mapped, a kernel older than 5.14) is ignored.
func populate(p, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, p, n, madvPopulateWrite)
}
