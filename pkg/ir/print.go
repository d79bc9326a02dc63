package ir

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// This file holds the two text forms of the IR:
//
//   - FormatNode, the canonical one-line form of a node used in error
//     messages, DOT labels and goldens:
//     %add_1 = aten.add.Tensor(%x, 1) : f32[4, 8]
//   - PrintReadable, the form torch.fx.GraphModule.print_readable() prints
//     (torch 2.x style, with "f32[4, 8]" annotations, subgraphs as nested
//     classes and "# File: ..." stack trace summaries).

// dtypeAbbrs is torch.utils._dtype_abbrs.dtype_abbrs (formerly dtype_abbrs in
// torch/fx/graph.py), keyed by the dtype name without "torch.".
var dtypeAbbrs = map[string]string{
	"bfloat16":          "bf16",
	"float64":           "f64",
	"float32":           "f32",
	"float16":           "f16",
	"float8_e4m3fn":     "f8e4m3fn",
	"float8_e5m2":       "f8e5m2",
	"float8_e4m3fnuz":   "f8e4m3fnuz",
	"float8_e5m2fnuz":   "f8e5m2fnuz",
	"float8_e8m0fnu":    "f8e8m0fnu",
	"float8_e8m0fnu_x4": "f8e8m0fnu_x4",
	"float4_e2m1fn_x2":  "f4e2m1fnx2",
	"complex32":         "c32",
	"complex64":         "c64",
	"complex128":        "c128",
	"int8":              "i8",
	"int16":             "i16",
	"int32":             "i32",
	"int64":             "i64",
	"bool":              "b8",
	"uint8":             "u8",
	"uint16":            "u16",
	"uint32":            "u32",
	"uint64":            "u64",
	"bits16":            "b16",
	"bits1x8":           "b1x8",
	// Aliases torch accepts for the same dtypes.
	"float":   "f32",
	"double":  "f64",
	"half":    "f16",
	"long":    "i64",
	"int":     "i32",
	"short":   "i16",
	"cfloat":  "c64",
	"cdouble": "c128",
}

// DtypeAbbr returns PyTorch's abbreviation of a dtype ("float32" → "f32").
// Dtypes without an abbreviation (quint8, ...) are returned unchanged; an
// empty dtype is "?".
func DtypeAbbr(dtype string) string {
	d := strings.TrimPrefix(dtype, "torch.")
	if a, ok := dtypeAbbrs[d]; ok {
		return a
	}
	if d == "" {
		return "?"
	}
	return d
}

// ShortTensor is the short form of a tensor's metadata as PyTorch prints it
// in print_readable annotations: dtype abbreviation and shape, "f32[4, 8]",
// "i64[]", "f32[s0, 8]".
func ShortTensor(t *TensorMeta) string {
	if t == nil {
		return "?"
	}
	var b strings.Builder
	b.WriteString(DtypeAbbr(t.Dtype))
	writeDims(&b, t.Shape)
	return b.String()
}

// ShortValue is the short form of a node value: tensors as ShortTensor,
// symbolic scalars as their expression, tuples "(f32[2], f32[2])", lists
// "[f32[2]]", Python literals for constants. A nil value is "".
func ShortValue(v *Value) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	writeShortValue(&b, v, 0)
	return b.String()
}

// maxDepth bounds recursion when printing adversarially deep trees.
const maxDepth = 64

func writeShortValue(b *strings.Builder, v *Value, depth int) {
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch v.Kind {
	case ValTensor:
		b.WriteString(ShortTensor(v.Tensor))
	case ValSym:
		b.WriteString(symString(v.Sym))
	case ValList, ValTuple:
		open, close := "[", "]"
		if v.Kind == ValTuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeShortValue(b, &v.Elems[i], depth+1)
		}
		if v.Kind == ValTuple && len(v.Elems) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case ValNone:
		b.WriteString("None")
	case ValInt:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case ValFloat:
		b.WriteString(PyFloat(v.F))
	case ValBool:
		b.WriteString(PyBool(v.B))
	case ValOpaque:
		b.WriteString(v.S)
	default:
		b.WriteByte('?')
	}
}

func symString(s *SymExpr) string {
	if s == nil || s.Expr == "" {
		return "?"
	}
	return s.Expr
}

