package ir

import (
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/hopctl/hopctl/proto/hopctlpb"
)

// Streaming encoders for the JSON and text encodings: they write the IR
// straight to an io.Writer, without building the generated protobuf
// objects (which took gigabytes at 1M nodes), and give exactly the bytes
// of the protobuf-go path they replace:
//
//   - JSON: protojson.MarshalOptions{UseProtoNames: true} of ToProto(m),
//     re-indented by json.Indent with two spaces, and a final newline;
//   - text: textHeader, then prototext.MarshalOptions{Multiline: true,
//     Indent: "  "} of ToProto(m), with one space after each field name's
//     colon (prototext adds a second one at random, seeded by the binary's
//     hash, to keep programs from depending on its output: this encoder's
//     output does not change from build to build).
//
// TestTextEncodersMatchProto and FuzzTextEncodersMatchProto check both.
// Fields are written in declaration order (which in graph.proto is
// field-number order) with the same presence rules as the binary encoder
// (wireenc.go): proto3 scalars left out when zero, messages, oneof members
// and explicit-presence fields written when set.

// textHeader starts every text-encoded file.
const textHeader = "# proto-file: proto/hopctl/v1/graph.proto\n# proto-message: hopctl.v1.File\n"

// EncodeTo writes m to w in the given encoding. The JSON and text
// encodings are streamed (w sees the output in 64 KiB pieces, and memory
// does not grow with the output); the binary one is built in memory first,
// as its length prefixes need.
func EncodeTo(w io.Writer, m *Module, enc Encoding) error {
	if enc == Binary {
		b, err := encodeBinary(m)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if enc != JSON && enc != Text {
		return fmt.Errorf("unknown encoding")
	}
	return encodeText(w, m, nil, enc)
}

// encodeText is EncodeTo for JSON and text, with the root graph's nodes
// read from root when it is set (EncodeSourceTo).
func encodeText(w io.Writer, m *Module, root NodeSource, enc Encoding) error {
	e := &textEncoder{w: w, json: enc == JSON, buf: make([]byte, 0, textChunk+4096), root: root}
	defer e.stopWriter()
	if !e.json {
		e.buf = append(e.buf, textHeader...)
	}
	e.file(m)
	if e.json {
		e.buf = append(e.buf, '\n')
	}
	e.flush()
	e.stopWriter()
	return e.err
}

// textChunk is how much output textEncoder collects before writing it.
const textChunk = 256 << 10

// textEncoder writes protojson- or prototext-shaped output. Messages are
// opened lazily: a message's opening line is finished ("{" then a newline,
// or "{}" when the message stays empty) when its first field comes, or when
// it closes.
type textEncoder struct {
	w    io.Writer
	json bool
	buf  []byte
	err  error
	// depth is the nesting of open objects and arrays (JSON) or messages
	// (text); first is set right after one opened, before its first member.
	depth int
	first bool
	// Output larger than one chunk is written by a goroutine of its own
	// (startWriter), so that encoding and the write system calls (copying
	// into the page cache: about as long as encoding) overlap on two
	// cores. full carries chunks to it, free brings them back, and done
	// reports its write error when full is closed.
	full, free chan []byte
	done       chan error
	// werr is a write error of w; err the first error of any kind.
	werr error
	// root, when set, supplies the root graph's nodes (EncodeSourceTo);
	// refs is set while they are written.
	root, refs NodeSource
}

func (e *textEncoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// flush hands the collected output to the writer goroutine, which the
// first flush of a large output starts; the last flush (from EncodeTo),
// of an output that fits in one chunk, writes to w itself.
func (e *textEncoder) flush() {
	if len(e.buf) == 0 || e.werr != nil {
		e.buf = e.buf[:0]
		return
	}
	if e.full == nil && len(e.buf) < textChunk {
		if _, err := e.w.Write(e.buf); err != nil {
			e.werr = err
			e.fail(&WriteError{Err: err})
		}
		e.buf = e.buf[:0]
		return
	}
	if e.full == nil {
		e.startWriter()
	}
	select {
	case err := <-e.done: // the writer failed and stopped
		e.werr, e.done = err, nil
		e.fail(&WriteError{Err: err})
		e.buf = e.buf[:0]
		return
	case e.full <- e.buf:
	}
	select {
	case e.buf = <-e.free:
	default:
		e.buf = make([]byte, 0, textChunk+4096)
	}
}

func (e *textEncoder) startWriter() {
	const chunks = 3 // in flight, besides the one being filled
	e.full, e.free, e.done = make(chan []byte, chunks), make(chan []byte, chunks+1), make(chan error, 1)
	go func(w io.Writer, full <-chan []byte, free chan<- []byte, done chan<- error) {
		for b := range full {
			if _, err := w.Write(b); err != nil {
				done <- err
				for range full { // let the encoder finish
				}
				return
			}
			free <- b[:0]
		}
		done <- nil
	}(e.w, e.full, e.free, e.done)
}

// stopWriter waits for the writer goroutine to write what it was given.
func (e *textEncoder) stopWriter() {
	if e.full == nil {
		return
	}
	close(e.full)
	if e.done != nil {
		if err := <-e.done; err != nil && e.werr == nil {
			e.werr = err
			e.fail(&WriteError{Err: err})
		}
	}
	e.full = nil
}

const spaces = "                                                                " // 64

// maxTextIndent is the deepest nesting that is indented further: lines
// nested deeper keep this indentation. Whitespace is insignificant in both
// encodings, and without the cap the output of a deeply nested file grows
// with the square of its depth (a valid 34 KB binary file nesting an
// output tuple 4,990 deep made a 199 MB .pbtxt and a 449 MB .json); with
// it each line costs at most 2·maxTextIndent bytes more than its content.
// The bytes equal protobuf-go's for files nested less deep.
const maxTextIndent = 32

func (e *textEncoder) indent(depth int) {
	for n := 2 * min(depth, maxTextIndent); n > 0; n -= len(spaces) {
		e.buf = append(e.buf, spaces[:min(n, len(spaces))]...)
	}
}

// name starts a member: JSON `"name": `, text `name: ` (both on a new,
// indented line). For JSON array elements name is "".
func (e *textEncoder) name(name string) {
	if len(e.buf) >= textChunk {
		e.flush()
	}
	if e.json {
		if !e.first && e.depth > 0 {
			e.buf = append(e.buf, ',')
		}
		if e.depth > 0 {
			e.buf = append(e.buf, '\n')
		}
		e.indent(e.depth)
		if name != "" {
			e.buf = append(e.buf, '"')
			e.buf = append(e.buf, name...)
			e.buf = append(e.buf, '"', ':', ' ')
		}
	} else {
		if e.first {
			e.buf = append(e.buf, '\n')
		}
		e.indent(e.depth)
		e.buf = append(e.buf, name...)
		e.buf = append(e.buf, ':', ' ')
	}
	e.first = false
}

// endScalar ends a member whose value was just written.
func (e *textEncoder) endScalar() {
	if !e.json {
		e.buf = append(e.buf, '\n')
	}
}

// open starts a message value (JSON object or text message) after name.
func (e *textEncoder) open() {
	e.buf = append(e.buf, '{')
	e.depth++
	e.first = true
}

// close ends the innermost message.
func (e *textEncoder) close() {
	e.depth--
	switch {
	case e.first:
		e.buf = append(e.buf, '}')
	case e.json:
		e.buf = append(e.buf, '\n')
		e.indent(e.depth)
		e.buf = append(e.buf, '}')
	default:
		e.indent(e.depth)
		e.buf = append(e.buf, '}')
	}
	e.first = false
	e.endScalar()
}

// msg starts a singular message field.
func (e *textEncoder) msg(name string) {
	e.name(name)
	e.open()
}

// list starts a repeated field of n > 0 elements; elem starts each
// element and endList ends the field. In text each element repeats the
// field name; in JSON they form an array.
func (e *textEncoder) list(name string) {
	if e.json {
		e.name(name)
		e.buf = append(e.buf, '[')
		e.depth++
		e.first = true
	}
}

func (e *textEncoder) elem(name string) {
	if e.json {
		e.name("")
	} else {
		e.name(name)
	}
}

func (e *textEncoder) endList() {
	if e.json {
		e.depth--
		e.buf = append(e.buf, '\n')
		e.indent(e.depth)
		e.buf = append(e.buf, ']')
		e.first = false
	}
}

// elemMsg starts a message element of a repeated field.
func (e *textEncoder) elemMsg(name string) {
	e.elem(name)
	e.open()
}

func (e *textEncoder) str(name, s string) {
	if s != "" {
		e.strAlways(name, s)
	}
}

func (e *textEncoder) strAlways(name, s string) {
	e.name(name)
	e.quoted(s)
	e.endScalar()
}

// quoted writes a string value, escaped as protojson or prototext does.
func (e *textEncoder) quoted(s string) {
	if !utf8.ValidString(s) {
		e.fail(errInvalidUTF8)
	}
	if e.json {
		e.buf = appendJSONString(e.buf, s)
	} else {
		e.buf = appendTextString(e.buf, s)
	}
}

// int64Always writes an int64 field: a quoted decimal in JSON.
func (e *textEncoder) int64Always(name string, v int64) {
	e.name(name)
	if e.json {
		e.buf = append(e.buf, '"')
		e.buf = strconv.AppendInt(e.buf, v, 10)
		e.buf = append(e.buf, '"')
	} else {
		e.buf = strconv.AppendInt(e.buf, v, 10)
	}
	e.endScalar()
}

func (e *textEncoder) int64(name string, v int64) {
	if v != 0 {
		e.int64Always(name, v)
	}
}

func (e *textEncoder) uint32(name string, v uint32) {
	if v != 0 {
		e.name(name)
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
		e.endScalar()
	}
}

func (e *textEncoder) boolAlways(name string, v bool) {
	e.name(name)
	e.buf = strconv.AppendBool(e.buf, v)
	e.endScalar()
}

func (e *textEncoder) boolean(name string, v bool) {
	if v {
		e.boolAlways(name, v)
	}
}

func (e *textEncoder) double(name string, v float64) {
	if v != 0 || math.Signbit(v) {
		e.doubleAlways(name, v)
	}
}

func (e *textEncoder) doubleAlways(name string, v float64) {
	e.name(name)
	e.doubleValue(v)
	e.endScalar()
}

func (e *textEncoder) doubleValue(v float64) {
	if e.json {
		e.buf = appendJSONFloat(e.buf, v)
	} else {
		e.buf = appendTextFloat(e.buf, v)
	}
}

// enum writes an enum field (left out when 0): its value's name, or its
// number when the enum has no such value.
func (e *textEncoder) enum(name string, v int32, names []string) {
	if v == 0 {
		return
	}
	e.name(name)
	switch {
	case int(v) < len(names) && names[v] != "" && e.json:
		e.buf = append(e.buf, '"')
		e.buf = append(e.buf, names[v]...)
		e.buf = append(e.buf, '"')
	case int(v) < len(names) && names[v] != "":
		e.buf = append(e.buf, names[v]...)
	default:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	}
	e.endScalar()
}

func (e *textEncoder) empty(name string) {
	e.msg(name)
	e.close()
}

// enumNames lists an enum's value names by number.
func enumNames(m map[int32]string) []string {
	n := 0
	for k := range m {
		n = max(n, int(k)+1)
	}
	names := make([]string, n)
	for k, v := range m {
		if k >= 0 {
			names[k] = v
		}
	}
	return names
}

var (
	protoOpKindNames     = sync.OnceValue(func() []string { return enumNames(hopctlpb.OpKind_name) })
	symKindNames         = sync.OnceValue(func() []string { return enumNames(hopctlpb.SymKind_name) })
	inputKindProtoNames  = sync.OnceValue(func() []string { return enumNames(hopctlpb.InputKind_name) })
	outputKindProtoNames = sync.OnceValue(func() []string { return enumNames(hopctlpb.OutputKind_name) })
)

func (e *textEncoder) file(m *Module) {
	major, minor := m.FormatMajor, m.FormatMinor
	if major == 0 {
		major, minor = FormatMajor, FormatMinor
	}
	if e.json {
		e.buf = append(e.buf, '{')
		e.depth, e.first = 1, true
	}
	e.msg("format_version")
	e.uint32("major", uint32(major))
	e.uint32("minor", uint32(minor))
	e.close()
	e.str("producer", m.Producer)
	e.str("torch_version", m.TorchVersion)
	if e.root != nil {
		e.msg("graph")
		e.refs = e.root
		e.nodes(e.root)
		e.refs = nil
		e.close()
	} else if len(m.Graphs) > 0 {
		e.msg("graph")
		e.graph(m.Graphs[0])
		e.close()
	}
	if len(m.Graphs) > 1 {
		e.list("submodules")
		for _, g := range m.Graphs[1:] {
			e.elemMsg("submodules")
			e.str("qualified_name", g.Name)
			e.msg("graph")
			e.graph(g)
			e.close()
			e.close()
		}
		e.endList()
	}
	if len(m.Attributes) > 0 {
		e.list("attributes")
		for i := range m.Attributes {
			a := &m.Attributes[i]
			e.elemMsg("attributes")
			e.str("qualified_name", a.Name)
			if a.Const == nil { // a constant has no tensor metadata
				e.msg("meta")
				e.tensor(&a.Meta)
				e.close()
			}
			if len(a.Data) > 0 {
				e.name("data")
				if e.json {
					e.buf = append(e.buf, '"')
					e.buf = base64.StdEncoding.AppendEncode(e.buf, a.Data)
					e.buf = append(e.buf, '"')
				} else {
					e.buf = appendTextString(e.buf, string(a.Data))
				}
				e.endScalar()
			}
			if a.Const != nil {
				e.msg("constant")
				e.arg(a.Const)
				e.close()
			}
			e.close()
		}
		e.endList()
	}
	if len(m.Schemas) > 0 {
		e.list("schemas")
		for _, sc := range m.Schemas {
			e.pair("schemas", "name", sc.Name, "schema", sc.Schema)
		}
		e.endList()
	}
	if len(m.Annotations) > 0 {
		e.list("annotations")
		for _, a := range m.Annotations {
			e.pair("annotations", "key", a.Key, "value", a.Value)
		}
		e.endList()
	}
	if m.HasGradEnabled {
		e.boolAlways("grad_enabled", m.GradEnabled)
	}
	if len(m.HOPClasses) > 0 {
		e.list("hop_classes")
		for _, c := range m.HOPClasses {
			e.elemMsg("hop_classes")
			e.str("target", c.Target)
			if len(c.Classes) > 0 {
				e.list("classes")
				for _, cl := range c.Classes {
					e.elem("classes")
					e.quoted(cl)
					e.endScalar()
				}
				e.endList()
			}
			e.close()
		}
		e.endList()
	}
	if sig := m.Signature; sig != nil {
		e.msg("signature")
		if len(sig.Inputs) > 0 {
			e.list("inputs")
			for _, in := range sig.Inputs {
				e.elemMsg("inputs")
				e.enum("kind", int32(in.Kind), inputKindProtoNames())
				e.str("name", in.Name)
				e.str("target", in.Target)
				e.boolean("persistent", in.Persistent)
				e.close()
			}
			e.endList()
		}
		if len(sig.Outputs) > 0 {
			e.list("outputs")
			for _, out := range sig.Outputs {
				e.elemMsg("outputs")
				e.enum("kind", int32(out.Kind), outputKindProtoNames())
				e.str("name", out.Name)
				e.str("target", out.Target)
				e.close()
			}
			e.endList()
		}
		e.close()
	}
	if e.json {
		e.depth--
		e.buf = append(e.buf, '\n', '}')
	}
}

func (e *textEncoder) pair(field, n1, v1, n2, v2 string) {
	e.elemMsg(field)
	e.str(n1, v1)
	e.str(n2, v2)
	e.close()
}

func (e *textEncoder) graph(g *Graph) { e.nodes(graphNodes{g}) }

func (e *textEncoder) nodes(src NodeSource) {
	if src.Len() == 0 {
		return
	}
	ops := protoOpKindNames()
	e.list("nodes")
	for i := range src.Len() {
		n := src.Node(i)
		e.elemMsg("nodes")
		e.str("name", n.Name)
		e.enum("op", int32(n.Op), ops)
		e.str("target", n.Target)
		if len(n.Args) > 0 {
			e.list("args")
			for j := range n.Args {
				e.elemMsg("args")
				e.arg(&n.Args[j])
				e.close()
			}
			e.endList()
		}
		if len(n.Kwargs) > 0 {
			e.list("kwargs")
			for j := range n.Kwargs {
				e.kwarg("kwargs", n.Kwargs[j].Name, &n.Kwargs[j].Value)
			}
			e.endList()
		}
		if n.Val != nil {
			e.msg("val")
			e.value(n.Val)
			e.close()
		}
		if n.Meta != nil {
			e.msg("meta")
			e.meta(n.Meta)
			e.close()
		}
		e.close()
		if e.err != nil {
			return
		}
		if i&progressBatch == progressBatch {
			nodesDone(progressBatch + 1)
		}
	}
	e.endList()
}

func (e *textEncoder) kwarg(field, name string, value *Arg) {
	e.elemMsg(field)
	e.str("name", name)
	e.msg("value")
	e.arg(value)
	e.close()
	e.close()
}

func (e *textEncoder) arg(a *Arg) {
	switch a.Kind {
	case ArgNode:
		if e.refs != nil {
			_, name := e.refs.Ref(a)
			e.strAlways("node", name)
			break
		}
		e.strAlways("node", a.S)
	case ArgInt:
		e.int64Always("int", a.Int())
	case ArgFloat:
		e.doubleAlways("float", a.Float())
	case ArgBool:
		e.boolAlways("bool", a.B)
	case ArgStr:
		e.strAlways("str", a.S)
	case ArgList, ArgTuple:
		field := "list"
		if a.Kind == ArgTuple {
			field = "tuple"
		}
		e.items(field, len(a.Elems()), func(i int) { e.arg(&a.Elems()[i]) })
	case ArgDtype:
		e.strAlways("dtype", a.S)
	case ArgDevice:
		e.strAlways("device", a.S)
	case ArgLayout:
		e.strAlways("layout", a.S)
	case ArgMemoryFormat:
		e.strAlways("memory_format", a.S)
	case ArgSym:
		e.msg("sym")
		e.sym(a.Sym())
		e.close()
	case ArgOp:
		e.strAlways("op", a.S)
	case ArgDict:
		e.msg("dict")
		if len(a.Elems()) > 0 {
			e.list("entries")
			for i := range a.Elems() {
				e.kwarg("entries", a.Keys()[i], &a.Elems()[i])
			}
			e.endList()
		}
		e.close()
	case ArgComplex:
		e.msg("complex")
		e.double("real", a.Float())
		e.double("imag", a.Imag())
		e.close()
	case ArgSlice:
		e.msg("slice")
		for i, field := range [3]string{"start", "stop", "step"} {
			e.msg(field)
			if i < len(a.Elems()) {
				e.arg(&a.Elems()[i])
			} else {
				e.empty("none")
			}
			e.close()
		}
		e.close()
	case ArgEllipsis:
		e.empty("ellipsis")
	case ArgConstant:
		e.msg("constant")
		e.str("type", a.S)
		if len(a.Elems()) > 0 {
			e.list("fields")
			for i := range a.Elems() {
				e.kwarg("fields", a.Keys()[i], &a.Elems()[i])
			}
			e.endList()
		}
		e.close()
	default:
		e.empty("none")
	}
}

// items writes a list or tuple field (ArgList, ValueList): a message whose
// repeated "items" field holds n elements, each written by item.
func (e *textEncoder) items(field string, n int, item func(i int)) {
	e.msg(field)
	if n > 0 {
		e.list("items")
		for i := range n {
			e.elemMsg("items")
			item(i)
			e.close()
		}
		e.endList()
	}
	e.close()
}

func (e *textEncoder) sym(s *SymExpr) {
	if s == nil {
		return
	}
	e.enum("kind", int32(s.Kind), symKindNames())
	e.str("expr", s.Expr)
	if s.HasHint {
		e.strAlways("hint", s.Hint)
	}
}

func (e *textEncoder) dim(d Dim) {
	if d.Expr != "" {
		e.strAlways("expr", d.Expr)
	} else {
		e.int64Always("value", d.Val)
	}
}

func (e *textEncoder) dims(field string, ds []Dim) {
	if len(ds) == 0 {
		return
	}
	e.list(field)
	for _, d := range ds {
		e.elemMsg(field)
		e.dim(d)
		e.close()
	}
	e.endList()
}

func (e *textEncoder) tensor(t *TensorMeta) {
	e.dims("shape", t.Shape)
	e.dims("stride", t.Stride)
	e.msg("storage_offset")
	e.dim(t.StorageOffset)
	e.close()
	e.str("dtype", t.Dtype)
	e.str("device", t.Device)
	e.boolean("requires_grad", t.RequiresGrad)
	e.str("memory_format", t.MemoryFormat)
	e.boolean("is_quantized", t.IsQuantized)
	if q := t.QParams; q != nil {
		e.msg("qparams")
		e.str("qscheme", q.QScheme)
		e.double("scale", q.Scale)
		e.int64("zero_point", q.ZeroPoint)
		if len(q.Scales) > 0 {
			e.list("scales")
			for _, v := range q.Scales {
				e.elem("scales")
				e.doubleValue(v)
				e.endScalar()
			}
			e.endList()
		}
		if len(q.ZeroPoints) > 0 {
			e.list("zero_points")
			for _, v := range q.ZeroPoints {
				e.elem("zero_points")
				if e.json {
					e.buf = append(e.buf, '"')
					e.buf = strconv.AppendInt(e.buf, v, 10)
					e.buf = append(e.buf, '"')
				} else {
					e.buf = strconv.AppendInt(e.buf, v, 10)
				}
				e.endScalar()
			}
			e.endList()
		}
		e.int64("axis", q.Axis)
		e.close()
	}
	if t.HasStorageID {
		e.int64Always("storage_id", t.StorageID)
	}
	e.str("layout", t.Layout)
}

func (e *textEncoder) value(v *Value) {
	switch v.Kind {
	case ValTensor:
		e.msg("tensor")
		if t := v.Tensor; t != nil {
			e.tensor(t)
		} else {
			e.tensor(&TensorMeta{})
		}
		e.close()
	case ValSym:
		e.msg("sym")
		e.sym(v.Sym)
		e.close()
	case ValList, ValTuple:
		field := "list"
		if v.Kind == ValTuple {
			field = "tuple"
		}
		e.items(field, len(v.Elems), func(i int) { e.value(&v.Elems[i]) })
	case ValNone:
		e.empty("none")
	case ValInt:
		e.int64Always("int", v.I)
	case ValFloat:
		e.doubleAlways("float", v.F)
	case ValBool:
		e.boolAlways("bool", v.B)
	case ValOpaque:
		e.strAlways("opaque", v.S)
	}
}

func (e *textEncoder) stack(field string, es []ModuleStackEntry) {
	if len(es) == 0 {
		return
	}
	e.list(field)
	for _, x := range es {
		e.elemMsg(field)
		e.str("key", x.Key)
		e.str("path", x.Path)
		e.str("type", x.Type)
		e.close()
	}
	e.endList()
}

func (e *textEncoder) meta(m *Meta) {
	e.str("stack_trace", m.StackTrace)
	e.stack("nn_module_stack", m.NNModuleStack)
	e.stack("source_fn_stack", m.SourceFnStack)
	if m.HasSeqNr {
		e.int64Always("seq_nr", m.SeqNr)
	}
	e.str("fwd_source", m.FwdSource)
	if len(m.Extra) > 0 {
		e.list("extra")
		for _, a := range m.Extra {
			e.pair("extra", "key", a.Key, "value", a.Value)
		}
		e.endList()
	}
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as protojson writes it: '"', '\\'
// and control characters escaped (\b \f \n \r \t, else \u00XX), all else
// as is. s is valid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\')
		switch c {
		case '"', '\\':
			b = append(b, c)
		case '\b':
			b = append(b, 'b')
		case '\f':
			b = append(b, 'f')
		case '\n':
			b = append(b, 'n')
		case '\r':
			b = append(b, 'r')
		case '\t':
			b = append(b, 't')
		default:
			b = append(b, 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat appends v as protojson writes a double: NaN and the
// infinities as quoted names, else encoding/json's shortest form ('e' for
// magnitudes below 1e-6 or from 1e21, with a two-digit negative exponent
// shortened: 1e-07 → 1e-7).
func appendJSONFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendTextFloat appends v as prototext writes a double.
func appendTextFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendTextString appends s quoted as prototext writes a string or bytes
// field: '"', '\\', control characters and DEL escaped (\n \r \t, else
// \xXX), the C1 controls U+0080–U+009F as \u00XX, a byte that does not
// start a valid UTF-8 sequence (bytes fields only) as \xXX, all else as is.
func appendTextString(b []byte, s string) []byte {
	b = append(b, '"')
	for len(s) > 0 {
		c := s[0]
		if c >= ' ' && c < utf8.RuneSelf && c != '"' && c != '\\' && c != 0x7f {
			b = append(b, c)
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1 || c < utf8.RuneSelf:
			b = append(b, '\\')
			switch c {
			case '"', '\\':
				b = append(b, c)
			case '\n':
				b = append(b, 'n')
			case '\r':
				b = append(b, 'r')
			case '\t':
				b = append(b, 't')
			default:
				b = append(b, 'x', hexDigits[c>>4], hexDigits[c&15])
			}
			s = s[1:]
		case r <= 0x9f:
			b = append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&15])
			s = s[n:]
		default:
			b = append(b, s[:n]...)
			s = s[n:]
		}
	}
	return append(b, '"')
}
