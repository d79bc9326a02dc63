//go:build !linux

package atomicfile

import "os"

// swapIn puts the temporary file tmp in place of dst by renaming it
// (replace_linux.go exchanges an existing destination instead): it never
// swaps.
func swapIn(tmp, dst string, exists bool) (swapped bool, err error) {
	return false, os.Rename(tmp, dst)
}

// removeSwapped and putBack are never called here: swapIn never swaps.
func removeSwapped(tmp string) error { return os.Remove(tmp) }

func putBack(tmp, dst string, uerr error) (tmpIntact bool, err error) {
	return true, os.Rename(tmp, dst)
}

// removePending removes a pending temporary file for
// RemovePendingTempFiles (a file: swapIn never swaps here).
func removePending(name string) error { return os.Remove(name) }
