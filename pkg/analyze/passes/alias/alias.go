// Package alias is the alias and mutation analyzer: for every graph it
// computes the four results of PyTorch's check_input_alias_and_mutation
// (inp_inp_alias, inp_out_alias, out_out_alias, mutated_inputs) statically
// from op schemas, analyses HOP calls through their subgraphs, checks each
// HOP's restrictions at every call site, and records provenance.
//
// Conventions (PyTorch's, torch/_higher_order_ops/utils.py):
//   - inputs are the placeholders that carry a value (meta["val"]); when no
//     placeholder carries one, all placeholders are inputs;
//   - outputs are the pytree leaves of the output node's argument;
//   - storage maps are built so the last index sharing a storage wins;
//   - mutated_inputs lists the input index of every write, in order, an
//     index once per write (torch 2.14's check_input_alias_and_mutation
//     appends one entry per written argument of every op: [0, 0] for
//     x.sin_().add_(2); torch 2.6 has no such function).
//
// Where hopctl differs from PyTorch's static checker, on purpose: it sees
// writes through keyword arguments (out=) and inside nested HOPs, and
// applies the schema corrections of package opschema (native_batch_norm).
// Those are what the runtime check (version counters) observes.
package alias

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Rule ids of the findings this analyzer reports.
const (
	RuleHOPMutation = "hop-input-mutation"
	RuleHOPAlias    = "hop-input-alias"
	RuleUnknownOp   = "unknown-op"
	RuleBadHOPCall  = "hop-call"
)

// Analyzer is the alias/mutation analyzer. Its result is a *Summary.
var Analyzer = &analyze.Analyzer{
	Name: "alias",
	Doc:  "inputs a graph mutates, input/output aliasing, and HOP alias/mutation restrictions",
	Rules: []analyze.Rule{
		{ID: RuleHOPMutation, Name: "HopSubgraphMutatesInput", Severity: analyze.Error, Category: "hop",
			Short: "a HOP subgraph mutates one of its inputs",
			Doc: "A cond branch, while_loop cond_fn/body_fn, scan or associative_scan combine_fn, map body or flex_attention score_mod/mask_mod " +
				"writes one of its inputs (directly, through a view, or inside a nested HOP). PyTorch rejects this at functionalization " +
				"(\"<name> might be modifying the input!\"). The finding names the input, the views, the writing node and the path through nested subgraphs.",
			Example: `~~~python
def true_fn(x):
    x.add_(1)          # writes the branch's input
    return (x.sin(),)
torch.cond(pred, true_fn, false_fn, (x,))
~~~`,
			Fix: "compute out of place ('y = x + 1') and return the new value; write the caller's tensor outside the HOP."},
		{ID: RuleHOPAlias, Name: "HopSubgraphAliasesInput", Severity: analyze.Error, Category: "hop",
			Short: "a HOP subgraph aliases its inputs or outputs",
			Doc: "A HOP subgraph returns one of its inputs or a view of it, returns the same storage twice, or is called with two operands " +
				"that share a storage. PyTorch rejects this (\"<name> might be aliasing the input or the output!\").",
			Example: `~~~python
def body_fn(i, x):
    return i + 1, x.view(-1)   # returns a view of its input
~~~`,
			Fix: "return a fresh tensor ('x.clone()', or an out-of-place op) instead of the input or a view of it."},
		{ID: RuleBadHOPCall, Name: "MalformedHopCall", Severity: analyze.Error, Category: "hop", Invalid: true,
			Short: "malformed HOP call",
			Doc:   "A HOP call whose subgraph arguments are not get_attr nodes of existing subgraphs, whose operand lists are not lists, or whose subgraph takes a different number of inputs than the call passes. The file is invalid input.",
			Example: `~~~
cond = torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (x, y))
# true_graph_0 takes one placeholder, the call passes two operands
~~~`,
			Fix: "re-export the graph; a traced program cannot produce this."},
		{ID: RuleUnknownOp, Name: "UnknownOperator", Severity: analyze.Warning, Category: "schema",
			Short: "op with no schema: its aliasing and writes are unknown",
			Doc:   "No schema for the call target in the file's schema table, the built-in ATen table or the HOP definitions; the alias analysis treats its result as fresh and cannot see writes.",
			Example: `~~~
my_op = torch.ops.mylib.fused.default(x)   # no schema in the file
~~~`,
			Fix: "export with the bridge, which records 'str(op._schema)' of every op in the file, or register the op's schema."},
	},
	Requires: []*analyze.Analyzer{hopcalls.Analyzer},
	Run:      run,
}

