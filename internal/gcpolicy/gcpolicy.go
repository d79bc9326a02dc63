// Package gcpolicy is hopctl's garbage-collector policy, in one place: a
// floor under the heap size at which the collector runs (SetFloor, for
// the hopctl process), a ceiling over it for multi-gigabyte heaps
// (SetCeiling), pauses of the collector while a large graph is decoded
// (Pause), and targets raised for what a phase is about to keep
// (KeepDecoded, Expect). All set the collector's percentage (GOGC), so
// all live here and take the same lock.
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

var state struct {
	sync.Mutex
	depth   int // Pause calls not yet resumed
	percent int // the percentage in force outside pauses
	floor   uint64
	ceiling uint64 // SetCeiling; 0: none
	keep    bool   // KeepDecoded
	marked  uint64 // the heap after the last collection, as afterGC saw it
	keptAt  uint32 // collections run when KeepDecoded's target was set; 0: not set
	decoded bool   // a Pause (not a Hold) ran since the collector was last resumed
}

// KeepDecoded tells the policy that what a paused decode makes live stays
// live for what the command does next (`hopctl analyze` reads the module
// it loaded and exits; `hopctl joint` builds a larger joint from it): when
// the last pause ends, the collector's next target is
// 2 × (heap + floor), as after a collection (with a floor set: a GOGC in
// the environment still wins), instead of the percentage in
// force before, which an already larger heap meets at once. That
// collection would free next to nothing (a 1M-node analyze: 384 → 358 MB)
// and cost 0.1–0.15 s of processor time (docs/performance-log.md). Commands
// that turn what they decoded into garbage (print, convert) do not call it:
// there that collection keeps their peak down.
func KeepDecoded() {
	state.Lock()
	state.keep = true
	state.Unlock()
}

// minCollectBefore is the least growth for which CollectBefore looks at
// the heap at all: below it, reading the heap's figures (a stop of the
// world, and page faults a small run does not otherwise take) costs more
// than any collection it could move.
const minCollectBefore = 16 << 20

// CollectBefore collects now if allocating grow more bytes would take the
// heap to the collector's next target, and reports whether it did: for a
// command between a phase that leaves much of the heap garbage and one
// that allocates much, whose collection would otherwise run inside the
// second. There it runs with the write barrier on over the phase's own
// writes, its marking takes the processor from the command's other
// goroutines, and the phase's allocations come from fresh memory, since
// what the collection frees is reused only after it ends. Collected
// between the two, the phase reuses the freed memory and runs without a
// collection: `hopctl joint` between Build and the partition of a
// 1M-node graph frees 330 MB in 0.1 s, and the partition then takes
// 0.47–0.66 s instead of 0.77–1.3 s, the peak 1,338 MiB instead of
// 1,460 MiB (docs/performance-log.md, Ninth pass). A pause in force
// rules (no collection here), and so does the environment: GOGC=off
// leaves no target to reach, unless a GOMEMLIMIT sets one.
func CollectBefore(grow uint64) bool {
	if grow < minCollectBefore {
		return false
	}
	// A pause rules even under a memory limit (GOMEMLIMIT), which gives
	// NextGC a finite value with the percentage off.
	state.Lock()
	paused := state.depth > 0
	state.Unlock()
	if paused {
		return false
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc+grow < ms.NextGC { // ~2^63 under GOGC=off without a limit
		return false
	}
	runtime.GC()
	return true
}

// Pause stops the garbage collector until the returned function is
// called; calls nest and may overlap between goroutines, and the setting
// in force before the first one comes back after the last (the floor's
// adjustments made meanwhile included).
//
// Decoding a large graph allocates hundreds of megabytes that all stay
// live, so collecting meanwhile frees nothing, and it costs more than its
// own work: the collector's scans and write barriers read freshly
// allocated memory before the decoder writes it, and each such page then
// takes a second, copy-on-write page fault with a TLB shootdown between
// cores. Measured on a 1M-node graph: 0.5 s of system time less.
func Pause() (resume func()) { return pause(true) }

// Hold stops the garbage collector as Pause does, for work that is not a
// decoding (an allocation the collector must not see, a command's work
// around a decoding): a Hold alone does not set KeepDecoded's target when
// it ends, which costs a stop of the world (runtime.ReadMemStats) and
// about 80 page faults that a small input's run does not need.
func Hold() (resume func()) { return pause(false) }

func pause(decoding bool) (resume func()) {
	state.Lock()
	if state.depth == 0 {
		state.percent = debug.SetGCPercent(-1)
	}
	state.depth++
	state.decoded = state.decoded || decoding
	state.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			state.Lock()
			state.depth--
			if state.depth == 0 {
				if state.keep && state.decoded && state.floor > 0 { // not under a GOGC of the environment's
					state.percent, state.keptAt = keepPercent(state.floor)
				}
				state.decoded = false
				debug.SetGCPercent(state.percent)
			}
			state.Unlock()
		})
	}
}

