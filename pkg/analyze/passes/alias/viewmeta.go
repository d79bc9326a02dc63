package alias

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// ViewMeta is AOTAutograd's view and mutation metadata of a graph, field for
// field: what run_functionalized_fw_and_collect_metadata
// (torch/_functorch/_aot_autograd/collect_metadata_analysis.py) puts in
// ViewAndMutationMeta's input_info and output_info (schemas.py:
// InputAliasInfo, OutputAliasInfo, OutputType), computed from the graph
// instead of by running it under functionalization. The storage maps of
// Summary answer "which storages are shared"; this answers AOTAutograd's
// finer questions (a data write or a metadata-only one, the output *is* an
// input or is a view of it, a view of an intermediate).
type ViewMeta struct {
	// KeepInputMutations is the flag AOTAutograd is given for inductor:
	// true unless the program needs autograd (aot_autograd.py's
	// needs_autograd: an input requires grad and grad mode is on). It
	// decides MutationType.
	KeepInputMutations bool
	// StorageSharing is "recorded" when the file says for every tensor
	// input which storage it is (the bridge's storage_id, a .pt2's saved
	// example inputs), "unknown" otherwise (a .pt2 archive without example
	// inputs): inputs are then taken as not sharing, which may be wrong.
	StorageSharing string
	Inputs         []InputMeta
	Outputs        []OutputMeta
}

// InputMeta is InputAliasInfo for one graph input.
type InputMeta struct {
	MutatesData            bool
	MutatesMetadata        bool
	MutatesStorageMetadata bool
	// MutationsHiddenFromAutograd is true when every data mutation is
	// hidden from autograd; as in torch, vacuously true for an input with
	// no data mutation. hopctl sees no hidden data mutation (a graph does
	// not record .data or _unsafe_preserve_version_counter), so this is
	// !MutatesData.
	MutationsHiddenFromAutograd bool
	// MutationsUnderNoGrad is mutations_under_no_grad_or_inference_mode:
	// the input's data is written and every write is made with grad mode
	// off (between torch._C._set_grad_enabled(False) and (True) calls, or
	// in a wrap_with_set_grad_enabled(False, ...) body).
	MutationsUnderNoGrad bool
	RequiresGrad         bool
	KeepInputMutations   bool
	// MutationType is InputAliasInfo.mutation_type: NOT_MUTATED,
	// MUTATED_IN_GRAPH or MUTATED_OUT_GRAPH.
	MutationType string
}

// OutputType names (schemas.py's OutputType).
const (
	OutNonAlias                   = "non_alias"
	OutAliasOfInput               = "alias_of_input"
	OutIsInput                    = "is_input"
	OutAliasOfIntermediateSave    = "alias_of_intermediate_save_as_output"
	OutAliasOfIntermediate        = "alias_of_intermediate"
	OutAliasOfIntermediateBaseOut = "alias_of_intermediate_base_is_user_output"
	OutUnsafeViewAlias            = "unsafe_view_alias"
)

// OutputMeta is OutputAliasInfo for one graph output.
type OutputMeta struct {
	OutputType string
	// BaseIdx is base_idx, -1 for None: the input the output aliases (the
	// last input in its storage, as torch's dict of storages keeps the
	// last), the intermediate base it is regenerated from, or the user
	// output that base is.
	BaseIdx      int
	RequiresGrad bool
}

// inplaceViewOps are the overloads torch tags torch.Tag.inplace_view
// (native_functions.yaml), plus squeeze_ and resize_, which change only a
// tensor's sizes and strides too: a write through them is a metadata
// mutation, not a data one (functionalization's has_data_mutation stays
// false). python/tests/test_view_meta.py checks the tagged ones against
// the torch it runs under.
var inplaceViewOps = map[string]bool{
	"aten.as_strided_.default": true, "aten.resize_as_.default": true,
	"aten.set_.default": true, "aten.set_.source_Storage": true, "aten.set_.source_Storage_storage_offset": true,
	"aten.set_.source_Tensor": true, "aten.set_.source_Tensor_storage_offset": true,
	"aten.t_.default": true, "aten.transpose_.default": true, "aten.unsqueeze_.default": true,
	"aten.squeeze_.default": true, "aten.squeeze_.dim": true, "aten.squeeze_.dims": true,
	"aten.resize_.default": true, "aten.swapdims_.default": true, "aten.swapaxes_.default": true,
}

