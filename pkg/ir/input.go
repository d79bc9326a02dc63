package ir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// DefaultMaxInputSize is how many bytes LoadFile reads from one input
// unless SetMaxInputSize says otherwise: 1 GiB, several times a 1M-node
// graph's file, and a bound on what an
// endless input (/dev/zero, a pipe that never closes) can make it read.
const DefaultMaxInputSize = 1 << 30

var maxInputSize atomic.Int64

func init() { maxInputSize.Store(DefaultMaxInputSize) }

// SetMaxInputSize sets how many bytes LoadFile reads from one input before
// it refuses the input as too large (n <= 0 restores the default), and
// returns the previous limit. It is process-wide: the command line sets it
// once per invocation, from the configuration (input.max-size).
func SetMaxInputSize(n int64) (previous int64) {
	if n <= 0 {
		n = DefaultMaxInputSize
	}
	return maxInputSize.Swap(n)
}

// MaxInputSize returns the limit SetMaxInputSize set.
func MaxInputSize() int64 { return maxInputSize.Load() }

// TooLargeError is the error of an input longer than the read limit.
type TooLargeError struct {
	Limit int64
	Size  int64 // the file's size when it is known, else -1
}

func (e *TooLargeError) Error() string {
	what := "the input is"
	if e.Size >= 0 {
		what = fmt.Sprintf("the file is %d bytes,", e.Size)
	}
	return fmt.Sprintf("%s larger than the input size limit of %d bytes (raise it with --max-input-size, HOPCTL_INPUT_MAX_SIZE or input.max-size in the configuration)", what, e.Limit)
}

// readInput reads f to its end, at most limit bytes: one read for a
// regular file of known size (size >= 0; it is a hint: the file may grow
// while it is read), chunks otherwise (a pipe, a device, a socket), so a
// stream that passes the limit costs the limit, never a buffer doubled past
// it. When check is not nil it sees the first streamPrefix bytes of a
// stream (or all of it, when shorter) before more is read: content that
// cannot start any input is refused there, not after the limit (/dev/zero,
// /dev/urandom).
func readInput(f io.Reader, size, limit int64, check func(prefix []byte) error) ([]byte, error) {
	var first func(off int64, chunk []byte) error
	if check != nil {
		first = func(off int64, chunk []byte) error {
			if off > 0 {
				return nil
			}
			return check(chunk)
		}
	}
	if size > limit {
		return nil, &TooLargeError{Limit: limit, Size: size}
	}
	if size >= 0 {
		buf := make([]byte, min(size+1, limit+1))
		n, err := io.ReadFull(f, buf)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return buf[:n], nil
		case err != nil:
			return nil, err
		}
		// The file grew while it was read: go on as with a stream.
		return readChunks(f, buf, limit, nil)
	}
	return readChunks(f, nil, limit, first)
}

// streamPrefix is how much of a stream readInput reads before it lets
// check judge the content.
const streamPrefix = 64 << 10

// maxChunk bounds the chunks readChunks reads into.
const maxChunk = 8 << 20

// ReadBounded reads r to its end, at most limit bytes (a *TooLargeError
// beyond), in chunks of growing size, so memory follows what was read, not
// what a header declares; check, when not nil, sees each chunk and its
// offset before the next one is read, so content that is wrong from its
// first bytes costs one chunk (a .pt2 entry: a zip bomb is inflated only
// as far as it looks like JSON).
func ReadBounded(r io.Reader, limit int64, check func(off int64, chunk []byte) error) ([]byte, error) {
	return readChunks(r, nil, limit, check)
}

// readChunks reads f to its end after first (what was read of it
// already), at most limit bytes in all, into chunks of growing size, and
// returns them joined.
func readChunks(f io.Reader, first []byte, limit int64, check func(off int64, chunk []byte) error) ([]byte, error) {
	var chunks [][]byte
	total := int64(len(first))
	if len(first) > 0 {
		chunks = append(chunks, first)
	}
	size := int64(streamPrefix)
	for eof := false; !eof; {
		if total > limit {
			return nil, &TooLargeError{Limit: limit, Size: -1}
		}
		c := make([]byte, min(size, limit+1-total))
		n, err := io.ReadFull(f, c)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			eof = true
		case err != nil:
			return nil, err
		}
		c = c[:n]
		if check != nil && n > 0 {
			if err := check(total, c); err != nil {
				return nil, err
			}
		}
		if n > 0 {
			chunks = append(chunks, c)
		}
		total += int64(n)
		size = min(2*size, maxChunk)
	}
	if total > limit {
		return nil, &TooLargeError{Limit: limit, Size: -1}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	return out, nil
}

// errTruncatedWhileRead is the error of a mapped file that another process
// truncated while hopctl decoded it.
var errTruncatedWhileRead = errors.New("the file was truncated while hopctl read it (is another process rewriting it in place?)")

// guardFaults makes the calling goroutine turn a memory fault into a panic
// (debug.SetPanicOnFault) while it reads region, a mapping of a file: a
// file truncated by another process meanwhile would otherwise kill the
// process with SIGBUS. Use it as
//
//	defer guardFaults(region)()
//	defer catchFault(region, &err)
func guardFaults(region []byte) (restore func()) {
	if region == nil {
		return func() {}
	}
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// catchFault, deferred, recovers the panic of a fault on a page of region
// and stores errTruncatedWhileRead in *errp; any other panic goes on.
func catchFault(region []byte, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	if re, ok := r.(runtime.Error); ok && len(region) > 0 {
		if fa, ok := re.(interface{ Addr() uintptr }); ok {
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(region)))
			if a := fa.Addr(); a >= lo && a < lo+uintptr(cap(region)) {
				*errp = errTruncatedWhileRead
				return
			}
		}
	}
	panic(r)
}

// ReadFileLimited reads a whole file that is an input but not a graph (a
// lint baseline), opening it once and reading at most MaxInputSize bytes,
// as LoadFile reads graphs: an endless stream (/dev/zero) or a larger
// file is refused with a *TooLargeError instead of filling memory.
func ReadFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, errors.New("is a directory")
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	return readInput(f, size, MaxInputSize(), nil)
}
