//go:build !unix

package jointgraph

import "time"

func processCPU() time.Duration { return 0 }
