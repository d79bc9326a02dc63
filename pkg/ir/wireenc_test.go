package ir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func protoBytes(t testing.TB, m *Module) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ToProto(m))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWireEncoderMatchesProto(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/*/*.p*")
	if len(paths) < 20 {
		t.Fatalf("only %d corpus files", len(paths))
	}
	mods := []*Module{decodeText(t, richFile)}
	for _, p := range paths {
		if m, err := LoadFile(p); err == nil {
			mods = append(mods, m)
		}
	}
	for i, m := range mods {
		got, err := encodeBinary(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := protoBytes(t, m); !bytes.Equal(got, want) {
			t.Errorf("module %d: streaming encoder differs from protobuf-go (%d vs %d bytes)", i, len(got), len(want))
		}
		// Streamed to a writer (EncodeSourceTo), in pieces of 1 MiB and
		// of 100 bytes, and to a file: the same bytes.
		for _, chunk := range []int{streamChunk, 100} {
			if s := streamed(t, m, chunk); !bytes.Equal(s, got) {
				t.Errorf("module %d: streamed in %d-byte pieces, %d bytes, differ from the %d in memory", i, chunk, len(s), len(got))
			}
			if s := streamedToFile(t, m, chunk); !bytes.Equal(s, got) {
				t.Errorf("module %d: streamed to a file in %d-byte pieces, %d bytes, differ from the %d in memory", i, chunk, len(s), len(got))
			}
		}
	}
}

// streamed is m's binary encoding as EncodeSourceTo writes it, in pieces
// of chunk bytes; nil on an error.
func streamed(t testing.TB, m *Module, chunk int) []byte {
	defer func(c int) { streamChunk = c }(streamChunk)
	streamChunk = chunk
	var w bytes.Buffer
	if len(m.Graphs) == 0 {
		if err := EncodeTo(&w, m, Binary); err != nil {
			return nil
		}
		return w.Bytes()
	}
	if err := EncodeSourceTo(&w, m, GraphNodes(m.Root()), Binary); err != nil {
		return nil
	}
	return w.Bytes()
}

// streamedToFile is m's binary encoding as EncodeSourceTo writes it to a
// regular file in pieces of chunk bytes (the root graph written once, at
// its place: streamRootAt), after a few bytes already in the file, which
// it leaves; nil on an error.
func streamedToFile(t testing.TB, m *Module, chunk int) []byte {
	defer func(c int) { fileChunk = c }(fileChunk)
	fileChunk = chunk
	f, err := os.CreateTemp(t.TempDir(), "*.pb")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const before = "before"
	f.WriteString(before)
	if err := EncodeSourceTo(f, m, GraphNodes(m.Root()), Binary); err != nil {
		return nil
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), before) {
		t.Fatalf("the file's first bytes were overwritten")
	}
	return data[len(before):]
}

// TestStreamedToAppendingFile: a file open with O_APPEND (standard output
// redirected with >>) takes every write at its end, so the encoder writes
// it in order, never at offsets: the same bytes after what it held.
func TestStreamedToAppendingFile(t *testing.T) {
	defer func(c int) { fileChunk = c }(fileChunk)
	fileChunk = 5 // the root graph is past a piece: written at its place if the file allowed it
	name := filepath.Join(t.TempDir(), "out.pb")
	if err := os.WriteFile(name, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &Graph{}
	for i := range 100 {
		g.Nodes = append(g.Nodes, Node{Name: fmt.Sprintf("n%d", i), Op: OpPlaceholder, Target: "x"})
	}
	m := &Module{Graphs: []*Graph{g}}
	want, err := encodeBinary(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := EncodeSourceTo(f, m, GraphNodes(m.Root()), Binary); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := data[len("before"):]; string(data[:len("before")]) != "before" || !bytes.Equal(got, want) {
		t.Errorf("appended %d bytes after %q, want the %d of the encoding", len(got), data[:min(len(data), 6)], len(want))
	}
}

// TestStreamedToFileGuess: the length prefix of a root graph streamed to a
// file is guessed from its first and last nodes and a sample of the others
// (sampledSize); a guess too long or too short writes the nodes again where
// they belong, and the file ends where the encoding does.
func TestStreamedToFileGuess(t *testing.T) {
	// A node named "s" (over the 5-byte piece: the guess is made after it),
	// then 2,048 nodes named by whether sampledSize reads them, and a last
	// "s". A node is its name and 9 to 12 bytes.
	const k, m = 1, 4 * rootSamples
	graph := func(sampled, other int) *Module {
		g := &Graph{}
		names := make([]string, k+m+1)
		for i := range names {
			names[i] = strings.Repeat("n", other)
		}
		for j := range rootSamples {
			names[sampleAt(j, rootSamples, k, m)] = strings.Repeat("n", sampled)
		}
		names[0], names[k+m] = "s", "s"
		for _, name := range names {
			g.Nodes = append(g.Nodes, Node{Name: name, Op: OpPlaceholder, Target: "x"})
		}
		return &Module{Graphs: []*Graph{g, {Name: "sub", Nodes: []Node{{Name: "y", Op: OpPlaceholder, Target: "y"}}}}}
	}
	for name, c := range map[string]struct {
		m     *Module
		wrong bool
	}{
		"too long":  {graph(1100, 1), true}, // guessed 2,048 × 1,112 bytes (over 2 MiB: 4 bytes of prefix), 0.6 MB
		"too short": {graph(1, 1400), true}, // guessed 2,048 × 10 bytes (3 bytes), 2.2 MB
		"right":     {graph(100, 100), false},
	} {
		want, err := encodeBinary(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := streamedToFile(t, c.m, 5); !bytes.Equal(got, want) {
			t.Errorf("%s: streamed to a file, %d bytes, differ from the %d in memory", name, len(got), len(want))
		}
		// The case tests what it says: the guess is wrong, or right.
		e := &wireEncoder{vals: NewValueMemo(0)}
		root := GraphNodes(c.m.Root())
		e.node(root.Node(0))
		size, _ := e.sampledSize(root, k)
		guess := protowire.SizeVarint(uint64(len(e.b)) + size)
		if wrong := guess != protowire.SizeVarint(rootLen(t, want)); wrong != c.wrong {
			t.Errorf("%s: the guess (%d bytes of prefix) is wrong: %v", name, guess, wrong)
		}
	}
}

// rootLen is the length of the root graph of an encoded module.
func rootLen(t *testing.T, b []byte) uint64 {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		b = b[n:]
		if num == 4 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				t.Fatal("bad varint")
			}
			return v
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			t.Fatal("bad field")
		}
		b = b[n:]
	}
	t.Fatal("no root graph")
	return 0
}

// TestStreamedBinaryErrors: a string that is not UTF-8 in the root graph
// fails the streamed encoding before anything is written, and a write
// error is returned.
func TestStreamedBinaryErrors(t *testing.T) {
	m := decodeText(t, richFile)
	var w bytes.Buffer
	bad := *m
	root := *m.Root()
	root.Nodes = append([]Node(nil), root.Nodes...)
	root.Nodes[len(root.Nodes)/2].Name = "bad\xff"
	bad.Graphs = append([]*Graph{&root}, m.Graphs[1:]...)
	// The root graph encoded once (whole) and twice (in 100-byte pieces).
	for _, chunk := range []int{streamChunk, 100} {
		func() {
			defer func(c int) { streamChunk = c }(streamChunk)
			streamChunk = chunk
			w.Reset()
			if err := EncodeSourceTo(&w, &bad, GraphNodes(&root), Binary); err == nil || w.Len() > 0 {
				t.Errorf("invalid UTF-8, %d-byte pieces: error %v, %d bytes written", chunk, err, w.Len())
			}
		}()
	}
	// To a file the root graph is written as it is encoded: the error
	// comes all the same (the caller drops the file).
	for _, chunk := range []int{fileChunk, 100} {
		if streamedToFile(t, &bad, chunk) != nil {
			t.Errorf("invalid UTF-8, streamed to a file in %d-byte pieces: no error", chunk)
		}
	}
	var we *WriteError
	if err := EncodeSourceTo(failWriter{}, m, GraphNodes(m.Root()), Binary); !errors.As(err, &we) {
		t.Errorf("a failing writer: error %v, not a WriteError", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// FuzzWireEncoderMatchesProto: whatever decodes encodes to protobuf-go's
// exact bytes.
func FuzzWireEncoderMatchesProto(f *testing.F) {
	addCorpusSeeds(f, Binary)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeBinary(data, "fuzz", false)
		if err != nil {
			return
		}
		got, gerr := encodeBinary(m)
		want, werr := proto.MarshalOptions{Deterministic: true}.Marshal(ToProto(m))
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("errors differ: %v vs %v", gerr, werr)
		}
		if gerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("streaming encoder differs from protobuf-go")
		}
		// Streamed whole (a small root graph, encoded once) and in 64-byte
		// pieces (encoded twice, from the node that passes 64 bytes on).
		for _, chunk := range []int{1 << 20, 64} {
			if s := streamed(t, m, chunk); gerr == nil && !bytes.Equal(s, got) {
				t.Fatalf("streamed to a writer in %d-byte pieces, the encoding differs", chunk)
			}
			if s := streamedToFile(t, m, chunk); gerr == nil && !bytes.Equal(s, got) {
				t.Fatalf("streamed to a file in %d-byte pieces, the encoding differs", chunk)
			}
		}
	})
}

// TestValidUTF8AgreesWithLibrary: the encoder's ASCII fast path gives
// utf8.ValidString's answer wherever the first non-ASCII byte is (in an
// eight-byte word or the tail), and an invalid string is refused as
// protobuf-go refuses it.
func TestValidUTF8AgreesWithLibrary(t *testing.T) {
	bad := []string{"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80"} // invalid byte, truncated sequences, a surrogate
	good := []string{"é", "€", "𝔸"}
	for n := 0; n <= 17; n++ {
		prefix := strings.Repeat("a", n)
		for _, s := range append(bad, good...) {
			for _, x := range []string{prefix + s, prefix + s + "tail", s + prefix} {
				if got, want := validUTF8(x), utf8.ValidString(x); got != want {
					t.Errorf("validUTF8(%q) = %v, utf8.ValidString %v", x, got, want)
				}
			}
		}
	}
	// One byte that is not ASCII at every place of strings up to 20 bytes
	// (validUTF8 reads them in overlapping words).
	for n := 1; n <= 20; n++ {
		for i := range n {
			for _, c := range []string{"\xff", "\x80", "é"} {
				x := strings.Repeat("a", i) + c + strings.Repeat("a", n-i-1)
				if got, want := validUTF8(x), utf8.ValidString(x); got != want {
					t.Errorf("validUTF8(%q) = %v, utf8.ValidString %v", x, got, want)
				}
			}
		}
	}
	// The same strings as a node's name and target, which strAlways
	// copies and checks word by word (copyWords, from four bytes on):
	// protobuf-go's bytes, or its refusal.
	for n := 1; n <= 20; n++ {
		for i := range n {
			for _, c := range []string{"\xff", "\x80", "é", "€", "\xed\xa0\x80", "a"} {
				x := strings.Repeat("a", i) + c + strings.Repeat("a", n-i-1)
				m := &Module{Graphs: []*Graph{{Nodes: []Node{{Name: x, Op: OpPlaceholder, Target: "t" + x}}}}}
				got, gerr := encodeBinary(m)
				want, werr := proto.MarshalOptions{Deterministic: true}.Marshal(ToProto(m))
				if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
					t.Errorf("node named %q: encoded %x (%v), protobuf-go %x (%v)", x, got, gerr, want, werr)
				}
			}
		}
	}
	m := &Module{Graphs: []*Graph{{Nodes: []Node{{Name: "x\xff", Op: OpPlaceholder, Target: "x"}}}}}
	if _, err := encodeBinary(m); err == nil {
		t.Error("a node name with invalid UTF-8 encoded without error")
	}
	if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(ToProto(m)); err == nil {
		t.Error("protobuf-go accepted invalid UTF-8: the encoder's error has no reference")
	}
}

// TestArgFieldMatchesProto: references and ints written whole as a
// node's arguments and a list's elements (argField) give protobuf-go's
// bytes, or its refusal, on either side of the fast paths' bounds: names
// of 1 to 130 bytes, a byte that is not ASCII at every place of the
// shorter ones, ints from -3 to 300; and so do the forward and backward
// graphs' references, renamed through a NodeSource.
func TestArgFieldMatchesProto(t *testing.T) {
	var names []string
	for n := 1; n <= 130; n++ {
		names = append(names, strings.Repeat("r", n))
		if n <= 20 {
			for i := range n {
				for _, c := range []string{"\xff", "é"} {
					names = append(names, strings.Repeat("r", i)+c+strings.Repeat("r", n-i-1))
				}
			}
		}
	}
	for _, name := range names {
		ref := NodeArg(0, name)
		var ints []Arg
		for v := int64(-3); v <= 300; v += 7 {
			ints = append(ints, IntArg(v))
		}
		m := &Module{Graphs: []*Graph{{Nodes: []Node{
			{Name: name, Op: OpPlaceholder, Target: name},
			{Name: "call", Op: OpCallFunction, Target: "aten.cat.default", Args: []Arg{
				ref, IntArg(5), IntArg(127), IntArg(128), IntArg(-1),
				WithElems(Arg{Kind: ArgList}, []Arg{ref, IntArg(0), ref}),
				WithElems(Arg{Kind: ArgTuple}, ints),
			}},
		}}}}
		got, gerr := encodeBinary(m)
		want, werr := proto.MarshalOptions{Deterministic: true}.Marshal(ToProto(m))
		if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("references named %q: encoded %x (%v), protobuf-go %x (%v)", name, got, gerr, want, werr)
		}
		// The references renamed by a source (the encoder asks it for
		// each reference's name): the bytes of the module renamed.
		renamed := strings.Repeat("s", len(name)+1)
		src := renaming{GraphNodes(m.Root()), renamed}
		var w bytes.Buffer
		serr := EncodeSourceTo(&w, m, src, Binary)
		m.Graphs[0].Nodes[0].Name = renamed
		for _, a := range []*Arg{&m.Graphs[0].Nodes[1].Args[0], &m.Graphs[0].Nodes[1].Args[5].Elems()[0], &m.Graphs[0].Nodes[1].Args[5].Elems()[2]} {
			a.S = renamed
		}
		want, werr = proto.MarshalOptions{Deterministic: true}.Marshal(ToProto(m))
		if (serr == nil) != (werr == nil) || serr == nil && !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("references renamed %q: encoded %x (%v), protobuf-go %x (%v)", renamed, w.Bytes(), serr, want, werr)
		}
	}
}

// TestLengthsMatchProto: messages whose length takes one, two and three
// bytes (endLong's two-byte form and its general one), at the bounds:
// protobuf-go's bytes.
func TestLengthsMatchProto(t *testing.T) {
	for _, r := range [][2]int{{100, 160}, {16340, 16420}, {2097100, 2097160}} {
		for n := r[0]; n < r[1]; n += 1 + n/100000 {
			m := &Module{Graphs: []*Graph{{Nodes: []Node{{Name: "n", Op: OpCallFunction, Target: "t",
				Args: []Arg{{Kind: ArgStr, S: strings.Repeat("s", n)}}}}}}}
			got, err := encodeBinary(m)
			if err != nil {
				t.Fatal(err)
			}
			if want := protoBytes(t, m); !bytes.Equal(got, want) {
				t.Fatalf("a node with a %d-byte string: encoded %d bytes, protobuf-go %d, or the bytes differ", n, len(got), len(want))
			}
		}
	}
}

// TestHeadMatchesProto: a node's name, op and target written at once
// (head) or not, on either side of its bounds: protobuf-go's bytes.
func TestHeadMatchesProto(t *testing.T) {
	for n := 1; n <= 130; n++ {
		long := strings.Repeat("s", n)
		for _, op := range []OpKind{OpUnspecified, OpCallFunction} {
			m := &Module{Graphs: []*Graph{{Nodes: []Node{
				{Name: "name", Op: op, Target: long}, {Name: long, Op: op, Target: "target"}, {Name: long, Op: op, Target: long},
			}}}}
			got, err := encodeBinary(m)
			if err != nil {
				t.Fatal(err)
			}
			if want := protoBytes(t, m); !bytes.Equal(got, want) {
				t.Fatalf("%d-byte names and targets, op %v: encoded %x, protobuf-go %x", n, op, got, want)
			}
		}
	}
}

// renaming is a graph's nodes with node 0 and every reference named name.
type renaming struct {
	NodeSource
	name string
}

func (r renaming) Node(i int) *Node {
	n := r.NodeSource.Node(i)
	if i == 0 {
		c := *n
		c.Name = r.name
		return &c
	}
	return n
}

func (r renaming) Ref(a *Arg) (NodeID, string) { return a.Ref, r.name }

// TestValueMemoShared: encodings sharing one ValueMemo at the same time
// (the joint command's three outputs) give each module's own bytes,
// whatever the others kept, and a value with invalid UTF-8 is refused by
// every encoding that writes it, not only by the first.
func TestValueMemoShared(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/models/*.pb")
	if len(paths) < 5 {
		t.Fatalf("only %d models", len(paths))
	}
	var mods []*Module
	for _, p := range paths {
		m, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// A second module sharing the first's values: its root graph's
		// nodes in reverse order, as a partition's graphs are the joint's
		// nodes in another order (the encoder does not check references).
		nodes := slices.Clone(m.Root().Nodes)
		slices.Reverse(nodes)
		r := *m
		r.Graphs = append([]*Graph{{Nodes: nodes}}, m.Graphs[1:]...)
		mods = append(mods, m, &r)
	}
	want := make([][]byte, len(mods))
	for i, m := range mods {
		b, err := encodeBinary(m)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	vals := NewValueMemo(0)
	got := make([]bytes.Buffer, len(mods))
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Go(func() {
			if err := EncodeSourceToMemo(&got[i], m, GraphNodes(m.Root()), Binary, vals); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range mods {
		if !bytes.Equal(got[i].Bytes(), want[i]) {
			t.Errorf("module %d (%s): encoded with a shared memo, %d bytes, differ from the %d alone", i, paths[i/2], got[i].Len(), len(want[i]))
		}
	}

	bad := &Value{Kind: ValOpaque, S: "\xff"}
	m := &Module{Graphs: []*Graph{{Nodes: []Node{{Name: "x", Op: OpPlaceholder, Target: "x", Val: bad}}}}}
	for i := range 2 {
		if err := EncodeSourceToMemo(io.Discard, m, GraphNodes(m.Root()), Binary, vals); !errors.Is(err, errInvalidUTF8) {
			t.Errorf("encoding %d of a value with invalid UTF-8: error %v", i+1, err)
		}
	}
}
