package hugeheap

import (
	"bytes"
	"os"
	"sync"
)

// advisable reports whether the kernel backs memory with transparent huge
// pages only where a program advises it (the "[madvise]" choice in
// /sys/kernel/mm/transparent_hugepage/enabled), read once per process.
var advisable = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
})
