package pt2

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// The mapping onto the IR mirrors torch's own ExportedProgramDeserializer
// (torch/_export/serde/serialize.py, GraphModuleDeserializer), so that a
// program read here is the FX graph torch.export.load would rebuild:
//
//   - graph.inputs become placeholders named after their argument; a
//     literal input (a constant_input spec) is named after the spec;
//   - every node becomes a call_function; a node with a single tensor or
//     symbolic output is named after that output, otherwise one getitem
//     node per output (named after it; nested getitems for lists) follows
//     the call, which is named after Node.name (8.16+) or its op;
//   - an as_graph argument becomes a submodule (qualified by the
//     enclosing graph's name) and a get_attr node in the calling graph;
//     a subgraph written twice under one name (invoke_subgraph) is one
//     submodule read through two get_attr nodes;
//   - graph.outputs become the output node: a tuple, or the bare value
//     when is_single_tensor_return;
//   - tensor_values and the symbolic value tables become meta["val"].

var scalarTypes = map[int64]string{
	1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float16", 7: "float32",
	8: "float64", 9: "complex32", 10: "complex64", 11: "complex128", 12: "bool", 13: "bfloat16",
	28: "uint16", 29: "float8_e4m3fn", 30: "float8_e5m2", 31: "float8_e4m3fnuz", 32: "float8_e5m2fnuz",
	33: "float8_e8m0fnu", 34: "uint32", 35: "uint64",
}

// scalarTypeNames are ScalarType's member names, for files that spell
// enums by name.
var scalarTypeNames = map[string]int64{
	"UNKNOWN": 0, "BYTE": 1, "CHAR": 2, "SHORT": 3, "INT": 4, "LONG": 5, "HALF": 6, "FLOAT": 7,
	"DOUBLE": 8, "COMPLEXHALF": 9, "COMPLEXFLOAT": 10, "COMPLEXDOUBLE": 11, "BOOL": 12, "BFLOAT16": 13,
	"UINT16": 28, "FLOAT8E4M3FN": 29, "FLOAT8E5M2": 30, "FLOAT8E4M3FNUZ": 31, "FLOAT8E5M2FNUZ": 32,
	"FLOAT8E8M0FNU": 33, "UINT32": 34, "UINT64": 35,
}

var layouts = map[int64]string{
	1: "sparse_coo", 2: "sparse_csr", 3: "sparse_csc", 4: "sparse_bsr", 5: "sparse_bsc", 6: "_mkldnn", 7: "strided",
}

var layoutNames = map[string]int64{
	"Unknown": 0, "SparseCoo": 1, "SparseCsr": 2, "SparseCsc": 3, "SparseBsr": 4, "SparseBsc": 5, "_mkldnn": 6, "Strided": 7,
}

var memoryFormats = map[int64]string{
	1: "contiguous_format", 2: "channels_last", 3: "channels_last_3d", 4: "preserve_format",
}

var memoryFormatNames = map[string]int64{
	"Unknown": 0, "ContiguousFormat": 1, "ChannelsLast": 2, "ChannelsLast3d": 3, "PreserveFormat": 4,
}

var argumentKindNames = map[string]int64{"UNKNOWN": 0, "POSITIONAL": 1, "KEYWORD": 2}

func enumName(e enumInt, what string, names map[string]int64, values map[int64]string) (string, error) {
	v := e.Val
	if e.Name != "" {
		n, ok := names[e.Name]
		if !ok {
			return "", fmt.Errorf("unknown %s %q", what, e.Name)
		}
		v = n
	}
	s, ok := values[v]
	if !ok {
		if v == 0 {
			return "", fmt.Errorf("%s is UNKNOWN (0)", what)
		}
		return "", fmt.Errorf("unknown %s %d (written by a newer torch?)", what, v)
	}
	return s, nil
}

// converter turns one decoded program into an ir.Module.
type converter struct {
	file    string
	minor   int64
	mod     *ir.Module
	builtin *opschema.Table
	// registered maps a submodule's qualified name to its graph.
	registered map[string]*ir.Graph
	sig        *graphSignature
}

// scope is one graph being converted.
type scope struct {
	g     *ir.Graph
	src   *graph
	root  bool
	used  map[string]bool
	fresh map[string]int
}