// IsInplaceViewOp reports whether target changes only its argument's
// metadata (sizes, strides, offset, or storage for set_).
func IsInplaceViewOp(target string) bool { return inplaceViewOps[target] }

func isSetOp(target string) bool { return strings.HasPrefix(target, "aten.set_.") }

// writeRec is one write the analysis saw: node id writes through the
// value of node via. For a write inside a HOP body, body is the body's
// InputMeta of the written input: whether the body's writes to it were
// metadata-only (set_ in wrap_with_set_grad_enabled, as torch.export
// traces x.set_(y) under no_grad) is the body's answer.
type writeRec struct {
	id, via ir.NodeID
	body    *InputMeta
}

// viewMeta computes the graph's ViewMeta from the analysed state.
func (st *state) viewMeta(leaves []*ir.Arg, outVals []aval) *ViewMeta {
	g := st.g
	vm := &ViewMeta{StorageSharing: "unknown"}
	n := len(g.Nodes)
	// canon[id] is one more than the node whose tensor node id's value is
	// (an in-place op returns its argument itself); 0: itself.
	canon := make([]ir.NodeID, n)
	canonOf := func(id ir.NodeID) ir.NodeID {
		for i := 0; i <= n && canon[id] != 0; i++ {
			id = canon[id] - 1
		}
		return id
	}
	rg := make([]bool, n)
	noGrad := make([]bool, n)
	gradOn := !st.pass.Module.HasGradEnabled || st.pass.Module.GradEnabled
	multiView := make([]bool, n)
	anyRG := false
	// Recorded when every tensor input has a storage id (the bridge's
	// example inputs, a .pt2's saved example inputs); one without leaves
	// the sharing unknown.
	tensors, withID := 0, 0
	for _, in := range st.inputs {
		if t := tensorOf(g.Nodes[in].Val); t != nil {
			rg[in] = t.RequiresGrad
			anyRG = anyRG || t.RequiresGrad
			tensors++
			if t.HasStorageID {
				withID++
			}
		}
	}
	if tensors > 0 && withID == tensors {
		vm.StorageSharing = "recorded"
	}
	vm.KeepInputMutations = !(anyRG && gradOn)
	grad := gradOn
	for i := range g.Nodes {
		id := ir.NodeID(i)
		nd := &g.Nodes[i]
		if nd.Op == ir.OpPlaceholder {
			continue
		}
		noGrad[i] = !grad
		if nd.Op == ir.OpCallFunction && nd.Target == "torch._C._set_grad_enabled" && len(nd.Args) == 1 && nd.Args[0].Kind == ir.ArgBool {
			grad = nd.Args[0].B
			continue
		}
		// requires_grad: a floating result of a differentiable op on a
		// value that requires grad, with grad mode on.
		argRG := false
		for a := range nd.Args {
			argRG = argRG || argRequiresGrad(&nd.Args[a], rg)
		}
		t := tensorOf(nd.Val)
		floating := t == nil || isFloatingDtype(t.Dtype)
		rg[i] = argRG && grad && floating && nd.Target != "aten.detach.default"
		if nd.Op == ir.OpCallFunction && nd.Target == "_operator.getitem" && len(nd.Args) > 0 && nd.Args[0].Kind == ir.ArgNode && nd.Args[0].Ref >= 0 {
			src := nd.Args[0].Ref
			rg[i] = rg[src] && floating
			if st.view(src) >= 0 {
				multiView[i] = true
			}
			continue
		}
		if nd.Op != ir.OpCallFunction {
			continue
		}
		info, ok := st.lookup(nd.Target)
		if !ok {
			continue
		}
		for _, ra := range info.rets {
			if ra.Write && !ra.Contained && len(info.schema.Returns) == 1 {
				st.bound = info.schema.BindInto(st.bound, nd.Args, nd.Kwargs)
				if b := st.bound[ra.Arg]; b != nil && b.Kind == ir.ArgNode && b.Ref >= 0 {
					canon[id] = canonOf(b.Ref) + 1
				}
			}
		}
	}
	// Inputs that are one tensor passed twice: the same storage and the
	// same metadata (AOTAutograd's fake-tensor memo makes them one
	// functional tensor, so a write to one is a write to both). Grouped
	// once by storage and layout: a write marks its input's group.
	twins := make([][]int, len(st.inputs))
	groups := map[string][]int{}
	for i, in := range st.inputs {
		if t := tensorOf(g.Nodes[in].Val); t != nil && t.HasStorageID {
			k := layoutKey(t)
			groups[k] = append(groups[k], i)
		}
	}
	for _, members := range groups {
		for _, i := range members {
			twins[i] = members
		}
	}
	inputOfCanon := func(id ir.NodeID) int {
		c := canonOf(id)
		if g.Nodes[c].Op == ir.OpPlaceholder {
			return int(st.inputOf(c))
		}
		return -1
	}
	vm.Inputs = make([]InputMeta, len(st.inputs))
	dataWrites := make([]int, len(st.inputs))
	noGradWrites := make([]int, len(st.inputs))
	metaOp := make([]bool, len(st.inputs))
	markData := func(i int, ng bool) {
		mark := func(j int) {
			dataWrites[j]++
			if ng {
				noGradWrites[j]++
			}
		}
		if twins[i] == nil {
			mark(i)
		}
		for _, j := range twins[i] {
			mark(j)
		}
	}
	// The input each written value derives from through views (st.chain's
	// input), memoized along the way: a graph may write through every link
	// of one long chain of views.
	const unknown = ir.NodeID(-2)
	chainRoot := make([]ir.NodeID, len(g.Nodes))
	for i := range chainRoot {
		chainRoot[i] = unknown
	}
	var path []ir.NodeID
	inputOfChain := func(id ir.NodeID) ir.NodeID {
		path = path[:0]
		r := ir.NoNode
		for id >= 0 && len(path) <= len(g.Nodes) {
			if chainRoot[id] != unknown {
				r = chainRoot[id]
				break
			}
			path = append(path, id)
			if g.Nodes[id].Op == ir.OpPlaceholder {
				r = id
				break
			}
			id = st.view(id)
		}
		for _, p := range path {
			chainRoot[p] = r
		}
		return r
	}
	for _, w := range st.writeLog {
		nd := &g.Nodes[w.id]
		ng := noGrad[w.id] || (nd.Target == "higher_order.wrap_with_set_grad_enabled" && len(nd.Args) > 0 && nd.Args[0].Kind == ir.ArgBool && !nd.Args[0].B)
		if IsInplaceViewOp(nd.Target) || w.body != nil && !w.body.MutatesData && (w.body.MutatesMetadata || w.body.MutatesStorageMetadata) {
			if i := inputOfCanon(w.via); i >= 0 {
				metaOp[i] = true
				if isSetOp(nd.Target) || w.body != nil && w.body.MutatesStorageMetadata {
					vm.Inputs[i].MutatesStorageMetadata = true
				}
			}
			continue
		}
		if w.via >= 0 {
			if in := inputOfChain(w.via); in >= 0 {
				if i := st.inputOf(in); i >= 0 {
					markData(int(i), ng)
					continue
				}
			}
			// No single input the written value comes from (an output of
			// a HOP, a list): every input in the written storages.
			for _, s := range st.vals[w.via].storages() {
				for _, i := range st.inputsIn(s) {
					markData(i, ng)
				}
			}
		}
	}
	// The final metadata of each input: that of the last value that is the
	// input itself (recorded meta after t_, unsqueeze_, ...).
	last := make([]ir.NodeID, len(st.inputs))
	for i, in := range st.inputs {
		last[i] = in
	}
	for i := range g.Nodes {
		if g.Nodes[i].Op == ir.OpCallFunction {
			if k := inputOfCanon(ir.NodeID(i)); k >= 0 && ir.NodeID(i) != st.inputs[k] {
				last[k] = ir.NodeID(i)
			}
		}
	}
	for i := range vm.Inputs {
		im := &vm.Inputs[i]
		im.RequiresGrad = rg[st.inputs[i]]
		im.KeepInputMutations = vm.KeepInputMutations
		im.MutatesData = dataWrites[i] > 0
		if metaOp[i] {
			before, after := tensorOf(g.Nodes[st.inputs[i]].Val), tensorOf(g.Nodes[last[i]].Val)
			// Without recorded metadata an inplace view op counts as a
			// change (torch compares sizes, strides and offset).
			im.MutatesMetadata = im.MutatesStorageMetadata || before == nil || after == nil || !sameLayout(before, after)
		}
		if im.MutatesStorageMetadata {
			im.MutatesData = false // collect_metadata_analysis.py: set_ is not a data mutation
		}
		im.MutationsHiddenFromAutograd = !im.MutatesData
		im.MutationsUnderNoGrad = im.MutatesData && noGradWrites[i] == dataWrites[i]
		im.MutationType = mutationType(im)
	}
	vm.Outputs = st.outputMeta(leaves, outVals, canonOf, rg, multiView)
	return vm
}

