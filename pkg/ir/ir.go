// Package ir is hopctl's own in-memory form of an FX GraphModule: the root
// graph, every nested HOP subgraph, tensor attributes and op schemas.
//
// Nodes live in dense slices and reference each other by index (NodeID), so
// analyses can keep per-node state in slices instead of maps. The IR is
// produced from the protobuf interchange format by Load/Decode and written
// back by Save/Encode without loss; Verify checks its structural invariants.
// Only this package touches the generated protobuf types.
package ir

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// FormatMajor is the newest major format version this build reads and the
// one it writes. FormatMinor is the minor version it writes: 2, since the
// files it writes can carry HOP classes (graph.proto, 1.2).
const (
	FormatMajor = 1
	FormatMinor = 2
)

// OpKind is an FX node's op.
type OpKind uint8

// The FX node kinds.
const (
	OpUnspecified OpKind = iota
	OpPlaceholder
	OpGetAttr
	OpCallFunction
	OpCallMethod
	OpCallModule
	OpOutput
)

var opKindNames = [...]string{"unspecified", "placeholder", "get_attr", "call_function", "call_method", "call_module", "output"}

func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "unknown"
}

// NodeID indexes Graph.Nodes. NoNode marks a reference that did not resolve.
type NodeID int32

// NoNode is the NodeID of an unresolved reference.
const NoNode NodeID = -1

// Module is one file's GraphModule: Graphs[0] is the root graph (Name ""),
// the rest are submodule graphs by qualified name in file order.
type Module struct {
	FormatMajor, FormatMinor uint32
	Producer                 string
	TorchVersion             string
	Graphs                   []*Graph
	Attributes               []Attribute
	Schemas                  []SchemaText
	Annotations              []Annotation
	// GradEnabled is torch.is_grad_enabled() while the graph was traced;
	// meaningful only when HasGradEnabled (the file says).
	GradEnabled, HasGradEnabled bool
	// Signature is the exported program's graph signature (format 1.1),
	// nil when the file has none (a plain GraphModule).
	Signature *Signature
	// HOPClasses are the Python classes of the HOPs the graphs call, as the
	// exporter recorded them (format 1.2), in file order.
	HOPClasses []HOPClass

	// graphIndex is Graph's index of Graphs by name (a *graphIndex, read
	// and written atomically: lookups may run concurrently).
	graphIndex unsafe.Pointer
}

// graphIndex maps graph names to their positions in the Graphs slice it
// was built from (first, len), so a lookup can tell it is stale.
type graphIndex struct {
	data **Graph // &Graphs[0]
	n    int
	pos  map[string]int
	// byName are the positions of the graphs sorted by name (Submodule
	// finds a graph's descendants by binary search).
	byName []int
}

// index returns m's graphIndex, built anew when m.Graphs is not the slice
// it was built from; m has at least minIndexedGraphs graphs.
func (m *Module) index() *graphIndex {
	gs := m.Graphs
	idx := (*graphIndex)(atomic.LoadPointer(&m.graphIndex))
	if idx != nil && idx.data == &gs[0] && idx.n == len(gs) {
		return idx
	}
	idx = &graphIndex{data: &gs[0], n: len(gs), pos: make(map[string]int, len(gs)), byName: make([]int, len(gs))}
	for i, g := range gs {
		if _, dup := idx.pos[g.Name]; !dup {
			idx.pos[g.Name] = i
		}
		idx.byName[i] = i
	}
	slices.SortStableFunc(idx.byName, func(a, b int) int { return strings.Compare(gs[a].Name, gs[b].Name) })
	atomic.StorePointer(&m.graphIndex, unsafe.Pointer(idx))
	return idx
}

// minIndexedGraphs is how many graphs a module has before Graph indexes
// them: below it a scan is as fast.
const minIndexedGraphs = 16

// Root returns the root graph.
func (m *Module) Root() *Graph { return m.Graphs[0] }