// Pair maps an input or output index to another.
type Pair struct{ From, To int }

// Mutation records the first write to one input.
type Mutation struct {
	Input int // input index
	Prov  analyze.Provenance
}

// Alias records why an output aliases an input or another output.
type Alias struct {
	Output int // output index
	Input  int // input index, or -1 for output-output aliasing
	Other  int // the other output index for output-output aliasing
	Prov   analyze.Provenance
}

// Summary is the analyzer's result for one graph: the four results plus
// what callers need to analyse a call of this graph.
type Summary struct {
	Graph string
	// Inputs are the input placeholders; InputPos[i] is input i's position
	// among all placeholders.
	Inputs     []string
	InputPos   []int
	NumOutputs int

	InpInpAlias   []Pair // sorted by From
	InpOutAlias   []Pair
	OutOutAlias   []Pair
	MutatedInputs []int // one entry per write, as torch lists them

	Mutations []Mutation // one per mutated input, first-write order
	// FirstAlias is the first input-output or output-output alias, by
	// output index (an output-output alias before input ones), with its
	// provenance; nil when there is none. Call sites report only the first,
	// and listing every pair is quadratic (every output of a graph may
	// alias every input that shares one storage).
	FirstAlias *Alias
	// OutputStorages[j] lists the placeholder storages output j may live
	// in, and StoragePlaceholders[s] the placeholder positions in storage
	// s: together, the placeholders each output may alias, without
	// spelling out outputs × placeholders.
	OutputStorages      [][]storage
	StoragePlaceholders [][]int
	// MutatedPlaceholders lists written placeholder positions with the
	// mutation that wrote them first.
	MutatedPlaceholders []phMutation
	// View is AOTAutograd's view and mutation metadata of the graph
	// (ViewAndMutationMeta's input_info and output_info).
	View *ViewMeta
}

type phMutation struct {
	Pos  int
	Prov analyze.Provenance
}

// storage is an abstract storage id.
type storage = int32

// aval is the abstract value of a node or tuple element: the storages a
// tensor may live in (none for non-tensors), or elements for sequences.
// A graph has one value per node, so an aval is two words: p is the
// first of n storages (n > 0), or the sequence (n < 0: sq), or nil.
type aval struct {
	p unsafe.Pointer
	n int32
}

// storAval is the value of a tensor that may live in the storages stor
// (which the value shares, and nobody modifies).
func storAval(stor []storage) aval {
	if len(stor) == 0 {
		return aval{}
	}
	return aval{p: unsafe.Pointer(unsafe.SliceData(stor)), n: int32(len(stor))}
}

// stor are the storages of a tensor value (none for other values).
func (v aval) stor() []storage {
	if v.n <= 0 {
		return nil
	}
	return unsafe.Slice((*storage)(v.p), v.n)
}

// sq is a sequence value's part (nil for other values).
func (v aval) sq() *avalSeq {
	if v.n >= 0 {
		return nil
	}
	return (*avalSeq)(v.p)
}

// avalSeq is a sequence value's part of an aval. It is shared by the
// copies of the aval, so it is never modified once the aval is stored.
type avalSeq struct {
	elems []aval
	// fresh sequences make a new storage per element on first access.
	fresh bool
}

