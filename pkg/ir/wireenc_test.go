package ir

import (
	"bytes"
	"path/filepath"
	"testing"

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
