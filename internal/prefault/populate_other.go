//go:build !linux

package prefault

// populate: only Linux populates memory on request.
func populate(p, n uintptr) {}
