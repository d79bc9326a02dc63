package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// percent reads the collector's percentage.
func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestFloor(t *testing.T) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set: SetFloor does nothing")
	}
	defer debug.SetGCPercent(percent())
	runtime.GC() // start from a small, known heap
	const floor = 256 << 20
	SetFloor(floor)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// Allocate well under the floor, in pieces that stay live.
	keep := make([][]byte, 0, 1024)
	for range 1024 {
		keep = append(keep, make([]byte, 64<<10)) // 64 MiB in all
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("%d collections below the floor, want none", after.NumGC-before.NumGC)
	}
	runtime.KeepAlive(keep)

	// After a collection the percentage is what makes the target
	// 2 × (live + floor): far above 100 while live is small.
	state.Lock()
	state.floor = floor
	state.Unlock()
	afterGC()
	// (live is about after.HeapAlloc; allow for half of that percentage.)
	if p, want := percent(), int(100*(after.HeapAlloc+2*floor)/after.HeapAlloc/2); p < want {
		t.Errorf("percent after a collection = %d, want at least %d", p, want)
	}
}

func TestPauseKeepsFloorAdjustments(t *testing.T) {
	defer debug.SetGCPercent(percent())
	debug.SetGCPercent(150)
	resume := Pause()
	if p := percent(); p != -1 {
		t.Fatalf("percent during a pause = %d, want -1 (off)", p)
	}
	inner := Pause()
	inner()
	if p := percent(); p != -1 {
		t.Fatalf("percent after an inner pause ended = %d, want -1", p)
	}
	// A floor adjustment made during the pause (afterGC on the finalizer
	// goroutine) must not end it, and must be in force after it.
	state.Lock()
	state.floor = 64 << 20
	state.Unlock()
	afterGC()
	if p := percent(); p != -1 {
		t.Fatalf("percent after a floor adjustment during a pause = %d, want -1", p)
	}
	resume()
	resume() // a second call does nothing
	state.Lock()
	want := state.percent
	state.Unlock()
	if p := percent(); p != want || p == 150 {
		t.Errorf("percent after the pause = %d, want the floor's %d", p, want)
	}
}

// TestKeepDecoded: with a floor set, a heap decoded during a pause that
// already exceeds the floor's target is not collected when the pause ends
// under KeepDecoded (the next target is 2 × (heap + floor)); without it,
// the restored percentage collects at once.
func TestKeepDecoded(t *testing.T) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set: SetFloor does nothing")
	}
	defer debug.SetGCPercent(percent())
	defer func() { state.Lock(); state.keep, state.floor = false, 0; state.Unlock() }()
	const floor = 8 << 20
	decode := func(keep bool) (collections uint32) {
		runtime.GC()
		state.Lock()
		state.floor, state.keep = floor, keep
		state.Unlock()
		debug.SetGCPercent(int(floor * 100 / defaultHeapMinimum))
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		resume := Pause()
		live := make([][]byte, 0, 1024)
		for range 1024 {
			live = append(live, make([]byte, 64<<10)) // 64 MiB, live
		}
		resume()
		more := make([][]byte, 0, 256)
		for range 256 {
			more = append(more, make([]byte, 64<<10)) // 16 MiB after
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(live)
		runtime.KeepAlive(more)
		return after.NumGC - before.NumGC
	}
	if n := decode(true); n != 0 {
		t.Errorf("KeepDecoded: %d collections after the pause, want none", n)
	}
	if n := decode(false); n == 0 {
		t.Errorf("without KeepDecoded: no collection after the pause; the test no longer tells the two apart")
	}
}