// Graph returns the graph with the given qualified name, or nil (the
// first, when names repeat). A module of many graphs is indexed by name on
// the first lookup, and again whenever its Graphs slice was replaced or
// resized since (appending, a copy of the module with graphs of its own);
// a hit is checked against the slice, so a graph replaced in place under
// its name is found. A graph must not be renamed in place once the module
// has been looked up in (no code does: graphs are named when built). HOP
// checks, joint and the commands look a graph up per HOP call: a scan per
// lookup would make a file of many HOP calls quadratic.
func (m *Module) Graph(qualname string) *Graph {
	gs := m.Graphs
	if len(gs) < minIndexedGraphs {
		for _, g := range gs {
			if g.Name == qualname {
				return g
			}
		}
		return nil
	}
	idx := m.index()
	if i, ok := idx.pos[qualname]; ok && gs[i].Name == qualname {
		return gs[i]
	}
	return nil
}

// GraphLookup returns Graph as a function backed by a map of the module's
// graphs as they are now: O(1) per lookup, for callers that look up a
// graph per finding or per node (Graph scans the list). The module's graph
// list must not change while the function is in use.
func (m *Module) GraphLookup() func(qualname string) *Graph {
	byName := make(map[string]*Graph, len(m.Graphs))
	for _, g := range m.Graphs {
		if _, dup := byName[g.Name]; !dup {
			byName[g.Name] = g // the first, as Graph finds it
		}
	}
	return func(qualname string) *Graph { return byName[qualname] }
}

// NumNodes returns the number of nodes of all the module's graphs.
func (m *Module) NumNodes() int {
	n := 0
	for _, g := range m.Graphs {
		n += len(g.Nodes)
	}
	return n
}

// Attribute returns the tensor attribute with the given qualified name, or nil.
func (m *Module) Attribute(qualname string) *Attribute {
	for i := range m.Attributes {
		if m.Attributes[i].Name == qualname {
			return &m.Attributes[i]
		}
	}
	return nil
}

