package ir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// Encoding is one of the three encodings of the interchange format.
type Encoding uint8

// The encodings.
const (
	EncodingUnknown Encoding = iota
	Binary                   // .pb
	JSON                     // .json
	Text                     // .pbtxt
)

func (e Encoding) String() string {
	switch e {
	case Binary:
		return "binary"
	case JSON:
		return "json"
	case Text:
		return "text"
	}
	return "unknown"
}

// ParseEncoding parses "pb"/"binary", "json", "pbtxt"/"text".
func ParseEncoding(s string) (Encoding, error) {
	switch strings.ToLower(s) {
	case "pb", "binary", "bin":
		return Binary, nil
	case "json":
		return JSON, nil
	case "pbtxt", "text", "txtpb", "textproto":
		return Text, nil
	}
	return EncodingUnknown, fmt.Errorf("unknown encoding %q (want pb, json or pbtxt)", s)
}

// EncodingForPath returns the encoding an extension names, or EncodingUnknown.
func EncodingForPath(path string) Encoding {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pb", ".bin", ".binpb":
		return Binary
	case ".json":
		return JSON
	case ".pbtxt", ".txtpb", ".textproto", ".prototxt":
		return Text
	}
	return EncodingUnknown
}

// SniffEncoding guesses the encoding from the content: JSON starts with '{',
// text format is valid UTF-8 without control bytes, anything else is binary.
func SniffEncoding(data []byte) Encoding {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return JSON
	}
	if len(data) > 0 && utf8.Valid(data) && !bytes.ContainsFunc(data, func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\r' && r != '\t'
	}) {
		return Text
	}
	return Binary
}