// seqOf is the sequence value of elems.
func seqOf(elems []aval, fresh bool) aval {
	return aval{p: unsafe.Pointer(&avalSeq{elems: elems, fresh: fresh}), n: -1}
}

// elems are a sequence value's elements (none for other values).
func (v aval) elems() []aval {
	if sq := v.sq(); sq != nil {
		return sq.elems
	}
	return nil
}

type state struct {
	pass *analyze.Pass
	g    *ir.Graph
	// bound is applySchema's scratch binding of a call (Schema.BindInto).
	bound []*ir.Arg
	vals  []aval
	// viewOf[n] is one more than the node whose storage n's value aliases
	// (0 if none: view and setView), so that the table needs no
	// initialising sweep, a write of every entry before the nodes' own.
	viewOf []ir.NodeID
	// storInputs[s] are the input indices in storage s, ascending, and
	// storPH[s] the placeholder positions; both only cover the storages
	// of placeholders, which are numbered first.
	storInputs [][]int
	storPH     [][]int
	nstor      storage
	// arena backs the one-element storage sets of most values.
	arena []storage
	// ops caches schema facts per call target, for every graph of the
	// run (opsOf).
	ops    *ir.TargetMemo[*opInfo]
	inputs []ir.NodeID
	// phs are the placeholders in order, phInput[pos] the input index of
	// placeholder pos (-1 if it is not an input) and inputPos[i] input
	// i's position among the placeholders: lists by placeholder, as graphs
	// can have hundreds of thousands of parameters, anywhere among a
	// million nodes (tables by node touched every page of 8 MB).
	phs      []ir.NodeID
	phInput  []int32
	inputPos []int
	mutated  []Mutation
	writes   []int // input index of every write, in order (MutatedInputs)
	mutSeen  map[int]bool
	phMut    []phMutation
	phSeen   map[int]bool
	freshSeq map[[2]int]storage
	// writeLog is every write (viewMeta tells data from metadata writes).
	writeLog []writeRec
	// bodyInput is, while subgraphCall applies a body's writes, the body's
	// InputMeta of the input being written (nil elsewhere).
	bodyInput *InputMeta
}

// view is the node whose storage node id's value aliases (NoNode if none).
func (st *state) view(id ir.NodeID) ir.NodeID { return st.viewOf[id] - 1 }

// setView records that node id's value aliases the storage of node of,
// unless it was recorded before.
func (st *state) setView(id, of ir.NodeID) {
	if st.viewOf[id] == 0 {
		st.viewOf[id] = of + 1
	}
}

func (st *state) newStorage() storage {
	st.nstor++
	return st.nstor - 1
}

// phStorage makes a storage for placeholders.
func (st *state) phStorage() storage {
	st.storInputs = append(st.storInputs, nil)
	st.storPH = append(st.storPH, nil)
	return st.newStorage()
}

func (st *state) inputsIn(s storage) []int {
	if int(s) < len(st.storInputs) {
		return st.storInputs[s]
	}
	return nil
}

// inputOf is the input index of placeholder id, or -1 if it is not an
// input (or not a placeholder).
func (st *state) inputOf(id ir.NodeID) int32 {
	if pos, ok := slices.BinarySearch(st.phs, id); ok {
		return st.phInput[pos]
	}
	return -1
}

func (st *state) placeholdersIn(s storage) []int {
	if int(s) < len(st.storPH) {
		return st.storPH[s]
	}
	return nil
}

// one returns the abstract value of a tensor in storage s.
func (st *state) one(s storage) aval {
	if len(st.arena) == cap(st.arena) {
		// The first block fits the graph: most HOP subgraphs have a
		// handful of nodes, and there can be thousands of them.
		st.arena = make([]storage, 0, min(4096, max(16, len(st.g.Nodes))))
	}
	st.arena = append(st.arena, s)
	n := len(st.arena)
	return storAval(st.arena[n-1 : n : n])
}

