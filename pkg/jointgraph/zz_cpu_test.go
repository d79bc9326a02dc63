package jointgraph

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	n := 20
	if s := os.Getenv("ZZIT"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	m := mlpStack(1000)
	Build(m, Options{})
	var bw, bc, sw, sc time.Duration
	for range n {
		w0, c0 := time.Now(), cpuNow()
		j, err := Build(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w1, c1 := time.Now(), cpuNow()
		if _, err := Split(j, PartitionMinCut); err != nil {
			t.Fatal(err)
		}
		w2, c2 := time.Now(), cpuNow()
		bw += w1.Sub(w0)
		bc += c1 - c0
		sw += w2.Sub(w1)
		sc += c2 - c1
	}
	d := time.Duration(n)
	t.Logf("build wall %v cpu %v | split wall %v cpu %v | total wall %v cpu %v", bw/d, bc/d, sw/d, sc/d, (bw+sw)/d, (bc+sc)/d)
}

func TestZZBuildPhases(t *testing.T) {
	m := mlpStack(1000)
	Build(m, Options{})
	zzT = [8]time.Duration{}
	n := 20
	for range n {
		Build(m, Options{})
	}
	for i, name := range []string{"functionalize", "requiresGrad", "fwdcopy", "walk", "dce", "assemble"} {
		t.Logf("%s %v", name, zzT[i]/time.Duration(n))
	}
}

func TestZZSplitPhases(t *testing.T) {
	m := mlpStack(1000)
	j, _ := Build(m, Options{})
	n := 100
	var d [4]time.Duration
	for range n {
		t0 := time.Now()
		p := newPartitioner(j.Module.Root(), j, true)
		t1 := time.Now()
		saved := p.minCutSaved()
		t2 := time.Now()
		p.extract(saved, PartitionMinCut)
		t3 := time.Now()
		d[0] += t1.Sub(t0)
		d[1] += t2.Sub(t1)
		d[2] += t3.Sub(t2)
	}
	t.Logf("index %v mincut %v extract %v", d[0]/time.Duration(n), d[1]/time.Duration(n), d[2]/time.Duration(n))
}
