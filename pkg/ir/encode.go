package ir

// Encoding a module: the binary encoding by the streaming encoder
// (wireenc.go), JSON and text by protobuf-go's protojson and prototext.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

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
	var b bytes.Buffer
	if err := libraryEncode(&b, ToProto(m), enc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// EncodeTo writes m to w in the given encoding. An error of w is a
// *WriteError.
func EncodeTo(w io.Writer, m *Module, enc Encoding) error {
	if enc == Binary {
		b, err := encodeBinary(m)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return &WriteError{Err: err}
		}
		return nil
	}
	return libraryEncode(w, ToProto(m), enc)
}

// libraryEncode writes f to w in JSON (protojson, proto field names) or
// text (prototext, after textHeader). An error of w is a *WriteError.
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
func libraryEncode(w io.Writer, f *pb.File, enc Encoding) error {
	// Counted first: past Marshal the message is no longer referenced, and
	// the collector can take it while its encoding is laid out.
	n := len(f.GetGraph().GetNodes())
	for _, s := range f.GetSubmodules() {
		n += len(s.GetGraph().GetNodes())
	}
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
		return fmt.Errorf("unknown encoding")
	}
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, printBuffer)
	if enc == Text {
		bw.WriteString(textHeader)
	}
	reindent(bw, raw, enc == JSON)
	if err := bw.Flush(); err != nil {
		return &WriteError{Err: err}
	}
	nodesDone(n)
	return nil
}

// maxIndent is the deepest nesting that reindent indents further.
const maxIndent = 32

// indentation is maxIndent levels of two spaces.
var indentation = strings.Repeat("  ", maxIndent)

// reindent writes to out src, the single-line output of protojson (json
// set) or prototext, one member (field) a line, indented two spaces per
// level of nesting up to maxIndent; an empty object, array or message
// stays "{}" or "[]". Whitespace outside strings is dropped; strings,
// whose escapes the libraries write, are copied as they are. Errors are
// bufio.Writer's, reported by its Flush.
func reindent(out *bufio.Writer, src []byte, json bool) {
	depth := 0
	newline := func() {
		out.WriteByte('\n')
		out.WriteString(indentation[:2*min(depth, maxIndent)])
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
			out.Write(src[i:min(j+1, len(src))])
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
				out.WriteByte(c)
				out.WriteByte(src[j])
				i = j
				break
			}
			out.WriteByte(c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			newline()
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
	if len(src) > 0 {
		out.WriteByte('\n')
	}
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
// messages. When root's references store their own names (sourceRefs is
// nil) they are converted as they are; otherwise the streaming binary
// encoder, which renames them as root.Ref says, writes the file and
// protobuf-go decodes it.
func sourceFile(m *Module, root NodeSource, vals *ValueMemo) (*pb.File, error) {
	if sourceRefs(root) == nil {
		return toProto(m, root), nil
	}
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