func run(pass *analyze.Pass) (any, error) {
	g := pass.Graph
	st := &state{
		pass: pass, g: g,
		vals:     make([]aval, len(g.Nodes)),
		viewOf:   make([]ir.NodeID, len(g.Nodes)),
		mutSeen:  map[int]bool{},
		phSeen:   map[int]bool{},
		freshSeq: map[[2]int]storage{},
		ops:      opsOf(pass),
	}
	st.placeholders()
	for i := range g.Nodes {
		if err := st.node(ir.NodeID(i)); err != nil {
			return nil, err
		}
	}
	return st.summarize(), nil
}

// placeholders assigns storages: placeholders with equal storage_id share
// one; every other tensor placeholder gets its own.
func (st *state) placeholders() {
	g := st.g
	// A single walk over the nodes lists the placeholders.
	anyVal := false
	var phs []ir.NodeID
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Op == ir.OpPlaceholder {
			phs = append(phs, ir.NodeID(i))
			anyVal = anyVal || n.Val != nil
		}
	}
	count := len(phs)
	st.phs, st.phInput = phs, make([]int32, count)
	st.inputs, st.inputPos = make([]ir.NodeID, 0, count), make([]int, 0, count)
	// Graphs can have hundreds of thousands of parameters: the storage
	// tables are allocated once, and a storage's first placeholder (most
	// have one) is listed in a block shared by all (add).
	st.storInputs = make([][]int, 0, count)
	st.storPH = make([][]int, 0, count)
	firsts := make([]int, 0, 2*count)
	add := func(list *[]int, v int) {
		if len(*list) > 0 {
			*list = append(*list, v)
			return
		}
		firsts = append(firsts, v)
		*list = firsts[len(firsts)-1 : len(firsts) : len(firsts)]
	}
	byID := map[int64]storage{}
	for pos, id := range phs {
		n := &g.Nodes[id]
		input := -1
		isInput := n.Val != nil || !anyVal
		if isInput {
			input = len(st.inputs)
			st.inputs = append(st.inputs, id)
			st.inputPos = append(st.inputPos, pos)
		}
		st.phInput[pos] = int32(input)
		isTensor := n.Val == nil || n.Val.Kind == ir.ValTensor
		if isTensor {
			var s storage
			if t := tensorOf(n.Val); t != nil && t.HasStorageID {
				var ok bool
				if s, ok = byID[t.StorageID]; !ok {
					s = st.phStorage()
					byID[t.StorageID] = s
				}
			} else {
				s = st.phStorage()
			}
			st.vals[id] = st.one(s)
			add(&st.storPH[s], pos)
			if isInput {
				add(&st.storInputs[s], input)
			}
		}
	}
}

func tensorOf(v *ir.Value) *ir.TensorMeta {
	if v != nil && v.Kind == ir.ValTensor {
		return v.Tensor
	}
	return nil
}

// freshFor makes the abstract value of a fresh result shaped like val.
func (st *state) freshFor(v *ir.Value) aval {
	if v == nil {
		return st.one(st.newStorage())
	}
	switch v.Kind {
	case ir.ValTensor:
		return st.one(st.newStorage())
	case ir.ValList, ir.ValTuple:
		elems := make([]aval, len(v.Elems))
		for i := range v.Elems {
			elems[i] = st.freshFor(&v.Elems[i])
		}
		return seqOf(elems, false)
	}
	return aval{}
}

// argVal is the abstract value of an argument tree.
func (st *state) argVal(a *ir.Arg) aval {
	switch a.Kind {
	case ir.ArgNode:
		if a.Ref >= 0 && int(a.Ref) < len(st.vals) {
			return st.vals[a.Ref]
		}
	case ir.ArgList, ir.ArgTuple:
		args := a.Elems()
		elems := make([]aval, len(args))
		for i := range args {
			elems[i] = st.argVal(&args[i])
		}
		return seqOf(elems, false)
	}
	return aval{}
}

