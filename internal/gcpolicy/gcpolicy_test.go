package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// The tests run the policy's finalizer (afterGC) themselves, where they
// mean one to have run; the finalizer SetFloor arms would run it again
// whenever it got a processor, between a test's steps.
func init() { hook = func() {} }

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
// or after a Hold, not a Pause, the restored percentage collects at once.
func TestKeepDecoded(t *testing.T) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set: SetFloor does nothing")
	}
	defer debug.SetGCPercent(percent())
	defer func() { state.Lock(); state.keep, state.floor = false, 0; state.Unlock() }()
	const floor = 8 << 20
	decode := func(keep bool, pause func() func()) (collections uint32) {
		runtime.GC()
		afterGC() // its finalizer, before the decoding
		state.Lock()
		state.floor, state.keep = floor, keep
		state.Unlock()
		debug.SetGCPercent(int(floor * 100 / defaultHeapMinimum))
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		resume := pause()
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
	if n := decode(true, Pause); n != 0 {
		t.Errorf("KeepDecoded: %d collections after the pause, want none", n)
	}
	if n := decode(false, Pause); n == 0 {
		t.Errorf("without KeepDecoded: no collection after the pause; the test no longer tells the two apart")
	}
	if n := decode(true, Hold); n == 0 {
		t.Errorf("KeepDecoded after a Hold, not a Pause: no collection after it; want one, as without KeepDecoded")
	}
}

// decodeAfterForcedCollection sets a floor of 8 MiB and KeepDecoded, then,
// in a pause, forces a collection that leaves next to nothing live (as
// hugeheap.Reserve's before decoding), runs its finalizer's policy at once
// when early is set (as it does when the finalizer runs during the
// decoding), and allocates 64 MiB that stay live (the decoded module),
// which it returns with the pause's resume; t.Cleanup restores the policy.
func decodeAfterForcedCollection(t *testing.T, early bool) (live [][]byte, resume func()) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set: SetFloor does nothing")
	}
	p := percent()
	t.Cleanup(func() {
		state.Lock()
		state.keep, state.floor, state.keptAt = false, 0, 0
		state.Unlock()
		debug.SetGCPercent(p)
	})
	state.Lock()
	state.floor, state.keep, state.keptAt = floor8, true, 0
	state.Unlock()
	debug.SetGCPercent(int(floor8 * 100 / defaultHeapMinimum))
	resume = Pause()
	runtime.GC()
	if early {
		afterGC()
	}
	live = make([][]byte, 0, 1024)
	for range 1024 {
		live = append(live, make([]byte, 64<<10))
	}
	return live, resume
}

// floor8 is the floor of decodeAfterForcedCollection's tests.
const floor8 = 8 << 20

