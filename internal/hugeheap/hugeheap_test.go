package hugeheap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/hopctl/hopctl/internal/prefault"
)

// TestReserveBacksHeapWithHugePages runs the same allocation (48 MiB of
// small objects, the kind a decoder makes) in two fresh processes, one
// after Reserve, and compares the huge pages backing their memory
// (AnonHugePages in /proc/self/smaps_rollup): only the reserved heap may
// have them, since the kernel gives them only to advised memory.
func TestReserveBacksHeapWithHugePages(t *testing.T) {
	if !advisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	plain, reserved := helperHugeKiB(t, "HUGEHEAP_RESERVE=false"), helperHugeKiB(t, "HUGEHEAP_RESERVE=true")
	t.Logf("AnonHugePages: %d KiB without Reserve, %d KiB with", plain, reserved)
	if reserved < 32<<10 || reserved < plain+16<<10 {
		t.Errorf("48 MiB allocated after Reserve(96 MiB) are in %d KiB of huge pages (%d KiB without Reserve); want at least 32 MiB", reserved, plain)
	}
}

// TestReserveTouchFaultsIn: Reserve(320 MiB, true) faults in
// prefaultAhead (32 MiB) of the reservation while the program allocates
// none of it, and keeps that far ahead as the heap grows; Reserve(320 MiB,
// false) faults in nothing.
func TestReserveTouchFaultsIn(t *testing.T) {
	if !advisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	untouched := helperHugeKiB(t, "HUGEHEAP_RESERVE=320", "HUGEHEAP_ALLOCATE=false")
	if untouched >= 16<<10 {
		t.Errorf("Reserve(320 MiB, false) faulted in %d KiB of huge pages; want none of the reservation", untouched)
	}
	ahead := helperHugeKiB(t, "HUGEHEAP_RESERVE=320", "HUGEHEAP_ALLOCATE=false", "HUGEHEAP_PREFAULT=true")
	if ahead < 28<<10 || ahead > 48<<10 {
		t.Errorf("Reserve(320 MiB, true) faulted in %d KiB of huge pages before any allocation; want 32 MiB", ahead)
	}
	grown := helperHugeKiB(t, "HUGEHEAP_RESERVE=320", "HUGEHEAP_PREFAULT=true")
	if grown < (48+28)<<10 {
		t.Errorf("Reserve(320 MiB, true) faulted in %d KiB of huge pages with 48 MiB allocated; want 32 MiB more than the heap", grown)
	}
	t.Logf("AnonHugePages: %d KiB after Reserve(320 MiB, false), %d KiB after Reserve(320 MiB, true), %d KiB once 48 MiB are allocated", untouched, ahead, grown)
}

