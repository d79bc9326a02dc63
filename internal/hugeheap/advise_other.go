//go:build !linux

package hugeheap

// advisable: only Linux has transparent huge pages to advise.
func advisable() bool { return false }
