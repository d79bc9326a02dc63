package ir

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPrintParallelMatchesSequential prints every graph of the corpus with
// the forward bodies made in chunks of 1, 2, 3 and 7 nodes on several
// goroutines (bodyParallel) and checks the text is byte for byte the one
// the sequential printer makes, in both of torch's forms (values nobody
// uses freed or not): chunk boundaries fall before and after stack trace
// comments, placeholders and the output, and in graphs whose first chunks
// make no line.
func TestPrintParallelMatchesSequential(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var files []string
	for _, pattern := range []string{"../../testdata/models/*.pb", "../../testdata/models-torch2.14/*.pb", "../../testdata/hops/*.pbtxt", "../../testdata/hops_real/*.pb"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d corpus files", len(files))
	}
	saved := printChunk
	defer func() { printChunk = saved }()
	print := func(m *Module, chunk int, freeUnused bool) []byte {
		printChunk = chunk
		var b bytes.Buffer
		if err := printReadable(&b, m, "GraphModule", freeUnused); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	parallel := 0
	for _, file := range files {
		m, err := LoadFile(file)
		if err != nil {
			continue // invalid on purpose
		}
		for _, freeUnused := range []bool{false, true} {
			want := print(m, 1<<30, freeUnused)
			for _, chunk := range []int{1, 2, 3, 7} {
				if len(m.Root().Nodes) >= 2*chunk {
					parallel++
				}
				if got := print(m, chunk, freeUnused); !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Fatalf("%s, chunks of %d nodes (freeUnused %v): differs from the sequential printer at byte %d:\n%q\nwant\n%q",
						file, chunk, freeUnused, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
				}
			}
		}
	}
	if parallel == 0 {
		t.Fatal("no graph was printed in parallel")
	}
}

// FuzzPrintParallel checks the chunked printer against the sequential one
// on any decodable file (names with control and non-ASCII bytes, stack
// traces, placeholders anywhere).
func FuzzPrintParallel(f *testing.F) {
	for _, pattern := range []string{"../../testdata/hops/*.pbtxt"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	saved := printChunk
	defer func() { printChunk = saved }()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Text, "fuzz.pbtxt")
		if err != nil || len(m.Graphs) == 0 {
			return
		}
		for _, freeUnused := range []bool{false, true} {
			var want, got bytes.Buffer
			printChunk = 1 << 30
			if err := printReadable(&want, m, "GraphModule", freeUnused); err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 2} {
				printChunk = chunk
				got.Reset()
				if err := printReadable(&got, m, "GraphModule", freeUnused); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("chunks of %d nodes (freeUnused %v):\n%s\nwant\n%s", chunk, freeUnused, got.Bytes(), want.Bytes())
				}
			}
		}
	})
}
