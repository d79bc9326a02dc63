package pt2

import (
	"archive/zip"
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// TestDeclaredSizeDoesNotAllocate: an entry that declares just under the
// limit but holds a few bytes is refused without allocating what it
// declares (memory proportional to the input, not to its claims).
func TestDeclaredSizeDoesNotAllocate(t *testing.T) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range []struct{ name, data string }{{"m/archive_format", "pt2"}, {"m/archive_version", "0"}} {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		w.Write([]byte(e.data))
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "m/models/model.json", Method: zip.Store, CompressedSize64: 2, UncompressedSize64: MaxProgramBytes - 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("{}"))
	zw.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Decode(b.Bytes(), "claims.pt2")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "m/models/model.json") {
		t.Fatalf("want a refusal naming the entry, got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing a %d-byte archive allocated %d bytes", b.Len(), alloc)
	}
}