// Annotation returns the value of the annotation key and whether it exists.
func (m *Module) Annotation(key string) (string, bool) {
	for _, a := range m.Annotations {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// SetAnnotation sets (or replaces) the annotation key.
func (m *Module) SetAnnotation(key, value string) {
	for i := range m.Annotations {
		if m.Annotations[i].Key == key {
			m.Annotations[i].Value = value
			return
		}
	}
	m.Annotations = append(m.Annotations, Annotation{Key: key, Value: value})
}

// Qualify resolves a get_attr or call_module target written in graph g to a
// qualified name relative to the root.
func Qualify(g *Graph, target string) string {
	if g.Name == "" {
		return target
	}
	return g.Name + "." + target
}

// DisplayName is how a graph is named in messages: its qualified name, or
// "<root>" for the root graph.
func DisplayName(qualname string) string {
	if qualname == "" {
		return "<root>"
	}
	return qualname
}

// Graph is one FX graph.
type Graph struct {
	Name  string // qualified name; "" for the root
	Nodes []Node
	// index is built on first use; atomically, so that methods that only
	// read a graph (Lookup, and Verify) are safe to call from several
	// goroutines, as for any other read of a Go value.
	index atomic.Pointer[nameIndex]
	fresh map[string]int // FreshName's next suffix per base name
}

// Lookup returns the first node with the given name.
func (g *Graph) Lookup(name string) (NodeID, bool) {
	return g.names().get(name)
}

// names returns the name index, building it if needed. Goroutines racing
// to build it build equal indexes; one is kept.
func (g *Graph) names() *nameIndex {
	if x := g.index.Load(); x != nil {
		return x
	}
	g.index.CompareAndSwap(nil, buildNameIndex(g))
	return g.index.Load()
}

// Reindex rebuilds the name index after nodes were added or renamed.
func (g *Graph) Reindex() {
	g.index.Store(buildNameIndex(g))
}

// Placeholders returns the ids of the placeholder nodes in order.
func (g *Graph) Placeholders() []NodeID {
	var out []NodeID
	for i := range g.Nodes {
		if g.Nodes[i].Op == OpPlaceholder {
			out = append(out, NodeID(i))
		}
	}
	return out
}

// OutputNode returns the id of the last output node, or NoNode.
func (g *Graph) OutputNode() NodeID {
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		if g.Nodes[i].Op == OpOutput {
			return NodeID(i)
		}
	}
	return NoNode
}

// Node is one FX node.
type Node struct {
	Name   string
	Op     OpKind
	Target string
	Args   []Arg
	Kwargs []Kwarg
	// Val is nil when the node has no recorded value. Values are
	// immutable: decoders share one Value between nodes with equal
	// metadata, so replace a node's Val rather than modifying it.
	Val  *Value
	Meta *Meta // nil when the node has no metadata
}

// Kwarg returns the keyword argument with the given name.
func (n *Node) Kwarg(name string) (*Arg, bool) {
	for i := range n.Kwargs {
		if n.Kwargs[i].Name == name {
			return &n.Kwargs[i].Value, true
		}
	}
	return nil, false
}

// Kwarg is a named argument.
type Kwarg struct {
	Name  string
	Value Arg
}

// ArgKind says which field of an Arg is set.
type ArgKind uint8

// Argument kinds.
const (
	ArgNone ArgKind = iota
	ArgNode
	ArgInt
	ArgFloat
	ArgBool
	ArgStr
	ArgList
	ArgTuple
	ArgDtype
	ArgDevice
	ArgLayout
	ArgMemoryFormat
	ArgSym
	ArgOp
	ArgDict
	ArgComplex
	ArgSlice
	ArgEllipsis
	ArgConstant
)

// Arg is a node of a typed argument tree.
//
//   - ArgNode: S is the referenced node's name, Ref its id (NoNode if the
//     name does not resolve).
//   - ArgInt: Int. ArgFloat: Float. ArgBool: B. ArgComplex: Float real, Imag.
//   - ArgStr, ArgDtype, ArgDevice, ArgLayout, ArgMemoryFormat, ArgOp: S.
//   - ArgSym: Sym.
//   - ArgList, ArgTuple: Elems. ArgDict: Keys()[i] → Elems[i].
//   - ArgSlice: Elems = [start, stop, step] (ArgNone where Python has None).
//   - ArgEllipsis: nothing.
//   - ArgConstant: S is the Python type's qualified name; its fields are
//     Keys()[i] → Elems[i] (a pytree TreeSpec, a FunctionSchema, ...: see
//     Constant in proto/hopctl/v1/graph.proto).
//
// An Arg is 48 bytes (TestArgSize): a graph holds millions of them. The
// integer, the float and the number of elements share one word (an
// argument has at most one of them), the elements are a pointer to the
// first (Elems and SetElems make and take the slice), and the fields only a
// few kinds use (Imag, Sym, Keys) sit behind one pointer, nil for every
// other kind. Read them with the accessors, build arguments with IntArg,
// FloatArg, ComplexArg, SymArg, DictArg, ConstantArg and WithElems, and
// change them with the setters: a setter of a rare field copies the
// extension, never writing one that a copy of the Arg shares, so an Arg
// keeps the value semantics of a plain struct. The element slice has no
// spare capacity (append to Elems() copies); compare arguments with Equal,
// not reflect.DeepEqual (which sees the first element only).
type Arg struct {
	Kind ArgKind
	B    bool
	Ref  NodeID
	// num is ArgInt's int64, ArgFloat's and ArgComplex's float64 bits, or
	// the number of elements when elems is not nil.
	num   uint64
	S     string
	elems *Arg
	ext   *argExt
}

// Elems returns the elements of a list, tuple, dict, slice or constant
// (nil if none). The slice is the Arg's own: writing an element writes the
// Arg's (as for every copy of the Arg).
func (a Arg) Elems() []Arg {
	if a.elems == nil {
		return nil
	}
	return unsafe.Slice(a.elems, int(a.num))
}

// SetElems sets the elements (their slice, shared, not copied).
func (a *Arg) SetElems(elems []Arg) {
	a.elems = unsafe.SliceData(elems)
	a.num = uint64(len(elems))
}

// WithElems returns a with the elements set: WithElems(Arg{Kind: ArgList}, xs).
func WithElems(a Arg, elems []Arg) Arg {
	a.SetElems(elems)
	return a
}

// argExt holds the fields of an Arg that few kinds use.
type argExt struct {
	imag float64
	sym  *SymExpr
	keys []string
}

// IntArg returns an ArgInt argument.
func IntArg(v int64) Arg { return Arg{Kind: ArgInt, num: uint64(v)} }

// FloatArg returns an ArgFloat argument.
func FloatArg(v float64) Arg { return Arg{Kind: ArgFloat, num: math.Float64bits(v)} }

// ComplexArg returns an ArgComplex argument.
func ComplexArg(re, im float64) Arg {
	a := Arg{Kind: ArgComplex, num: math.Float64bits(re)}
	if im != 0 || math.Signbit(im) {
		a.ext = &argExt{imag: im}
	}
	return a
}

// SymArg returns an ArgSym argument.
func SymArg(s *SymExpr) Arg {
	a := Arg{Kind: ArgSym}
	if s != nil {
		a.ext = &argExt{sym: s}
	}
	return a
}

// DictArg returns an ArgDict argument: keys[i] → elems[i].
func DictArg(keys []string, elems []Arg) Arg {
	a := WithElems(Arg{Kind: ArgDict}, elems)
	if keys != nil {
		a.ext = &argExt{keys: keys}
	}
	return a
}

// ConstantArg returns an ArgConstant argument of Python type typ with
// fields keys[i] → elems[i].
func ConstantArg(typ string, keys []string, elems []Arg) Arg {
	a := WithElems(Arg{Kind: ArgConstant, S: typ}, elems)
	if keys != nil {
		a.ext = &argExt{keys: keys}
	}
	return a
}

// floatKind reports whether the kind keeps a float in the shared word.
func floatKind(k ArgKind) bool { return k == ArgFloat || k == ArgComplex }

// Int returns an ArgInt's value (0 for a float kind or an argument with
// elements).
func (a *Arg) Int() int64 {
	if floatKind(a.Kind) || a.elems != nil {
		return 0
	}
	return int64(a.num)
}

// Float returns an ArgFloat's value or an ArgComplex's real part (0 for
// any other kind).
func (a *Arg) Float() float64 {
	if !floatKind(a.Kind) {
		return 0
	}
	return math.Float64frombits(a.num)
}

// SetInt sets the integer (the float and the elements share its word: it
// drops them).
func (a *Arg) SetInt(v int64) { a.num, a.elems = uint64(v), nil }

// SetFloat sets the float (the integer and the elements share its word:
// it drops them).
func (a *Arg) SetFloat(v float64) { a.num, a.elems = math.Float64bits(v), nil }

// Imag returns an ArgComplex's imaginary part.
func (a *Arg) Imag() float64 {
	if a.ext == nil {
		return 0
	}
	return a.ext.imag
}

// Sym returns an ArgSym's expression (nil if none).
func (a *Arg) Sym() *SymExpr {
	if a.ext == nil {
		return nil
	}
	return a.ext.sym
}

// Keys returns an ArgDict's keys or an ArgConstant's field names (nil if
// none). The slice is shared like Elems.
func (a *Arg) Keys() []string {
	if a.ext == nil {
		return nil
	}
	return a.ext.keys
}

// SetImag sets the imaginary part.
func (a *Arg) SetImag(v float64) { a.ownExt().imag = v }

// SetSym sets the symbolic expression.
func (a *Arg) SetSym(s *SymExpr) { a.ownExt().sym = s }

// SetKeys sets the keys.
func (a *Arg) SetKeys(keys []string) { a.ownExt().keys = keys }

// ownExt gives a an extension of its own (a copy of the one it may share
// with copies of it) and returns it.
func (a *Arg) ownExt() *argExt {
	x := &argExt{}
	if a.ext != nil {
		*x = *a.ext
	}
	a.ext = x
	return x
}

// NodeArg returns an argument that references node id named name.
func NodeArg(id NodeID, name string) Arg { return Arg{Kind: ArgNode, Ref: id, S: name} }

// WalkRefs calls fn for every node reference in the argument tree, in order.
// fn may rewrite the reference it is given.
func (a *Arg) WalkRefs(fn func(a *Arg)) {
	switch {
	case a.Kind == ArgNode:
		fn(a)
		return
	case len(a.Elems()) == 0:
		return
	case a.flat():
		// One level of leaves (a list of nodes or ints), without a stack.
		for i := range a.Elems() {
			if a.Elems()[i].Kind == ArgNode {
				fn(&a.Elems()[i])
			}
		}
		return
	}
	// Iterative to stay safe on adversarially deep trees.
	stack := []*Arg{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Kind == ArgNode {
			fn(x)
			continue
		}
		for i := len(x.Elems()) - 1; i >= 0; i-- {
			stack = append(stack, &x.Elems()[i])
		}
	}
}

// flat reports whether no element of a has elements of its own.
func (a *Arg) flat() bool {
	for i := range a.Elems() {
		if len(a.Elems()[i].Elems()) > 0 {
			return false
		}
	}
	return true
}

// WalkRefs calls fn for every node reference in the node's args then kwargs.
func (n *Node) WalkRefs(fn func(a *Arg)) {
	for i := range n.Args {
		// A reference or a scalar, most arguments, without a call of
		// Arg.WalkRefs.
		switch a := &n.Args[i]; {
		case a.Kind == ArgNode:
			fn(a)
		case a.elems != nil:
			a.WalkRefs(fn)
		}
	}
	for i := range n.Kwargs {
		n.Kwargs[i].Value.WalkRefs(fn)
	}
}

// SymKind is the kind of a symbolic scalar.
type SymKind uint8

// Symbolic scalar kinds.
const (
	SymUnspecified SymKind = iota
	SymInt
	SymFloat
	SymBool
)

// SymExpr is a symbolic scalar written as an expression.
type SymExpr struct {
	Kind    SymKind
	Expr    string
	Hint    string
	HasHint bool
}

// ValueKind says which field of a Value is set.
type ValueKind uint8

// Value kinds.
const (
	ValUnset ValueKind = iota
	ValTensor
	ValSym
	ValList
	ValTuple
	ValNone
	ValInt
	ValFloat
	ValBool
	ValOpaque
)

// Value is a node's meta["val"].
type Value struct {
	Kind   ValueKind
	Tensor *TensorMeta
	Sym    *SymExpr
	Elems  []Value
	I      int64
	F      float64
	B      bool
	S      string // opaque type name
}

// Dim is a size, stride or offset: concrete when Expr is empty.
type Dim struct {
	Expr string
	Val  int64
}

// IsSymbolic reports whether the dimension is an expression.
func (d Dim) IsSymbolic() bool { return d.Expr != "" }

// TensorMeta is the metadata of a tensor value.
type TensorMeta struct {
	Shape         []Dim
	Stride        []Dim
	StorageOffset Dim
	Dtype         string
	Device        string
	Layout        string
	MemoryFormat  string
	RequiresGrad  bool
	IsQuantized   bool
	QParams       *QParams
	StorageID     int64
	HasStorageID  bool
}

// QParams are quantization parameters.
type QParams struct {
	QScheme    string
	Scale      float64
	ZeroPoint  int64
	Scales     []float64
	ZeroPoints []int64
	Axis       int64
}

// Meta is the node metadata hopctl keeps.
type Meta struct {
	StackTrace    string
	NNModuleStack []ModuleStackEntry
	SourceFnStack []ModuleStackEntry
	SeqNr         int64
	HasSeqNr      bool
	FwdSource     string
	Extra         []Annotation
}

// ModuleStackEntry is one entry of nn_module_stack or source_fn_stack.
type ModuleStackEntry struct {
	Key, Path, Type string
}

// Annotation is a key/value pair.
type Annotation struct {
	Key, Value string
}

// HOPClass is a higher-order operator's Python class as the exporter saw
// it: the HOP's target ("higher_order.invoke_quant") and the qualified
// names of its class and the classes it derives from, in method resolution
// order ("torch._higher_order_ops.base_hop.BaseHOP" among them for a
// BaseHOP).
type HOPClass struct {
	Target  string
	Classes []string
}

// Attribute is a tensor read by get_attr nodes, or (Const set) another
// constant, such as a pytree TreeSpec AOTAutograd lifted out of a graph;
// a constant has no tensor metadata (Meta is ignored and not written).
type Attribute struct {
	Name  string
	Meta  TensorMeta
	Data  []byte
	Const *Arg
}

// SchemaText is an op schema as PyTorch prints it.
type SchemaText struct {
	Name   string // "aten::add.Tensor"
	Schema string
}

// SchemaName converts a canonical call_function target ("aten.add.Tensor",
// "aten.relu.default") to the schema name PyTorch uses ("aten::add.Tensor",
// "aten::relu"). ok is false for targets that are not namespace.op.overload.
func SchemaName(target string) (name string, ok bool) {
	ns, rest, found := strings.Cut(target, ".")
	if !found || ns == "" {
		return "", false
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot <= 0 || dot == len(rest)-1 {
		return "", false
	}
	op, overload := rest[:dot], rest[dot+1:]
	if overload == "default" {
		return ns + "::" + op, true
	}
	return ns + "::" + op + "." + overload, true
}

// NewGraph returns an empty graph with the given qualified name.
func NewGraph(name string) *Graph {
	return &Graph{Name: name}
}

// Append adds n at the end of the graph and returns its id. n.Name must not
// be in use (see FreshName).
func (g *Graph) Append(n Node) NodeID {
	names := g.names()
	id := NodeID(len(g.Nodes))
	g.Nodes = append(g.Nodes, n)
	names.add(n.Name, id)
	return id
}

// FreshName returns base if no node has that name, else base_1, base_2, …,
// the first free one, as FX names nodes.
func (g *Graph) FreshName(base string) string {
	names := g.names()
	if _, used := names.get(base); !used {
		return base
	}
	if g.fresh == nil {
		g.fresh = map[string]int{}
	}
	for i := max(g.fresh[base], 1); ; i++ {
		name := base + "_" + strconv.Itoa(i)
		if _, used := names.get(name); !used {
			g.fresh[base] = i + 1
			return name
		}
	}
}

// Clone returns a deep copy of v.
func (v *Value) Clone() *Value {
	if v == nil {
		return nil
	}
	c := *v
	if v.Tensor != nil {
		t := *v.Tensor
		t.Shape = append([]Dim(nil), v.Tensor.Shape...)
		t.Stride = append([]Dim(nil), v.Tensor.Stride...)
		if q := v.Tensor.QParams; q != nil {
			qc := *q
			qc.Scales = append([]float64(nil), q.Scales...)
			qc.ZeroPoints = append([]int64(nil), q.ZeroPoints...)
			t.QParams = &qc
		}
		c.Tensor = &t
	}
	if v.Sym != nil {
		s := *v.Sym
		c.Sym = &s
	}
	if v.Elems != nil {
		c.Elems = make([]Value, len(v.Elems))
		for i := range v.Elems {
			c.Elems[i] = *v.Elems[i].Clone()
		}
	}
	return &c
}

// Submodule returns the module rooted at the graph with the given
// qualified name: that graph as the root, the graphs and attributes nested
// under it renamed relative to it, and m's format, producer, schemas and
// annotations. Node slices are shared with m, so treat the result as
// read-only or clone what you change. ok is false when m has no such graph.
func (m *Module) Submodule(qualname string) (sub *Module, ok bool) {
	g := m.Graph(qualname)
	if g == nil {
		return nil, false
	}
	s := *m
	s.graphIndex = nil // s has graphs of its own
	s.Graphs = []*Graph{{Name: "", Nodes: g.Nodes}}
	s.Attributes = nil
	prefix := qualname + "."
	if len(m.Graphs) < minIndexedGraphs {
		for _, h := range m.Graphs {
			if rest, ok := strings.CutPrefix(h.Name, prefix); ok {
				s.Graphs = append(s.Graphs, &Graph{Name: rest, Nodes: h.Nodes})
			}
		}
	} else {
		// The descendants by binary search on the sorted names, in the
		// module's order: O(log graphs + descendants), not a scan of
		// every graph per call (quadratic in the HOP calls of joint).
		idx := m.index()
		gs := m.Graphs
		lo, _ := slices.BinarySearchFunc(idx.byName, prefix, func(i int, p string) int { return strings.Compare(gs[i].Name, p) })
		hi := lo
		for hi < len(idx.byName) && strings.HasPrefix(gs[idx.byName[hi]].Name, prefix) {
			hi++
		}
		pos := slices.Clone(idx.byName[lo:hi])
		slices.Sort(pos)
		for _, i := range pos {
			s.Graphs = append(s.Graphs, &Graph{Name: gs[i].Name[len(prefix):], Nodes: gs[i].Nodes})
		}
	}
	for _, a := range m.Attributes {
		if rest, ok := strings.CutPrefix(a.Name, prefix); ok {
			a.Name = rest
			s.Attributes = append(s.Attributes, a)
		}
	}
	return &s, true
}
