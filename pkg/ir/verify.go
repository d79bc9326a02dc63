package ir

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/graph/topo"
)

// MaxProblems bounds how many problems Verify lists; a summary line says how
// many more there were.
const MaxProblems = 1000

// MaxNesting is how deep subgraphs may nest: a submodule's qualified name
// has at most this many components. torch cannot build or print a module
// nested anywhere near this deep (Python's recursion limit is 1000 frames,
// and each level costs several), and every cost of a subgraph grows with
// its depth (its qualified name, print_readable's indentation, the paths in
// provenance), so deeper files are refused rather than processed in time
// and memory quadratic in their depth.
const MaxNesting = 1000

// Verify checks the module's structural invariants and returns a
// *VerifyError listing every problem, each naming file, graph and node:
// empty and duplicate node names, unknown op kinds, dangling references,
// uses before definition, cycles, a missing, repeated or misplaced output
// node, get_attr/call_module targets that do not exist, duplicate or
// empty submodule names, subgraphs nested deeper than MaxNesting, and
// tensor values no tensor can have (a negative size, an element count
// that overflows int64). file names the input in messages.
func Verify(m *Module, file string) error {
	v := &verifier{file: file}
	if len(m.Graphs) == 0 {
		v.add(ProblemMalformed, Location{File: file}, "module has no root graph")
		return v.err()
	}
	seen := make(map[string]bool, len(m.Graphs))
	tooDeep, firstDeep := 0, -1
	for i, g := range m.Graphs {
		if i > 0 && g.Name == "" {
			v.add(ProblemMalformed, Location{File: file}, fmt.Sprintf("submodule %d has an empty qualified name", i))
			continue
		}
		if seen[g.Name] {
			v.add(ProblemDuplicateName, InGraph(file, g.Name), "duplicate submodule name")
		}
		if i > 0 && hasEmptyComponent(g.Name) {
			v.add(ProblemMalformed, InGraph(file, g.Name), fmt.Sprintf("submodule name %q has an empty component: a qualified name is dot-separated attribute names", g.Name))
		}
		seen[g.Name] = true
		if i > 0 && strings.Count(g.Name, ".") >= MaxNesting {
			tooDeep++
			if firstDeep < 0 {
				firstDeep = i
			}
		}
	}
	if tooDeep > 0 {
		// One problem, at the first such graph: listing thousands of
		// ever longer names helps nobody.
		g := m.Graphs[firstDeep]
		v.add(ProblemMalformed, InGraph(file, g.Name), fmt.Sprintf("subgraphs nest more than %d levels deep (this one is %d levels deep; %d graphs are too deep)",
			MaxNesting, strings.Count(g.Name, ".")+1, tooDeep))
	}
	attrs := make(map[string]bool, len(m.Attributes))
	for i := range m.Attributes {
		a := &m.Attributes[i]
		if attrs[a.Name] {
			v.add(ProblemDuplicateName, Location{File: file}, fmt.Sprintf("duplicate attribute %q", a.Name))
		}
		attrs[a.Name] = true
		if msg := checkTensor(&a.Meta); msg != "" {
			v.add(ProblemBadShape, Location{File: file}, fmt.Sprintf("attribute %q: %s", a.Name, msg))
		}
	}
	for _, g := range m.Graphs {
		v.graph(g, seen, attrs)
	}
	v.signature(m)
	return v.err()
}

// checkValue checks every tensor in a node's value and returns what is
// wrong with the first bad one, or "".
func checkValue(val *Value) string {
	if val.Kind == ValTensor {
		return checkTensor(val.Tensor)
	}
	if valueShapesOK(val) {
		// The common case: no path strings are built (a million-node
		// graph's tuple values made a quarter of Verify's time of them).
		return ""
	}
	type item struct {
		v    *Value
		path string
	}
	stack := []item{{val, "value"}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch it.v.Kind {
		case ValTensor:
			if msg := checkTensor(it.v.Tensor); msg != "" {
				return it.path + ": " + msg
			}
		case ValList, ValTuple:
			for i := len(it.v.Elems) - 1; i >= 0; i-- {
				stack = append(stack, item{&it.v.Elems[i], it.path + "[" + strconv.Itoa(i) + "]"})
			}
		}
	}
	return ""
}

// valueShapesOK reports whether checkTensor accepts every tensor in val.
func valueShapesOK(val *Value) bool {
	var buf [8]*Value // most values nest little: no allocation
	stack := append(buf[:0], val)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v.Kind {
		case ValTensor:
			if checkTensor(v.Tensor) != "" {
				return false
			}
		case ValList, ValTuple:
			for i := range v.Elems {
				stack = append(stack, &v.Elems[i])
			}
		}
	}
	return true
}