// LoadFile reads a graph file in the encoding its extension names (or its
// content suggests). It does not run Verify.
//
// The file is opened once (a FIFO or a device is read as a stream, never
// reopened) and read up to MaxInputSize bytes: a regular file larger than
// that is refused before any of it is read, and a stream that goes on
// past it (/dev/zero) is refused when it does.
//
// Large regular files are mapped into memory rather than read (on Linux):
// the decoder copies what it keeps into compact blocks and the mapping is
// released before LoadFile returns, so nothing in the module refers to it.
// Small files and streams are read into a buffer the module's strings then
// share. A mapped file that another process truncates while it is decoded
// makes the decoding goroutines fault; they turn the fault into an error
// (guardFaults), so the file is refused as truncated instead of the
// process dying of SIGBUS.
// While it decodes a large binary file the garbage collector is paused
// (see pauseGC): nearly everything that decoder allocates is the module
// itself (the JSON and text decoders build protobuf objects first, and
// collect as usual).
func LoadFile(path string) (m *Module, err error) {
	fail := func(err error) (*Module, error) {
		return nil, &DecodeError{Loc: Location{File: path}, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if st.IsDir() {
		return fail(errors.New("is a directory, not a graph file"))
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	limit := MaxInputSize()
	if size > limit {
		return fail(&TooLargeError{Limit: limit, Size: size})
	}
	if data, unmap, ok := mapFile(f, size); ok {
		defer unmap()
		if afterMapHook != nil {
			afterMapHook(path)
		}
		defer guardFaults(data)()
		defer func() { // after catchFault
			if errors.Is(err, errTruncatedWhileRead) {
				m, err = fail(errTruncatedWhileRead)
			}
		}()
		defer catchFault(data, &err)
		if fm := formatOf(path, data); fm != nil {
			return fm.Decode(data, path)
		}
		enc := encodingOf(path, data)
		if enc == Binary {
			defer pauseGC()()
		}
		return decodeMapped(data, enc, path)
	}
	data, err := readInput(f, size, limit)
	if err != nil {
		return fail(err)
	}
	if fm := formatOf(path, data); fm != nil {
		return fm.Decode(data, path)
	}
	return decode(data, encodingOf(path, data), path, true)
}

// afterMapHook, when set (by tests), runs between mapping a file and
// decoding it.
var afterMapHook func(path string)

// Format is a file format other than hopctl's own that LoadFile reads
// (package pt2 registers torch.export's .pt2 archives and program JSON).
// Match sees the path and the whole content; Decode must copy what the
// module keeps out of data (it may be a mapping released afterwards) and
// return only InputErrors for bad input.
type Format struct {
	Name   string
	Match  func(path string, data []byte) bool
	Decode func(data []byte, path string) (*Module, error)
}

var (
	formatsMu sync.Mutex
	formats   []Format
)

// RegisterFormat adds a format LoadFile tries, in registration order,
// before its own encodings.
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	formats = append(formats, f)
}

// formatOf is the first registered format that matches the file, or nil.
func formatOf(path string, data []byte) *Format {
	formatsMu.Lock()
	fs := formats
	formatsMu.Unlock()
	for i := range fs {
		if fs[i].Match(path, data) {
			return &fs[i]
		}
	}
	return nil
}

// encodingOf is the encoding path's extension names, else the one data's
// content suggests.
func encodingOf(path string, data []byte) Encoding {
	if enc := EncodingForPath(path); enc != EncodingUnknown {
		return enc
	}
	return SniffEncoding(data)
}

// Load reads and verifies a graph file.
func Load(path string) (*Module, error) {
	m, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	if err := Verify(m, path); err != nil {
		return nil, err
	}
	return m, nil
}

// Decode decodes data in the given encoding. file names the input in errors.
func Decode(data []byte, enc Encoding, file string) (*Module, error) {
	return decode(data, enc, file, false)
}

// decode is Decode; alias lets the binary decoder share string memory with
// data, which the caller must then never modify.
func decode(data []byte, enc Encoding, file string, alias bool) (*Module, error) {
	return decodeIn(data, enc, file, alias, nil)
}

// decodeMapped is decode of data that is region, a mapping of the file:
// the binary decoder's goroutines guard their reads of it (guardFaults).
func decodeMapped(data []byte, enc Encoding, file string) (*Module, error) {
	return decodeIn(data, enc, file, false, data)
}

func decodeIn(data []byte, enc Encoding, file string, alias bool, region []byte) (*Module, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("empty file: not a hopctl graph file")}
	}
	if enc == Binary {
		m, err := decodeBinaryIn(data, file, alias, region)
		if errors.Is(err, errTruncatedWhileRead) {
			return nil, &DecodeError{Loc: Location{File: file}, Err: errTruncatedWhileRead}
		}
		if err != nil && SniffEncoding(data) != Binary && len(data) > 0 {
			if de, ok := err.(*DecodeError); ok && strings.HasPrefix(de.Err.Error(), "cannot decode") {
				de.Err = fmt.Errorf("%w (the content looks like %s encoding)", de.Err, SniffEncoding(data))
			}
		}
		return m, err
	}
	f := &pb.File{}
	var err error
	switch enc {
	case JSON:
		err = protojson.Unmarshal(data, f)
	case Text:
		err = prototext.Unmarshal(data, f)
	default:
		err = fmt.Errorf("unknown encoding")
	}
	if err != nil {
		msg := fmt.Errorf("cannot decode as %s hopctl graph: %w", enc, err)
		if s := SniffEncoding(data); s != enc && len(data) > 0 {
			msg = fmt.Errorf("%w (the content looks like %s encoding)", msg, s)
		}
		return nil, &DecodeError{Loc: Location{File: file}, Err: msg}
	}
	return FromProto(f, file)
}

