// Package metadiff compares two lists of values (node values, meta["val"])
// with the semantics of PyTorch's check_meta_consistency
// (torch/_higher_order_ops/utils.py), which HOPs use to check that a
// while_loop body returns what it was given, that a scan carry keeps the
// init's metadata, and so on:
//
//   - lists of different lengths are an error ("Expected {lhs} and {rhs} to
//     have same number of outputs but got lhs:[...] and rhs:[...]");
//   - two tensors are compared field by field in TensorMetadata order —
//     shape, dtype, requires_grad (only with Options.CheckGrad, which
//     check_meta_consistency never sets), stride, memory_format (only with
//     Options.IncludeContiguity; otherwise it is None on both sides, but the
//     stride still counts), is_quantized, qparams — and then by device
//     (type and index), which adds a second line for the same pair;
//   - a pair that is neither two tensors nor two ints/SymInts (a Python bool
//     counts as an int) differs in "type"; ints and SymInts are never
//     compared by value;
//   - each differing pair gives the line
//     pair[i] differ in 'shape: torch.Size([2, 3]) vs torch.Size([3, 2])', 'stride: (3, 1) vs (2, 1)', where lhs is ... and rhs is ...
//     under the header "Expected {lhs} and {rhs} to have same metadata but found:".
//
// Symbolic sizes and strides are compared by expression: two different
// expressions count as different, as PyTorch reports a field whose
// comparison raises GuardOnDataDependentSymNode. (A backed symbol that
// PyTorch could resolve through its hint is therefore also reported.)
//
// Where hopctl goes beyond PyTorch: when the lengths differ, PyTorch stops
// at the length error; metadiff also compares the pairs both lists have and
// appends the metadata block, so every difference is listed. A pair with an
// unknown value (a node without a recorded value) is not compared.
//
// # How values are printed
//
// Values are printed the way torch prints them, checked against torch 1.13's
// str() (and torch 2.x's Tensor.__repr__ for fake tensors):
//
//	shape          torch.Size([2, 3]), torch.Size([]), torch.Size([s0, 3])
//	stride         (3, 1), (1,), ()   (a Python tuple; () for sparse layouts)
//	dtype          torch.float32
//	memory_format  torch.contiguous_format, torch.channels_last, None
//	requires_grad, is_quantized   True, False
//	qparams        {} or {'qscheme': torch.per_tensor_affine, 'scale': 0.1, 'zero_point': 3}
//	a tensor       FakeTensor(..., size=(2, 3)), with device='cuda:0' before
//	               size when not on the CPU, dtype=torch.int64 after it when
//	               not float32 (quantized tensors: torch's quantized branch,
//	               with quantization_scheme, scale and zero_point), and
//	               requires_grad=True — what
//	               check_meta_consistency prints for the fake tensors it is
//	               given (a grad_fn, which a file does not record, is not shown)
//	ints, SymInts  3, s0
//	floats, None   Python's repr: 1.0, 1e-05, None
//	lists, tuples  [a, b], (a, b), (a,)
package metadiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Options select the fields compared.
type Options struct {
	// IncludeContiguity compares memory_format (check_meta_consistency's
	// include_contiguity; every HOP call site passes False).
	IncludeContiguity bool
	// CheckGrad compares requires_grad (diff_tensor_meta's check_grad;
	// check_meta_consistency always passes False).
	CheckGrad bool
}

// List is one side of a comparison.
type List struct {
	// Name is the side's name in messages ("carried_inputs", "init").
	Name string
	// Values are the values in order; nil for an unknown value.
	Values []*ir.Value
	// Tuple prints the list as a Python tuple in the length message.
	Tuple bool
}

// FieldDiff is one differing field of a pair.
type FieldDiff struct {
	// Field is a TensorMetadata field name, "type" or "device".
	Field string
	// LHS and RHS are the printed values; empty for "device", which
	// PyTorch reports without values.
	LHS, RHS string
}

// String renders the field as diff_tensor_meta does: 'shape: a vs b'
// (quotes included), "type: a vs b", or "device".
func (f FieldDiff) String() string {
	switch f.Field {
	case "device":
		return "device"
	case "type":
		return "type: " + f.LHS + " vs " + f.RHS
	}
	return "'" + f.Field + ": " + f.LHS + " vs " + f.RHS + "'"
}

// PairDiff lists every difference of one pair.
type PairDiff struct {
	Index int
	// Fields are the metadata (or type) differences, in TensorMetadata
	// order; Device is set when the devices differ.
	Fields []FieldDiff
	Device bool
	// LHS and RHS are the printed values.
	LHS, RHS string
}