// FormatNode is the canonical one-line form of node id of g, used in error
// messages and goldens:
//
//	%add_1 = aten.add.Tensor(%x, 1) : f32[4, 8]
//	%x = placeholder : f32[4, 8]
//	%true_graph_0 = get_attr[true_graph_0]
//	%view = call_method[view](%x, [2, -1]) : f32[2, 16]
//	%output = output((%add_1,))
//
// Node references are %name, kwargs name=value, dtypes torch.float32; the
// value's short form follows " : " when the node has one.
func FormatNode(g *Graph, id NodeID) string {
	if g == nil || id < 0 || int(id) >= len(g.Nodes) {
		return fmt.Sprintf("<no node #%d>", id)
	}
	n := &g.Nodes[id]
	var b strings.Builder
	b.WriteByte('%')
	b.WriteString(n.Name)
	b.WriteString(" = ")
	switch n.Op {
	case OpCallFunction:
		b.WriteString(n.Target)
	case OpPlaceholder:
		b.WriteString("placeholder")
		if n.Target != n.Name && n.Target != "" {
			b.WriteString("[" + n.Target + "]")
		}
	case OpOutput:
		b.WriteString("output")
	case OpUnspecified:
		b.WriteString("?[" + n.Target + "]")
	default:
		b.WriteString(n.Op.String() + "[" + n.Target + "]")
	}
	if n.Op != OpPlaceholder && n.Op != OpGetAttr || len(n.Args) > 0 || len(n.Kwargs) > 0 {
		b.WriteByte('(')
		for i := range n.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeArg(&b, &n.Args[i], compactArgs, 0)
		}
		for i := range n.Kwargs {
			if i > 0 || len(n.Args) > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.Kwargs[i].Name)
			b.WriteByte('=')
			writeArg(&b, &n.Kwargs[i].Value, compactArgs, 0)
		}
		b.WriteByte(')')
	}
	if n.Val != nil && n.Val.Kind != ValUnset {
		b.WriteString(" : ")
		writeShortValue(&b, n.Val, 0)
	}
	return b.String()
}

// argStyle selects how arguments are rendered: compactly for FormatNode or as
// the Python repr FX's code generator emits.
type argStyle uint8

const (
	compactArgs argStyle = iota
	pythonArgs
)

// textSink is what the printers write to: a strings.Builder for one string,
// a bytes.Buffer reused line after line by the streaming printers.
type textSink interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

func writeArg(b textSink, a *Arg, style argStyle, depth int) {
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch a.Kind {
	case ArgNode:
		if style == compactArgs {
			b.WriteByte('%')
		}
		b.WriteString(a.S)
	case ArgNone:
		b.WriteString("None")
	case ArgInt:
		b.WriteString(strconv.FormatInt(a.Int(), 10))
	case ArgFloat:
		b.WriteString(PyFloat(a.Float()))
	case ArgBool:
		b.WriteString(PyBool(a.B))
	case ArgStr:
		b.WriteString(pyStr(a.S))
	case ArgList, ArgTuple:
		open, close := "[", "]"
		if a.Kind == ArgTuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i := range a.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeArg(b, &a.Elems()[i], style, depth+1)
		}
		if a.Kind == ArgTuple && len(a.Elems()) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case ArgDict:
		b.WriteByte('{')
		for i := range a.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(a.Keys()) {
				b.WriteString(pyStr(a.Keys()[i]))
			}
			b.WriteString(": ")
			writeArg(b, &a.Elems()[i], style, depth+1)
		}
		b.WriteByte('}')
	case ArgDtype, ArgLayout, ArgMemoryFormat:
		b.WriteString(TorchName(a.S))
	case ArgDevice:
		if style == compactArgs {
			b.WriteString(a.S)
		} else {
			b.WriteString(pyDevice(a.S))
		}
	case ArgSym:
		b.WriteString(symString(a.Sym()))
	case ArgOp:
		if style == compactArgs {
			b.WriteString(a.S)
		} else {
			writePyTarget(b, a.S)
		}
	case ArgComplex:
		b.WriteString(pyComplex(a.Float(), a.Imag()))
	case ArgSlice:
		b.WriteString("slice(")
		for i := range a.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeArg(b, &a.Elems()[i], style, depth+1)
		}
		b.WriteByte(')')
	case ArgEllipsis:
		b.WriteString("Ellipsis")
	case ArgConstant:
		// The type's own name and its fields, as a constructor call.
		b.WriteString(a.S[strings.LastIndexByte(a.S, '.')+1:])
		b.WriteByte('(')
		for i := range a.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(a.Keys()) {
				b.WriteString(a.Keys()[i])
				b.WriteByte('=')
			}
			writeArg(b, &a.Elems()[i], style, depth+1)
		}
		b.WriteByte(')')
	default:
		b.WriteByte('?')
	}
}

