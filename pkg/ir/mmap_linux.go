//go:build linux

package ir

import (
	"os"
	"syscall"
)

// minMapSize is the file size from which LoadFile maps a file instead of
// reading it: below it a read is as cheap and needs no unmapping.
const minMapSize = 1 << 20

// mapFile maps a regular file of at least minMapSize bytes read-only, its
// pages loaded up front (MAP_POPULATE: one system call instead of a page
// fault per 4 KiB). ok is false when the file is not worth or not able to
// be mapped; the caller then reads it. The caller must call unmap when no
// slice of data is in use any more.
func mapFile(path string) (data []byte, unmap func(), ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < minMapSize || st.Size() != int64(int(st.Size())) {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = syscall.Munmap(data) }, true
}