// defaultHeapMinimum is the heap size at which Go's collector first runs
// with GOGC=100 (runtime.defaultHeapMinimum); GOGC scales it.
const defaultHeapMinimum = 4 << 20

// SetFloor makes the collector behave as if floor bytes of never-touched,
// pointer-free heap were live (what a "heap ballast" does), without
// allocating one and without the collection a ballast forces at start: a
// run that allocates less than floor never collects, and on larger heaps
// each collection's target is the ballast's, 2 × (live + floor).
//
// It raises GOGC so that the collector's first target is floor, and after
// every collection (a finalizer, run on the finalizer goroutine) sets the
// percentage that makes the next target 2 × (live + floor). A GOGC set in
// the environment wins: SetFloor then does nothing, and GOGC=off still
// disables collection.
func SetFloor(floor uint64) {
	if _, ok := os.LookupEnv("GOGC"); ok || floor <= defaultHeapMinimum {
		return
	}
	state.Lock()
	state.floor = floor
	setPercentLocked(int(floor * 100 / defaultHeapMinimum))
	state.Unlock()
	armAfterGC()
}

// setPercentLocked sets the percentage in force outside pauses: now, or
// when the last pause ends.
func setPercentLocked(p int) {
	state.percent = p
	if state.depth > 0 {
		return
	}
	debug.SetGCPercent(p)
}

// gcHook is an object that becomes unreachable at once, so its finalizer
// runs after the next collection. It holds a pointer so that it is not
// batched into a tiny-allocator block with other objects.
type gcHook struct{ _ *int }

func armAfterGC() {
	runtime.SetFinalizer(&gcHook{}, func(*gcHook) {
		hook()
		armAfterGC()
	})
}

// hook is the policy the finalizer armed by SetFloor runs after each
// collection: afterGC. The package's tests run afterGC themselves where
// they mean a collection's finalizer to have run, and set hook to do
// nothing: the finalizer runs whenever its goroutine gets a processor,
// and it changed the policy between a test's steps (a test failed about
// once in 40 runs; every test's afterGC armed one more finalizer then).
var hook = afterGC

// targetPercent is the percentage that makes the collector's next target
// 2 × (live + floor), taking the heap now as live; called just after a
// collection.
func targetPercent(floor uint64, ms *runtime.MemStats) int {
	// The heap just after a collection is what it left live (plus what
	// was allocated since). runtime/metrics would say it more exactly,
	// but importing it costs every run 50 µs at start.
	live := max(ms.HeapAlloc, 1<<20)
	state.marked = live
	if c := state.ceiling; c > 0 && 2*(live+floor) > c {
		// Under the ceiling the heap now overstates what the collection
		// left live by what was allocated before this finalizer ran, and
		// the runtime applies the percentage to the marked heap: the
		// target came out about 10% under the ceiling at 1M nodes, one
		// collection more (docs/performance-log.md). The marked heap is what
		// the last target was set from.
		if m := markedEstimate(ms); m > 0 {
			base := max(m, 1<<20)
			return int(100 * (capGoal(2*(base+floor), base) - base) / base)
		}
	}
	return int(100 * (capGoal(2*(live+floor), live) - live) / live)
}

// markedEstimate is the heap the last collection marked, from the target
// it set (NextGC = marked × (1 + percent/100), stacks and globals aside),
// at most the heap now; 0 when unknown (a pause, a GOGC of the
// environment's).
func markedEstimate(ms *runtime.MemStats) uint64 {
	p := state.percent
	if state.depth > 0 || p <= 0 || ms.NextGC == 0 {
		return 0
	}
	return min(ms.NextGC*100/uint64(100+p), ms.HeapAlloc)
}

// minHeadroom is the least growth, as a fraction of the live heap
// (live/minHeadroom), that the ceiling leaves the collector before its
// next collection: it bounds the collections a heap near or over the
// ceiling costs (each marks the whole live heap) to one per live/4 bytes
// allocated, where a hard limit (GOMEMLIMIT at the live size) collects
// again and again (docs/performance-log.md).
const minHeadroom = 4

// capGoal lowers a collection target (heap bytes) to the ceiling, but not
// below live + live/minHeadroom.
func capGoal(goal, live uint64) uint64 {
	if c := state.ceiling; c > 0 && goal > c {
		return max(c, live+live/minHeadroom)
	}
	return goal
}

