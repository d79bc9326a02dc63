package ir

// Conversion between the interchange format's protobuf messages and the IR.

import (
	"errors"
	"fmt"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/proto"
)

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
	if f.InferenceMode != nil {
		m.InferenceMode, m.HasInferenceMode = f.GetInferenceMode(), true
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
	for _, c := range f.GetHopClasses() {
		m.HOPClasses = append(m.HOPClasses, HOPClass{Target: c.GetTarget(), Classes: c.GetClasses()})
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
	// Targets interned, as the binary decoder does (TargetMemo).
	targets := map[string]string{}
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
		if t, ok := targets[n.Target]; ok {
			n.Target = t
		} else if len(targets) < maxInternedTargets {
			targets[n.Target] = n.Target
		}
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
		*dst = IntArg(k.Int)
	case *pb.Arg_Float:
		*dst = FloatArg(k.Float)
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
		*dst = SymArg(symFromProto(k.Sym))
	case *pb.Arg_Op:
		*dst = Arg{Kind: ArgOp, S: k.Op}
	case *pb.Arg_Dict:
		entries := k.Dict.GetEntries()
		*dst = DictArg(make([]string, len(entries)), make([]Arg, len(entries)))
		for i, e := range entries {
			dst.Keys()[i] = e.GetName()
			if err := argFromProto(&dst.Elems()[i], e.GetValue()); err != nil {
				return err
			}
		}
	case *pb.Arg_Complex:
		*dst = ComplexArg(k.Complex.GetReal(), k.Complex.GetImag())
	case *pb.Arg_Slice:
		*dst = WithElems(Arg{Kind: ArgSlice}, make([]Arg, 3))
		for i, part := range [3]*pb.Arg{k.Slice.GetStart(), k.Slice.GetStop(), k.Slice.GetStep()} {
			// An unset (or empty) part is None, as the wire decoder has it.
			if part.GetKind() == nil {
				dst.Elems()[i] = Arg{Kind: ArgNone}
			} else if err := argFromProto(&dst.Elems()[i], part); err != nil {
				return err
			}
		}
	case *pb.Arg_Ellipsis:
		*dst = Arg{Kind: ArgEllipsis}
	case *pb.Arg_Constant:
		fields := k.Constant.GetFields()
		*dst = ConstantArg(k.Constant.GetType(), make([]string, len(fields)), make([]Arg, len(fields)))
		for i, e := range fields {
			dst.Keys()[i] = e.GetName()
			if err := argFromProto(&dst.Elems()[i], e.GetValue()); err != nil {
				return err
			}
		}
	default:
		return errors.New("argument has no value set")
	}
	return nil
}

func argListFromProto(dst *Arg, kind ArgKind, items []*pb.Arg) error {
	*dst = WithElems(Arg{Kind: kind}, make([]Arg, len(items)))
	for i, it := range items {
		if err := argFromProto(&dst.Elems()[i], it); err != nil {
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
func ToProto(m *Module) *pb.File { return toProto(m, nil) }

// toProto is ToProto with the root graph's nodes read from root when it
// is set; the references of root's nodes must store their own names
// (sourceFile).
func toProto(m *Module, root NodeSource) *pb.File {
	f := &pb.File{
		FormatVersion: &pb.FormatVersion{Major: m.FormatMajor, Minor: m.FormatMinor},
		Producer:      m.Producer,
		TorchVersion:  m.TorchVersion,
	}
	if m.HasGradEnabled {
		f.GradEnabled = proto.Bool(m.GradEnabled)
	}
	if m.HasInferenceMode {
		f.InferenceMode = proto.Bool(m.InferenceMode)
	}
	if f.FormatVersion.Major == 0 {
		f.FormatVersion = &pb.FormatVersion{Major: FormatMajor, Minor: FormatMinor}
	}
	for i, g := range m.Graphs {
		src := GraphNodes(g)
		if i == 0 && root != nil {
			src = root
		}
		pg := graphToProto(src)
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
	for _, c := range m.HOPClasses {
		f.HopClasses = append(f.HopClasses, &pb.HOPClass{Target: c.Target, Classes: c.Classes})
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

func graphToProto(src NodeSource) *pb.Graph {
	pg := &pb.Graph{Nodes: make([]*pb.Node, src.Len())}
	for i := range src.Len() {
		n := src.Node(i)
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
		return &pb.Arg{Kind: &pb.Arg_Int{Int: a.Int()}}
	case ArgFloat:
		return &pb.Arg{Kind: &pb.Arg_Float{Float: a.Float()}}
	case ArgBool:
		return &pb.Arg{Kind: &pb.Arg_Bool{Bool: a.B}}
	case ArgStr:
		return &pb.Arg{Kind: &pb.Arg_Str{Str: a.S}}
	case ArgList:
		return &pb.Arg{Kind: &pb.Arg_List{List: &pb.ArgList{Items: argsToProto(a.Elems())}}}
	case ArgTuple:
		return &pb.Arg{Kind: &pb.Arg_Tuple{Tuple: &pb.ArgList{Items: argsToProto(a.Elems())}}}
	case ArgDtype:
		return &pb.Arg{Kind: &pb.Arg_Dtype{Dtype: a.S}}
	case ArgDevice:
		return &pb.Arg{Kind: &pb.Arg_Device{Device: a.S}}
	case ArgLayout:
		return &pb.Arg{Kind: &pb.Arg_Layout{Layout: a.S}}
	case ArgMemoryFormat:
		return &pb.Arg{Kind: &pb.Arg_MemoryFormat{MemoryFormat: a.S}}
	case ArgSym:
		return &pb.Arg{Kind: &pb.Arg_Sym{Sym: symToProto(a.Sym())}}
	case ArgOp:
		return &pb.Arg{Kind: &pb.Arg_Op{Op: a.S}}
	case ArgDict:
		d := &pb.ArgDict{}
		for i := range a.Elems() {
			d.Entries = append(d.Entries, &pb.Kwarg{Name: a.Keys()[i], Value: argToProto(&a.Elems()[i])})
		}
		return &pb.Arg{Kind: &pb.Arg_Dict{Dict: d}}
	case ArgComplex:
		return &pb.Arg{Kind: &pb.Arg_Complex{Complex: &pb.Complex{Real: a.Float(), Imag: a.Imag()}}}
	case ArgSlice:
		s := &pb.Slice{}
		for i, dst := range [3]**pb.Arg{&s.Start, &s.Stop, &s.Step} {
			if i < len(a.Elems()) {
				*dst = argToProto(&a.Elems()[i])
			} else {
				*dst = argToProto(&Arg{Kind: ArgNone})
			}
		}
		return &pb.Arg{Kind: &pb.Arg_Slice{Slice: s}}
	case ArgEllipsis:
		return &pb.Arg{Kind: &pb.Arg_Ellipsis{Ellipsis: &pb.Empty{}}}
	case ArgConstant:
		c := &pb.Constant{Type: a.S}
		for i := range a.Elems() {
			c.Fields = append(c.Fields, &pb.Kwarg{Name: a.Keys()[i], Value: argToProto(&a.Elems()[i])})
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
