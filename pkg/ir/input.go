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
// regular file of known size, growing reads otherwise (a pipe, a device).
func readInput(f *os.File, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, &TooLargeError{Limit: limit, Size: size}
	}
	// A regular file's size is a hint: it may grow while it is read.
	buf := make([]byte, 0, min(max(size+1, 512), limit+1))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Limit: limit, Size: -1}
			}
			buf = append(buf, 0)[:len(buf)]
			if int64(cap(buf)) > limit+1 {
				buf = buf[: len(buf) : limit+1]
			}
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Limit: limit, Size: -1}
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
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
	return readInput(f, size, MaxInputSize())
}