// FromProto converts a decoded file into the IR.
func FromProto(f *pb.File, file string) (*Module, error) {
	fv := f.GetFormatVersion()
	if fv == nil || fv.GetMajor() == 0 {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("missing format_version: not a hopctl graph file")}
	}
	if fv.GetMajor() > FormatMajor {
		return nil, &DecodeError{Loc: Location{File: file}, Err: fmt.Errorf("format version %d.%d is newer than this hopctl reads (%d.x); upgrade hopctl", fv.GetMajor(), fv.GetMinor(), FormatMajor)}
	}
	if f.GetGraph() == nil {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("missing root graph")}
	}
	m := &Module{
		FormatMajor:  fv.GetMajor(),
		FormatMinor:  fv.GetMinor(),
		Producer:     f.GetProducer(),
		TorchVersion: f.GetTorchVersion(),
	}
	if f.GradEnabled != nil {
		m.GradEnabled, m.HasGradEnabled = f.GetGradEnabled(), true
	}
	root, err := graphFromProto("", f.GetGraph(), file)
	if err != nil {
		return nil, err
	}
	m.Graphs = append(make([]*Graph, 0, 1+len(f.GetSubmodules())), root)
	for _, sm := range f.GetSubmodules() {
		g, err := graphFromProto(sm.GetQualifiedName(), sm.GetGraph(), file)
		if err != nil {
			return nil, err
		}
		m.Graphs = append(m.Graphs, g)
	}
	for _, a := range f.GetAttributes() {
		at := Attribute{Name: a.GetQualifiedName(), Meta: tensorFromProto(a.GetMeta()), Data: a.GetData()}
		if a.GetConstant() != nil {
			at.Const = &Arg{}
			if err := argFromProto(at.Const, a.GetConstant()); err != nil {
				return nil, &DecodeError{Loc: Location{File: file}, Err: fmt.Errorf("attribute %q: constant: %w", a.GetQualifiedName(), err)}
			}
		}
		m.Attributes = append(m.Attributes, at)
	}
	for _, s := range f.GetSchemas() {
		m.Schemas = append(m.Schemas, SchemaText{Name: s.GetName(), Schema: s.GetSchema()})
	}
	for _, a := range f.GetAnnotations() {
		m.Annotations = append(m.Annotations, Annotation{Key: a.GetKey(), Value: a.GetValue()})
	}
	if ps := f.GetSignature(); ps != nil {
		m.Signature = &Signature{}
		for _, in := range ps.GetInputs() {
			m.Signature.Inputs = append(m.Signature.Inputs, InputSpec{Kind: InputKind(enumByte(uint64(uint32(in.GetKind())))), Name: in.GetName(), Target: in.GetTarget(), Persistent: in.GetPersistent()})
		}
		for _, out := range ps.GetOutputs() {
			m.Signature.Outputs = append(m.Signature.Outputs, OutputSpec{Kind: OutputKind(enumByte(uint64(uint32(out.GetKind())))), Name: out.GetName(), Target: out.GetTarget()})
		}
	}
	return m, nil
}

func graphFromProto(name string, pg *pb.Graph, file string) (*Graph, error) {
	g := &Graph{Name: name, Nodes: make([]Node, len(pg.GetNodes()))}
	for i, pn := range pg.GetNodes() {
		n := &g.Nodes[i]
		n.Name = pn.GetName()
		if n.Name == "" {
			return nil, &DecodeError{Loc: At(file, name, fmt.Sprintf("#%d", i)), Err: errNodeNoName}
		}
		n.Op = OpKind(pn.GetOp())
		if pn.GetOp() < 0 || int(pn.GetOp()) >= len(opKindNames) {
			n.Op = OpUnspecified
		}
		n.Target = pn.GetTarget()
		if len(pn.GetArgs()) > 0 {
			n.Args = make([]Arg, len(pn.GetArgs()))
			for j, a := range pn.GetArgs() {
				if err := argFromProto(&n.Args[j], a); err != nil {
					return nil, &DecodeError{Loc: At(file, name, n.Name), Err: fmt.Errorf("argument %d: %w", j, err)}
				}
			}
		}
		if len(pn.GetKwargs()) > 0 {
			n.Kwargs = make([]Kwarg, len(pn.GetKwargs()))
			for j, kw := range pn.GetKwargs() {
				n.Kwargs[j].Name = kw.GetName()
				if err := argFromProto(&n.Kwargs[j].Value, kw.GetValue()); err != nil {
					return nil, &DecodeError{Loc: At(file, name, n.Name), Err: fmt.Errorf("keyword argument %q: %w", kw.GetName(), err)}
				}
			}
		}
		if pn.GetVal() != nil {
			v := valueFromProto(pn.GetVal())
			n.Val = &v
		}
		if pm := pn.GetMeta(); pm != nil {
			n.Meta = metaFromProto(pm)
		}
	}
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *Arg) {
			if id, ok := g.names().get(a.S); ok {
				a.Ref = id
			}
		})
	}
	return g, nil
}