// TorchName spells a dtype, layout or memory format as torch prints it:
// "float32" → "torch.float32" (a name with the prefix is kept).
func TorchName(s string) string {
	if strings.HasPrefix(s, "torch.") {
		return s
	}
	return "torch." + s
}

// PyBool formats v as Python does: True or False.
func PyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// PyFloat formats f as Python's repr(float) does: shortest round-trip
// digits, ".0" for integral values, exponent form outside [1e-4, 1e16).
// inf and nan print as FX's generated code spells them.
func PyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64) // 1e-05, 1.5e+16: as Python
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// pyComplex formats a complex number as Python's repr does: "(1+2j)", "2j".
func pyComplex(re, im float64) string {
	imag := func(f float64) string {
		s := PyFloat(f)
		return strings.TrimSuffix(s, ".0") + "j"
	}
	if re == 0 && !math.Signbit(re) {
		return imag(im)
	}
	r := strings.TrimSuffix(PyFloat(re), ".0")
	i := imag(im)
	if !strings.HasPrefix(i, "-") {
		i = "+" + i
	}
	return "(" + r + i + ")"
}

// pyStr formats s as Python's repr(str) does (single quotes unless the
// string holds a single quote and no double quote).
func pyStr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyDevice formats a device string as repr(torch.device) does:
// "cuda:0" → device(type='cuda', index=0).
func pyDevice(s string) string {
	typ, idx, ok := strings.Cut(s, ":")
	if ok {
		return fmt.Sprintf("device(type=%s, index=%s)", pyStr(typ), idx)
	}
	return fmt.Sprintf("device(type=%s)", pyStr(typ))
}

// pythonModules are target prefixes that name Python modules rather than
// torch.ops namespaces.
var pythonModules = map[string]bool{
	"torch": true, "builtins": true, "operator": true, "_operator": true, "math": true,
}

// opNamespaces are torch.ops namespaces whose targets may lack an overload
// (OpOverloadPacket targets such as "aten.add").
var opNamespaces = map[string]bool{
	"aten": true, "prims": true, "higher_order": true, "quantized": true,
	"_quantized": true, "rngprims": true, "_c10d_functional": true,
	"c10d_functional": true, "_dtensor": true, "torchvision": true,
}

// writePyTarget writes the name FX's generated code uses for a
// call_function target: torch.ops.aten.add.Tensor,
// torch.ops.higher_order.cond, operator.add, getattr, torch.sym_size.
func writePyTarget(b textSink, target string) {
	prefix, name := pyTargetParts(target)
	b.WriteString(prefix)
	b.WriteString(name)
}

// pyTargetParts is writePyTarget's name in two parts, a prefix and a name.
func pyTargetParts(target string) (prefix, name string) {
	ns, rest, _ := strings.Cut(target, ".")
	switch {
	case ns == "builtins":
		return "", rest
	case ns == "_operator":
		return "operator.", rest
	case pythonModules[ns]:
		return "", target
	case opNamespaces[ns]:
		return "torch.ops.", target
	}
	if _, ok := SchemaName(target); ok {
		return "torch.ops.", target
	}
	return "", target
}