// Lines renders the pair as PyTorch's lines: one for the metadata or type
// difference, one for the device.
func (p PairDiff) Lines() []string {
	var out []string
	if len(p.Fields) > 0 {
		parts := make([]string, len(p.Fields))
		for i, f := range p.Fields {
			parts[i] = f.String()
		}
		out = append(out, fmt.Sprintf("pair[%d] differ in %s, where lhs is %s and rhs is %s", p.Index, strings.Join(parts, ", "), p.LHS, p.RHS))
	}
	if p.Device {
		out = append(out, fmt.Sprintf("pair[%d] differ in device, where lhs is %s and rhs is %s", p.Index, p.LHS, p.RHS))
	}
	return out
}

// Result is the outcome of a comparison.
type Result struct {
	LHS, RHS List
	// LengthMismatch is set when the lists differ in length; Pairs then
	// covers the pairs both have.
	LengthMismatch bool
	// Pairs are the differing pairs in index order.
	Pairs []PairDiff
	// Unknown lists the indices of pairs not compared because a value is
	// unknown.
	Unknown []int
}

// Equal reports whether PyTorch would accept the two lists.
func (r *Result) Equal() bool { return !r.LengthMismatch && len(r.Pairs) == 0 }

// Lines are the pair[i] lines, in order.
func (r *Result) Lines() []string {
	var out []string
	for _, p := range r.Pairs {
		out = append(out, p.Lines()...)
	}
	return out
}

// Message is PyTorch's error message, or "" when the lists agree. With a
// length mismatch the length message comes first; the metadata block
// follows when pairs also differ.
func (r *Result) Message() string {
	var parts []string
	if r.LengthMismatch {
		parts = append(parts, fmt.Sprintf("Expected %s and %s to have same number of outputs but got lhs:%s and rhs:%s",
			r.LHS.Name, r.RHS.Name, formatSeq(r.LHS.Values, r.LHS.Tuple), formatSeq(r.RHS.Values, r.RHS.Tuple)))
	}
	if len(r.Pairs) > 0 {
		parts = append(parts, fmt.Sprintf("Expected %s and %s to have same metadata but found:\n%s",
			r.LHS.Name, r.RHS.Name, strings.Join(r.Lines(), "\n")))
	}
	return strings.Join(parts, "\n")
}

// Compare compares lhs and rhs pair by pair.
func Compare(lhs, rhs List, opts Options) *Result {
	r := &Result{LHS: lhs, RHS: rhs, LengthMismatch: len(lhs.Values) != len(rhs.Values)}
	n := min(len(lhs.Values), len(rhs.Values))
	for i := range n {
		a, b := lhs.Values[i], rhs.Values[i]
		if !known(a) || !known(b) {
			r.Unknown = append(r.Unknown, i)
			continue
		}
		p := PairDiff{Index: i}
		ta, tb := tensorOf(a), tensorOf(b)
		switch {
		case ta != nil && tb != nil:
			p.Fields = diffTensorMeta(ta, tb, opts)
			p.Device = DeviceDiffers(ta.Device, tb.Device)
		case !(intLike(a) && intLike(b)):
			p.Fields = []FieldDiff{{Field: "type", LHS: Format(a), RHS: Format(b)}}
		}
		if len(p.Fields) > 0 || p.Device {
			p.LHS, p.RHS = Format(a), Format(b)
			r.Pairs = append(r.Pairs, p)
		}
	}
	return r
}

func known(v *ir.Value) bool { return v != nil && v.Kind != ir.ValUnset }

func tensorOf(v *ir.Value) *ir.TensorMeta {
	if v.Kind == ir.ValTensor && v.Tensor != nil {
		return v.Tensor
	}
	return nil
}

// intLike is isinstance(v, (int, torch.SymInt)); bool is an int in Python.
func intLike(v *ir.Value) bool {
	switch v.Kind {
	case ir.ValInt, ir.ValBool:
		return true
	case ir.ValSym:
		return v.Sym != nil && v.Sym.Kind == ir.SymInt
	}
	return false
}