// argFromProto converts iteratively-enough: list nesting is bounded by the
// protobuf decoder's recursion limit.
func argFromProto(dst *Arg, a *pb.Arg) error {
	if a == nil {
		return errors.New("argument has no value set")
	}
	switch k := a.GetKind().(type) {
	case *pb.Arg_Node:
		*dst = Arg{Kind: ArgNode, S: k.Node, Ref: NoNode}
	case *pb.Arg_Int:
		*dst = Arg{Kind: ArgInt, I: k.Int}
	case *pb.Arg_Float:
		*dst = Arg{Kind: ArgFloat, F: k.Float}
	case *pb.Arg_Bool:
		*dst = Arg{Kind: ArgBool, B: k.Bool}
	case *pb.Arg_Str:
		*dst = Arg{Kind: ArgStr, S: k.Str}
	case *pb.Arg_None:
		*dst = Arg{Kind: ArgNone}
	case *pb.Arg_List:
		return argListFromProto(dst, ArgList, k.List.GetItems())
	case *pb.Arg_Tuple:
		return argListFromProto(dst, ArgTuple, k.Tuple.GetItems())
	case *pb.Arg_Dtype:
		*dst = Arg{Kind: ArgDtype, S: k.Dtype}
	case *pb.Arg_Device:
		*dst = Arg{Kind: ArgDevice, S: k.Device}
	case *pb.Arg_Layout:
		*dst = Arg{Kind: ArgLayout, S: k.Layout}
	case *pb.Arg_MemoryFormat:
		*dst = Arg{Kind: ArgMemoryFormat, S: k.MemoryFormat}
	case *pb.Arg_Sym:
		*dst = Arg{Kind: ArgSym, Sym: symFromProto(k.Sym)}
	case *pb.Arg_Op:
		*dst = Arg{Kind: ArgOp, S: k.Op}
	case *pb.Arg_Dict:
		entries := k.Dict.GetEntries()
		*dst = Arg{Kind: ArgDict, Elems: make([]Arg, len(entries)), Keys: make([]string, len(entries))}
		for i, e := range entries {
			dst.Keys[i] = e.GetName()
			if err := argFromProto(&dst.Elems[i], e.GetValue()); err != nil {
				return err
			}
		}
	case *pb.Arg_Complex:
		*dst = Arg{Kind: ArgComplex, F: k.Complex.GetReal(), Imag: k.Complex.GetImag()}
	case *pb.Arg_Slice:
		*dst = Arg{Kind: ArgSlice, Elems: make([]Arg, 3)}
		for i, part := range [3]*pb.Arg{k.Slice.GetStart(), k.Slice.GetStop(), k.Slice.GetStep()} {
			// An unset (or empty) part is None, as the wire decoder has it.
			if part.GetKind() == nil {
				dst.Elems[i] = Arg{Kind: ArgNone}
			} else if err := argFromProto(&dst.Elems[i], part); err != nil {
				return err
			}
		}
	case *pb.Arg_Ellipsis:
		*dst = Arg{Kind: ArgEllipsis}
	case *pb.Arg_Constant:
		fields := k.Constant.GetFields()
		*dst = Arg{Kind: ArgConstant, S: k.Constant.GetType(), Elems: make([]Arg, len(fields)), Keys: make([]string, len(fields))}
		for i, e := range fields {
			dst.Keys[i] = e.GetName()
			if err := argFromProto(&dst.Elems[i], e.GetValue()); err != nil {
				return err
			}
		}
	default:
		return errors.New("argument has no value set")
	}
	return nil
}

func argListFromProto(dst *Arg, kind ArgKind, items []*pb.Arg) error {
	*dst = Arg{Kind: kind, Elems: make([]Arg, len(items))}
	for i, it := range items {
		if err := argFromProto(&dst.Elems[i], it); err != nil {
			return err
		}
	}
	return nil
}

func symFromProto(s *pb.SymExpr) *SymExpr {
	if s == nil {
		return &SymExpr{}
	}
	return &SymExpr{Kind: SymKind(s.GetKind()), Expr: s.GetExpr(), Hint: s.GetHint(), HasHint: s.Hint != nil}
}

func dimFromProto(d *pb.Dim) Dim {
	if d == nil {
		return Dim{}
	}
	if e, ok := d.GetKind().(*pb.Dim_Expr); ok {
		return Dim{Expr: e.Expr}
	}
	return Dim{Val: d.GetValue()}
}

func dimsFromProto(ds []*pb.Dim) []Dim {
	if len(ds) == 0 {
		return nil
	}
	out := make([]Dim, len(ds))
	for i, d := range ds {
		out[i] = dimFromProto(d)
	}
	return out
}

func tensorFromProto(t *pb.TensorMeta) TensorMeta {
	if t == nil {
		return TensorMeta{}
	}
	tm := TensorMeta{
		Shape:         dimsFromProto(t.GetShape()),
		Stride:        dimsFromProto(t.GetStride()),
		StorageOffset: dimFromProto(t.GetStorageOffset()),
		Dtype:         t.GetDtype(),
		Device:        t.GetDevice(),
		Layout:        t.GetLayout(),
		MemoryFormat:  t.GetMemoryFormat(),
		RequiresGrad:  t.GetRequiresGrad(),
		IsQuantized:   t.GetIsQuantized(),
		StorageID:     t.GetStorageId(),
		HasStorageID:  t.StorageId != nil,
	}
	if q := t.GetQparams(); q != nil {
		tm.QParams = &QParams{QScheme: q.GetQscheme(), Scale: q.GetScale(), ZeroPoint: q.GetZeroPoint(), Scales: q.GetScales(), ZeroPoints: q.GetZeroPoints(), Axis: q.GetAxis()}
	}
	return tm
}

