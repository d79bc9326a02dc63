package atomicfile

import (
	"os"
	"sync"
)

// pendingTemps are the temporary files WriteFiles has created and
// not yet renamed into place or removed, so that a command interrupted by
// a signal can remove them (RemovePendingTempFiles) and leave nothing
// half-written behind.
var pendingTemps struct {
	sync.Mutex
	names   map[string]struct{}
	closing bool   // RemovePendingTempFiles ran: remove new ones at once
	first   func() // OnFirstTempFile's function, until it has run
}

// OnFirstTempFile registers fn to run once, just before the first
// temporary file is created (before its name could be recorded): the
// hopctl command installs its interrupt handler there, so that runs that
// write no file do not pay for one at start.
func OnFirstTempFile(fn func()) {
	pendingTemps.Lock()
	pendingTemps.first = fn
	pendingTemps.Unlock()
}

// createTemp creates a temporary file (os.CreateTemp) and records it, in
// one step with respect to RemovePendingTempFiles, so no file escapes it;
// once shutdown has begun it creates nothing and returns os.ErrClosed.
func createTemp(dir, pattern string) (*os.File, error) {
	pendingTemps.Lock()
	defer pendingTemps.Unlock()
	if pendingTemps.closing {
		return nil, os.ErrClosed
	}
	if fn := pendingTemps.first; fn != nil {
		pendingTemps.first = nil
		fn()
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if pendingTemps.names == nil {
		pendingTemps.names = map[string]struct{}{}
	}
	pendingTemps.names[f.Name()] = struct{}{}
	return f, nil
}

// settleTemp runs fn (the rename into place, or the removal, of a tracked
// temporary file) and forgets the file, atomically with respect to
// RemovePendingTempFiles. It returns os.ErrClosed without running fn once
// shutdown has begun (the file is gone then).
func settleTemp(name string, fn func() error) error {
	pendingTemps.Lock()
	defer pendingTemps.Unlock()
	if pendingTemps.closing {
		return os.ErrClosed
	}
	delete(pendingTemps.names, name)
	return fn()
}

// swapTemp runs swap (swapIn of a tracked temporary file) atomically with
// respect to RemovePendingTempFiles, as settleTemp does, and forgets the
// file once swap renamed it into place. Swapped, the name holds what the
// destination held, which an interrupt is to remove as well, until
// forgetTemp; failed, it is still the temporary file, which an interrupt
// is to remove until the caller's cleanup does (which may come after
// the removals of the old contents of destinations before it). It returns
// os.ErrClosed without running swap once shutdown has begun.
func swapTemp(name string, swap func() (swapped bool, err error)) (swapped bool, err error) {
	pendingTemps.Lock()
	defer pendingTemps.Unlock()
	if pendingTemps.closing {
		return false, os.ErrClosed
	}
	swapped, err = swap()
	if !swapped && err == nil {
		delete(pendingTemps.names, name)
	}
	return swapped, err
}

// forgetTemp forgets a file swapTemp kept, once it is removed or renamed.
func forgetTemp(name string) {
	pendingTemps.Lock()
	delete(pendingTemps.names, name)
	pendingTemps.Unlock()
}

// Interrupted reports whether RemovePendingTempFiles has run: the
// process is being interrupted, and a write's os.ErrClosed says so, not
// that the write failed.
func Interrupted() bool {
	pendingTemps.Lock()
	defer pendingTemps.Unlock()
	return pendingTemps.closing
}

// RemovePendingTempFiles removes every temporary file a write in progress
// has created, and makes writes that go on fail rather than leave new
// ones: for a signal handler, just before the process exits. It returns
// the number of files removed.
func RemovePendingTempFiles() int {
	pendingTemps.Lock()
	defer pendingTemps.Unlock()
	pendingTemps.closing = true
	n := 0
	for name := range pendingTemps.names {
		if removePending(name) == nil {
			n++
		}
	}
	pendingTemps.names = nil
	return n
}
