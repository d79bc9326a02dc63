package ir

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestTargetMemo: Get gives fn's value for every string, whether it comes
// again at the address it was seen at (interned) or as a copy, and calls
// fn once per distinct text.
func TestTargetMemo(t *testing.T) {
	calls := map[string]int{}
	m := NewTargetMemo(func(target string) string {
		calls[target]++
		return "v:" + target
	})
	targets := make([]string, 768)
	for i := range targets {
		targets[i] = fmt.Sprintf("aten.op%d.default", i)
	}
	for round := range 3 {
		for _, tg := range targets {
			got := m.Get(tg)
			if round == 2 {
				got = m.Get(strings.Clone(tg)) // same text, another address
			}
			if got != "v:"+tg {
				t.Fatalf("round %d: Get(%q) = %q", round, tg, got)
			}
		}
	}
	for _, tg := range targets {
		if calls[tg] != 1 {
			t.Errorf("fn(%q) ran %d times, want 1", tg, calls[tg])
		}
	}
	if got := m.Get(""); got != "v:" {
		t.Errorf(`Get("") = %q`, got)
	}
}

// TestDecodeInternsTargets: the nodes decoded with one target share its
// string — one copy per decoding goroutine of a large graph, one for a
// small graph and for the text encodings — so that a million nodes calling
// a few dozen ops hold a few dozen strings.
func TestDecodeInternsTargets(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		enc   Encoding
		most  int // distinct addresses allowed
	}{
		{100, Binary, 1},
		{2 * parallelNodes, Binary, min(runtime.GOMAXPROCS(0), 4)},
		{100, Text, 1},
		{100, JSON, 1},
	} {
		data, err := Encode(bigModule(t, tc.nodes), tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(data, tc.enc, "big")
		if err != nil {
			t.Fatal(err)
		}
		addrs := map[*byte]bool{}
		relus := 0
		for _, n := range m.Graphs[0].Nodes {
			if n.Target == "aten.relu.default" {
				relus++
				addrs[unsafe.StringData(n.Target)] = true
			}
		}
		if relus != tc.nodes || len(addrs) > tc.most {
			t.Errorf("%d nodes, %s: %d relu nodes with %d distinct target strings; want %d with at most %d", tc.nodes, tc.enc, relus, len(addrs), tc.nodes, tc.most)
		}
	}
}