func valueFromProto(v *pb.Value) Value {
	switch k := v.GetKind().(type) {
	case *pb.Value_Tensor:
		if k.Tensor == nil {
			return Value{Kind: ValTensor, Tensor: &TensorMeta{}}
		}
		t := tensorFromProto(k.Tensor)
		return Value{Kind: ValTensor, Tensor: &t}
	case *pb.Value_Sym:
		return Value{Kind: ValSym, Sym: symFromProto(k.Sym)}
	case *pb.Value_List:
		return valueListFromProto(ValList, k.List.GetItems())
	case *pb.Value_Tuple:
		return valueListFromProto(ValTuple, k.Tuple.GetItems())
	case *pb.Value_None:
		return Value{Kind: ValNone}
	case *pb.Value_Int:
		return Value{Kind: ValInt, I: k.Int}
	case *pb.Value_Float:
		return Value{Kind: ValFloat, F: k.Float}
	case *pb.Value_Bool:
		return Value{Kind: ValBool, B: k.Bool}
	case *pb.Value_Opaque:
		return Value{Kind: ValOpaque, S: k.Opaque}
	}
	return Value{Kind: ValUnset}
}

func valueListFromProto(kind ValueKind, items []*pb.Value) Value {
	v := Value{Kind: kind, Elems: make([]Value, len(items))}
	for i, it := range items {
		v.Elems[i] = valueFromProto(it)
	}
	return v
}

func stackFromProto(es []*pb.ModuleStackEntry) []ModuleStackEntry {
	if len(es) == 0 {
		return nil
	}
	out := make([]ModuleStackEntry, len(es))
	for i, e := range es {
		out[i] = ModuleStackEntry{Key: e.GetKey(), Path: e.GetPath(), Type: e.GetType()}
	}
	return out
}

func metaFromProto(pm *pb.NodeMeta) *Meta {
	m := &Meta{
		StackTrace:    pm.GetStackTrace(),
		NNModuleStack: stackFromProto(pm.GetNnModuleStack()),
		SourceFnStack: stackFromProto(pm.GetSourceFnStack()),
		SeqNr:         pm.GetSeqNr(),
		HasSeqNr:      pm.SeqNr != nil,
		FwdSource:     pm.GetFwdSource(),
	}
	for _, a := range pm.GetExtra() {
		m.Extra = append(m.Extra, Annotation{Key: a.GetKey(), Value: a.GetValue()})
	}
	return m
}

// ToProto converts the IR back into the interchange format.
func ToProto(m *Module) *pb.File {
	f := &pb.File{
		FormatVersion: &pb.FormatVersion{Major: m.FormatMajor, Minor: m.FormatMinor},
		Producer:      m.Producer,
		TorchVersion:  m.TorchVersion,
	}
	if m.HasGradEnabled {
		f.GradEnabled = proto.Bool(m.GradEnabled)
	}
	if f.FormatVersion.Major == 0 {
		f.FormatVersion = &pb.FormatVersion{Major: FormatMajor, Minor: FormatMinor}
	}
	for i, g := range m.Graphs {
		pg := graphToProto(g)
		if i == 0 {
			f.Graph = pg
			continue
		}
		f.Submodules = append(f.Submodules, &pb.Submodule{QualifiedName: g.Name, Graph: pg})
	}
	for _, a := range m.Attributes {
		pa := &pb.Attribute{QualifiedName: a.Name, Data: a.Data}
		if a.Const != nil {
			pa.Constant = argToProto(a.Const) // a constant has no tensor metadata
		} else {
			pa.Meta = tensorToProto(&a.Meta)
		}
		f.Attributes = append(f.Attributes, pa)
	}
	for _, s := range m.Schemas {
		f.Schemas = append(f.Schemas, &pb.OpSchema{Name: s.Name, Schema: s.Schema})
	}
	for _, a := range m.Annotations {
		f.Annotations = append(f.Annotations, &pb.Annotation{Key: a.Key, Value: a.Value})
	}
	if sig := m.Signature; sig != nil {
		f.Signature = &pb.GraphSignature{}
		for _, in := range sig.Inputs {
			f.Signature.Inputs = append(f.Signature.Inputs, &pb.InputSpec{Kind: pb.InputKind(in.Kind), Name: in.Name, Target: in.Target, Persistent: in.Persistent})
		}
		for _, out := range sig.Outputs {
			f.Signature.Outputs = append(f.Signature.Outputs, &pb.OutputSpec{Kind: pb.OutputKind(out.Kind), Name: out.Name, Target: out.Target})
		}
	}
	return f
}

