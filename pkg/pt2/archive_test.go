package pt2

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
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
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "m/models/model.json", Method: zip.Store, CompressedSize64: 2, UncompressedSize64: 1<<30 - 1})
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

// TestEntryLimitIsTheInputLimit: a program entry that inflates past the
// configured input size limit (input.max-size, not a fixed constant) is
// refused as it inflates, naming the entry; under the limit it is read.
func TestEntryLimitIsTheInputLimit(t *testing.T) {
	defer ir.SetMaxInputSize(ir.SetMaxInputSize(1 << 20))
	bomb := func(n int, declared uint64) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for _, e := range []struct{ name, data string }{{"m/archive_format", "pt2"}, {"m/archive_version", "0"}} {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
			w.Write([]byte(e.data))
		}
		var c bytes.Buffer
		fw, _ := flate.NewWriter(&c, flate.BestCompression)
		data := append([]byte("{"), bytes.Repeat([]byte(" "), n)...)
		fw.Write(data)
		fw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "m/models/model.json", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data),
			CompressedSize64: uint64(c.Len()), UncompressedSize64: declared})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(c.Bytes())
		zw.Close()
		return b.Bytes()
	}
	// Declared within the limit, inflating past it: refused at the
	// declared size's end (archive/zip) or the limit, whichever is first.
	if _, err := Decode(bomb(4<<20, 1<<20), "bomb.pt2"); err == nil || !strings.Contains(err.Error(), "m/models/model.json") {
		t.Errorf("inflating past the limit: got %v", err)
	}
	if _, err := Decode(bomb(4<<20, 4<<20+1), "bomb.pt2"); err == nil || !strings.Contains(err.Error(), "declares 4194305 bytes, more than the input size limit of 1048576") {
		t.Errorf("declaring past the limit: got %v", err)
	}
	// Under the limit the entry is read (and refused as a program, later).
	if _, err := Decode(bomb(1000, 1001), "small.pt2"); err == nil || strings.Contains(err.Error(), "inflates past") || strings.Contains(err.Error(), "not JSON") {
		t.Errorf("under the limit: got %v", err)
	}
}

// TestManyEntries: an archive of a real program plus 100,000 weight
// entries (a model with many tensors saves one entry each under data/) is
// read whole, with memory within the contract's 50 × the input's size, and
// one entry named twice among them is still found.
func TestManyEntries(t *testing.T) {
	real, err := os.ReadFile("../../testdata/pt2/2.14/cond.aten.pt2")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(real), int64(len(real)))
	if err != nil {
		t.Fatal(err)
	}
	build := func(dup bool) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for _, f := range zr.File {
			if err := zw.Copy(f); err != nil {
				t.Fatal(err)
			}
		}
		prefix, _, _ := strings.Cut(zr.File[0].Name, "/")
		for i := range 100_000 {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("%s/data/weights/w_%d", prefix, i), Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte{byte(i)})
		}
		if dup {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: prefix + "/data/weights/w_99999", Method: zip.Store})
			w.Write([]byte{1})
		}
		zw.Close()
		return b.Bytes()
	}
	data := build(false)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := Decode(data, "many.pt2")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("an archive of 100,000 entries: %v", err)
	}
	if len(m.Graphs) == 0 || len(m.Root().Nodes) == 0 {
		t.Fatal("the program was not read")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50*uint64(len(data)) {
		t.Errorf("reading a %d-byte archive of 100,000 entries allocated %d bytes", len(data), alloc)
	}
	if _, err := Decode(build(true), "many.pt2"); err == nil || !strings.Contains(err.Error(), "w_99999\" appears twice") {
		t.Errorf("a duplicate among 100,000 entries: got %v", err)
	}
}
