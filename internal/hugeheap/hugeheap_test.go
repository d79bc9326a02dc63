package hugeheap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
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
	hugeKiB := func(reserve bool) int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAllocate$")
		cmd.Env = append(os.Environ(), "HUGEHEAP_HELPER=1", fmt.Sprintf("HUGEHEAP_RESERVE=%t", reserve))
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
	plain, reserved := hugeKiB(false), hugeKiB(true)
	t.Logf("AnonHugePages: %d KiB without Reserve, %d KiB with", plain, reserved)
	if reserved < 32<<10 || reserved < plain+16<<10 {
		t.Errorf("48 MiB allocated after Reserve(96 MiB) are in %d KiB of huge pages (%d KiB without Reserve); want at least 32 MiB", reserved, plain)
	}
}

var keep [][]byte

// TestHelperAllocate is TestReserveBacksHeapWithHugePages's helper
// process.
func TestHelperAllocate(t *testing.T) {
	if os.Getenv("HUGEHEAP_HELPER") != "1" {
		t.Skip("helper process only")
	}
	if os.Getenv("HUGEHEAP_RESERVE") == "true" {
		Reserve(96 << 20)
	}
	for range (48 << 20) / 96 {
		keep = append(keep, make([]byte, 96))
	}
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "AnonHugePages:" {
			fmt.Printf("huge=%s\n", f[1])
			return
		}
	}
	t.Fatal("no AnonHugePages line in smaps_rollup")
}

// TestReserveSmallIsFree: under MinReserve Reserve neither allocates nor
// collects.
func TestReserveSmallIsFree(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if n := testing.AllocsPerRun(10, func() { Reserve(MinReserve - 1) }); n != 0 {
		t.Errorf("Reserve(MinReserve-1) allocated %v times", n)
	}
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("Reserve(MinReserve-1) collected %d times", after.NumGC-before.NumGC)
	}
}
