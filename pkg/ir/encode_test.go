package ir

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"regexp"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
)

// protoJSON and protoText are protobuf-go's multi-line encodings, made
// stable: the layout Encode's single-line output re-indented (reindent)
// must have.
func protoJSON(m *Module) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(ToProto(m))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return capIndent(out.Bytes()), nil
}

// capIndent shortens every line's indentation to maxIndent levels, as
// reindent indents (string values never hold a raw newline).
func capIndent(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		n := len(l) - len(bytes.TrimLeft(l, " "))
		if n > 2*maxIndent {
			lines[i] = l[n-2*maxIndent:]
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

func protoText(m *Module) ([]byte, error) {
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(ToProto(m))
	if err != nil {
		return nil, err
	}
	// prototext puts one or two spaces after a field name's colon, chosen
	// by a hash of the running binary; Encode always puts one. A line is an indentation, a field name and its colon, then a
	// value that never starts with a space (strings escape newlines).
	b = detrandSpace.ReplaceAll(b, []byte("$1 "))
	return capIndent(append([]byte(textHeader), b...)), nil
}

var detrandSpace = regexp.MustCompile(`(?m)^( *[a-z_0-9]+:)  `)

// checkTextEncoders compares Encode's JSON and text with protobuf-go's
// multi-line output on m: same bytes, or both failing.
func checkTextEncoders(t *testing.T, name string, m *Module) {
	t.Helper()
	for _, enc := range []Encoding{JSON, Text} {
		oracle := protoJSON
		if enc == Text {
			oracle = protoText
		}
		got, gerr := Encode(m, enc)
		want, werr := oracle(m)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s, %v: errors differ: %v vs protobuf-go's %v", name, enc, gerr, werr)
		}
		if gerr == nil && !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			lo := max(0, i-80)
			t.Fatalf("%s, %v: Encode differs from protobuf-go at byte %d (%d vs %d bytes):\n got: %q\nwant: %q",
				name, enc, i, len(got), len(want), got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
		}
	}
}

func TestTextEncodersMatchProto(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/*/*.p*")
	if len(paths) < 20 {
		t.Fatalf("only %d corpus files", len(paths))
	}
	checkTextEncoders(t, "rich", decodeText(t, richFile))
	for _, p := range paths {
		if m, err := LoadFile(p); err == nil {
			checkTextEncoders(t, p, m)
		}
	}
	// Values the corpus lacks: every escape, special and extreme floats,
	// bytes that are not UTF-8, an unknown enum value, empty messages.
	m := decodeText(t, richFile)
	g := m.Graphs[0]
	n := &g.Nodes[len(g.Nodes)-1]
	weird := "a\"b\\c\n\r\t\b\f\x00\x01\x1f\x7f é \u0080\u009f\u00a0 \u2028 \ufffd 😀 'q' <&>"
	n.Meta = &Meta{StackTrace: weird, Extra: []Annotation{{Key: weird, Value: ""}}}
	for i, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e-7, 1e-6, 1e21, 1e20, 123456789.125, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1} {
		n.Args = append(n.Args, FloatArg(f), ComplexArg(f, -f))
		m.Annotations = append(m.Annotations, Annotation{Key: string(rune('a' + i)), Value: weird[:i]})
	}
	n.Args = append(n.Args, IntArg(math.MinInt64), Arg{Kind: ArgList}, Arg{Kind: ArgDict}, Arg{Kind: ArgStr})
	m.Attributes = append(m.Attributes, Attribute{Name: "w", Data: []byte("\xff\xfe\x80\xc2\x80\xc2\x9f\xc2\xa0ok\x00\"\\\n\xe2\x82")})
	m.Attributes[len(m.Attributes)-1].Meta.QParams = &QParams{Scales: []float64{0, -0.5, math.Inf(1)}, ZeroPoints: []int64{0, -1, math.MaxInt64}}
	g.Nodes[0].Op = OpKind(42) // not a value of the enum: written as a number
	checkTextEncoders(t, "edited", m)

	// Invalid UTF-8 in a string field fails both.
	n.Name = "bad\xff"
	checkTextEncoders(t, "invalid", m)
}

// A writer's error ends the encoding with that error.
func TestEncodeToWriteError(t *testing.T) {
	big, err := LoadFile("../../testdata/models/resnet18.pb")
	if err != nil {
		t.Fatal(err)
	}
	want := errors.New("disk full")
	for _, m := range []*Module{decodeText(t, richFile), big} {
		for _, enc := range []Encoding{JSON, Text, Binary} {
			for _, after := range []int{0, 1, 2} {
				w := &failingWriter{err: want, after: after}
				if err := EncodeTo(w, m, enc); !errors.Is(err, want) && w.writes > after {
					t.Errorf("%v, failing after %d writes: error %v, want %v", enc, after, err, want)
				}
			}
		}
	}
}

// failingWriter fails every write after the first after ones.
type failingWriter struct {
	err           error
	after, writes int
}

func (w *failingWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.writes > w.after {
		return 0, w.err
	}
	return len(b), nil
}

// FuzzTextEncodersMatchProto: whatever decodes encodes, in JSON and in
// text, to protobuf-go's multi-line bytes (or fails as it does).
func FuzzTextEncodersMatchProto(f *testing.F) {
	addCorpusSeeds(f, Binary)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeBinary(data, "fuzz", false)
		if err != nil {
			return
		}
		checkTextEncoders(t, "fuzz", m)
	})
}
