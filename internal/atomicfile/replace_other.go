//go:build !linux

package atomicfile

import "os"

// replace puts the temporary file tmp in place of dst by renaming it
// (replace_linux.go exchanges an existing destination instead).
func replace(tmp, dst string, exists bool) (tmpIntact bool, err error) {
	return true, os.Rename(tmp, dst)
}
