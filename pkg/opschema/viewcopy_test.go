package opschema

import (
	"encoding/json"
	"os"
	"testing"
)

// TestIsViewMatchesTorch replays what torch's reshape and contiguous did on
// tensors of many layouts (testdata/reshape_views.json, written by
// python/tools/make_reshape_views.py): a view exactly where torch returned
// one.
func TestIsViewMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/reshape_views.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Torch string
		Cases []struct {
			Layout    string
			RawShape  []int64 `json:"shape"`
			RawStride []int64 `json:"stride"`
			RawNew    []int64 `json:"new_shape"`
			Op        string
			View      bool
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	views, copies := 0, 0
	for _, c := range doc.Cases {
		k := map[string]ViewOrCopyKind{"reshape": ReshapeLike, "contiguous": ContiguousLike}[c.Op]
		if k == AlwaysAsSchema {
			t.Fatalf("unknown op %q", c.Op)
		}
		if got := k.IsView(c.RawShape, c.RawStride, c.RawNew); got != c.View {
			t.Errorf("%s %s %v stride %v -> %v: view %v, torch %s: %v", c.Op, c.Layout, c.RawShape, c.RawStride, c.RawNew, got, doc.Torch, c.View)
		}
		if c.View {
			views++
		} else {
			copies++
		}
	}
	if views == 0 || copies == 0 {
		t.Fatalf("the cases show %d views and %d copies: both are needed", views, copies)
	}
}

func TestViewOrCopyTable(t *testing.T) {
	r, err := NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"aten.reshape.default", "aten.flatten.using_ints", "aten.contiguous.default", "aten.reshape_as.default"} {
		s, _, ok := r.Lookup(target)
		if !ok {
			t.Fatalf("no schema for %s", target)
		}
		if ViewOrCopy(s) == AlwaysAsSchema {
			t.Errorf("%s: not in the view-or-copy table (its key is %s.%s)", target, s.QualifiedName(), s.Overload)
		}
	}
}