// diffTensorMeta is diff_tensor_meta over _extract_tensor_metadata.
func diffTensorMeta(a, b *ir.TensorMeta, opts Options) []FieldDiff {
	var out []FieldDiff
	add := func(field, x, y string) { out = append(out, FieldDiff{Field: field, LHS: x, RHS: y}) }
	if !ir.DimsEqual(a.Shape, b.Shape) {
		add("shape", FormatSize(a.Shape), FormatSize(b.Shape))
	}
	if normDtype(a.Dtype) != normDtype(b.Dtype) {
		add("dtype", FormatDtype(a.Dtype), FormatDtype(b.Dtype))
	}
	if opts.CheckGrad && a.RequiresGrad != b.RequiresGrad {
		add("requires_grad", ir.PyBool(a.RequiresGrad), ir.PyBool(b.RequiresGrad))
	}
	if sa, sb := strideOf(a), strideOf(b); !ir.DimsEqual(sa, sb) {
		add("stride", FormatTuple(sa), FormatTuple(sb))
	}
	if opts.IncludeContiguity {
		if ma, mb := memoryFormat(a), memoryFormat(b); ma != mb {
			add("memory_format", ma, mb)
		}
	}
	if a.IsQuantized != b.IsQuantized {
		add("is_quantized", ir.PyBool(a.IsQuantized), ir.PyBool(b.IsQuantized))
	}
	if qa, qb := FormatQParams(a), FormatQParams(b); qa != qb {
		add("qparams", qa, qb)
	}
	return out
}

// strideOf is the stride TensorMetadata records: () for sparse layouts.
func strideOf(t *ir.TensorMeta) []ir.Dim {
	if strings.HasPrefix(strings.TrimPrefix(t.Layout, "torch."), "sparse") {
		return nil
	}
	return t.Stride
}

func memoryFormat(t *ir.TensorMeta) string {
	if t.MemoryFormat == "" {
		return "None"
	}
	return ir.TorchName(t.MemoryFormat)
}

func normDtype(s string) string { return strings.TrimPrefix(s, "torch.") }

// DeviceDiffers compares device type and index as torch.device does; an
// unrecorded device ("") is unknown and never differs.
func DeviceDiffers(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	at, ai := parseDevice(a)
	bt, bi := parseDevice(b)
	return at != bt || ai != bi
}

func parseDevice(s string) (typ, index string) {
	typ, index, _ = strings.Cut(s, ":")
	return typ, index
}

// FormatDtype prints a dtype as torch does: torch.float32.
func FormatDtype(s string) string {
	if s == "" {
		return "None"
	}
	return ir.TorchName(s)
}

// FormatSize prints a shape as str(torch.Size) does: torch.Size([2, 3]).
func FormatSize(ds []ir.Dim) string { return "torch.Size([" + ir.JoinDims(ds) + "])" }

// FormatTuple prints dims as a Python tuple: (3, 1), (1,), ().
func FormatTuple(ds []ir.Dim) string {
	if len(ds) == 1 {
		return "(" + ir.FormatDim(ds[0]) + ",)"
	}
	return "(" + ir.JoinDims(ds) + ")"
}

// FormatQParams prints TensorMetadata.qparams as Python prints the dict.
func FormatQParams(t *ir.TensorMeta) string {
	if !t.IsQuantized || t.QParams == nil || t.QParams.QScheme == "" {
		return "{}"
	}
	q := t.QParams
	scheme := strings.TrimPrefix(q.QScheme, "torch.")
	parts := []string{"'qscheme': " + ir.TorchName(scheme)}
	switch scheme {
	case "per_tensor_affine", "per_tensor_symmetric":
		parts = append(parts, "'scale': "+ir.PyFloat(q.Scale), "'zero_point': "+strconv.FormatInt(q.ZeroPoint, 10))
	case "per_channel_affine", "per_channel_affine_float_qparams", "per_channel_symmetric":
		scales := make([]string, len(q.Scales))
		for i, s := range q.Scales {
			scales[i] = ir.PyFloat(s)
		}
		zps := make([]string, len(q.ZeroPoints))
		for i, z := range q.ZeroPoints {
			zps[i] = strconv.FormatInt(z, 10)
		}
		parts = append(parts, "'scale': ["+strings.Join(scales, ", ")+"]", "'zero_point': ["+strings.Join(zps, ", ")+"]",
			"'axis': "+strconv.FormatInt(q.Axis, 10))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatTensorMetadata prints a tensor's TensorMetadata (the node's
// meta["tensor_meta"], torch/fx/passes/shape_prop.py
// _extract_tensor_metadata with memory_format) as Python prints the
// namedtuple: TensorMetadata(shape=torch.Size([4]), dtype=torch.float64,
// requires_grad=False, stride=(1,), memory_format=torch.contiguous_format,
// is_quantized=False, qparams={}).
func FormatTensorMetadata(t *ir.TensorMeta) string {
	return "TensorMetadata(shape=" + FormatSize(t.Shape) + ", dtype=" + FormatDtype(t.Dtype) +
		", requires_grad=" + ir.PyBool(t.RequiresGrad) + ", stride=" + FormatTuple(strideOf(t)) +
		", memory_format=" + memoryFormat(t) + ", is_quantized=" + ir.PyBool(t.IsQuantized) +
		", qparams=" + FormatQParams(t) + ")"
}

// Format prints a value as Python's str() does (see the package doc).
func Format(v *ir.Value) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	return b.String()
}

func formatSeq(vs []*ir.Value, tuple bool) string {
	var b strings.Builder
	open, close := "[", "]"
	if tuple {
		open, close = "(", ")"
	}
	b.WriteString(open)
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == maxListed {
			fmt.Fprintf(&b, "... (%d more)", len(vs)-i)
			break
		}
		writeValue(&b, v, 1)
	}
	if tuple && len(vs) == 1 {
		b.WriteByte(',')
	}
	b.WriteString(close)
	return b.String()
}