// magicMethods and inplaceMethods are FX's tables of the same names
// (torch/fx/graph.py): call_function targets in the operator module that
// print as Python syntax.
var magicMethods = map[string]string{
	"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}",
	"le": "{} <= {}", "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
	"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
	"truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
	"lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
	"xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}

var inplaceMethods = map[string]string{
	"iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}",
	"ilshift": "{} <<= {}", "imod": "{} %= {}", "imul": "{} *= {}",
	"imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}",
	"irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
	"ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}

// fillForm substitutes args into a "{} + {}" form; ok is false when the
// number of arguments does not match.
func fillForm(form string, args []string) (string, bool) {
	if strings.Count(form, "{}") != len(args) {
		return "", false
	}
	for _, a := range args {
		form = strings.Replace(form, "{}", a, 1)
	}
	return form, true
}

func operatorName(target string) (string, bool) {
	for _, p := range []string{"_operator.", "operator."} {
		if name, ok := strings.CutPrefix(target, p); ok {
			return name, true
		}
	}
	return "", false
}

// isIdentifier reports whether s is a Python identifier (ASCII subset).
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		case r > 0x7f:
		default:
			return false
		}
	}
	return true
}

// formatTarget is FX's _format_target: base.a.b, with getattr(base, "1")
// for components that are not identifiers.
func formatTarget(base, target string) string {
	r := base
	for _, e := range strings.Split(target, ".") {
		if isIdentifier(e) {
			r += "." + e
		} else {
			r = fmt.Sprintf("getattr(%s, %s)", r, strconv.Quote(e))
		}
	}
	return r
}

// PrintReadable writes m as torch.fx.GraphModule.print_readable() does in
// torch 2.x: the root graph as "class GraphModule(torch.nn.Module)" with a
// forward method whose parameters and assignments carry "f32[4, 8]"
// annotations, and each submodule graph as a class nested, after forward,
// inside the class of the module that owns it. Lines that print_readable
// leaves with trailing whitespace are written empty.
func PrintReadable(w io.Writer, m *Module) error {
	return PrintReadableAs(w, m, "GraphModule")
}

// PrintReadableAs is PrintReadable with the root class named className.
func PrintReadableAs(w io.Writer, m *Module, className string) error {
	return printReadable(w, m, className, false)
}

func printReadable(w io.Writer, m *Module, className string, freeUnused bool) error {
	if m == nil || len(m.Graphs) == 0 {
		return fmt.Errorf("print: module has no root graph")
	}
	bw := bufio.NewWriterSize(w, printBuffer)
	p := &readablePrinter{w: bw, m: m, children: childGraphs(m), freeUnused: freeUnused}
	p.module(0, className, 0)
	return bw.Flush()
}

// childGraphs maps each graph index to the indices of the graphs it owns
// directly (qualified name one component longer), in file order. A graph
// whose parent is not in the file is attached to its nearest present
// ancestor, ultimately the root, so that nothing is left out.
func childGraphs(m *Module) [][]int {
	byName := make(map[string]int, len(m.Graphs))
	for i, g := range m.Graphs {
		if _, dup := byName[g.Name]; !dup {
			byName[g.Name] = i
		}
	}
	children := make([][]int, len(m.Graphs))
	for i, g := range m.Graphs {
		if i == 0 || byName[g.Name] != i {
			continue // the root, or a duplicate name: printed once
		}
		parent := 0
		for name := g.Name; ; {
			dot := strings.LastIndexByte(name, '.')
			if dot < 0 {
				break
			}
			name = name[:dot]
			if j, ok := byName[name]; ok {
				parent = j
				break
			}
		}
		children[parent] = append(children[parent], i)
	}
	return children
}

type readablePrinter struct {
	w        *bufio.Writer
	m        *Module
	children [][]int
	// freeUnused frees values nobody uses right after their definition,
	// as torch >= 2.6's code generator does.
	freeUnused bool
}

// line writes one line, escaped (Printable): it may hold a submodule's
// qualified name or class name from the file, which must not start another
// line or reach the terminal raw.
func (p *readablePrinter) line(indent int, s string) {
	if s != "" {
		for range indent {
			p.w.WriteString("    ")
		}
		p.w.WriteString(Printable(s))
	}
	p.w.WriteByte('\n')
}

