package ir

import (
	"errors"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigModule is a chain of n relu nodes with rich metadata.
func bigModule(t *testing.T, n int) *Module {
	rich := decodeText(t, richFile)
	m := &Module{FormatMajor: 1, Producer: "test"}
	g := NewGraph("")
	prev := g.Append(Node{Name: "x", Op: OpPlaceholder, Target: "x", Val: rich.Graphs[0].Nodes[0].Val})
	for range n {
		name := g.FreshName("relu")
		prev = g.Append(Node{Name: name, Op: OpCallFunction, Target: "aten.relu.default",
			Args: []Arg{NodeArg(prev, g.Nodes[prev].Name)}, Val: rich.Graphs[0].Nodes[0].Val})
	}
	g.Append(Node{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{NodeArg(prev, g.Nodes[prev].Name)}})
	m.Graphs = []*Graph{g}
	return m
}

// TestLoadFileTruncatedWhileMapped truncates a mapped file between mapping
// and decoding, as another process rewriting it in place would: the
// decoder's reads of the vanished pages fault (SIGBUS), which LoadFile
// must turn into an input error naming the file, in every encoding and on
// the binary decoder's worker goroutines (parallelNodes) too.
func TestLoadFileTruncatedWhileMapped(t *testing.T) {
	m := bigModule(t, 2*parallelNodes)
	dir := t.TempDir()
	t.Cleanup(func() { afterMapHook = nil })
	for _, ext := range []string{".pb", ".json", ".pbtxt"} {
		path := filepath.Join(dir, "big"+ext)
		if err := saveFile(path, m); err != nil {
			t.Fatal(err)
		}
		mapped := false
		afterMapHook = func(p string) {
			mapped = true
			if err := os.Truncate(p, 4096); err != nil {
				t.Error(err)
			}
		}
		_, err := LoadFile(path)
		if !mapped {
			t.Fatalf("%s: not mapped: the test no longer covers mapping", ext)
		}
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "truncated while hopctl read it") || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: got %v, want an input error saying the file was truncated while read", ext, err)
		}
	}
}

// TestLoadFileSizeLimit checks the read limit on regular files (refused
// before reading) and on endless streams (/dev/zero: refused at the limit).
func TestLoadFileSizeLimit(t *testing.T) {
	defer SetMaxInputSize(SetMaxInputSize(1 << 20))
	path := filepath.Join(t.TempDir(), "big.pb")
	if err := saveFile(path, bigModule(t, 20000)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, "endless text stream"} {
		var err error
		if p == path {
			_, err = LoadFile(p)
		} else {
			_, err = readInput(endless{' '}, -1, 1<<20, checkStreamStart)
			err = &DecodeError{Loc: Location{File: p}, Err: err}
		}
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Limit != 1<<20 || !strings.Contains(err.Error(), "--max-input-size") {
			t.Errorf("%s: got %v, want a TooLargeError at 1 MiB", p, err)
		}
		var ie InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %T is not an input error", p, err)
		}
	}
	SetMaxInputSize(0)
	if MaxInputSize() != DefaultMaxInputSize {
		t.Errorf("SetMaxInputSize(0) left %d", MaxInputSize())
	}
	if _, err := LoadFile(path); err != nil {
		t.Errorf("default limit: %v", err)
	}
}

// endless is a stream of one byte repeated forever.
type endless struct{ b byte }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	return len(p), nil
}

// TestStreamStart checks that a stream no encoding can start with is
// refused after its first chunk (/dev/zero, /dev/urandom used to be read to
// the input size limit, 1 GiB, into a doubling buffer), and that every
// encoding's real start passes.
func TestStreamStart(t *testing.T) {
	defer SetMaxInputSize(SetMaxInputSize(1 << 30))
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		_, err := LoadFile(dev)
		var ie InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "does not start like a graph file") {
			t.Errorf("%s: got %v, want refused at its start", dev, err)
		}
	}
	if _, err := readInput(endless{0}, -1, 1<<30, checkStreamStart); err == nil || !strings.Contains(err.Error(), "65536 bytes") {
		t.Errorf("endless NULs: got %v", err)
	}
	m := bigModule(t, 2000)
	for _, enc := range []Encoding{Binary, JSON, Text} {
		data, err := Encode(m, enc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readInput(strings.NewReader(string(data)), -1, 1<<30, checkStreamStart)
		if err != nil || string(got) != string(data) {
			t.Errorf("%s from a stream: %v (%d of %d bytes)", enc, err, len(got), len(data))
		}
		if err := checkStreamStart(data[:min(len(data), streamPrefix)]); err != nil {
			t.Errorf("%s: its first chunk refused: %v", enc, err)
		}
	}
	if err := checkStreamStart([]byte("PK\x03\x04 zip")); err != nil {
		t.Errorf("zip start refused: %v", err)
	}
	// A multi-byte character cut by the end of the chunk is text still.
	if err := checkStreamStart([]byte("name: \"caf\xc3")); err != nil {
		t.Errorf("cut rune refused: %v", err)
	}
}

// TestLoadFileFIFO reads a graph from a named pipe: opened once (a second
// open would wait for a second writer forever).
func TestLoadFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "g.pbtxt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	data, err := os.ReadFile("../../testdata/hops/cond.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := Load(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadFile of a FIFO hangs")
	}
}

// TestDecodersRefuseNamelessNodes: every decoder refuses a node without a
// name as it meets it (before Verify), naming the node by index, and the
// binary decoder an argument without a value: millions of such two-byte
// messages must not cost a hundred bytes each first.
func TestDecodersRefuseNamelessNodes(t *testing.T) {
	src := pbtxtModule(`nodes { name: "x" op: PLACEHOLDER target: "x" }
nodes { op: CALL_FUNCTION target: "aten.sin.default" args { node: "x" } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "x" } }`, "")

	f := &pb.File{}
	if err := prototext.Unmarshal([]byte(src), f); err != nil {
		t.Fatal(err)
	}
	bin, _ := proto.Marshal(f)
	js, _ := protojson.Marshal(f)
	for enc, data := range map[Encoding][]byte{Text: []byte(src), Binary: bin, JSON: js} {
		_, err := Decode(data, enc, "t")
		if err == nil || !strings.Contains(err.Error(), "graph <root>: node #1") || !strings.Contains(err.Error(), "node has an empty name") {
			t.Errorf("%s: %v", enc, err)
		}
	}
	f.Graph.Nodes[1].Name = "sin"
	f.Graph.Nodes[1].Args = append(f.Graph.Nodes[1].Args, &pb.Arg{})
	bin, _ = proto.Marshal(f)
	if _, err := Decode(bin, Binary, "t"); err == nil || !strings.Contains(err.Error(), "node sin") || !strings.Contains(err.Error(), "argument 1: argument has no value set") {
		t.Errorf("empty argument: %v", err)
	}
}
