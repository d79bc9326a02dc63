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
// The file is marshalled in pieces — each field of the file, of each
// submodule and of each graph by itself, each node whole — and the pieces
// laid out one after the other as the single-line form of the whole file
// would be, in field order: the encoding of a large file is many times its
// binary size, and the whole of it in one buffer, beside the message and
// the graphs it was made from, took a joint's write past its memory bound
// (150 MiB + 50 × the input's size). Each node and submodule is dropped
// from f once written (f is consumed).
func libraryEncode(w io.Writer, f *pb.File, enc Encoding) error {
	n := len(f.GetGraph().GetNodes())
	for _, s := range f.GetSubmodules() {
		n += len(s.GetGraph().GetNodes())
	}
	p := &pieceWriter{json: enc == JSON}
	switch enc {
	case JSON:
		p.marshal = protojson.MarshalOptions{UseProtoNames: true}.Marshal
	case Text:
		p.marshal = prototext.Marshal
	default:
		return fmt.Errorf("unknown encoding")
	}
	bw := bufio.NewWriterSize(w, printBuffer)
	if enc == Text {
		bw.WriteString(textHeader)
	}
	p.r = &reindenter{out: bw, json: p.json}
	var err error
	if p.json {
		err = p.object(f.ProtoReflect())
	} else {
		err = p.fields(f.ProtoReflect(), "")
	}
	if err != nil {
		return err
	}
	p.r.finish()
	return finishEncode(bw, n)
}

// pieceWriter lays out a file's encoding piece by piece (libraryEncode).
type pieceWriter struct {
	r       *reindenter
	json    bool
	marshal func(proto.Message) ([]byte, error)
}

// sep is what separates two fields, or two elements of a list: JSON's
// comma, the single-line text form's space.
func (p *pieceWriter) sep() string {
	if p.json {
		return ","
	}
	return " "
}

// descend reports whether a field's messages are written field by field
// (the file's graphs and submodules), not marshalled whole.
func descend(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.MessageKind {
		return false
	}
	switch fd.Message().FullName() {
	case "hopctl.v1.Graph", "hopctl.v1.Submodule":
		return true
	}
	return false
}

// object writes m as a JSON object.
func (p *pieceWriter) object(m protoreflect.Message) error {
	if !populated(m) {
		p.r.write([]byte("{}"))
		return nil
	}
	p.r.write([]byte("{"))
	if err := p.fields(m, ""); err != nil {
		return err
	}
	p.r.write([]byte("}"))
	return nil
}

// fields writes m's populated fields in the libraries' order (the order of
// declaration), each led by lead or, after the first, by the separator.
func (p *pieceWriter) fields(m protoreflect.Message, lead string) error {
	fds := m.Descriptor().Fields()
	first := true
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if !m.Has(fd) {
			continue
		}
		sep := lead
		if !first {
			sep = p.sep()
		}
		first = false
		name := string(fd.Name())
		switch {
		case descend(fd) || fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			if err := p.messages(m, fd, sep, name); err != nil {
				return err
			}
		default:
			one := m.Type().New()
			one.Set(fd, m.Get(fd))
			b, err := p.marshal(one.Interface())
			if err != nil {
				return err
			}
			b = bytes.TrimSpace(b)
			if p.json {
				b = b[1 : len(b)-1] // the field without its object's braces
			}
			p.r.write(append([]byte(sep), b...))
		}
	}
	return nil
}

// messages writes a message field (a list of them, or one): elements of a
// graph or submodule field field by field, others marshalled whole, each
// dropped from m once written.
func (p *pieceWriter) messages(m protoreflect.Message, fd protoreflect.FieldDescriptor, sep, name string) error {
	one := func(e protoreflect.Message, lead string) error {
		if descend(fd) {
			if p.json {
				p.r.write([]byte(lead))
				return p.object(e)
			}
			if !populated(e) {
				p.r.write([]byte(lead + name + ":{}"))
				return nil
			}
			p.r.write([]byte(lead + name + ":{"))
			if err := p.fields(e, ""); err != nil {
				return err
			}
			p.r.write([]byte("}"))
			return nil
		}
		b, err := p.marshal(e.Interface())
		if err != nil {
			return err
		}
		b = bytes.TrimSpace(b)
		if p.json {
			p.r.write(append([]byte(lead), b...))
		} else if len(b) == 0 {
			p.r.write([]byte(lead + name + ":{}"))
		} else {
			p.r.write([]byte(lead + name + ":{"))
			p.r.write(b)
			p.r.write([]byte("}"))
		}
		return nil
	}
	if !fd.IsList() {
		lead := sep
		if p.json {
			lead = sep + `"` + name + `":`
		}
		return one(m.Get(fd).Message(), lead)
	}
	l := m.Get(fd).List()
	if p.json {
		p.r.write([]byte(sep + `"` + name + `":[`))
	}
	drop := dropper(m, fd)
	for j := 0; j < l.Len(); j++ {
		lead := sep
		if p.json {
			lead = "" // inside [ ]
		}
		if j > 0 {
			lead = p.sep()
		}
		if err := one(l.Get(j).Message(), lead); err != nil {
			return err
		}
		drop(j)
	}
	if p.json {
		p.r.write([]byte("]"))
	}
	return nil
}

// dropper returns a function that lets element j of the big lists (a
// graph's nodes, a file's submodules) go once written.
func dropper(m protoreflect.Message, fd protoreflect.FieldDescriptor) func(int) {
	switch x := m.Interface().(type) {
	case *pb.Graph:
		if fd.Name() == "nodes" {
			return func(j int) { x.Nodes[j] = nil }
		}
	case *pb.File:
		if fd.Name() == "submodules" {
			return func(j int) { x.Submodules[j] = nil }
		}
	}
	return func(int) {}
}

// populated reports whether m has a field set.
func populated(m protoreflect.Message) bool {
	has := false
	m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
		has = true
		return false
	})
	return has
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