func graphToProto(g *Graph) *pb.Graph {
	pg := &pb.Graph{Nodes: make([]*pb.Node, len(g.Nodes))}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		pn := &pb.Node{Name: n.Name, Op: pb.OpKind(n.Op), Target: n.Target}
		for j := range n.Args {
			pn.Args = append(pn.Args, argToProto(&n.Args[j]))
		}
		for j := range n.Kwargs {
			pn.Kwargs = append(pn.Kwargs, &pb.Kwarg{Name: n.Kwargs[j].Name, Value: argToProto(&n.Kwargs[j].Value)})
		}
		if n.Val != nil {
			pn.Val = valueToProto(n.Val)
		}
		if n.Meta != nil {
			pn.Meta = metaToProto(n.Meta)
		}
		pg.Nodes[i] = pn
	}
	return pg
}

func argToProto(a *Arg) *pb.Arg {
	switch a.Kind {
	case ArgNode:
		return &pb.Arg{Kind: &pb.Arg_Node{Node: a.S}}
	case ArgInt:
		return &pb.Arg{Kind: &pb.Arg_Int{Int: a.I}}
	case ArgFloat:
		return &pb.Arg{Kind: &pb.Arg_Float{Float: a.F}}
	case ArgBool:
		return &pb.Arg{Kind: &pb.Arg_Bool{Bool: a.B}}
	case ArgStr:
		return &pb.Arg{Kind: &pb.Arg_Str{Str: a.S}}
	case ArgList:
		return &pb.Arg{Kind: &pb.Arg_List{List: &pb.ArgList{Items: argsToProto(a.Elems)}}}
	case ArgTuple:
		return &pb.Arg{Kind: &pb.Arg_Tuple{Tuple: &pb.ArgList{Items: argsToProto(a.Elems)}}}
	case ArgDtype:
		return &pb.Arg{Kind: &pb.Arg_Dtype{Dtype: a.S}}
	case ArgDevice:
		return &pb.Arg{Kind: &pb.Arg_Device{Device: a.S}}
	case ArgLayout:
		return &pb.Arg{Kind: &pb.Arg_Layout{Layout: a.S}}
	case ArgMemoryFormat:
		return &pb.Arg{Kind: &pb.Arg_MemoryFormat{MemoryFormat: a.S}}
	case ArgSym:
		return &pb.Arg{Kind: &pb.Arg_Sym{Sym: symToProto(a.Sym)}}
	case ArgOp:
		return &pb.Arg{Kind: &pb.Arg_Op{Op: a.S}}
	case ArgDict:
		d := &pb.ArgDict{}
		for i := range a.Elems {
			d.Entries = append(d.Entries, &pb.Kwarg{Name: a.Keys[i], Value: argToProto(&a.Elems[i])})
		}
		return &pb.Arg{Kind: &pb.Arg_Dict{Dict: d}}
	case ArgComplex:
		return &pb.Arg{Kind: &pb.Arg_Complex{Complex: &pb.Complex{Real: a.F, Imag: a.Imag}}}
	case ArgSlice:
		s := &pb.Slice{}
		for i, dst := range [3]**pb.Arg{&s.Start, &s.Stop, &s.Step} {
			if i < len(a.Elems) {
				*dst = argToProto(&a.Elems[i])
			} else {
				*dst = argToProto(&Arg{Kind: ArgNone})
			}
		}
		return &pb.Arg{Kind: &pb.Arg_Slice{Slice: s}}
	case ArgEllipsis:
		return &pb.Arg{Kind: &pb.Arg_Ellipsis{Ellipsis: &pb.Empty{}}}
	case ArgConstant:
		c := &pb.Constant{Type: a.S}
		for i := range a.Elems {
			c.Fields = append(c.Fields, &pb.Kwarg{Name: a.Keys[i], Value: argToProto(&a.Elems[i])})
		}
		return &pb.Arg{Kind: &pb.Arg_Constant{Constant: c}}
	}
	return &pb.Arg{Kind: &pb.Arg_None{None: &pb.Empty{}}}
}