// reserve marks every name the serialized graph defines as used, so the
// names made up for getitems of lists, None outputs and the output node
// never take a name a later value has.
func (s *scope) reserve() {
	for i := range s.src.Inputs {
		s.used[argName(&s.src.Inputs[i])] = true
	}
	var walk func(a *argument)
	walk = func(a *argument) {
		if n := argName(a); n != "" {
			s.used[n] = true
		}
		for _, t := range a.Tensors {
			s.used[t.Name] = true
		}
	}
	for i := range s.src.Nodes {
		for j := range s.src.Nodes[i].Outputs {
			walk(&s.src.Nodes[i].Outputs[j])
		}
	}
	delete(s.used, "")
}

// add appends n to the graph and returns its index.
func (s *scope) add(n ir.Node) int {
	s.used[n.Name] = true
	s.g.Nodes = append(s.g.Nodes, n)
	return len(s.g.Nodes) - 1
}

func (c *converter) errAt(graph, node string, format string, args ...any) error {
	return &ir.DecodeError{Loc: ir.At(c.file, graph, node), Err: fmt.Errorf(format, args...)}
}

// convertGraph converts src into a new graph named qual (and its
// subgraphs, registered as they are met).
func (c *converter) convertGraph(qual string, src *graph, root bool) (*ir.Graph, error) {
	g := ir.NewGraph(qual)
	s := &scope{g: g, src: src, root: root, used: map[string]bool{}, fresh: map[string]int{}}
	s.reserve()
	for i := range src.Inputs {
		if err := c.placeholder(s, i); err != nil {
			return nil, err
		}
	}
	for i := range src.Nodes {
		if err := c.node(s, &src.Nodes[i]); err != nil {
			return nil, err
		}
	}
	if err := c.output(s); err != nil {
		return nil, err
	}
	g.Reindex()
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) {
			if id, ok := g.Lookup(a.S); ok {
				a.Ref = id
			}
		})
	}
	return g, nil
}

func (c *converter) placeholder(s *scope, i int) error {
	in := &s.src.Inputs[i]
	var name string
	var val *ir.Value
	switch in.Tag {
	case "as_tensor":
		name = in.Tensor.Name
	case "as_sym_int", "as_sym_float", "as_sym_bool":
		sa := in.sym()
		if sa.Tag != "as_name" {
			v := symLiteral(sa)
			val = &v
			name = c.literalInputName(s, i)
		} else {
			name = sa.Name
		}
	case "as_custom_obj":
		name = in.CustomObj.Name
	case "as_int", "as_float", "as_bool", "as_none", "as_string":
		name = c.literalInputName(s, i)
		v := literalValue(in)
		val = &v
	default:
		return c.errAt(s.g.Name, "", "graph input %d is %s; torch accepts only tensors, symbolic values, custom objects and constants as inputs", i, in.Tag)
	}
	if name == "" {
		return c.errAt(s.g.Name, "", "graph input %d has no name", i)
	}
	if val == nil {
		v, err := c.valueOf(s, name)
		if err != nil {
			return c.errAt(s.g.Name, name, "%v", err)
		}
		val = v
	}
	s.add(ir.Node{Name: name, Op: ir.OpPlaceholder, Target: name, Val: val})
	return nil
}

// literalInputName names a constant graph input as torch does: after the
// root signature's spec at the same position.
func (c *converter) literalInputName(s *scope, i int) string {
	if s.root && c.sig != nil && i < len(c.sig.InputSpecs) {
		sp := &c.sig.InputSpecs[i]
		switch sp.Tag {
		case "constant_input":
			return sp.ConstantInput.Name
		case "user_input":
			if n := argName(&sp.UserInput.Arg); n != "" {
				return n
			}
		}
	}
	return "arg" + strconv.Itoa(i)
}

// valueOf is meta["val"] of the value name defines in the scope's tables,
// or nil when no table has it (torch then leaves meta["val"] unset).
func (c *converter) valueOf(s *scope, name string) (*ir.Value, error) {
	if t, ok := s.src.TensorValues[name]; ok {
		tm, err := tensorMetaOf(&t)
		if err != nil {
			return nil, fmt.Errorf("tensor_values[%q]: %w", name, err)
		}
		return &ir.Value{Kind: ir.ValTensor, Tensor: tm}, nil
	}
	if v, ok := s.src.SymIntValues[name]; ok {
		return symValueOf(&v, ir.SymInt), nil
	}
	if v, ok := s.src.SymFloatValues[name]; ok {
		return symValueOf(&v, ir.SymFloat), nil
	}
	if v, ok := s.src.SymBoolValues[name]; ok {
		return symValueOf(&v, ir.SymBool), nil
	}
	if v, ok := s.src.CustomObjValues[name]; ok {
		return &ir.Value{Kind: ir.ValOpaque, S: v.ClassFQN}, nil
	}
	return nil, nil
}