func (p *readablePrinter) module(gi int, className string, indent int) {
	g := p.m.Graphs[gi]
	p.line(indent, "class "+className+"(torch.nn.Module):")
	// Streamed: the forward's lines are written as they are made, so a
	// graph of a million nodes is never held as text beside the module.
	f := newForwardGen(g, p.freeUnused)
	for range indent + 1 {
		p.w.WriteString("    ")
	}
	p.w.WriteString("def forward(self")
	f.params(func(param []byte) {
		p.w.WriteString(", ")
		p.w.Write(param)
	})
	p.w.WriteString("):\n")
	f.body(func(l []byte) { p.lineBytes(indent+2, l) })
	for _, ci := range p.children[gi] {
		p.line(0, "")
		name := p.m.Graphs[ci].Name
		if g.Name != "" {
			name = strings.TrimPrefix(name, g.Name+".")
		}
		p.module(ci, name, indent+1)
	}
}

func (p *readablePrinter) lineBytes(indent int, l []byte) {
	p.w.Write(appendLine(p.w.AvailableBuffer(), indent, l))
}

// appendLine appends l indented by indent levels and a newline; an empty
// line is the newline alone.
func appendLine(b []byte, indent int, l []byte) []byte {
	if len(l) > 0 {
		for range indent {
			b = append(b, "    "...)
		}
		b = append(b, l...)
	}
	return append(b, '\n')
}

// writeAnnotation writes the print_readable type annotation of a node's
// value: ': "f32[4, 8]"' for tensors, ': "Sym(s0)"' for symbolic scalars.
func writeAnnotation(b textSink, n *Node) {
	if n.Val == nil {
		return
	}
	switch n.Val.Kind {
	case ValTensor:
		b.WriteString(`: "`)
		if t := n.Val.Tensor; t == nil {
			b.WriteString("?")
		} else {
			b.WriteString(DtypeAbbr(t.Dtype))
			writeDims(b, t.Shape)
		}
		b.WriteByte('"')
	case ValSym:
		b.WriteString(`: "Sym(`)
		b.WriteString(symString(n.Val.Sym))
		b.WriteString(`)"`)
	}
}

var stackFrameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^File "(.+)", line (\d+), in (.+)$`) }) // compiled on first use, not at start

// StackSummary summarises a Python stack trace by its innermost frame, as
// torch 2.x's _parse_stack_trace does:
// "File: model.py:12 in forward, code: return x + 1". ok is false when the
// trace has no frame line followed by a code line.
func StackSummary(trace string) (string, bool) {
	f, ok := InnermostFrame(trace, nil)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("File: %s:%s in %s, code: %s", f.File, f.Line, f.Func, f.Code), true
}

// Frame is one frame of a Python stack trace.
type Frame struct{ File, Line, Func, Code string }

// InnermostFrame returns the innermost frame of a Python stack trace (a
// frame line followed by its code line) for which skip, if not nil, is
// false; ok is false when there is none.
func InnermostFrame(trace string, skip func(file string) bool) (Frame, bool) {
	lines := strings.Split(strings.TrimSpace(trace), "\n")
	for i := len(lines) - 2; i >= 0; i-- {
		m := stackFrameRE().FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m != nil && (skip == nil || !skip(m[1])) {
			return Frame{File: m[1], Line: m[2], Func: m[3], Code: strings.TrimSpace(lines[i+1])}, true
		}
	}
	return Frame{}, false
}

const noStackTrace = "No stacktrace found for following nodes"

// ReadableForward returns the "def forward(self, ...):" line of g and the
// lines of its body, unindented, as torch 2.x's FX code generator emits
// them with verbose=True: stack trace summaries, one statement per node
// with the values freed after their last use ("; x = None"), and the
// return statement.
func ReadableForward(g *Graph) (def string, body []string) {
	f := newForwardGen(g, false)
	var d strings.Builder
	d.WriteString("def forward(self")
	f.params(func(param []byte) {
		d.WriteString(", ")
		d.Write(param)
	})
	d.WriteString("):")
	f.body(func(l []byte) { body = append(body, string(l)) })
	return d.String(), body
}

// forwardGen makes the lines of a graph's forward method one at a time,
// each in a buffer reused for the next (the streaming printer writes them
// out as they come): a million-node graph costs its last-use table, not
// its text.
type forwardGen struct {
	g *Graph
	// freeUnused also frees a value nobody uses on its own statement
	// ("add_ = None"), as torch >= 2.6 does.
	freeUnused bool
	// lastUser[i]: some node uses node i. Node i's statement frees
	// dels[delEnd[i+1]:delEnd[i]], the values whose last use it is, in the
	// order of their first use in it (torch.fx.graph's register_last_uses:
	// walking backwards, the first user seen of each node is its last).
	lastUser []bool
	dels     []NodeID
	delEnd   []int32
	line     bytes.Buffer
}

func newForwardGen(g *Graph, freeUnused bool) *forwardGen {
	n := len(g.Nodes)
	f := &forwardGen{g: g, freeUnused: freeUnused, lastUser: make([]bool, n), delEnd: make([]int32, n+1)}
	for i := n - 1; i >= 0; i-- {
		uid := NodeID(i)
		g.Nodes[i].WalkRefs(func(a *Arg) {
			d := a.Ref
			if d < 0 || int(d) >= n || d == uid || f.lastUser[d] {
				return
			}
			f.lastUser[d] = true
			f.dels = append(f.dels, d)
		})
		f.delEnd[i] = int32(len(f.dels))
	}
	return f
}

// emit hands a line to yield, its control characters escaped
// (Printable: a name with a newline or an escape sequence in it must not
// make another line, or clear the screen).
func emit(l []byte, yield func([]byte)) {
	for _, c := range l {
		if c < 0x20 || c >= 0x7f {
			// Rare (non-ASCII or control bytes): Printable decides.
			l = []byte(Printable(string(l)))
			break
		}
	}
	yield(l)
}

// params yields each forward parameter ("x: \"f32[4]\"", "n = 3"), escaped.
func (f *forwardGen) params(yield func([]byte)) {
	for i := range f.g.Nodes {
		if nd := &f.g.Nodes[i]; nd.Op == OpPlaceholder {
			f.line.Reset()
			writeStmt(&f.line, nd)
			emit(f.line.Bytes(), yield)
		}
	}
}

// body yields the body's lines, unindented and escaped; "pass" when it has
// none.
func (f *forwardGen) body(yield func([]byte)) {
	var st bodyState
	f.bodyNodes(&st, &f.line, yield)
	if !st.started {
		yield([]byte("pass"))
	}
}

// bodyState is what the body's lines depend on besides the node: whether a
// line was written yet (leading empty lines are dropped), the stack trace
// summary of the last statement (a comment line is written when it
// changes), and the last trace summarised (consecutive nodes usually share
// their trace: its summary is reused).
type bodyState struct {
	started                  bool
	prevSummary              string
	lastTrace, lastTraceSumm string
}

// summary is the comment line's text for node nd.
func (st *bodyState) summary(nd *Node) string {
	if nd.Meta == nil || nd.Meta.StackTrace == "" {
		return noStackTrace
	}
	if nd.Meta.StackTrace != st.lastTrace || st.lastTraceSumm == "" { // "": none yet
		st.lastTrace, st.lastTraceSumm = nd.Meta.StackTrace, noStackTrace
		if s, ok := StackSummary(st.lastTrace); ok {
			st.lastTraceSumm = s
		}
	}
	return st.lastTraceSumm
}

// commented reports whether node nd's statement is preceded by a stack
// trace comment (when its summary differs from the last one's).
func commented(nd *Node) bool { return nd.Op != OpPlaceholder && nd.Op != OpOutput }

// bodyNodes yields the lines of the nodes, made in line, from st.
func (f *forwardGen) bodyNodes(st *bodyState, line *bytes.Buffer, yield func([]byte)) {
	g := f.g
	out := func() {
		if line.Len() > 0 || st.started {
			st.started = true
			emit(line.Bytes(), yield)
		}
	}
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		if commented(nd) {
			if summary := st.summary(nd); summary != st.prevSummary {
				st.prevSummary = summary
				line.Reset()
				out()
				line.WriteString("# ")
				line.WriteString(summary)
				out()
			}
		}
		line.Reset()
		if nd.Op == OpPlaceholder {
			if t := nd.Target; t != "" && strings.ReplaceAll(t, "*", "") != nd.Name {
				line.WriteString(nd.Name)
				line.WriteString(" = ")
				line.WriteString(strings.ReplaceAll(t, "*", ""))
				out()
			}
			continue
		}
		writeStmt(line, nd)
		if nd.Op != OpOutput {
			// Unlike torch >= 2.6, values nobody uses are not freed on
			// their own line: this matches torch 1.13 to 2.5 exactly.
			del := f.dels[f.delEnd[i+1]:f.delEnd[i]]
			freeSelf := f.freeUnused && !f.lastUser[i]
			if len(del) > 0 || freeSelf {
				line.WriteString(";  ")
				for _, d := range del {
					line.WriteString(g.Nodes[d].Name)
					line.WriteString(" = ")
				}
				if freeSelf {
					line.WriteString(nd.Name)
					line.WriteString(" = ")
				}
				line.WriteString("None")
			}
		}
		out()
	}
}

// printBuffer is the printers' write buffer, larger than bufio's default
// for the many megabytes a large graph prints.
const printBuffer = 256 << 10

// writeStmt writes one node as a statement, or (isParam) a placeholder as
// a forward parameter.
func writeStmt(b *bytes.Buffer, n *Node) (isParam bool) {
	lhs := func() {
		b.WriteString(n.Name)
		writeAnnotation(b, n)
		b.WriteString(" = ")
	}
	args := func(as []Arg, kws []Kwarg) {
		for i := range as {
			if i > 0 {
				b.WriteString(", ")
			}
			writeArg(b, &as[i], pythonArgs, 0)
		}
		for i := range kws {
			if i > 0 || len(as) > 0 {
				b.WriteString(", ")
			}
			b.WriteString(kws[i].Name)
			b.WriteString(" = ")
			writeArg(b, &kws[i].Value, pythonArgs, 0)
		}
	}
	call := func(as []Arg, kws []Kwarg) {
		b.WriteByte('(')
		args(as, kws)
		b.WriteByte(')')
	}
	repr := func(a *Arg) string {
		var s strings.Builder
		writeArg(&s, a, pythonArgs, 0)
		return s.String()
	}
	switch n.Op {
	case OpPlaceholder:
		name := n.Target
		if name == "" {
			name = n.Name
		}
		b.WriteString(name)
		writeAnnotation(b, n)
		if len(n.Args) > 0 {
			b.WriteString(" = ")
			writeArg(b, &n.Args[0], pythonArgs, 0)
		}
		return true
	case OpOutput:
		if len(n.Args) == 0 {
			b.WriteString("return None")
		} else {
			b.WriteString("return ")
			writeArg(b, &n.Args[0], pythonArgs, 0)
		}
		return false
	case OpGetAttr:
		lhs()
		b.WriteString(formatTarget("self", n.Target))
		return false
	case OpCallModule:
		lhs()
		b.WriteString(formatTarget("self", n.Target))
		call(n.Args, n.Kwargs)
		return false
	case OpCallMethod:
		lhs()
		if len(n.Args) == 0 {
			b.WriteString("?." + n.Target)
			call(nil, n.Kwargs)
		} else {
			b.WriteString(formatTarget(repr(&n.Args[0]), n.Target))
			call(n.Args[1:], n.Kwargs)
		}
		return false
	case OpCallFunction:
		if op, ok := operatorName(n.Target); ok && len(n.Kwargs) == 0 {
			reprs := make([]string, len(n.Args))
			for i := range n.Args {
				reprs[i] = repr(&n.Args[i])
			}
			if form, ok := magicMethods[op]; ok {
				if s, ok := fillForm(form, reprs); ok {
					lhs()
					b.WriteString(s)
					return false
				}
			}
			if form, ok := inplaceMethods[op]; ok && len(reprs) > 0 {
				if s, ok := fillForm(form, reprs); ok {
					b.WriteString(s)
					b.WriteString(";  ")
					b.WriteString(n.Name)
					writeAnnotation(b, n)
					b.WriteString(" = ")
					b.WriteString(reprs[0])
					return false
				}
			}
		}
		if prefix, fn := pyTargetParts(n.Target); prefix == "" && fn == "getattr" && len(n.Args) == 2 && len(n.Kwargs) == 0 && n.Args[1].Kind == ArgStr && isIdentifier(n.Args[1].S) {
			lhs()
			b.WriteString(formatTarget(repr(&n.Args[0]), n.Args[1].S))
			return false
		}
		lhs()
		writePyTarget(b, n.Target)
		call(n.Args, n.Kwargs)
		return false
	}
	lhs()
	b.WriteString("?")
	call(n.Args, n.Kwargs)
	return false
}
