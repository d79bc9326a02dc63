package ir

import (
	"os"
	"path/filepath"
	"testing"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/proto"
)

// addCorpusSeeds seeds a fuzz target with every shipped graph re-encoded in enc.
func addCorpusSeeds(f *testing.F, enc Encoding) {
	f.Add([]byte(richFile))
	paths, _ := filepath.Glob("../../testdata/*/*.p*")
	for _, p := range paths {
		m, err := LoadFile(p)
		if err != nil {
			continue
		}
		if data, err := Encode(m, enc); err == nil && len(data) < 1<<20 {
			f.Add(data)
		}
	}
	if data, err := os.ReadFile("../../testdata/hops/cond.pbtxt"); err == nil && enc == Text {
		f.Add(data)
	}
}

// fuzzDecode checks that decoding never panics and that whatever decodes
// survives Verify, printing and an encode/decode round trip.
func fuzzDecode(t *testing.T, data []byte, enc Encoding) {
	m, err := Decode(data, enc, "fuzz")
	if err != nil {
		if _, ok := err.(InputError); !ok {
			t.Fatalf("decode error is not an InputError: %T %v", err, err)
		}
		return
	}
	_ = Verify(m, "fuzz")
	for i := range m.Graphs {
		NewDefUse(m.Graphs[i])
	}
	out, err := Encode(m, Binary)
	if err != nil {
		t.Fatalf("encode after decode: %v", err)
	}
	if _, err := Decode(out, Binary, "fuzz"); err != nil {
		t.Fatalf("re-decode: %v", err)
	}
}

func FuzzDecodeBinary(f *testing.F) {
	addCorpusSeeds(f, Binary)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, data, Binary) })
}

func FuzzDecodeJSON(f *testing.F) {
	addCorpusSeeds(f, JSON)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, data, JSON) })
}

func FuzzDecodeText(f *testing.F) {
	addCorpusSeeds(f, Text)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, data, Text) })
}

// FuzzWireMatchesProto checks the streaming binary decoder against
// protobuf-go's Unmarshal followed by FromProto: both accept or both
// reject, and accepted inputs give equal modules.
func FuzzWireMatchesProto(f *testing.F) {
	addCorpusSeeds(f, Binary)
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ferr := decodeBinary(data, "fuzz", false)

		pf := &pb.File{}
		var slow *Module
		serr := proto.Unmarshal(data, pf)
		if serr == nil {
			slow, serr = FromProto(pf, "fuzz")
		}
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("streaming decoder err=%v, protobuf-go err=%v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		if !proto.Equal(ToProto(fast), ToProto(slow)) {
			t.Fatalf("decoders disagree:\nfast %v\nslow %v", ToProto(fast), ToProto(slow))
		}
	})
}
