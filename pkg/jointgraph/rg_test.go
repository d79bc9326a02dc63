package jointgraph

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	_ "github.com/hopctl/hopctl/pkg/pt2"
)

// TestRecordedDetachIsReported: torch 2.6 and 2.14 decompose y.detach() to
// aten.alias.default (2.6 to a chain of three), keeping the detach only in
// the node's torch_fn / from_node records (make_pt2.py's detach_buffer).
// The joint differentiates the graph as written — the user outputs get
// tangents exactly where torch, running ep.module() of that archive, found
// outputs that require grad (expect.json's outputs_require_grad) — and
// reports every such node as a meta disagreement. The near misses report
// none: the training IR (aten.detach.default kept) and alias_output, whose
// source calls torch.ops.aten.alias itself.
func TestRecordedDetachIsReported(t *testing.T) {
	for _, c := range []struct {
		version, program string
		aliases          int // nodes reported
	}{
		{"2.14", "detach_buffer.aten", 1},
		{"2.6", "detach_buffer.aten", 3},
		{"2.14", "detach_buffer.train", 0},
		{"2.6", "detach_buffer.train", 0},
		{"2.14", "alias_output.aten", 0},
		{"2.6", "alias_output.aten", 0},
	} {
		dir := filepath.Join("../../testdata/pt2", c.version)
		p := filepath.Join(dir, c.program+".pt2")
		m, err := ir.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		j, err := Build(m, Options{File: p})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(j.MetaDisagreements) != c.aliases {
			t.Errorf("%s: %d meta disagreements %v, want %d", p, len(j.MetaDisagreements), j.MetaDisagreements, c.aliases)
		}
		for _, d := range j.MetaDisagreements {
			if d.Target != "aten.alias.default" || !strings.Contains(d.Recorded, "detach") {
				t.Errorf("%s: disagreement %+v is not a recorded detach on aten.alias", p, d)
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		var expect map[string]struct {
			OutputsRequireGrad []bool `json:"outputs_require_grad"`
		}
		if err := json.Unmarshal(raw, &expect); err != nil {
			t.Fatal(err)
		}
		want, ok := expect[c.program]
		if !ok || len(want.OutputsRequireGrad) == 0 {
			t.Fatalf("%s: expect.json records no outputs_require_grad for %s", dir, c.program)
		}
		var got []bool
		for i, o := range m.Signature.Outputs {
			if o.Kind == ir.OutputUserOutput {
				got = append(got, j.Masks[i])
			}
		}
		if len(got) != len(want.OutputsRequireGrad) {
			t.Fatalf("%s: %d user outputs, torch recorded %d", p, len(got), len(want.OutputsRequireGrad))
		}
		for i := range got {
			if got[i] != want.OutputsRequireGrad[i] {
				t.Errorf("%s: user output %d gets a tangent: %v; torch: requires grad %v", p, i, got[i], want.OutputsRequireGrad[i])
			}
		}
	}
}