// outputMeta classifies each output as collect_metadata_analysis.py's loop
// over flat_f_outs does.
func (st *state) outputMeta(leaves []*ir.Arg, outVals []aval, canonOf func(ir.NodeID) ir.NodeID, rg, multiView []bool) []OutputMeta {
	g := st.g
	outs := make([]OutputMeta, len(leaves))
	// Outputs per storage (out_tensor_alias_counts) and those that are
	// multi-output views.
	count := map[storage]int{}
	multi := map[storage]int{}
	firstStor := func(j int) (storage, bool) {
		if s := outVals[j].stor(); len(s) > 0 {
			return s[0], true
		}
		return 0, false
	}
	ref := func(j int) ir.NodeID {
		if l := leaves[j]; l.Kind == ir.ArgNode && l.Ref >= 0 {
			return l.Ref
		}
		return ir.NoNode
	}
	outOfCanon := map[ir.NodeID]int{} // out_tensor_ids: the last output wins
	for j := range leaves {
		s, ok := firstStor(j)
		if !ok {
			continue
		}
		count[s]++
		if r := ref(j); r >= 0 {
			if multiView[r] {
				multi[s]++
			}
			outOfCanon[canonOf(r)] = j
		}
	}
	bases := map[ir.NodeID]int{} // intermediate_base_tensor_id_to_output_idx
	for j := range leaves {
		om := &outs[j]
		om.OutputType, om.BaseIdx = OutNonAlias, -1
		r := ref(j)
		s, ok := firstStor(j)
		if r < 0 || !ok || tensorOf(g.Nodes[r].Val) == nil && g.Nodes[r].Val != nil {
			continue
		}
		om.RequiresGrad = rg[r]
		c := canonOf(r)
		if ins := st.inputsIn(s); len(ins) > 0 {
			om.BaseIdx = ins[len(ins)-1]
			switch {
			case om.RequiresGrad && count[s]-multi[s] == 0:
				// Differentiable outputs of one multi-output view call
				// (unbind): not aliases in AOTAutograd's sense, though
				// they share the input's storage.
				om.OutputType = OutNonAlias
			case g.Nodes[c].Op == ir.OpPlaceholder:
				om.OutputType = OutIsInput
			default:
				om.OutputType = OutAliasOfInput
			}
			continue
		}
		base := st.baseOf(c, canonOf)
		if base < 0 || !om.RequiresGrad || !rg[base] {
			continue
		}
		nonMulti := count[s] - multi[s]
		switch {
		case count[s] == 1 || nonMulti <= 1:
			om.OutputType = OutUnsafeViewAlias
		default:
			if k, ok := outOfCanon[base]; ok {
				om.OutputType, om.BaseIdx = OutAliasOfIntermediateBaseOut, k
			} else if k, ok := bases[base]; ok {
				om.OutputType, om.BaseIdx = OutAliasOfIntermediate, k
			} else {
				k := len(bases)
				bases[base] = k
				om.OutputType, om.BaseIdx = OutAliasOfIntermediateSave, k
			}
		}
	}
	return outs
}

