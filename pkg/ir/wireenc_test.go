package ir

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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
	}
}

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
	m := &Module{Graphs: []*Graph{{Nodes: []Node{{Name: "x\xff", Op: OpPlaceholder, Target: "x"}}}}}
	if _, err := encodeBinary(m); err == nil {
		t.Error("a node name with invalid UTF-8 encoded without error")
	}
	if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(ToProto(m)); err == nil {
		t.Error("protobuf-go accepted invalid UTF-8: the encoder's error has no reference")
	}
}