// maxDepth bounds printing of adversarially nested values.
const maxDepth = 64

// maxListed and maxElems bound how many elements of a list are printed:
// the values compared (maxListed), and the elements of one value's tuple
// or list (maxElems). Python prints them all; a message naming one value
// per difference would then grow with the square of the input (many
// outputs naming one 10,000-element tuple: 57 KB in, 112 MB of text).
const (
	maxListed = 32
	maxElems  = 8
)

func writeValue(b *strings.Builder, v *ir.Value, depth int) {
	if v == nil || v.Kind == ir.ValUnset {
		b.WriteString("<unknown>")
		return
	}
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch v.Kind {
	case ir.ValTensor:
		writeTensor(b, v.Tensor)
	case ir.ValSym:
		if v.Sym != nil {
			b.WriteString(v.Sym.Expr)
		}
	case ir.ValInt:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case ir.ValFloat:
		b.WriteString(ir.PyFloat(v.F))
	case ir.ValBool:
		b.WriteString(ir.PyBool(v.B))
	case ir.ValNone:
		b.WriteString("None")
	case ir.ValOpaque:
		fmt.Fprintf(b, "<%s object>", v.S)
	case ir.ValList, ir.ValTuple:
		open, close := "[", "]"
		if v.Kind == ir.ValTuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if i == maxElems {
				fmt.Fprintf(b, "... (%d more)", len(v.Elems)-i)
				break
			}
			writeValue(b, &v.Elems[i], depth+1)
		}
		if v.Kind == ir.ValTuple && len(v.Elems) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	}
}

// writeTensor prints a tensor as torch 2.x's repr of a FakeTensor.
func writeTensor(b *strings.Builder, t *ir.TensorMeta) {
	if t == nil {
		b.WriteString("FakeTensor(...)")
		return
	}
	var suffixes []string
	if typ, _ := parseDevice(t.Device); t.Device != "" && typ != "cpu" {
		suffixes = append(suffixes, "device='"+t.Device+"'")
	}
	suffixes = append(suffixes, "size="+FormatTuple(t.Shape))
	d := normDtype(t.Dtype)
	switch {
	case t.IsQuantized:
		// _str_intern's quantized branch.
		if d != "" && d != "float32" && d != "complex64" && d != "int64" && d != "bool" {
			suffixes = append(suffixes, "dtype="+ir.TorchName(d))
		}
		if q := t.QParams; q != nil && q.QScheme != "" {
			scheme := strings.TrimPrefix(q.QScheme, "torch.")
			suffixes = append(suffixes, "quantization_scheme=torch."+scheme)
			if scheme == "per_tensor_affine" || scheme == "per_tensor_symmetric" {
				suffixes = append(suffixes, "scale="+ir.PyFloat(q.Scale), "zero_point="+strconv.FormatInt(q.ZeroPoint, 10))
			}
		}
	case d != "" && d != "float32":
		suffixes = append(suffixes, "dtype="+ir.TorchName(d))
	}
	if l := strings.TrimPrefix(t.Layout, "torch."); l != "" && l != "strided" {
		suffixes = append(suffixes, "layout=torch."+l)
	}
	if t.RequiresGrad {
		suffixes = append(suffixes, "requires_grad=True")
	}
	b.WriteString("FakeTensor(..., ")
	b.WriteString(strings.Join(suffixes, ", "))
	b.WriteByte(')')
}
