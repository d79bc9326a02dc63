//go:build !linux

package prefault

// Populate: only Linux populates memory on request.
func Populate(p, n uintptr) bool { return false }

// AdviseHuge: only Linux has transparent huge pages to advise.
func AdviseHuge(p, n uintptr) bool { return false }
