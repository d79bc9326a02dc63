// Command hopctl statically analyses PyTorch FX graphs and their HOP subgraphs.
package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

// gcFloor is a heap ballast: an allocation that holds no pointers and is
// never touched, so it costs address space but no memory (its pages are
// never faulted in) and no collector work, while it raises the heap size
// at which the collector starts from 4 MiB to gcFloor. A hopctl run is a
// short batch job: jobs that allocate less than gcFloor never collect, and
// on larger heaps the ballast adds gcFloor to the collector's target, a
// few percent. Without it the joint of the 11k-node bench graph ran four
// collections in 0.1 s, and their write barriers, reading freshly
// allocated memory before the program wrote it, turned page faults into
// copy-on-write faults with TLB shootdowns between the cores.
//
// GOGC and GOMEMLIMIT still apply; GOGC=off disables collection as usual.
const gcFloor = 64 << 20

func main() {
	ballast := make([]byte, gcFloor)
	// Interrupted (Ctrl-C, or a CI job's timeout), hopctl removes the
	// temporary files of a write in progress, so no half-written file is
	// left beside a destination (which is untouched until the rename), and
	// exits 128+signal as shells expect.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		ir.RemovePendingTempFiles()
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	code := cli.Main(os.Args[1:], iostreams.System())
	runtime.KeepAlive(ballast)
	os.Exit(code)
}
