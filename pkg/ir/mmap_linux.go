//go:build linux

package ir

import (
	"os"
	"syscall"
	"unsafe"
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

// releaseMapped tells the kernel that the pages of region wholly inside
// b, a part of region already decoded, are not needed any more
// (MADV_DONTNEED): they leave the process's resident set, and a later read
// of one (none is expected: the module keeps copies) reads the file again,
// as the mapping is private and never written. A large file would
// otherwise stay resident until decoding ends, beside the module being
// built.
func releaseMapped(region, b []byte) {
	if len(region) == 0 || len(b) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(region)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - base
	hi := lo + uintptr(len(b))
	page := uintptr(os.Getpagesize())
	lo = (lo + page - 1) &^ (page - 1)
	hi &^= page - 1
	if lo >= hi || hi > uintptr(len(region)) {
		return
	}
	_ = syscall.Madvise(region[lo:hi], syscall.MADV_DONTNEED)
}

// writesInPlace reports whether the binary encoder may write to f out of
// order (streamRootAt: seek, write at offsets, truncate): f must not be
// open with O_APPEND, where Linux appends every write, at whatever offset,
// to the end of the file (`hopctl … >> out.pb` as standard output).
func writesInPlace(f syscall.Conn) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flags, ferr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) {
		var errno syscall.Errno
		var r uintptr
		r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if errno != 0 {
			ferr = errno
		}
	}); err != nil || ferr != nil {
		return false
	}
	return flags&syscall.O_APPEND == 0
}
