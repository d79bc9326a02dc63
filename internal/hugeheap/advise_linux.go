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