// baseOf is a tensor's ._base: the root of the views it was made by, or
// NoNode when it is not a view. c is a canonical node (canonOf); a getitem
// of a multi-output call is a view when the call is a view op.
func (st *state) baseOf(c ir.NodeID, canonOf func(ir.NodeID) ir.NodeID) ir.NodeID {
	base := ir.NoNode
	for i := 0; i <= len(st.g.Nodes); i++ {
		v := st.view(c)
		if nd := &st.g.Nodes[c]; nd.Target == "_operator.getitem" && v >= 0 {
			// the call's own view (unbind's input), or none: fresh tuples
			v = st.view(v)
		}
		if v < 0 {
			return base
		}
		c = canonOf(v)
		base = c
	}
	return base
}

// mutationType is InputAliasInfo.mutation_type with
// _check_if_mutation_can_be_in_graph (functional_utils.py).
func mutationType(im *InputMeta) string {
	if !im.MutatesData && !im.MutatesMetadata {
		return "NOT_MUTATED"
	}
	inGraph := im.KeepInputMutations && (im.MutatesData || im.MutatesStorageMetadata) &&
		((!im.MutatesMetadata && !im.RequiresGrad) || im.MutationsHiddenFromAutograd || im.MutationsUnderNoGrad)
	if inGraph {
		return "MUTATED_IN_GRAPH"
	}
	return "MUTATED_OUT_GRAPH"
}

