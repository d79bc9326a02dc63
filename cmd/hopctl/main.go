// A hopctl run lasts milliseconds to seconds: GOMAXPROCS is read once at
// start (from the CPU limit of its cgroup, as Go has done since 1.25) and
// not re-read while it runs, which saves starting the runtime's updater.
//
//go:debug updatemaxprocs=0

// Command hopctl statically analyses PyTorch FX graphs and their HOP subgraphs.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/gcpolicy"
	"github.com/hopctl/hopctl/internal/iostreams"
	_ "github.com/hopctl/hopctl/internal/nosample"   // no heap profile sampling unless HOPCTL_MEMPROFILE
	_ "github.com/hopctl/hopctl/internal/prefault"   // the start-up's heap populated at once, early
	_ "github.com/hopctl/hopctl/internal/startstack" // the main goroutine's stack grown once, first
)

// gcFloor is the heap size below which hopctl never collects
// (gcpolicy.SetFloor: the effect of a heap ballast, without one). A hopctl
// run is a short batch job: jobs that allocate less than gcFloor never
// collect, and on larger heaps the floor adds gcFloor to the collector's
// target, a few percent. Without it the joint of the 11k-node bench graph
// ran four collections in 0.1 s, and their write barriers, reading freshly
// allocated memory before the program wrote it, turned page faults into
// copy-on-write faults with TLB shootdowns between the cores. (A real
// ballast, a 64 MiB allocation, cost a forced collection at start: about
// 1 ms of every run, `hopctl version` included.)
//
// GOGC and GOMEMLIMIT still apply; GOGC in the environment replaces the
// floor, and GOGC=off disables collection as usual.
const gcFloor = 64 << 20

// gcCeiling caps the heap size at which hopctl collects (gcpolicy.SetCeiling):
// with the floor's rule alone, a command whose live heap reaches a
// gigabyte or more (joint --partition of a 1M-node graph) peaks at twice
// that. Under the ceiling a large live heap costs more collections
// instead (docs/performance-log.md: "Fourth pass (h18-joint1m)").
const gcCeiling = 1792 << 20

func main() {
	gcpolicy.SetFloor(gcFloor)
	gcpolicy.SetCeiling(gcCeiling)
	// Interrupted (Ctrl-C, or a CI job's timeout), hopctl removes the
	// temporary files of a write in progress, so no half-written file is
	// left beside a destination (which is untouched until the rename), and
	// exits 128+signal as shells expect. The handler is installed when the
	// first temporary file is about to be created: before that, nothing
	// needs removing and the default action (exit on the signal) is right;
	// installing it costs a goroutine and a thread, 0.2 ms of every run.
	atomicfile.OnFirstTempFile(handleInterrupts)
	code := cli.Main(os.Args[1:], iostreams.System())
	if atomicfile.Interrupted() {
		// The handler is removing the temporary files: it exits
		// 128+signal, whatever the command made of its writes' failure.
		select {}
	}
	os.Exit(code)
}

// handleInterrupts makes SIGINT and SIGTERM remove the pending temporary
// files and exit 130 and 143. SIGINT ignored when hopctl started (a
// shell's background job ignores it) stays ignored: catching it would
// make the job interruptible once it writes. (Go keeps an inherited
// ignore only for SIGHUP and SIGINT: signal.Ignored is false for an
// ignored SIGTERM, which is caught as before.)
func handleInterrupts() {
	var caught []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	if len(caught) == 0 {
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, caught...)
	go func() {
		s := <-sigs
		atomicfile.RemovePendingTempFiles()
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}
