//go:build linux

package ir

import (
	"os"
	"syscall"
)

// minMapSize is the file size from which LoadFile maps a file instead of
// reading it: below it a read is as cheap and needs no unmapping.
const minMapSize = 1 << 20

// mapFile maps f, a regular file of size bytes (size < 0: not a regular
// file), read-only when it is at least minMapSize bytes, its pages loaded
// up front (MAP_POPULATE: one system call instead of a page fault per 4
// KiB). ok is false when the file is not worth or not able to be mapped;
// the caller then reads it. The caller must call unmap when no slice of
// data is in use any more.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size < minMapSize || size != int64(int(size)) {
		return nil, nil, false
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = syscall.Munmap(data) }, true
}
