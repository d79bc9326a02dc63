package nosample

import (
	"runtime"
	"testing"
)

func TestSamplingOff(t *testing.T) {
	if runtime.MemProfileRate != 0 {
		t.Fatalf("runtime.MemProfileRate = %d after the package's initialiser, want 0", runtime.MemProfileRate)
	}
}