// Recompute sets the derived fields again after a mutation the graph does
// not show was added (a write an exported program's signature declares).
func (im *InputMeta) Recompute() {
	im.MutationsHiddenFromAutograd = !im.MutatesData
	im.MutationType = mutationType(im)
}

// layoutKey identifies a tensor's storage and layout as sameLayout
// compares them (ir.Dim.Equal: integers by value, expressions as written
// without spaces).
func layoutKey(t *ir.TensorMeta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", t.StorageID)
	dim := func(d ir.Dim) {
		if v, ok := d.Concrete(); ok {
			fmt.Fprintf(&b, "|%d", v)
		} else {
			b.WriteString("|s" + strings.Join(strings.Fields(d.Expr), ""))
		}
	}
	for _, d := range t.Shape {
		dim(d)
	}
	b.WriteString("/")
	for _, d := range t.Stride {
		dim(d)
	}
	b.WriteString("/")
	dim(t.StorageOffset)
	return b.String()
}

func sameLayout(a, b *ir.TensorMeta) bool {
	return slices.EqualFunc(a.Shape, b.Shape, ir.Dim.Equal) && slices.EqualFunc(a.Stride, b.Stride, ir.Dim.Equal) && a.StorageOffset.Equal(b.StorageOffset)
}

func argRequiresGrad(a *ir.Arg, rg []bool) bool {
	switch a.Kind {
	case ir.ArgNode:
		return a.Ref >= 0 && int(a.Ref) < len(rg) && rg[a.Ref]
	case ir.ArgList, ir.ArgTuple:
		for _, e := range a.Elems() {
			if argRequiresGrad(&e, rg) {
				return true
			}
		}
	}
	return false
}

// isFloatingDtype reports whether tensors of dtype can require grad
// (floating point and complex).
func isFloatingDtype(dtype string) bool {
	d := strings.TrimPrefix(dtype, "torch.")
	return d == "" || strings.HasPrefix(d, "float") || strings.HasPrefix(d, "complex") || d == "bfloat16" || d == "half" || d == "double" || d == "cfloat" || d == "cdouble"
}

// inputMetaAt returns the InputMeta of the input at placeholder position
// pos, nil when pos is not an input or the graph has no ViewMeta.
func (s *Summary) inputMetaAt(pos int) *InputMeta {
	if s.View == nil {
		return nil
	}
	// InputPos ascends: inputs are placeholders in graph order.
	if i, ok := slices.BinarySearch(s.InputPos, pos); ok && i < len(s.View.Inputs) {
		return &s.View.Inputs[i]
	}
	return nil
}