// helperHugeKiB runs TestHelperAllocate with the environment settings env
// and returns the KiB of huge pages it reports.
func helperHugeKiB(t *testing.T, env ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAllocate$")
	cmd.Env = append(append(os.Environ(), "HUGEHEAP_HELPER=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	_, after, ok := bytes.Cut(out, []byte("huge="))
	if !ok {
		t.Fatalf("helper printed no huge= line:\n%s", out)
	}
	n, err := strconv.Atoi(string(bytes.Fields(after)[0]))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var keep [][]byte

// TestHelperAllocate is the helper process of TestReserveBacksHeapWithHugePages
// and TestReserveTouchFaultsIn: it reserves and allocates as its
// environment says (helperHugeKiB) and prints its huge pages.
func TestHelperAllocate(t *testing.T) {
	if os.Getenv("HUGEHEAP_HELPER") != "1" {
		t.Skip("helper process only")
	}
	mib := func(key string) uint64 {
		n, _ := strconv.Atoi(os.Getenv(key))
		return uint64(n) << 20
	}
	if os.Getenv("HUGEHEAP_RESERVE") == "true" {
		Reserve(96<<20, false)
	} else if n := mib("HUGEHEAP_RESERVE"); n > 0 {
		Reserve(n, os.Getenv("HUGEHEAP_PREFAULT") == "true")
	}
	want := 0 // KiB of huge pages the prefault, if any, should reach
	if os.Getenv("HUGEHEAP_ALLOCATE") != "false" {
		for range (48 << 20) / 96 {
			keep = append(keep, make([]byte, 96))
		}
		want = (48 + 28) << 10
	} else {
		want = 28 << 10
	}
	if os.Getenv("HUGEHEAP_PREFAULT") == "true" {
		// Give the prefault the time it needs (on a loaded machine up to
		// seconds), and then the time to go too far if it would.
		for deadline := time.Now().Add(10 * time.Second); anonHugeKiB(t) < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	fmt.Printf("huge=%d\n", anonHugeKiB(t))
}

// anonHugeKiB is the process's AnonHugePages in KiB.
func anonHugeKiB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "AnonHugePages:" {
			n, err := strconv.Atoi(string(f[1]))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no AnonHugePages line in smaps_rollup")
	return 0
}

// TestReserveSmallIsFree: under MinReserve Reserve neither allocates nor
// collects.
func TestReserveSmallIsFree(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if n := testing.AllocsPerRun(10, func() { Reserve(MinReserve-1, false) }); n != 0 {
		t.Errorf("Reserve(MinReserve-1) allocated %v times", n)
	}
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("Reserve(MinReserve-1) collected %d times", after.NumGC-before.NumGC)
	}
}

// TestReserveCollectsOnce: Reserve collects once, the collection it
// forces; allocating the reservation, far over the collector's target,
// must not start one of its own, which would take the reservation for
// live heap (gcpolicy's next target would be set from it).
func TestReserveCollectsOnce(t *testing.T) {
	if !advisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	state.Lock()
	state.reserved = 0 // what other tests reserved is not this one's
	state.Unlock()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Reserve(64<<20, false)
	runtime.ReadMemStats(&after)
	if n, forced := after.NumGC-before.NumGC, after.NumForcedGC-before.NumForcedGC; n != 1 || forced != 1 {
		t.Errorf("Reserve(64 MiB) ran %d collections, %d of them forced; want only the one it forces", n, forced)
	}
}

// TestReserveHeadIsNotUsed: memory allocated after Reserve comes from the
// advised, huge-page part of the reservation, not from the part before its
// first huge page (0.5–2 MiB), which the runtime would otherwise use
// first. A free run just below that part may be merged with it when it is
// allocated again, leaving a few pages of it free (24 KiB seen): only an
// allocation's first 64 KiB may lie outside advised memory.
func TestReserveHeadIsNotUsed(t *testing.T) {
	helperAdvised(t, "head", 0, "a 1 MiB allocation after Reserve(64 MiB) is not in advised memory past its first 64 KiB")
}

// TestReserveHolesAreNotUsed: small objects allocated after a first
// Reserve come from the reservation, not from the pages its collection
// left free between live objects below it, which the runtime would
// otherwise hand out first, in 4 KiB pages (all 192 of 192 objects
// without Reserve's holding them). Another processor's page cache may hold
// up to 64 such pages, out of Reserve's reach (50 seen).
func TestReserveHolesAreNotUsed(t *testing.T) {
	helperAdvised(t, "holes", 64, "more than 64 of 192 objects of 8 KiB allocated after Reserve(64 MiB) are not in advised memory")
}

// helperAdvised runs TestHelperAdvised in a fresh process, for its case
// (HUGEHEAP_CASE), and fails with msg unless it finds advised memory and
// at most most addresses outside it.
func helperAdvised(t *testing.T, which string, most int, msg string) {
	if !advisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAdvised$")
	cmd.Env = append(os.Environ(), "HUGEHEAP_HELPER=1", "HUGEHEAP_CASE="+which)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("advised=true")) || bytes.Count(out, []byte("advised=false")) > most {
		t.Errorf("%s:\n%s", msg, out)
	}
}

// TestHelperAdvised is the helper process of TestReserveHeadIsNotUsed and
// TestReserveHolesAreNotUsed: it prints whether allocations made after
// Reserve lie in a mapping advised to use huge pages.
func TestHelperAdvised(t *testing.T) {
	if os.Getenv("HUGEHEAP_HELPER") != "1" {
		t.Skip("helper process only")
	}
	var ranges [][2]uint64 // what Reserve advised
	adviseHuge = func(p, n uintptr) bool {
		ranges = append(ranges, [2]uint64{uint64(p), uint64(p + n)})
		return prefault.AdviseHuge(p, n)
	}
	if os.Getenv("HUGEHEAP_CASE") == "holes" {
		makeHoles(128)
		// No collection but Reserve's frees any more.
		debug.SetGCPercent(-1)
		Reserve(64<<20, false)
		at := make([]uint64, 0, 192)
		keep = slices.Grow(keep, 192)
		for range 192 {
			b := make([]byte, runtimePage)
			keep = append(keep, b)
			at = append(at, uint64(uintptr(unsafe.Pointer(&b[0]))))
		}
		printAdvised(ranges, at...)
		return
	}
	// The heap's end placed 1 MiB past a huge page's start, so that the
	// reservation has a head of 1 MiB.
	probe := make([]byte, 64<<10)
	end := uintptr(unsafe.Pointer(unsafe.SliceData(probe))) + 64<<10
	fill := (hugePage + 1<<20 - end%hugePage) % hugePage
	if fill < 64<<10 {
		fill += hugePage
	}
	keep = append(keep, probe, make([]byte, fill))
	Reserve(64<<20, false)
	b := make([]byte, 1<<20)
	keep = append(keep, b)
	printAdvised(ranges, uint64(uintptr(unsafe.Pointer(&b[64<<10]))))
}

// makeHoles allocates n pages that stay live and n that are garbage once
// it returns, one after the other.
//
//go:noinline
func makeHoles(n int) {
	var garbage [][]byte
	for range n {
		keep = append(keep, make([]byte, runtimePage))
		garbage = append(garbage, make([]byte, runtimePage))
	}
	runtime.KeepAlive(garbage)
}

// printAdvised prints whether each address lies in memory Reserve advised
// to use huge pages (ranges).
func printAdvised(ranges [][2]uint64, at ...uint64) {
	for _, p := range at {
		advised := slices.ContainsFunc(ranges, func(r [2]uint64) bool { return r[0] <= p && p < r[1] })
		fmt.Printf("address %#x advised=%t\n", p, advised)
	}
}