func argsToProto(as []Arg) []*pb.Arg {
	out := make([]*pb.Arg, len(as))
	for i := range as {
		out[i] = argToProto(&as[i])
	}
	return out
}

func symToProto(s *SymExpr) *pb.SymExpr {
	if s == nil {
		return &pb.SymExpr{}
	}
	p := &pb.SymExpr{Kind: pb.SymKind(s.Kind), Expr: s.Expr}
	if s.HasHint {
		h := s.Hint
		p.Hint = &h
	}
	return p
}

func dimToProto(d Dim) *pb.Dim {
	if d.Expr != "" {
		return &pb.Dim{Kind: &pb.Dim_Expr{Expr: d.Expr}}
	}
	return &pb.Dim{Kind: &pb.Dim_Value{Value: d.Val}}
}

func dimsToProto(ds []Dim) []*pb.Dim {
	if len(ds) == 0 {
		return nil
	}
	out := make([]*pb.Dim, len(ds))
	for i, d := range ds {
		out[i] = dimToProto(d)
	}
	return out
}

func tensorToProto(t *TensorMeta) *pb.TensorMeta {
	p := &pb.TensorMeta{
		Shape:         dimsToProto(t.Shape),
		Stride:        dimsToProto(t.Stride),
		StorageOffset: dimToProto(t.StorageOffset),
		Dtype:         t.Dtype,
		Device:        t.Device,
		Layout:        t.Layout,
		MemoryFormat:  t.MemoryFormat,
		RequiresGrad:  t.RequiresGrad,
		IsQuantized:   t.IsQuantized,
	}
	if t.HasStorageID {
		id := t.StorageID
		p.StorageId = &id
	}
	if q := t.QParams; q != nil {
		p.Qparams = &pb.QParams{Qscheme: q.QScheme, Scale: q.Scale, ZeroPoint: q.ZeroPoint, Scales: q.Scales, ZeroPoints: q.ZeroPoints, Axis: q.Axis}
	}
	return p
}

func valueToProto(v *Value) *pb.Value {
	switch v.Kind {
	case ValTensor:
		return &pb.Value{Kind: &pb.Value_Tensor{Tensor: tensorToProto(v.Tensor)}}
	case ValSym:
		return &pb.Value{Kind: &pb.Value_Sym{Sym: symToProto(v.Sym)}}
	case ValList:
		return &pb.Value{Kind: &pb.Value_List{List: valuesToProto(v.Elems)}}
	case ValTuple:
		return &pb.Value{Kind: &pb.Value_Tuple{Tuple: valuesToProto(v.Elems)}}
	case ValNone:
		return &pb.Value{Kind: &pb.Value_None{None: &pb.Empty{}}}
	case ValInt:
		return &pb.Value{Kind: &pb.Value_Int{Int: v.I}}
	case ValFloat:
		return &pb.Value{Kind: &pb.Value_Float{Float: v.F}}
	case ValBool:
		return &pb.Value{Kind: &pb.Value_Bool{Bool: v.B}}
	case ValOpaque:
		return &pb.Value{Kind: &pb.Value_Opaque{Opaque: v.S}}
	}
	return &pb.Value{}
}

func valuesToProto(vs []Value) *pb.ValueList {
	l := &pb.ValueList{Items: make([]*pb.Value, len(vs))}
	for i := range vs {
		l.Items[i] = valueToProto(&vs[i])
	}
	return l
}

func stackToProto(es []ModuleStackEntry) []*pb.ModuleStackEntry {
	if len(es) == 0 {
		return nil
	}
	out := make([]*pb.ModuleStackEntry, len(es))
	for i, e := range es {
		out[i] = &pb.ModuleStackEntry{Key: e.Key, Path: e.Path, Type: e.Type}
	}
	return out
}

func metaToProto(m *Meta) *pb.NodeMeta {
	p := &pb.NodeMeta{
		StackTrace:    m.StackTrace,
		NnModuleStack: stackToProto(m.NNModuleStack),
		SourceFnStack: stackToProto(m.SourceFnStack),
		FwdSource:     m.FwdSource,
	}
	if m.HasSeqNr {
		s := m.SeqNr
		p.SeqNr = &s
	}
	for _, a := range m.Extra {
		p.Extra = append(p.Extra, &pb.Annotation{Key: a.Key, Value: a.Value})
	}
	return p
}

