//go:build !linux

package hugeheap

// advisable: only Linux has transparent huge pages to advise.
func advisable() bool { return false }

func adviseHuge(p, n uintptr) bool { return false }

func populate(p, n uintptr) bool { return false }