// storages flattens every storage in an abstract value.
func (v aval) storages() []storage {
	sq := v.sq()
	if sq == nil {
		return v.stor()
	}
	var out []storage
	for _, e := range sq.elems {
		out = append(out, e.storages()...)
	}
	return out
}

func union(a, b []storage) []storage {
	out := append([]storage(nil), a...)
	if len(out)+len(b) > 32 {
		// Large sets (a list of thousands of tensors): a set, not a scan.
		in := make(map[storage]bool, len(out)+len(b))
		for _, s := range out {
			in[s] = true
		}
		for _, s := range b {
			if !in[s] {
				in[s] = true
				out = append(out, s)
			}
		}
		return out
	}
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// element returns element i of a sequence value.
func (st *state) element(owner ir.NodeID, v aval, i int) aval {
	if sq := v.sq(); sq != nil {
		if i >= 0 && i < len(sq.elems) {
			return sq.elems[i]
		}
		if sq.fresh {
			key := [2]int{int(owner), i}
			s, ok := st.freshSeq[key]
			if !ok {
				s = st.newStorage()
				st.freshSeq[key] = s
			}
			return st.one(s)
		}
		return aval{}
	}
	// A list of views typed as one value: every element shares its storages.
	return v
}

// chain returns the input placeholder a value derives from through view
// nodes, and the view nodes in between (oldest first).
func (st *state) chain(id ir.NodeID) (input ir.NodeID, views []string) {
	var rev []string
	seen := 0
	for id >= 0 && seen <= len(st.g.Nodes) {
		seen++
		n := &st.g.Nodes[id]
		if n.Op == ir.OpPlaceholder {
			input = id
			for i := len(rev) - 1; i >= 0; i-- {
				views = append(views, rev[i])
			}
			return input, views
		}
		rev = append(rev, n.Name)
		id = st.view(id)
	}
	return ir.NoNode, nil
}

func (st *state) stackTrace(id ir.NodeID) string {
	if m := st.g.Nodes[id].Meta; m != nil {
		return m.StackTrace
	}
	return ""
}

// write records that node id writes the storages of value v, reached
// through node via (the argument node, for provenance). inner, when set, is
// the provenance inside a called subgraph.
func (st *state) write(id ir.NodeID, via ir.NodeID, v []storage, inner *analyze.Provenance, hop string) {
	// The provenance is built only for a first write: building it walks
	// the chain of views, and a graph may write through every link of a
	// long chain.
	var prov *analyze.Provenance
	st.writeLog = append(st.writeLog, writeRec{id: id, via: via, body: st.bodyInput})
	provOnce := func() analyze.Provenance {
		if prov == nil {
			p := st.provenance(id, via, inner, hop)
			prov = &p
		}
		return *prov
	}
	for _, s := range v {
		for _, pos := range st.placeholdersIn(s) {
			if !st.phSeen[pos] {
				st.phSeen[pos] = true
				st.phMut = append(st.phMut, phMutation{Pos: pos, Prov: provOnce()})
			}
		}
		ins := st.inputsIn(s)
		if len(ins) == 0 {
			continue
		}
		last := ins[len(ins)-1]
		st.writes = append(st.writes, last)
		if st.mutSeen[last] {
			continue
		}
		st.mutSeen[last] = true
		st.mutated = append(st.mutated, Mutation{Input: last, Prov: provOnce()})
	}
}

// provenance builds the provenance of an access by node id through the
// value of node via.
func (st *state) provenance(id, via ir.NodeID, inner *analyze.Provenance, hop string) analyze.Provenance {
	p := analyze.Provenance{InputIndex: -1, Node: st.g.Nodes[id].Name, Path: []string{st.g.Nodes[id].Name}, StackTrace: st.stackTrace(id)}
	if via >= 0 {
		in, views := st.chain(via)
		if in >= 0 {
			p.Input = st.g.Nodes[in].Name
			if idx := st.inputOf(in); idx >= 0 {
				p.InputIndex = int(idx)
			}
			p.Views = views
		}
	}
	if inner != nil {
		p.Node = inner.Node
		p.Path = append([]string{st.g.Nodes[id].Name, hop}, inner.Path...)
		p.StackTrace = inner.StackTrace
	}
	return p
}

func (st *state) node(id ir.NodeID) error {
	n := &st.g.Nodes[id]
	switch n.Op {
	case ir.OpPlaceholder, ir.OpOutput:
		return nil
	case ir.OpGetAttr:
		if st.pass.Subgraph(ir.Qualify(st.g, n.Target)) == nil {
			st.vals[id] = st.freshFor(n.Val)
		}
		return nil
	case ir.OpCallModule:
		return st.callModule(id)
	case ir.OpCallMethod:
		// Torch-level graphs (symbolic_trace, Dynamo): x.add_(1) is the
		// ATen overload of the method's name that fits the arguments
		// (aten.add_.Scalar), with that overload's alias and write
		// semantics; a method with no such overload cannot be analysed,
		// which is an error, not a silent pass.
		if target, ok := st.torchLevelTarget("aten."+n.Target, n.Args); ok {
			return st.callOp(id, target, n.Args, n.Kwargs)
		}
		st.unanalysable(id, fmt.Sprintf("method call .%s(): no ATen overload aten.%s.* fits its arguments, so its aliasing and writes are unknown; export the graph at the ATen level (make_fx, torch.export) to analyse it", n.Target, n.Target))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	case ir.OpCallFunction:
		switch {
		case n.Target == "_operator.getitem":
			st.getitem(id)
			return nil
		case opschema.IsHOPTarget(n.Target):
			return st.hop(id)
		case analyze.IsGradModeTarget(n.Target):
			// A grad-mode switch (analyze.GradEnabledAt reads it): no
			// tensor read or written.
			return nil
		case opschema.IsPythonScalarTarget(n.Target):
			if opschema.IsSetitem(n.Target) && len(n.Args) == 3 {
				// t[i] = v, as Dynamo records it: Tensor.__setitem__
				// writes t in place (index_put_ or copy_ into a view of
				// it, torch/csrc/autograd/python_variable_indexing.cpp)
				// whatever the index; the node stands for t after it.
				if t := st.argVal(&n.Args[0]); len(t.storages()) > 0 {
					st.write(id, refOf(&n.Args[0]), t.storages(), nil, "")
					st.vals[id] = t
					return nil
				}
			}
			if op, ok := opschema.TensorOperator(n.Target); ok && len(n.Args) > 0 {
				// Tensor arithmetic as Dynamo records it: with a tensor
				// first, Python runs its dunder, whose ATen op decides
				// (x += y writes x); with a scalar first, the second
				// operand's reflected dunder (__rsub__, __radd__ …),
				// which returns a fresh tensor.
				if len(st.argVal(&n.Args[0]).storages()) > 0 {
					if target, ok := st.torchLevelTarget(op, n.Args); ok {
						return st.callOp(id, target, n.Args, n.Kwargs)
					}
				} else {
					if tensorOf(n.Val) != nil {
						st.vals[id] = st.freshFor(n.Val)
					}
					return nil
				}
			}
			// Python scalar arithmetic on SymInts: no tensors involved.
			if tensorOf(n.Val) != nil {
				st.unknown(id, fmt.Sprintf("no schema for %s, which returns a tensor: its aliasing and writes are unknown", n.Target))
				st.vals[id] = st.freshFor(n.Val)
			}
			return nil
		}
		if name, ok := strings.CutPrefix(n.Target, "torch."); ok && !strings.HasPrefix(name, "ops.") {
			// torch.add(x, y) as Dynamo records it: aten.add's overload
			// that fits, as for methods; torch.nn.functional.* and other
			// Python-level functions have none.
			if target, ok := st.torchLevelTarget("aten."+name, n.Args); ok && !strings.Contains(name, ".") {
				return st.callOp(id, target, n.Args, n.Kwargs)
			}
			st.unanalysable(id, fmt.Sprintf("torch-level function %s: no ATen overload fits its arguments, so its aliasing and writes are unknown; export the graph at the ATen level (make_fx, torch.export) to analyse it", n.Target))
			st.vals[id] = st.freshFor(n.Val)
			return nil
		}
		return st.callOp(id, n.Target, n.Args, n.Kwargs)
	}
	return nil
}

// torchLevelOverloads are the overload names tried, in order, for a
// torch-level call (a method, a torch.* function) of an ATen op.
var torchLevelOverloads = []string{"default", "Tensor", "Scalar", "int", "dim", "self", "Tensor_Scalar", "Scalar_Tensor", "Tensor_Tensor", "using_ints", "dims"}

// torchLevelTarget returns the first overload of op (aten.add_) whose
// schema takes the call's positional arguments: as many, each a tensor
// where the schema wants a Tensor and not one where it wants a scalar.
func (st *state) torchLevelTarget(op string, args []ir.Arg) (string, bool) {
	for _, ov := range torchLevelOverloads {
		target := op + "." + ov
		info, ok := st.lookup(target)
		if !ok || !fitsPositional(info.schema, args) {
			continue
		}
		return target, true
	}
	return "", false
}

func fitsPositional(s *opschema.Schema, args []ir.Arg) bool {
	var pos []*opschema.Argument
	for i := range s.Arguments {
		if !s.Arguments[i].KwargOnly {
			pos = append(pos, &s.Arguments[i])
		}
	}
	if len(args) > len(pos) {
		return false
	}
	for i, p := range pos {
		if i >= len(args) {
			if p.Default == nil && (p.Type == nil || p.Type.Kind != opschema.KindOptional) {
				return false
			}
			continue
		}
		t := p.Type
		if t != nil && t.Kind == opschema.KindOptional && t.Elem != nil {
			t = t.Elem
		}
		if t == nil {
			continue
		}
		isNode := args[i].Kind == ir.ArgNode
		switch t.Kind {
		case opschema.KindTensor:
			if !isNode {
				return false
			}
		case opschema.KindScalar, opschema.KindInt, opschema.KindFloat, opschema.KindBool, opschema.KindSymInt:
			if isNode && t.Kind == opschema.KindScalar {
				return false // a Tensor overload fits a tensor better
			}
		}
	}
	return true
}

// unanalysable reports a node the analysis cannot see into as an error: a
// torch-level call with no ATen equivalent could write its inputs.
func (st *state) unanalysable(id ir.NodeID, msg string) {
	n := &st.g.Nodes[id]
	st.pass.Report(analyze.Finding{Rule: RuleUnknownOp, Severity: analyze.Error, Node: n.Name, Message: msg,
		Provenance: &analyze.Provenance{InputIndex: -1, Node: n.Name, StackTrace: st.stackTrace(id)}})
}

func (st *state) unknown(id ir.NodeID, msg string) {
	n := &st.g.Nodes[id]
	st.pass.Report(analyze.Finding{Rule: RuleUnknownOp, Severity: analyze.Warning, Node: n.Name, Message: msg,
		Provenance: &analyze.Provenance{InputIndex: -1, Node: n.Name, StackTrace: st.stackTrace(id)}})
}

func (st *state) getitem(id ir.NodeID) {
	n := &st.g.Nodes[id]
	if len(n.Args) < 2 || n.Args[0].Kind != ir.ArgNode || n.Args[0].Ref < 0 || n.Args[1].Kind != ir.ArgInt {
		st.vals[id] = st.freshFor(n.Val)
		return
	}
	src := n.Args[0].Ref
	v := st.element(src, st.vals[src], int(n.Args[1].Int()))
	st.vals[id] = v
	if len(v.storages()) > 0 {
		st.setView(id, src)
	}
}

// summarize computes the four results from the final state.
func (st *state) summarize() *Summary {
	g := st.g
	sum := &Summary{Graph: g.Name, MutatedInputs: []int{},
		Inputs: make([]string, 0, len(st.inputs)), InputPos: st.inputPos}
	for _, in := range st.inputs {
		sum.Inputs = append(sum.Inputs, g.Nodes[in].Name)
	}
	// Outputs: pytree leaves of the output node's first argument.
	leaves, _ := g.Outputs()
	sum.NumOutputs = len(leaves)
	outVals := make([]aval, len(leaves))
	for j, l := range leaves {
		outVals[j] = st.argVal(l)
	}
	// Last index wins, as in PyTorch's dict comprehensions. Inputs are
	// placeholders, whose storages are numbered first (phStorage): a
	// table by storage, not a map (hundreds of thousands of parameters).
	inpLast := make([]int32, len(st.storPH))
	for i, in := range st.inputs {
		for _, s := range st.vals[in].stor() {
			inpLast[s] = int32(i)
		}
	}
	outLast := map[storage]int{}
	for j, v := range outVals {
		for _, s := range v.storages() {
			outLast[s] = j
		}
	}
	for i, in := range st.inputs {
		stor := st.vals[in].stor()
		if len(stor) == 0 {
			continue
		}
		if last := int(inpLast[stor[0]]); last != i {
			sum.InpInpAlias = append(sum.InpInpAlias, Pair{i, last})
		}
		if j, ok := outLast[stor[0]]; ok {
			sum.InpOutAlias = append(sum.InpOutAlias, Pair{i, j})
		}
	}
	sum.OutputStorages = make([][]storage, len(leaves))
	sum.StoragePlaceholders = st.storPH
	for j, v := range outVals {
		stor := v.storages()
		rep := -1
		var seen map[storage]bool
		if len(stor) > 8 {
			seen = make(map[storage]bool, len(stor))
		}
		for k, s := range stor {
			rep = max(rep, outLast[s])
			if len(st.placeholdersIn(s)) == 0 {
				continue
			}
			if seen != nil {
				if seen[s] {
					continue
				}
				seen[s] = true
			} else if slices.Contains(stor[:k], s) {
				continue
			}
			sum.OutputStorages[j] = append(sum.OutputStorages[j], s)
		}
		if rep >= 0 && rep != j {
			sum.OutOutAlias = append(sum.OutOutAlias, Pair{j, rep})
			if sum.FirstAlias == nil {
				sum.FirstAlias = &Alias{Output: j, Input: -1, Other: rep, Prov: st.returnProv(leaves[j], -1)}
			}
		}
		if sum.FirstAlias == nil {
			for _, s := range stor {
				if ins := st.inputsIn(s); len(ins) > 0 {
					sum.FirstAlias = &Alias{Output: j, Input: ins[0], Other: -1, Prov: st.returnProv(leaves[j], ins[0])}
					break
				}
			}
		}
	}
	sum.MutatedInputs = append(sum.MutatedInputs, st.writes...)
	sum.Mutations = st.mutated
	sum.MutatedPlaceholders = st.phMut
	sum.View = st.viewMeta(leaves, outVals)
	return sum
}

// returnProv is the provenance of output leaf l aliasing input i.
func (st *state) returnProv(l *ir.Arg, input int) analyze.Provenance {
	out := st.g.OutputNode()
	p := analyze.Provenance{InputIndex: input, Node: st.g.Nodes[out].Name}
	if l.Kind == ir.ArgNode && l.Ref >= 0 {
		p.Node = l.S
		p.Path = []string{l.S}
		p.StackTrace = st.stackTrace(l.Ref)
		in, views := st.chain(l.Ref)
		if in >= 0 {
			p.Input = st.g.Nodes[in].Name
			p.Views = views
			if idx := st.inputOf(in); idx >= 0 && input >= 0 {
				p.InputIndex = int(idx)
			}
		}
	}
	if input >= 0 && input < len(st.inputs) {
		p.Input = st.g.Nodes[st.inputs[input]].Name
	}
	return p
}
