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
	"google.golang.org/protobuf/reflect/protoreflect"
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
//
// The file is marshalled in pieces — the fields before submodules, each
// submodule, the fields after — laid out one after the other as the
// single-line form of the whole file would be, in field order: the
// encoding of a file with many subgraphs is many times its binary size,
// and the whole of it in one buffer, beside the message and the graphs it
// was made from, took a joint's write past its memory bound (150 MiB + 50
// × the input's size). Each submodule is dropped from f once written (f is
// consumed).
func libraryEncode(w io.Writer, f *pb.File, enc Encoding) error {
	n := len(f.GetGraph().GetNodes())
	for _, s := range f.GetSubmodules() {
		n += len(s.GetGraph().GetNodes())
	}
	var marshal func(proto.Message) ([]byte, error)
	switch enc {
	case JSON:
		marshal = protojson.MarshalOptions{UseProtoNames: true}.Marshal
	case Text:
		marshal = prototext.Marshal
	default:
		return fmt.Errorf("unknown encoding")
	}
	subs := f.GetSubmodules()
	subsField := f.ProtoReflect().Descriptor().Fields().ByName("submodules")
	head, tail := &pb.File{}, &pb.File{}
	f.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Number() < subsField.Number():
			head.ProtoReflect().Set(fd, v)
		case fd.Number() > subsField.Number():
			tail.ProtoReflect().Set(fd, v)
		}
		return true
	})
	bw := bufio.NewWriterSize(w, printBuffer)
	if enc == Text {
		bw.WriteString(textHeader)
	}
	r := &reindenter{out: bw, json: enc == JSON}
	h, err := marshal(head)
	if err != nil {
		return err
	}
	t, err := marshal(tail)
	if err != nil {
		return err
	}
	h, t = bytes.TrimSpace(h), bytes.TrimSpace(t)
	if enc == JSON {
		// {"a":…,"graph":{…} ,"submodules":[{…},{…}] ,"attributes":…}
		wrote := len(h) > 2
		if !wrote && len(subs) == 0 && len(t) <= 2 {
			r.write([]byte("{}"))
			r.finish()
			return finishEncode(bw, n)
		}
		r.write(h[:len(h)-1])
		if len(subs) > 0 {
			if wrote {
				r.write([]byte(","))
			}
			r.write([]byte(`"submodules":[`))
			for i, s := range subs {
				if i > 0 {
					r.write([]byte(","))
				}
				b, err := marshal(s)
				if err != nil {
					return err
				}
				r.write(bytes.TrimSpace(b))
				subs[i] = nil
			}
			r.write([]byte("]"))
			wrote = true
		}
		if body := bytes.TrimSpace(t[1 : len(t)-1]); len(body) > 0 {
			if wrote {
				r.write([]byte(","))
			}
			r.write(body)
		}
		r.write([]byte("}"))
	} else {
		// a:… graph:{…} submodules:{…} submodules:{…} attributes:…
		// (a piece starts with the space that separates it: the space
		// before a field is what starts its line)
		r.write(h)
		sep := func(b []byte) []byte {
			if !r.written {
				return b
			}
			return append([]byte(" "), b...)
		}
		for i, s := range subs {
			b, err := marshal(s)
			if err != nil {
				return err
			}
			if b = bytes.TrimSpace(b); len(b) == 0 {
				r.write(sep([]byte("submodules:{}")))
			} else {
				r.write(sep([]byte("submodules:{")))
				r.write(b)
				r.write([]byte("}"))
			}
			subs[i] = nil
		}
		if len(t) > 0 {
			r.write(sep(t))
		}
	}
	r.finish()
	return finishEncode(bw, n)
}

// finishEncode flushes an encoding of n nodes and reports them done.
func finishEncode(bw *bufio.Writer, n int) error {
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

// reindenter writes to out the single-line output of protojson (json
// set) or prototext, given in pieces (write), one member (field) a line,
// indented two spaces per level of nesting up to maxIndent; an empty
// object, array or message stays "{}" or "[]". Whitespace outside strings
// is dropped; strings, whose escapes the libraries write, are copied as
// they are (a piece never ends inside a string or between a bracket and
// its closing one). Errors are bufio.Writer's, reported by its Flush.
type reindenter struct {
	out     *bufio.Writer
	json    bool
	depth   int
	written bool
}

func (r *reindenter) newline() {
	r.out.WriteByte('\n')
	r.out.WriteString(indentation[:2*min(r.depth, maxIndent)])
}

func (r *reindenter) write(src []byte) {
	out := r.out
	r.written = r.written || len(src) > 0
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
			if !r.json && i+1 < len(src) && src[i+1] != ' ' && src[i+1] != '}' {
				r.newline()
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
			r.depth++
			r.newline()
		case '}', ']':
			r.depth--
			r.newline()
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			r.newline()
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
}

// finish ends the output with a newline, if there was any.
func (r *reindenter) finish() {
	if r.written {
		r.out.WriteByte('\n')
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