// Encode serialises the module. Binary output is deterministic; JSON output
// is re-indented so it is byte-stable (protobuf-go varies whitespace on
// purpose); text output is stable for a given hopctl build.
func Encode(m *Module, enc Encoding) ([]byte, error) {
	if enc == Binary {
		// The streaming encoder: protobuf-go's deterministic bytes, without
		// building the protobuf objects.
		return encodeBinary(m)
	}
	// The JSON and text encodings: streamed (textenc.go), into memory here.
	var out bytes.Buffer
	out.Grow(encodedSize(m) * 4)
	if err := EncodeTo(&out, m, enc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// SaveFile encodes the module in the encoding the path's extension names
// (binary when it names none) and writes it atomically.
func SaveFile(path string, m *Module) error {
	enc := EncodingForPath(path)
	if enc == EncodingUnknown {
		enc = Binary
	}
	if enc != Binary { // streamed: the output is not held in memory
		return WriteFileAtomicFunc(path, func(w io.Writer) error { return EncodeTo(w, m, enc) })
	}
	data, err := Encode(m, enc)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", path, err)
	}
	return WriteFileAtomic(path, data)
}

// WriteFileAtomic writes data to a temporary file next to path and renames
// it into place, so a failed write never leaves a partial or clobbered file.
// A path that is a symbolic link is written through to its target (the
// link stays), and an existing file keeps its permissions; a new one gets
// 0644.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFilesAtomic([]string{path}, [][]byte{data})
}

// WriteFilesAtomic writes several files as one step: every file is first
// written in full to a temporary file next to its destination, and only
// when all of them are written are they renamed into place. A failure
// while writing leaves every destination untouched. A symlink destination
// is written through; an existing file keeps its permissions.
func WriteFilesAtomic(paths []string, datas [][]byte) error {
	writes := make([]func(io.Writer) error, len(datas))
	for i, data := range datas {
		writes[i] = func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		}
	}
	return WriteFilesAtomicFunc(paths, writes)
}

// WriteFileAtomicFunc is WriteFileAtomic with the content written by
// write, which may stream it (EncodeTo): a failing write leaves the
// destination untouched.
func WriteFileAtomicFunc(path string, write func(io.Writer) error) error {
	return WriteFilesAtomicFunc([]string{path}, []func(io.Writer) error{write})
}

// WriteFilesAtomicFunc is WriteFilesAtomic with each file's content
// written by a function.
func WriteFilesAtomicFunc(paths []string, writes []func(io.Writer) error) error {
	temps := make([]string, len(paths))
	cleanup := func() {
		for _, t := range temps {
			if t != "" {
				settleTemp(t, func() error { return os.Remove(t) })
			}
		}
	}
	dests := make([]string, len(paths))
	for i, path := range paths {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
		dests[i] = path
	}
	// The temporary files are written at the same time (copies into the
	// page cache, on both cores for large outputs).
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i := range dests {
		wg.Go(func() { temps[i], errs[i] = writeTemp(dests[i], writes[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return err
	}
	for i, name := range temps {
		if err := settleTemp(name, func() error { return os.Rename(name, dests[i]) }); err != nil {
			cleanup()
			return fmt.Errorf("%s: %w", dests[i], err)
		}
	}
	return nil
}

// writeTemp writes a temporary file beside path with write, with path's
// permissions (0644 for a new file), and returns its name.
//
// The file is not synced (fsync) before it is renamed into place: what
// hopctl writes is regenerable from its input, and this is what build
// tools (go build, make, ninja) do for their outputs. The rename still
// makes every write all-or-nothing for readers; only a crash of the
// machine (not of hopctl) within the kernel's writeback delay can leave
// a destination empty or partial, which rerunning the command repairs.
// Measured on this project's machine, syncing the three outputs of
// `hopctl joint --partition mincut` on resnet18 cost 2–4 ms of a command
// that otherwise takes 6–10 ms (README, Performance).
func writeTemp(path string, write func(io.Writer) error) (string, error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("%s: write: %w", path, err)
	}
	name := tmp.Name()
	discard := func() { settleTemp(name, func() error { return os.Remove(name) }) }
	werr := write(tmp)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		discard()
		return "", fmt.Errorf("%s: write: %w", path, err)
	}
	if err := os.Chmod(name, mode); err != nil {
		discard()
		return "", err
	}
	return name, nil
}