// TestKeepDecodedAfterForcedCollection: after a forced collection that
// left next to nothing live (hugeheap.Reserve's, before decoding), the
// target KeepDecoded sets when the pause ends, 2 × (heap + floor), is
// still a target: the collector runs once the heap passes it. Taking
// 1 MiB as live, the percentage raised the runtime's heap minimum, which
// it scales, to 143 times that target here, and the collector did not
// run again.
func TestKeepDecodedAfterForcedCollection(t *testing.T) {
	live, resume := decodeAfterForcedCollection(t, true)
	resume() // target: 2 × (64 + 8) MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	more := make([][]byte, 0, 4096)
	for range 4096 {
		more = append(more, make([]byte, 64<<10)) // 256 MiB more
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(live)
	runtime.KeepAlive(more)
	if after.NumGC == before.NumGC {
		t.Errorf("no collection while the heap grew from %d to %d MiB past KeepDecoded's target of %d MiB",
			before.HeapAlloc>>20, after.HeapAlloc>>20, 2*(64+floor8>>20))
	}
}

// TestKeepDecodedOutlivesLateFinalizer: a finalizer of a collection run
// before KeepDecoded's target was set (it runs when the finalizer
// goroutine gets a processor, after the decoding when both were busy)
// leaves that target in force; setting one from the heap then, taken as
// live, made the collector run at once.
func TestKeepDecodedOutlivesLateFinalizer(t *testing.T) {
	live, resume := decodeAfterForcedCollection(t, false)
	resume()
	kept := percent()
	afterGC() // the collection's finalizer, late
	if p := percent(); p != kept {
		t.Errorf("a late finalizer changed KeepDecoded's percentage from %d to %d", kept, p)
	}
	runtime.KeepAlive(live)
}

// TestCeiling: the ceiling lowers the floor's target, 2 × (live + floor),
// to itself, but never below live + live/4; under it nothing changes.
func TestCeiling(t *testing.T) {
	defer func() { state.Lock(); state.ceiling = 0; state.Unlock() }()
	const G = 1 << 30
	state.Lock()
	state.ceiling = 1792 << 20
	state.Unlock()
	for _, c := range []struct{ goal, live, want uint64 }{
		{goal: 2 * (G/2 + 64<<20), live: G / 2, want: 2 * (G/2 + 64<<20)}, // under the ceiling
		{goal: 2 * (G + 64<<20), live: G, want: 1792 << 20},               // capped
		{goal: 2 * (3 * G / 2), live: 3 * G / 2, want: 3*G/2 + 3*G/8},     // live near the ceiling: live/4 of room
	} {
		if got := capGoal(c.goal, c.live); got != c.want {
			t.Errorf("capGoal(%d MiB, live %d MiB) = %d MiB, want %d MiB", c.goal>>20, c.live>>20, got>>20, c.want>>20)
		}
	}

	// After a collection the percentage is the capped target's.
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set")
	}
	defer debug.SetGCPercent(percent())
	keep := make([][]byte, 0, 1024)
	for range 1024 {
		keep = append(keep, make([]byte, 64<<10)) // 64 MiB live
	}
	state.Lock()
	setPercentLocked(100)
	state.Unlock()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	state.Lock()
	state.floor, state.ceiling = 64<<20, ms.HeapAlloc+ms.HeapAlloc/2
	state.Unlock()
	defer func() { state.Lock(); state.floor, state.percent = 0, 0; state.Unlock() }()
	// Allocated since the collection: the percentage applies to what it
	// marked, not to the heap now.
	more := make([]byte, 32<<20)
	afterGC()
	// Uncapped: 2 × (live + floor) is 200% of live or more; capped: 50%.
	if p := percent(); p < 40 || p > 60 {
		t.Errorf("percent after a collection under a ceiling of 1.5 × live = %d, want about 50", p)
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(more)
}

// TestCollectBefore checks that CollectBefore collects exactly when the
// growth it is told of would reach the collector's target, never for a
// growth too small to look at, and never while the collector is paused.
func TestCollectBefore(t *testing.T) {
	defer debug.SetGCPercent(percent())
	forced := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumForcedGC
	}
	target := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NextGC - ms.HeapAlloc
	}
	for _, c := range []struct {
		name    string
		percent int // 100: a target a few MB above the heap; 10000: ~400 MB
		grow    func() uint64
		pause   bool
		want    bool
	}{
		{"too small to look", 100, func() uint64 { return minCollectBefore - 1 }, false, false},
		{"under the target", 10000, func() uint64 { return target() / 2 }, false, false},
		{"past the target", 10000, func() uint64 { return target() + minCollectBefore }, false, true},
		{"paused", 10000, func() uint64 { return target() + minCollectBefore }, true, false},
		// A memory limit gives the collector a target even while it is
		// paused: the pause still rules.
		{"paused under a memory limit", -64 << 20, func() uint64 { return target() + minCollectBefore }, true, false},
	} {
		if c.percent < 0 {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(-c.percent)))
			c.percent = 10000
		}
		debug.SetGCPercent(c.percent)
		runtime.GC()
		if c.percent == 100 && target() >= minCollectBefore {
			t.Fatalf("%s: the target is %d bytes above the heap, want under %d", c.name, target(), minCollectBefore)
		}
		grow := c.grow()
		var resume func()
		if c.pause {
			resume = Hold()
		}
		before := forced()
		got := CollectBefore(grow)
		n := forced() - before
		if resume != nil {
			resume()
		}
		if got != c.want || (n == 1) != c.want || n > 1 {
			t.Errorf("%s: CollectBefore(%d) = %v with %d collections, want %v", c.name, grow, got, n, c.want)
		}
	}
}

// expectSink makes TestExpect's garbage heap garbage (a slice that does
// not escape lives on the stack).
var expectSink []byte

// TestExpect: with a floor set, Expect(grow) lets the heap grow by grow
// bytes of live data without a collection, where the floor's target alone
// collects; garbage well past what it expects still starts one.
func TestExpect(t *testing.T) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set: SetFloor does nothing")
	}
	defer debug.SetGCPercent(percent())
	defer func() { state.Lock(); state.floor, state.keptAt = 0, 0; state.Unlock() }()
	const floor = 8 << 20
	// A live heap well over the runtime's heap minimum, so that the
	// policy's reading of what a collection marked is close.
	base := make([][]byte, 0, 256)
	for range 256 {
		base = append(base, make([]byte, 64<<10)) // 16 MiB
	}
	defer runtime.KeepAlive(base)
	grow := func(expect uint64, garbage bool) (collections uint32) {
		runtime.GC()
		state.Lock()
		state.floor, state.keptAt = floor, 0
		state.Unlock()
		afterGC() // its finalizer
		// The floor's first target, as SetFloor sets it (afterGC's, from a
		// live heap under the runtime's heap minimum, would be scaled by it).
		debug.SetGCPercent(int(floor * 100 / defaultHeapMinimum))
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		Expect(expect)
		live := make([][]byte, 0, 1024)
		for range 1024 {
			b := make([]byte, 64<<10) // 64 MiB in all
			if !garbage {
				live = append(live, b)
			}
		}
		if garbage {
			for range 2048 {
				expectSink = make([]byte, 64<<10) // 128 MiB more, all garbage
			}
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(live)
		return after.NumGC - before.NumGC
	}
	if n := grow(72<<20, false); n != 0 {
		t.Errorf("Expect(72 MiB), 64 MiB kept: %d collections, want none", n)
	}
	if n := grow(0, false); n == 0 {
		t.Errorf("without Expect: no collection; the test no longer tells the two apart")
	}
	if n := grow(72<<20, true); n == 0 {
		t.Errorf("Expect(72 MiB), 192 MiB of garbage: no collection, want one")
	}
}
