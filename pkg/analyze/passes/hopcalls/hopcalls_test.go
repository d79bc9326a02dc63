package hopcalls_test

import (
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/load"
)

// results runs hopcalls over the file and returns its result per graph.
func results(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := load.Open(path, load.Lenient)
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.Run(f.Module, path, f.Registry, hopcalls.Analyzer)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Errorf("hopcalls reported %v", res.Findings)
	}
	return res.Results[hopcalls.Analyzer]
}

// TestDecodes: the root graph of a real cond trace has one HOP call, the
// cond, decoded into its two branches; At finds it by node and nothing at
// other nodes.
func TestDecodes(t *testing.T) {
	r := results(t, "../../../../testdata/hops_real/cond_clean.pb")[""].(*hopcalls.Result)
	if len(r.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(r.Calls))
	}
	c := &r.Calls[0]
	if c.HOP.Name != "cond" || c.Err != nil || c.Decoded == nil || len(c.Decoded.Subgraphs) != 2 {
		t.Fatalf("call %s: HOP %s, err %v, decoded %+v", c.Node.Name, c.HOP.Name, c.Err, c.Decoded)
	}
	if r.At(c.ID) != c || r.At(0) != nil {
		t.Error("At does not find the call by its node only")
	}
	if p := c.Provenance(c.Node.Name); p.Node != c.Node.Name || p.InputIndex != -1 || len(p.Path) != 1 {
		t.Errorf("provenance %+v", p)
	}
}

// TestMalformedCall: a call that does not follow the convention keeps the
// decoder's error and no decoded call (lint's hop-call trigger).
func TestMalformedCall(t *testing.T) {
	r := results(t, "../../../../testdata/lint/hop-call.pbtxt")[""].(*hopcalls.Result)
	bad := 0
	for _, c := range r.Calls {
		if c.Err != nil {
			bad++
			if c.Decoded != nil {
				t.Errorf("%s: decoded despite %v", c.Node.Name, c.Err)
			}
		}
	}
	if bad == 0 {
		t.Error("no call with a decoding error")
	}
}
