package pt2

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestSampleInputsRecordSharing: archives torch 2.6 and 2.14 saved for
// f(t, t), f(x[0], x[1]) and f(a, b) (python/tools/make_shared_inputs.py).
// The program JSON records each user input as a fresh tensor; the saved
// example inputs say which were one storage, and at which offset.
func TestSampleInputsRecordSharing(t *testing.T) {
	for _, v := range []string{"2.6", "2.14"} {
		for _, c := range []struct {
			name        string
			shared      bool
			off0, off1  int64
			recordedOff bool
		}{{"same", true, 0, 0, true}, {"views", true, 0, 3, true}, {"distinct", false, 0, 0, false}} {
			p := filepath.Join("../../testdata/pt2/shared", v, c.name+".pt2")
			m, err := ir.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			a, b := userTensor(t, m, "a"), userTensor(t, m, "b")
			if !a.HasStorageID || !b.HasStorageID {
				t.Fatalf("%s: storage ids not recorded: %+v %+v", p, a, b)
			}
			if (a.StorageID == b.StorageID) != c.shared {
				t.Errorf("%s: storage ids %d and %d, shared %v", p, a.StorageID, b.StorageID, c.shared)
			}
			if c.shared && (a.StorageOffset.Val != c.off0 || b.StorageOffset.Val != c.off1) {
				t.Errorf("%s: offsets %v and %v, want %d and %d", p, a.StorageOffset, b.StorageOffset, c.off0, c.off1)
			}
		}
	}
}

// TestSampleInputsUnreadable: an archive whose example inputs entry is not
// a torch.save zip is read as before, its sharing unknown.
func TestSampleInputsUnreadable(t *testing.T) {
	real, err := os.ReadFile("../../testdata/pt2/shared/2.6/same.pt2")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(real), int64(len(real)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	replaced := false
	for _, f := range zr.File {
		if f.Name == "serialized_example_inputs.pt" {
			w, _ := zw.Create(f.Name)
			w.Write([]byte("not a zip"))
			replaced = true
			continue
		}
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	if !replaced {
		t.Fatal("no serialized_example_inputs.pt in the 2.6 archive")
	}
	m, err := Decode(buf.Bytes(), "broken_inputs.pt2")
	if err != nil {
		t.Fatalf("an unreadable example inputs entry refused the archive: %v", err)
	}
	if a := userTensor(t, m, "a"); a.HasStorageID {
		t.Errorf("sharing recorded from an unreadable entry: %+v", a)
	}
}

func userTensor(t *testing.T, m *ir.Module, name string) *ir.TensorMeta {
	t.Helper()
	id, ok := m.Root().Lookup(name)
	if !ok {
		t.Fatalf("no placeholder %s", name)
	}
	v := m.Root().Nodes[id].Val
	if v == nil || v.Tensor == nil {
		t.Fatalf("placeholder %s has no tensor value", name)
	}
	return v.Tensor
}