func symValueOf(v *symValue, kind ir.SymKind) *ir.Value {
	switch v.Tag {
	case "as_int":
		return &ir.Value{Kind: ir.ValInt, I: v.Int}
	case "as_float":
		return &ir.Value{Kind: ir.ValFloat, F: float64(v.Float)}
	case "as_bool":
		return &ir.Value{Kind: ir.ValBool, B: v.Bool}
	}
	return &ir.Value{Kind: ir.ValSym, Sym: symExprOf(&v.Expr, kind)}
}

func symExprOf(e *symExpr, kind ir.SymKind) *ir.SymExpr {
	s := &ir.SymExpr{Kind: kind, Expr: SympyString(e.ExprStr)}
	if h := e.Hint; h != nil {
		s.HasHint = true
		switch h.Tag {
		case "as_int":
			s.Hint = strconv.FormatInt(h.Int, 10)
		case "as_float":
			s.Hint = ir.PyFloat(float64(h.Float))
		case "as_bool":
			s.Hint = ir.PyBool(h.Bool)
		default:
			s.HasHint = false
		}
	}
	return s
}

func symLiteral(a symArgument) ir.Value {
	switch a.Tag {
	case "as_int":
		return ir.Value{Kind: ir.ValInt, I: a.Int}
	case "as_float":
		return ir.Value{Kind: ir.ValFloat, F: float64(a.Float)}
	case "as_bool":
		return ir.Value{Kind: ir.ValBool, B: a.Bool}
	}
	return ir.Value{Kind: ir.ValNone}
}

func literalValue(a *argument) ir.Value {
	switch a.Tag {
	case "as_int":
		return ir.Value{Kind: ir.ValInt, I: a.Int}
	case "as_float":
		return ir.Value{Kind: ir.ValFloat, F: float64(a.Float)}
	case "as_bool":
		return ir.Value{Kind: ir.ValBool, B: a.Bool}
	case "as_string":
		return ir.Value{Kind: ir.ValOpaque, S: "str"}
	}
	return ir.Value{Kind: ir.ValNone}
}

func dimOf(s *symInt) (ir.Dim, error) {
	switch s.Tag {
	case "as_int":
		return ir.Dim{Val: s.Int}, nil
	case "as_expr":
		e := SympyString(s.Expr.ExprStr)
		if e == "" {
			return ir.Dim{}, fmt.Errorf("empty symbolic expression")
		}
		if v, err := strconv.ParseInt(e, 10, 64); err == nil {
			return ir.Dim{Val: v}, nil
		}
		return ir.Dim{Expr: e}, nil
	}
	return ir.Dim{}, fmt.Errorf("size is %s, not an int or expression", s.Tag)
}