// SetCeiling caps the collector's target at ceiling bytes of heap, where
// the floor's rule, 2 × (live + floor), would let it grow beyond: a
// command whose live heap reaches a gigabyte (the joint and partition of
// a 1M-node graph) would otherwise peak at twice that. Under the ceiling
// the collector runs more often, at least after every live/4 bytes
// allocated (minHeadroom), so a live heap near the ceiling costs
// collections, not memory without bound. It takes effect after the next
// collection, and only with a floor set (SetFloor): GOGC or GOMEMLIMIT in
// the environment win, and SetCeiling then does nothing.
func SetCeiling(ceiling uint64) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return
	}
	state.Lock()
	state.ceiling = ceiling
	state.Unlock()
}

// keepPercent is the percentage that makes the collector's next target
// 2 × (heap + floor), the heap now taken as live, and the collections run
// so far. The runtime's target is the larger of two amounts the
// percentage scales: its heap minimum (runtime.defaultHeapMinimum;
// SetFloor's percentage is made of it) and what the last collection left
// live. The smaller of the two percentages that make each reach the goal
// is the one that makes the larger reach it. Only collections forced so
// far (hugeheap.Reserve's, before decoding) left less than the heap
// minimum live: the heap minimum's. Scaling 1 MiB taken as live instead
// raised the heap minimum itself past the goal, to 5 GB after a 1M-node
// joint's loading, and the collector never ran again.
func keepPercent(floor uint64) (percent int, collections uint32) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return goalPercent(&ms, capGoal(2*(ms.HeapAlloc+floor), ms.HeapAlloc)), ms.NumGC
}

// goalPercent is the percentage that makes the collector's next target
// goal bytes of heap, or the floor's rule's target after the last
// collection if that is larger (keepPercent says how).
func goalPercent(ms *runtime.MemStats, goal uint64) int {
	p := goal * 100 / defaultHeapMinimum
	if base := state.marked; ms.NumGC > ms.NumForcedGC && base > 0 {
		p = min(p, 100*(max(goal, capGoal(2*base, base))-base)/base)
	}
	return int(p)
}

// Expect tells the policy that the command is about to allocate about
// grow bytes that stay live: the collector's next target is raised, if
// it is lower, past the heap now plus grow (under the ceiling), so that no
// collection runs for them, while garbage beyond them still starts one.
// `hopctl joint` expects its joint before Build: at 1M input nodes a
// collection inside Build, at KeepDecoded's target, marked ~600 MB and
// freed ~4 MB, and took the other processor from Build's background
// work; holding the collector through Build instead let a graph of 8,000
// conds, whose Build drops a sub-joint per body, peak at 541 MiB of live
// heap against TestStressInputs' budget of 353 MiB (docs/performance-log.md,
// Eleventh pass). Like KeepDecoded, it does nothing under a GOGC of the
// environment's, during a pause, or for less than minCollectBefore.
func Expect(grow uint64) {
	if grow < minCollectBefore {
		return
	}
	state.Lock()
	defer state.Unlock()
	if state.floor == 0 || state.depth > 0 {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// The runtime starts a collection before its target, 70–95 % of the
	// way there from what the last one marked (runtime/mgcpacer.go,
	// minTriggerRatioNum and maxTriggerRatioNum): the target is set so
	// that grow stays under the earliest start.
	goal := capGoal(ms.HeapAlloc+grow*10/7, ms.HeapAlloc)
	if goal <= ms.NextGC {
		return
	}
	// A late finalizer of a collection run before now leaves it in force
	// (afterGC); the next collection's sets the floor's target again.
	state.keptAt = ms.NumGC
	setPercentLocked(goalPercent(&ms, goal))
}

// afterGC sets the percentage that makes the collector's next target
// 2 × (live + floor); the finalizer armAfterGC arms runs it after each
// collection.
//
// A finalizer runs when the finalizer goroutine gets a processor, which
// while both decode: a collection forced before decoding
// (hugeheap.Reserve's) had its finalizer run after a 1M-node joint's
// loading, and the target set from what it took as live (the whole
// decoded heap, 575 MB) was met at once: a collection that freed nothing
// (docs/performance-log.md). So a finalizer of a collection that ran
// before KeepDecoded's target was set leaves that target in force.
func afterGC() {
	state.Lock()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if state.keptAt == 0 || ms.NumGC > state.keptAt {
		setPercentLocked(targetPercent(state.floor, &ms))
	}
	state.Unlock()
}
