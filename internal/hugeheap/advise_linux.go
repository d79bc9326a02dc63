package hugeheap

import (
	"bytes"
	"os"
	"sync"
	"syscall"
)

// advisable reports whether the kernel backs memory with transparent huge
// pages only where a program advises it (the "[madvise]" choice in
// /sys/kernel/mm/transparent_hugepage/enabled), read once per process.
var advisable = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
})

// madvHugepage is MADV_HUGEPAGE (linux/mman-common.h), which package
// syscall does not name.
const madvHugepage = 14

// adviseHuge advises the n bytes at p, mapped and page-aligned, to be
// backed by huge pages.
func adviseHuge(p, n uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, madvHugepage)
	return errno == 0
}

// madvPopulateWrite is MADV_POPULATE_WRITE (linux/mman-common.h, Linux
// 5.14).
const madvPopulateWrite = 23

// populate faults in the n bytes at p, mapped, private and writable, as
// writes would, without writing.
func populate(p, n uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, madvPopulateWrite)
	return errno == 0
}
