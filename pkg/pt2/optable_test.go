package pt2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestOpsResolveInRecordedTorch: an archive carries no op schemas, so its
// ops resolve against the built-in table of the torch version it records.
// Every ATen call of every real archive (torch 2.6 and 2.14) resolves there
// — _native_batch_norm_legit_functional, _assert_scalar and
// sym_constrain_range_for_size exist only in the 2.x table — and a program
// without torch_version gets schema.yaml's default "<=2.4", which selects the
// 2.x table too.
func TestOpsResolveInRecordedTorch(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/pt2/2.*/*.pt2")
	if len(paths) < 60 {
		t.Fatalf("only %d real archives", len(paths))
	}
	only2x := map[string]bool{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(data, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.TorchVersion, "2.") {
			t.Errorf("%s: torch_version %q", p, m.TorchVersion)
		}
		reg, err := opschema.NewRegistryForTorch(m.TorchVersion, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range m.Graphs {
			for _, n := range g.Nodes {
				if n.Op != ir.OpCallFunction || !strings.HasPrefix(n.Target, "aten.") {
					continue
				}
				if _, _, ok := reg.Lookup(n.Target); !ok {
					t.Errorf("%s: node %s: %s does not resolve in torch %s's table", p, n.Name, n.Target, m.TorchVersion)
				}
				if on, err := opschema.ParseTarget(n.Target); err == nil {
					if _, ok := opschema.BuiltinTable().Lookup(on); !ok {
						only2x[n.Target] = true
					}
				}
			}
		}
	}
	if len(only2x) == 0 {
		t.Error("no archive calls an op only the 2.x table has: the test cannot tell the tables apart")
	}

	base, err := os.ReadFile("../../testdata/pt2/hand/every_argument.json")
	if err != nil {
		t.Fatal(err)
	}
	noVersion := strings.Replace(string(base), `, "torch_version": "hand-written"`, ``, 1)
	if noVersion == string(base) {
		t.Fatal("edit does not apply")
	}
	m, err := Decode([]byte(noVersion), "noversion.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.TorchVersion != "<=2.4" {
		t.Errorf("torch_version absent: recorded %q, want schema.yaml's default \"<=2.4\"", m.TorchVersion)
	}
	for op := range only2x {
		if _, _, ok := mustRegistry(t, m.TorchVersion).Lookup(op); !ok {
			t.Errorf("torch_version absent: %s does not resolve", op)
		}
	}
}

func mustRegistry(t *testing.T, v string) *opschema.Registry {
	t.Helper()
	r, err := opschema.NewRegistryForTorch(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