// checkTensor reports metadata no tensor can have: a negative size, an
// element count that overflows int64, a dtype or layout torch does not
// have, strides that are negative or do not match the shape, or a storage
// whose size in bytes overflows int64. The last is torch's own check
// (computeStorageNbytes in aten/src/ATen/EmptyTensor.cpp: "Storage size
// calculation overflowed"), which refuses f32[2**63-1] even under fake
// tensors; as_strided refuses negative strides ("Negative strides are not
// supported"), and empty_strided under fake tensors does not record them.
// These values size everything downstream (saved bytes, metadata
// comparisons), so they are refused rather than computed with. Symbolic
// sizes are not judged (and a shape with one has no known element count);
// a tensor without recorded strides is judged by its element count.
func checkTensor(t *TensorMeta) string {
	if t == nil {
		return ""
	}
	for _, d := range t.Shape {
		if !d.IsSymbolic() && d.Val < 0 {
			return fmt.Sprintf("tensor shape %s has a negative size %d", FormatDims(t.Shape), d.Val)
		}
	}
	size, ok := dtypeSize(t.Dtype)
	if !ok {
		return fmt.Sprintf("tensor dtype %q is not a torch dtype", t.Dtype)
	}
	layout := strings.TrimPrefix(t.Layout, "torch.")
	if !layouts[layout] {
		return fmt.Sprintf("tensor layout %q is not a torch layout", t.Layout)
	}
	strided := layout == "" || layout == "strided"
	if strided && len(t.Stride) > 0 {
		if len(t.Stride) != len(t.Shape) {
			return fmt.Sprintf("tensor shape %s has %d strides %s", FormatDims(t.Shape), len(t.Stride), FormatDims(t.Stride))
		}
		for _, d := range t.Stride {
			if !d.IsSymbolic() && d.Val < 0 {
				return fmt.Sprintf("tensor strides %s have a negative stride %d", FormatDims(t.Stride), d.Val)
			}
		}
	}
	if !t.StorageOffset.IsSymbolic() && t.StorageOffset.Val < 0 {
		return fmt.Sprintf("tensor storage offset %d is negative", t.StorageOffset.Val)
	}
	n := uint64(1)
	overflow := false
	for _, d := range t.Shape {
		if d.IsSymbolic() {
			return "" // the element count is not known: the size may be 0
		}
		if d.Val == 0 {
			return "" // an empty tensor, however large its other sizes
		}
		hi, lo := bits.Mul64(n, uint64(d.Val))
		overflow = overflow || hi != 0 || lo > 1<<63-1
		n = lo
	}
	if overflow {
		return fmt.Sprintf("the element count of tensor shape %s overflows int64", FormatDims(t.Shape))
	}
	// The storage the tensor needs: its element count when contiguous,
	// else 1 + Σ (size−1)·stride, plus the storage offset.
	extent, ok := n, true
	if strided && len(t.Stride) == len(t.Shape) && len(t.Shape) > 0 {
		extent = 1
		for i, d := range t.Shape {
			s := t.Stride[i]
			if s.IsSymbolic() {
				return ""
			}
			hi, lo := bits.Mul64(uint64(d.Val-1), uint64(s.Val))
			sum, carry := bits.Add64(extent, lo, 0)
			ok = ok && hi == 0 && carry == 0 && sum <= 1<<63-1
			extent = sum
		}
	}
	if !t.StorageOffset.IsSymbolic() {
		sum, carry := bits.Add64(extent, uint64(t.StorageOffset.Val), 0)
		ok = ok && carry == 0 && sum <= 1<<63-1
		extent = sum
	}
	hi, lo := bits.Mul64(extent, uint64(size))
	if !ok || hi != 0 || lo > 1<<63-1 {
		return fmt.Sprintf("the storage of tensor %s%s (strides %s, %d-byte elements) overflows int64 bytes",
			DtypeAbbr(t.Dtype), FormatDims(t.Shape), FormatDims(t.Stride), size)
	}
	return ""
}

// hasEmptyComponent reports whether a qualified name or get_attr target is
// empty or has an empty dot-separated component ("", "a.", "a..b"). Such
// names are what let a graph reach itself or an ancestor: Qualify(g, "")
// would be g's own name for the root, and Submodule renames a graph "a."
// under "a" to "", the new root. With every component non-empty, a target
// always names a strict descendant of the graph it is written in, so HOP
// and call_module calls cannot recurse.
func hasEmptyComponent(name string) bool {
	return name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..")
}

type verifier struct {
	file     string
	problems []Problem
	dropped  int
	// valid holds values checkValue accepted, by their address (a small
	// direct-mapped cache): decoders share one Value between the nodes
	// whose metadata is equal, so most nodes' values were checked before.
	// Values are immutable. Checking each node's value was two thirds of
	// Verify on a million-node graph.
	valid [64]*Value
}

// checkValue is checkValue, remembering the values it accepts.
func (v *verifier) checkValue(val *Value) string {
	slot := &v.valid[uintptr(unsafe.Pointer(val))/unsafe.Sizeof(Value{})%uintptr(len(v.valid))]
	if *slot == val {
		return ""
	}
	msg := checkValue(val)
	if msg == "" {
		*slot = val
	}
	return msg
}

