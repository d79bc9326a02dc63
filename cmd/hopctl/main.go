// Command hopctl statically analyses PyTorch FX graphs and their HOP subgraphs.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
)

func main() {
	// Interrupted (Ctrl-C, or a CI job's timeout), hopctl removes the
	// temporary files of a write in progress, so no half-written file is
	// left beside a destination (which is untouched until the rename), and
	// exits 128+signal as shells expect. The handler is installed when the
	// first temporary file is about to be created: before that, nothing
	// needs removing and the default action (exit on the signal) is right.
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
