package cputime

import (
	"runtime"
	"testing"
)

func TestProcessGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage")
	}
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v, want > 0 after start-up", before)
	}
	x := 0
	for i := 0; Process() == before; i++ {
		x += i * i // spin until the kernel's accounting moves
	}
	_ = x
	if after := Process(); after <= before {
		t.Fatalf("Process() went from %v to %v", before, after)
	}
}