func (v *verifier) add(kind ProblemKind, loc Location, msg string) {
	if len(v.problems) >= MaxProblems {
		v.dropped++
		return
	}
	v.problems = append(v.problems, Problem{Loc: loc, Msg: msg, Kind: kind})
}

func (v *verifier) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	if v.dropped > 0 {
		v.problems = append(v.problems, Problem{Loc: Location{File: v.file}, Msg: fmt.Sprintf("... and %d more problems", v.dropped)})
	}
	return &VerifyError{Problems: v.problems}
}

func (v *verifier) graph(g *Graph, graphs, attrs map[string]bool) {
	names := g.names()
	var st nodeState
	for i := range g.Nodes {
		v.node(g, i, names, graphs, attrs, &st)
	}
	if st.outputs == 0 {
		v.add(ProblemMissingOutput, InGraph(v.file, g.Name), "missing output node")
	}
	if st.forward {
		v.cycles(g)
	}
}

// nodeState is what graph's checks of single nodes carry from node to node.
type nodeState struct {
	outputs int  // output nodes so far
	forward bool // some reference points forward
}

// node checks node i of g.
func (v *verifier) node(g *Graph, i int, names *nameIndex, graphs, attrs map[string]bool, st *nodeState) {
	n := &g.Nodes[i]
	loc := At(v.file, g.Name, n.Name)
	if n.Name == "" {
		loc.Node = fmt.Sprintf("#%d", i)
		v.add(ProblemMalformed, loc, "node has an empty name")
	} else if names != nil && names.dups > 0 {
		// The index maps each name to its first node.
		if first, _ := names.get(n.Name); first != NodeID(i) {
			v.add(ProblemDuplicateName, loc, fmt.Sprintf("duplicate node name (first defined as node #%d)", first))
		}
	}
	if n.Op == OpUnspecified {
		v.add(ProblemMalformed, loc, "node has no op kind")
	}
	if n.Val != nil {
		if msg := v.checkValue(n.Val); msg != "" {
			v.add(ProblemBadShape, loc, msg)
		}
	}
	n.WalkRefs(func(a *Arg) {
		switch {
		case a.Ref == NoNode:
			v.add(ProblemDanglingRef, loc, fmt.Sprintf("dangling reference to %q: no such node in this graph", a.S))
		case int(a.Ref) == i:
			v.add(ProblemCycle, loc, "node uses itself (cycle)")
		case int(a.Ref) > i:
			st.forward = true
			v.add(ProblemUseBeforeDef, loc, fmt.Sprintf("use of %q before its definition", a.S))
		}
	})
	switch n.Op {
	case OpOutput:
		st.outputs++
		if st.outputs > 1 {
			v.add(ProblemExtraOutput, loc, "extra output node: a graph has exactly one")
		} else if i != len(g.Nodes)-1 {
			v.add(ProblemExtraOutput, loc, fmt.Sprintf("output node is not last: %d nodes follow it", len(g.Nodes)-1-i))
		}
	case OpGetAttr, OpCallModule:
		if hasEmptyComponent(n.Target) {
			v.add(ProblemMissingAttr, loc, fmt.Sprintf("%s target %q is empty or has an empty component: it names no attribute (read as a graph, it would be this graph or an enclosing one, and a graph cannot call itself)", n.Op, n.Target))
			break
		}
	}
	switch n.Op {
	case OpGetAttr:
		q := Qualify(g, n.Target)
		if !graphs[q] && !attrs[q] {
			v.add(ProblemMissingAttr, loc, fmt.Sprintf("get_attr target %q does not exist: no submodule or attribute %q", n.Target, q))
		}
	case OpCallModule:
		if q := Qualify(g, n.Target); !graphs[q] {
			v.add(ProblemMissingAttr, loc, fmt.Sprintf("call_module target %q does not exist: no submodule %q", n.Target, q))
		}
	}
}

// cycles reports every strongly connected component of more than one node.
// It runs only when some reference points forward, since a graph whose
// references all point backward is acyclic.
func (v *verifier) cycles(g *Graph) {
	_, err := topo.Sort(NewDefUse(g))
	var un topo.Unorderable
	if !errors.As(err, &un) {
		return
	}
	for _, comp := range un {
		in := make(map[int]bool, len(comp))
		minID := int(comp[0].ID())
		for _, n := range comp {
			in[int(n.ID())] = true
			minID = min(minID, int(n.ID()))
		}
		// Report the cycle at its first node in graph order, names in order.
		var names []string
		for i := range g.Nodes {
			if in[i] {
				names = append(names, g.Nodes[i].Name)
			}
		}
		v.add(ProblemCycle, At(v.file, g.Name, g.Nodes[minID].Name), "cycle through nodes "+strings.Join(names, ", "))
	}
}
