package jointgraph

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestZZPhases(t *testing.T) {
	sizes := []int{10000, 100000}
	if s := os.Getenv("ZZN"); s != "" {
		n, _ := strconv.Atoi(s)
		sizes = []int{n}
	}
	for _, n := range sizes {
		m := synthForward(n)
		j, err := Build(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for rep := 0; rep < 3; rep++ {
			runtime.GC()
			t0 := time.Now()
			p := newPartitioner(j.Module.Root(), j, true)
			t1 := time.Now()
			saved := p.minCutSaved()
			t2 := time.Now()
			_, err := p.extract(saved, PartitionMinCut)
			t3 := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
			t.Logf("n=%d index %.0f mincut %.0f extract %.0f total %.0f ns/node", n, per(t1.Sub(t0)), per(t2.Sub(t1)), per(t3.Sub(t2)), per(t3.Sub(t0)))
		}
	}
}