func dimsOf(ss []symInt) ([]ir.Dim, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	out := make([]ir.Dim, len(ss))
	for i := range ss {
		d, err := dimOf(&ss[i])
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func tensorMetaOf(t *tensorMeta) (*ir.TensorMeta, error) {
	dtype, err := enumName(t.Dtype, "dtype", scalarTypeNames, scalarTypes)
	if err != nil {
		return nil, err
	}
	layout, err := enumName(t.Layout, "layout", layoutNames, layouts)
	if err != nil {
		return nil, err
	}
	shape, err := dimsOf(t.Sizes)
	if err != nil {
		return nil, fmt.Errorf("sizes: %w", err)
	}
	stride, err := dimsOf(t.Strides)
	if err != nil {
		return nil, fmt.Errorf("strides: %w", err)
	}
	var off ir.Dim
	if t.StorageOffset.Tag != "" {
		if off, err = dimOf(&t.StorageOffset); err != nil {
			return nil, fmt.Errorf("storage_offset: %w", err)
		}
	}
	if len(shape) != len(stride) && layout == "strided" {
		return nil, fmt.Errorf("%d sizes but %d strides", len(shape), len(stride))
	}
	tm := &ir.TensorMeta{
		Shape: shape, Stride: stride, StorageOffset: off,
		Dtype: dtype, Device: deviceString(&t.Device), Layout: layout,
		RequiresGrad: t.RequiresGrad,
	}
	if layout == "strided" {
		tm.MemoryFormat = suggestMemoryFormat(shape, stride)
	}
	return tm, nil
}

func deviceString(d *device) string {
	if d.Index == nil {
		return d.Type
	}
	return d.Type + ":" + strconv.FormatInt(int64(*d.Index), 10)
}

// suggestMemoryFormat names the memory format the strides are dense in,
// as the bridge records it (torch's TensorMeta in the archive has none):
// contiguous, channels_last (4-d), channels_last_3d (5-d), or "" for none.
// Size-1 dimensions' strides do not count, as in torch's is_contiguous.
// Symbolic strides are compared as the expressions they print as.
func suggestMemoryFormat(shape, stride []ir.Dim) string {
	dense := func(order []int) bool {
		expect := ir.Dim{Val: 1}
		for _, d := range order {
			if !(shape[d].Expr == "" && shape[d].Val == 1) && stride[d] != expect {
				return false
			}
			expect = mulDim(expect, shape[d])
		}
		return true
	}
	n := len(shape)
	order := make([]int, n)
	for i := range order {
		order[i] = n - 1 - i
	}
	if dense(order) {
		return "contiguous_format"
	}
	switch n {
	case 4:
		if dense([]int{1, 3, 2, 0}) {
			return "channels_last"
		}
	case 5:
		if dense([]int{1, 4, 3, 2, 0}) {
			return "channels_last_3d"
		}
	}
	return ""
}

func mulDim(a, b ir.Dim) ir.Dim {
	switch {
	case a.Expr == "" && b.Expr == "":
		return ir.Dim{Val: a.Val * b.Val}
	case a.Expr == "" && a.Val == 1:
		return b
	case b.Expr == "" && b.Val == 1:
		return a
	}
	return ir.Dim{Expr: dimString(a) + "*" + dimString(b)}
}

func dimString(d ir.Dim) string {
	if d.Expr != "" {
		return d.Expr
	}
	return strconv.FormatInt(d.Val, 10)
}

// Target maps a serialized target to hopctl's canonical spelling:
// torch.ops.aten.add.Tensor → aten.add.Tensor, torch.ops.higher_order.cond
// → higher_order.cond; Python callables (_operator.add, math.trunc,
// torch.sym_not) keep their module-qualified spelling.
func Target(s string) string {
	if rest, ok := strings.CutPrefix(s, "torch.ops."); ok {
		return rest
	}
	return s
}

// opBase is the base name FX gives a call of target t when the file
// names none (before 8.16): an OpOverload's __name__ sanitized
// (aten.max.dim → max_dim, as torch 2.6's deserializer named it), a
// HOP's or Python callable's name (higher_order.cond → cond,
// _operator.add → add).
func opBase(t string) string {
	parts := strings.Split(t, ".")
	if len(parts) == 3 && parts[0] != "torch" && parts[0] != "_operator" && parts[0] != "math" {
		return parts[1] + "_" + parts[2]
	}
	return parts[len(parts)-1]
}

func isHOPTarget(t string) bool { return strings.HasPrefix(t, opschema.HigherOrderNamespace+".") }

func (c *converter) node(s *scope, n *node) error {
	if n.Target == "" {
		return c.errAt(s.g.Name, nodeLabel(n), "node has no target")
	}
	target := Target(n.Target)
	hop := isHOPTarget(target)
	label := nodeLabel(n)
	var schema *opschema.Schema
	if !hop {
		if on, err := opschema.ParseTarget(target); err == nil {
			schema, _ = c.builtin.Lookup(on)
		}
	}
	call := ir.Node{Op: ir.OpCallFunction, Target: target}
	type named struct {
		name string
		arg  ir.Arg
		kind int64
	}
	firstNew := len(s.g.Nodes)
	ins := make([]named, 0, len(n.Inputs))
	for i := range n.Inputs {
		in := &n.Inputs[i]
		if in.Arg.Tag == "" {
			return c.errAt(s.g.Name, label, "input %q has no argument", in.Name)
		}
		a, err := c.arg(s, &in.Arg)
		if err != nil {
			return c.errAt(s.g.Name, label, "input %q: %v", in.Name, err)
		}
		kind := int64(kindUnknown)
		if in.Kind != nil {
			kind = in.Kind.Val
			if in.Kind.Name != "" {
				kind = argumentKindNames[in.Kind.Name]
			}
			if kind != kindPositional && kind != kindKeyword {
				return c.errAt(s.g.Name, label, "input %q has argument kind %d (want 1 positional or 2 keyword)", in.Name, kind)
			}
		}
		ins = append(ins, named{in.Name, a, kind})
	}
	// Placement: the file's ArgumentKind when it has one (8.7+); else, as
	// torch 2.6's deserialize_inputs did, the schema's (positional when
	// the parameter has no default and is not keyword-only); HOP operands
	// are positional exactly when unnamed.
	positional := func(x named) bool {
		switch {
		case x.kind == kindPositional:
			return true
		case x.kind == kindKeyword:
			return false
		case hop || x.name == "":
			return x.name == ""
		case schema != nil:
			if i := schema.Argument(x.name); i >= 0 {
				a := &schema.Arguments[i]
				return a.Default == nil && !a.KwargOnly
			}
			return false
		}
		return true
	}
	for _, x := range ins {
		if positional(x) {
			if len(call.Kwargs) > 0 {
				return c.errAt(s.g.Name, label, "positional input %q follows a keyword input", x.name)
			}
			call.Args = append(call.Args, x.arg)
		} else {
			if x.name == "" {
				return c.errAt(s.g.Name, label, "keyword input without a name")
			}
			call.Kwargs = append(call.Kwargs, ir.Kwarg{Name: x.name, Value: x.arg})
		}
	}
	if hop {
		if err := normalizeHOP(&call); err != nil {
			return c.errAt(s.g.Name, label, "%v", err)
		}
	}
	if md := n.Metadata; len(md) > 0 {
		m, err := metaOf(md)
		if err != nil {
			return c.errAt(s.g.Name, label, "metadata: %v", err)
		}
		call.Meta = m
		// The get_attr nodes of the call's subgraphs carry the call's
		// metadata, as torch's deserializer gives them.
		for i := firstNew; i < len(s.g.Nodes); i++ {
			if s.g.Nodes[i].Op == ir.OpGetAttr {
				s.g.Nodes[i].Meta = m
			}
		}
	}
	return c.outputs(s, n, call, hop, label)
}

func nodeLabel(n *node) string {
	if n.Name != nil && *n.Name != "" {
		return *n.Name
	}
	if len(n.Outputs) == 1 {
		if name := argName(&n.Outputs[0]); name != "" {
			return name
		}
	}
	return Target(n.Target)
}

// outputs names the call after its single output, or appends it and one
// getitem per output (torch's deserialize_outputs).
func (c *converter) outputs(s *scope, n *node, call ir.Node, hop bool, label string) error {
	outs := n.Outputs
	single := ""
	if len(outs) == 1 {
		o := &outs[0]
		single = valueName(o)
		if o.Tag == "as_tensor" && hop && n.IsHopSingleTensorReturn != nil && !*n.IsHopSingleTensorReturn {
			// A HOP's single as_tensor is a bare tensor unless the
			// node says it returns a 1-tuple (8.6+: false).
			single = ""
		}
		if o.Tag != "as_tensor" && single == "" && o.Tag != "as_tensors" && o.Tag != "as_none" {
			return c.errAt(s.g.Name, label, "output is %s; torch writes a named tensor, tensor list or symbolic value here", o.Tag)
		}
	}
	if single != "" {
		call.Name = single
		v, err := c.valueOf(s, single)
		if err != nil {
			return c.errAt(s.g.Name, single, "%v", err)
		}
		call.Val = v
		s.add(call)
		return nil
	}
	// The call itself: Node.name (8.16+) or the op's name, made fresh.
	base := opBase(call.Target)
	if n.Name != nil && *n.Name != "" {
		base = *n.Name
	}
	call.Name = c.fresh(s, base)
	at := s.add(call)
	if len(outs) == 0 {
		s.g.Nodes[at].Val = &ir.Value{Kind: ir.ValNone}
		return nil
	}
	elems := outs
	// 8.2 wrote a 1-tuple (and a Tensor[] return) as one as_tensors.
	if len(outs) == 1 && outs[0].Tag == "as_tensors" {
		elems = make([]argument, len(outs[0].Tensors))
		for i, t := range outs[0].Tensors {
			elems[i] = argument{Tag: "as_tensor", Tensor: t}
		}
	} else if len(outs) == 1 && outs[0].Tag == "as_none" {
		s.g.Nodes[at].Val = &ir.Value{Kind: ir.ValNone}
		return nil
	}
	val, err := c.getitems(s, call.Name, elems, call.Meta, label)
	if err != nil {
		return err
	}
	val.Kind = ir.ValTuple
	s.g.Nodes[at].Val = val
	return nil
}

// fresh returns base, or base_1, base_2, … if a node already has the name,
// as FX names nodes.
func (c *converter) fresh(s *scope, base string) string {
	if !s.used[base] {
		return base
	}
	for i := max(s.fresh[base], 1); ; i++ {
		name := base + "_" + strconv.Itoa(i)
		if !s.used[name] {
			s.fresh[base] = i + 1
			return name
		}
	}
}

// getitems appends one getitem of from per element and returns the
// elements' values as a list.
func (c *converter) getitems(s *scope, from string, elems []argument, meta *ir.Meta, label string) (*ir.Value, error) {
	val := &ir.Value{Kind: ir.ValList, Elems: make([]ir.Value, 0, len(elems))}
	add := func(name string, idx int) {
		s.add(ir.Node{
			Name: name, Op: ir.OpCallFunction, Target: "_operator.getitem",
			Args: []ir.Arg{{Kind: ir.ArgNode, S: from, Ref: ir.NoNode}, ir.IntArg(int64(idx))},
			Meta: meta,
		})
	}
	for i := range elems {
		e := &elems[i]
		name := valueName(e)
		switch e.Tag {
		case "as_tensor", "as_sym_int", "as_sym_float", "as_sym_bool":
		case "as_none":
			name = c.fresh(s, "as_none")
			add(name, i)
			s.g.Nodes[len(s.g.Nodes)-1].Val = &ir.Value{Kind: ir.ValNone}
			val.Elems = append(val.Elems, ir.Value{Kind: ir.ValNone})
			continue
		case "as_tensors", "as_optional_tensors":
			list := c.fresh(s, "getitem")
			add(list, i)
			at := len(s.g.Nodes) - 1
			inner := make([]argument, 0, len(e.Tensors))
			if e.Tag == "as_tensors" {
				for _, t := range e.Tensors {
					inner = append(inner, argument{Tag: "as_tensor", Tensor: t})
				}
			} else {
				for _, o := range e.OptionalTensors {
					if o.Tag == "as_tensor" {
						inner = append(inner, argument{Tag: "as_tensor", Tensor: o.Tensor})
					} else {
						inner = append(inner, argument{Tag: "as_none"})
					}
				}
			}
			v, err := c.getitems(s, list, inner, meta, label)
			if err != nil {
				return nil, err
			}
			s.g.Nodes[at].Val = v
			val.Elems = append(val.Elems, *v)
			continue
		default:
			return nil, c.errAt(s.g.Name, label, "output %d is %s; only tensors, tensor lists, symbolic values and None are outputs", i, e.Tag)
		}
		if name == "" {
			return nil, c.errAt(s.g.Name, label, "output %d has no name", i)
		}
		add(name, i)
		v, err := c.valueOf(s, name)
		if err != nil {
			return nil, c.errAt(s.g.Name, name, "%v", err)
		}
		s.g.Nodes[len(s.g.Nodes)-1].Val = v
		if v != nil {
			val.Elems = append(val.Elems, *v)
		} else {
			val.Elems = append(val.Elems, ir.Value{Kind: ir.ValNone})
		}
	}
	return val, nil
}

func (c *converter) output(s *scope) error {
	outs := s.src.Outputs
	args := make([]ir.Arg, len(outs))
	vals := make([]ir.Value, len(outs))
	for i := range outs {
		o := &outs[i]
		switch o.Tag {
		case "as_tensor", "as_sym_int", "as_sym_float", "as_sym_bool", "as_int", "as_float", "as_bool", "as_none", "as_string", "as_custom_obj":
		default:
			return c.errAt(s.g.Name, "output", "graph output %d is %s; torch writes tensors, symbolic values and constants as outputs", i, o.Tag)
		}
		a, err := c.arg(s, o)
		if err != nil {
			return c.errAt(s.g.Name, "output", "graph output %d: %v", i, err)
		}
		args[i] = a
		if a.Kind == ir.ArgNode {
			v, err := c.valueOf(s, a.S)
			if err != nil {
				return c.errAt(s.g.Name, a.S, "%v", err)
			}
			if v != nil {
				vals[i] = *v
			} else {
				vals[i] = ir.Value{Kind: ir.ValNone}
			}
		} else {
			vals[i] = argValue(&a)
		}
	}
	out := ir.Node{Name: c.fresh(s, "output"), Op: ir.OpOutput, Target: "output"}
	if s.src.IsSingleTensorReturn {
		if len(outs) != 1 {
			return c.errAt(s.g.Name, "output", "is_single_tensor_return with %d outputs", len(outs))
		}
		out.Args = args
		out.Val = &vals[0]
	} else {
		out.Args = []ir.Arg{ir.WithElems(ir.Arg{Kind: ir.ArgTuple}, args)}
		out.Val = &ir.Value{Kind: ir.ValTuple, Elems: vals}
	}
	s.add(out)
	return nil
}

func argValue(a *ir.Arg) ir.Value {
	switch a.Kind {
	case ir.ArgInt:
		return ir.Value{Kind: ir.ValInt, I: a.Int()}
	case ir.ArgFloat:
		return ir.Value{Kind: ir.ValFloat, F: a.Float()}
	case ir.ArgBool:
		return ir.Value{Kind: ir.ValBool, B: a.B}
	}
	return ir.Value{Kind: ir.ValNone}
}

// argName is the name of a's value: a named tensor, symbolic value or
// custom object.
func argName(a *argument) string {
	if a.Tag == "as_custom_obj" {
		return a.CustomObj.Name
	}
	return valueName(a)
}

// valueName is the name of a's value when a is a tensor or a symbolic
// value, or "".
func valueName(a *argument) string {
	if a.Tag == "as_tensor" {
		return a.Tensor.Name
	}
	return a.sym().Name
}

// sym is the payload of an as_sym_int, as_sym_float or as_sym_bool
// argument; the zero symArgument for any other.
func (a *argument) sym() symArgument {
	switch a.Tag {
	case "as_sym_int":
		return a.SymInt
	case "as_sym_float":
		return a.SymFloat
	case "as_sym_bool":
		return a.SymBool
	}
	return symArgument{}
}

func ref(name string) ir.Arg { return ir.Arg{Kind: ir.ArgNode, S: name, Ref: ir.NoNode} }

func symArg(a symArgument) ir.Arg {
	switch a.Tag {
	case "as_name":
		return ref(a.Name)
	case "as_int":
		return ir.IntArg(a.Int)
	case "as_float":
		return ir.FloatArg(float64(a.Float))
	case "as_bool":
		return ir.Arg{Kind: ir.ArgBool, B: a.Bool}
	}
	return ir.Arg{Kind: ir.ArgNone}
}

// arg converts one Argument. A subgraph (as_graph) is converted and
// registered, and a get_attr node reading it is appended to the scope.
// The variants of scalars, tensors and their lists convert by the type of
// their payload (payloadArg); the others need the scope or a table.
func (c *converter) arg(s *scope, a *argument) (ir.Arg, error) {
	switch a.Tag {
	case "as_none":
		return ir.Arg{Kind: ir.ArgNone}, nil
	case "as_tensor":
		if a.Tensor.Name == "" {
			return ir.Arg{}, fmt.Errorf("tensor argument without a name")
		}
	case "as_scalar_type":
		s, err := enumName(a.ScalarType, "dtype", scalarTypeNames, scalarTypes)
		return ir.Arg{Kind: ir.ArgDtype, S: s}, err
	case "as_memory_format":
		s, err := enumName(a.MemoryFormat, "memory_format", memoryFormatNames, memoryFormats)
		return ir.Arg{Kind: ir.ArgMemoryFormat, S: s}, err
	case "as_layout":
		s, err := enumName(a.Layout, "layout", layoutNames, layouts)
		return ir.Arg{Kind: ir.ArgLayout, S: s}, err
	case "as_device":
		return ir.Arg{Kind: ir.ArgDevice, S: deviceString(&a.Device)}, nil
	case "as_custom_obj":
		if _, ok := s.src.CustomObjValues[a.CustomObj.Name]; !ok && !s.isInput(a.CustomObj.Name) {
			return ir.Arg{}, fmt.Errorf("custom object %q (%s) is a constant of the archive, not a graph value; hopctl does not read torchbind constants", a.CustomObj.Name, a.CustomObj.ClassFQN)
		}
		return ref(a.CustomObj.Name), nil
	case "as_operator":
		if a.Operator == "" {
			return ir.Arg{}, fmt.Errorf("empty operator")
		}
		return ir.Arg{Kind: ir.ArgOp, S: Target(a.Operator)}, nil
	case "as_complex":
		return ir.ComplexArg(float64(a.Complex.Real), float64(a.Complex.Imag)), nil
	case "as_string_to_argument":
		keys := make([]string, 0, len(a.StringToArg))
		for k := range a.StringToArg {
			keys = append(keys, k)
		}
		sortStrings(keys)
		d := ir.DictArg(keys, make([]ir.Arg, len(keys)))
		for i, k := range keys {
			v := a.StringToArg[k]
			x, err := c.arg(s, &v)
			if err != nil {
				return ir.Arg{}, fmt.Errorf("key %q: %w", k, err)
			}
			d.Elems()[i] = x
		}
		return d, nil
	case "as_graph":
		return c.subgraph(s, &a.Graph)
	}
	if v, ok := a.payload(); ok {
		return payloadArg(v), nil
	}
	return ir.Arg{}, fmt.Errorf("argument has no value")
}

// payloadArg converts a payload of a tensor, a scalar, a symbolic value or
// an optional tensor, or a list (of lists) of them, element by element.
func payloadArg(v reflect.Value) ir.Arg {
	switch x := v.Interface().(type) {
	case tensorArgument:
		return ref(x.Name)
	case int64:
		return ir.IntArg(x)
	case pyFloat:
		return ir.FloatArg(float64(x))
	case string:
		return ir.Arg{Kind: ir.ArgStr, S: x}
	case bool:
		return ir.Arg{Kind: ir.ArgBool, B: x}
	case symArgument:
		return symArg(x)
	case optionalTensorArgument:
		if x.Tag == "as_tensor" {
			return ref(x.Tensor.Name)
		}
		return ir.Arg{Kind: ir.ArgNone}
	}
	a := ir.WithElems(ir.Arg{Kind: ir.ArgList}, make([]ir.Arg, v.Len()))
	for i := range v.Len() {
		a.Elems()[i] = payloadArg(v.Index(i))
	}
	return a
}

func (s *scope) isInput(name string) bool {
	for i := range s.src.Inputs {
		if argName(&s.src.Inputs[i]) == name {
			return true
		}
	}
	return false
}

func (c *converter) subgraph(s *scope, ga *graphArgument) (ir.Arg, error) {
	if ga.Name == "" || strings.ContainsAny(ga.Name, ". ") {
		return ir.Arg{}, fmt.Errorf("subgraph name %q is not an attribute name", ga.Name)
	}
	qual := ga.Name
	if s.g.Name != "" {
		qual = s.g.Name + "." + ga.Name
	}
	if _, seen := c.registered[qual]; !seen {
		if depth := strings.Count(qual, ".") + 1; depth > ir.MaxNesting {
			return ir.Arg{}, fmt.Errorf("subgraphs nest more than %d levels deep", ir.MaxNesting)
		}
		// Reserve the slot first so graphs are listed parent before child.
		at := len(c.mod.Graphs)
		c.mod.Graphs = append(c.mod.Graphs, nil)
		c.registered[qual] = nil
		g, err := c.convertGraph(qual, ga.Graph, false)
		if err != nil {
			return ir.Arg{}, err
		}
		c.mod.Graphs[at] = g
		c.registered[qual] = g
	}
	name := c.fresh(s, ga.Name)
	s.add(ir.Node{Name: name, Op: ir.OpGetAttr, Target: ga.Name, Val: &ir.Value{Kind: ir.ValOpaque, S: "GraphModule"}})
	return ref(name), nil
}

// metaOf maps a node's string metadata onto the IR's: stack_trace,
// nn_module_stack ("key,path,type" entries joined by ";"),
// source_fn_stack ("name,target" entries); every other key (torch_fn,
// custom, from_node, …) is kept verbatim as an extra annotation.
func metaOf(md map[string]string) (*ir.Meta, error) {
	m := &ir.Meta{}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		v := md[k]
		switch k {
		case "stack_trace":
			m.StackTrace = v
		case "nn_module_stack":
			for _, item := range splitOutside(v, ';') {
				f := splitOutside(item, ',')
				if len(f) < 3 {
					return nil, fmt.Errorf("nn_module_stack entry %q is not key,path,type", item)
				}
				m.NNModuleStack = append(m.NNModuleStack, ir.ModuleStackEntry{Key: f[0], Path: strings.Join(f[1:len(f)-1], ","), Type: f[len(f)-1]})
			}
		case "source_fn_stack":
			for _, item := range splitOutside(v, ';') {
				f := splitOutside(item, ',')
				if len(f) < 2 {
					return nil, fmt.Errorf("source_fn_stack entry %q is not name,target", item)
				}
				m.SourceFnStack = append(m.SourceFnStack, ir.ModuleStackEntry{Key: f[0], Type: strings.Join(f[1:], ",")})
			}
		default:
			m.Extra = append(m.Extra, ir.Annotation{Key: k, Value: v})
		}
	}
	return m, nil
}

// splitOutside splits s at sep where sep is not inside (), [] or {}.
func splitOutside(s string, sep byte) []string {
	if s == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
