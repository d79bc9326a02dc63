package ir

import "github.com/hopctl/hopctl/internal/gcpolicy"

// pauseGC stops the garbage collector until the returned function is
// called (gcpolicy.Pause, which says why decoding a large graph is worth
// it).
func pauseGC() (resume func()) { return gcpolicy.Pause() }
