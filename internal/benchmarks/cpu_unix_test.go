//go:build unix

package benchmarks

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (all threads, GC
// included): on a shared machine a steadier measure of work than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
