//go:build !unix

package cputime

import "time"

// Process returns 0: this platform has no getrusage.
func Process() time.Duration { return 0 }
