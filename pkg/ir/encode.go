package ir

// Encoding a module: the binary encoding by the streaming encoder
// (wireenc.go), JSON and text by protobuf-go's protojson and prototext.

import (
	"bytes"
	"fmt"
	"io"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// textHeader starts every text-encoded file.
const textHeader = "# proto-file: proto/hopctl/v1/graph.proto\n# proto-message: hopctl.v1.File\n"

// Encode serialises the module. The output is deterministic in all three
// encodings (libraryEncode says how JSON and text are made so).
func Encode(m *Module, enc Encoding) ([]byte, error) {
	if enc == Binary {
		return encodeBinary(m)
	}
	return libraryEncode(ToProto(m), enc)
}

// EncodeTo writes m to w in the given encoding. An error of w is a
// *WriteError.
func EncodeTo(w io.Writer, m *Module, enc Encoding) error {
	b, err := Encode(m, enc)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return &WriteError{Err: err}
	}
	return nil
}

// libraryEncode is f in JSON (protojson, proto field names) or text
// (prototext, after textHeader).
//
// Both libraries vary their output's whitespace on purpose, by a hash of
// the running binary, so that nobody depends on its bytes; hopctl's output
// must not change from build to build (goldens, diffs of converted files).
// So each is asked for its single-line form, whose tokens are stable, and
// reindent lays the tokens out again: for JSON exactly as encoding/json's
// json.Indent(dst, src, "", "  ") does, for text as prototext's Multiline
// with Indent "  " does (with one space after each field name's colon),
// and, in both, with no line indented deeper than maxIndent levels, so
// that the output of a deeply nested file grows with its size, not with
// the square of its depth. Both decoders ignore the whitespace.
func libraryEncode(f *pb.File, enc Encoding) ([]byte, error) {
	var (
		raw []byte
		err error
	)
	switch enc {
	case JSON:
		raw, err = protojson.MarshalOptions{UseProtoNames: true}.Marshal(f)
	case Text:
		raw, err = prototext.Marshal(f)
	default:
		return nil, fmt.Errorf("unknown encoding")
	}
	if err != nil {
		return nil, err
	}
	var out []byte
	if enc == Text {
		out = append(out, textHeader...)
	}
	out = reindent(out, raw, enc == JSON)
	n := len(f.GetGraph().GetNodes())
	for _, s := range f.GetSubmodules() {
		n += len(s.GetGraph().GetNodes())
	}
	nodesDone(n)
	return out, nil
}

// maxIndent is the deepest nesting that reindent indents further.
const maxIndent = 32

// reindent appends to out src, the single-line output of protojson (json
// set) or prototext, one member (field) a line, indented two spaces per
// level of nesting up to maxIndent; an empty object, array or message
// stays "{}" or "[]". Whitespace outside strings is dropped; strings,
// whose escapes the libraries write, are copied as they are.
func reindent(out, src []byte, json bool) []byte {
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for range min(depth, maxIndent) {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			out = append(out, src[i:min(j+1, len(src))]...)
			i = j
		case ' ', '\t', '\n', '\r':
			// In prototext's single-line form a space separates fields.
			if !json && i+1 < len(src) && src[i+1] != ' ' && src[i+1] != '}' {
				newline()
			}
		case '{', '[':
			j := i + 1
			for j < len(src) && src[j] == ' ' {
				j++
			}
			if j < len(src) && (src[j] == '}' || src[j] == ']') {
				out = append(out, c, src[j])
				i = j
				break
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	if len(src) > 0 {
		out = append(out, '\n')
	}
	return out
}

// EncodeSource is Encode with the root graph's nodes read from root
// (EncodeSourceTo).
func EncodeSource(m *Module, root NodeSource, enc Encoding) ([]byte, error) {
	var b bytes.Buffer
	if err := EncodeSourceTo(&b, m, root, enc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sourceFile is m with root's nodes as its root graph, as protobuf
// messages: the streaming binary encoder's output (which renames the
// references as root.Ref says), decoded by protobuf-go.
func sourceFile(m *Module, root NodeSource, vals *ValueMemo) (*pb.File, error) {
	var b bytes.Buffer
	if err := EncodeSourceToMemo(&b, m, root, Binary, vals); err != nil {
		return nil, err
	}
	f := &pb.File{}
	if err := proto.Unmarshal(b.Bytes(), f); err != nil {
		return nil, err
	}
	return f, nil
}
