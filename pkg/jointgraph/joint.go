package jointgraph

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Joint is a joint forward+backward graph.
type Joint struct {
	Module *ir.Module
	// File is the forward graph's file (Options.File), for messages.
	File string
	// Masks has one entry per flat forward output: whether it got a tangent
	// (for the HOP conventions: whether its tangent is used).
	Masks []bool
	// NumPrimals, NumTangents count the placeholders; NumFwdOutputs counts
	// the forward outputs at the head of the output tuple (0 for the HOP
	// conventions).
	NumPrimals, NumTangents, NumFwdOutputs int
	// MutatedInputs are the primals written back with copy_ at the end;
	// InPlaceInputs those updated in place by an op whose schema does not
	// say so (native_batch_norm's running stats in training mode).
	MutatedInputs, InPlaceInputs []int
	// RequiresGrad says which primals require grad.
	RequiresGrad []bool
	// Convention is the calling convention.
	Convention Convention
	// Effects names the nodes with side effects (copy_ write-backs, ops
	// that update their inputs in place): never dead, never recomputed.
	Effects []string
	// MetaDisagreements are the nodes whose recorded metadata says they
	// require no grad (a traced x.detach()) while their op makes them
	// require grad (MetaDisagreement).
	MetaDisagreements []MetaDisagreement

	// nested are the backward modules installed in Module by reference,
	// for the HOP rules of the joint that calls this one (nestedModule);
	// always empty in what Build returns to its callers.
	nested []nestedModule
}

// Build returns the joint graph of m's root graph.
func Build(m *ir.Module, opts Options) (j *Joint, err error) {
	if len(m.Graphs) == 0 {
		return nil, &Error{Loc: ir.Location{File: opts.File}, Msg: "module has no root graph"}
	}
	// Build expects a valid module (package validate): what it cannot
	// handle in one it reports as an *Error. A panic is a bug of hopctl: it
	// becomes an *ir.InternalError at the node being processed.
	var at *ir.Node
	defer func() {
		if r := recover(); r != nil {
			loc, phase := ir.InGraph(opts.File, ""), "joint"
			if at != nil {
				loc.Node, phase = at.Name, "joint of "+at.Target
			}
			j, err = nil, ir.Panicked(phase, loc, r)
		}
	}()
	top := opts.cache == nil
	if top {
		opts.cache = &subJoints{m: map[subJointKey]*Joint{}}
	}
	j, err = buildJoint(m, opts, &at)
	if err == nil && top {
		flattenNested(j.Module, j.nested)
		j.nested = nil
	}
	return j, err
}

func buildJoint(m *ir.Module, opts Options, at **ir.Node) (*Joint, error) {
	// Room for the joint, which is built on the functional graph's nodes
	// in place when it can be (forwardInPlace).
	f, err := functionalize(m, opts.File, opts.Registry, at, 3*len(m.Root().Nodes))
	if err != nil {
		return nil, err
	}
	fg := f.b.g
	jb := newJointGraphBuilder(fg)
	freezeBySignature(m, f)
	rg, dis, err := requiresGrad(m, fg, f.ops, f.effect, f.outputs, opts.File)
	if err == nil {
		err = f.refuseMultiWrites(rg)
	}
	if err != nil {
		return nil, err
	}
	j := &jointBuilder{f: f, rg: rg, opts: opts, file: opts.File, src: m, at: at, b: jb}
	out, err := j.build(m)
	if out != nil {
		out.MetaDisagreements = dis
	}
	return out, err
}

// newJointGraphBuilder returns the builder of the joint graph of
// functional graph fg, whose names (but its placeholders') it takes.
func newJointGraphBuilder(fg *ir.Graph) *builder {
	b := newBuilder("")
	b.names.reserveGraph(fg, true)
	return b
}

type jointBuilder struct {
	src *ir.Module
	f   *functional
	// extra are the subgraphs built for HOPs (scan's augmented
	// combine_fn), by qualified name; nested the backward modules
	// installed (addGraphs), their schema tables merged into the joint's.
	extra  []*ir.Graph
	nested []nestedModule
	// extraNames are the names in extra and nested, and nextFresh the first number
	// freshGraphName has not tried, per pattern list: a fresh name costs
	// O(1), not a scan of every graph per try (cubic in the HOP calls).
	extraNames map[string]bool
	nextFresh  map[string]int
	// scanCarries maps a forward scan to the getitems of the carries it
	// checkpoints for its backward.
	scanCarries map[ir.NodeID]scanCheckpoint
	// symbols are the SymInt names in use (freshSymbol), nil until needed.
	symbols map[string]bool
	rg      []bool    // per functional node
	at      **ir.Node // the node being processed, for error messages
	opts    Options
	file    string

	b    *builder
	fmap []ir.NodeID // functional node → joint node
	jrg  []bool      // per joint node
	grad []V         // per forward joint node (undefined: none yet)
	// itemIdx is, per forward joint node, 1 + its index in itemLists,
	// the getitems of a tuple (0: not a tuple): 4 bytes a node.
	itemIdx   []int32
	itemLists [][]ir.NodeID
	effect    map[ir.NodeID]bool
	fwdEnd    ir.NodeID // first joint node after the forward part
	// inPlace: the joint is built on the functional graph's nfun nodes
	// (forwardInPlace).
	inPlace bool
	nfun    int

	// Scratch reused by apply (rules never keep these).
	ctx            Ctx
	bound          []ir.Arg
	need           []bool
	results, grads []V
	valFn          func(ir.NodeID) V
	rgFn           func(ir.NodeID) bool

	// metaSlab holds the backward nodes' metadata (bwMeta).
	metaSlab []ir.Meta

	// invoke names the invoke_subgraph backward graphs built so far.
	invoke invokeSubgraphs
}

func (j *jointBuilder) masks() ([]bool, error) {
	outs := j.f.outputs
	isDiffTensor := func(v V) bool {
		return v.ok && (v.meta == nil || isDifferentiableDtype(v.meta.Dtype))
	}
	mode := j.opts.MaskMode
	if j.opts.Convention == ConventionCreateBwFn && mode == MasksAuto {
		mode = MasksAll
	}
	masks := make([]bool, len(outs))
	switch mode {
	case MasksAuto:
		sig := j.src.Signature
		for i, o := range outs {
			masks[i] = o.ok && j.rg[o.id]
			// An exported program's mutation and token outputs are new
			// values of inputs, not results: no tangent flows into them.
			if sig != nil && len(sig.Outputs) == len(outs) && j.opts.Convention == ConventionNone {
				if k := sig.Outputs[i].Kind; k != ir.OutputUserOutput && k != ir.OutputLossOutput {
					masks[i] = false
				}
			}
		}
	case MasksAll:
		anyIn := false
		for _, in := range j.f.inputs {
			anyIn = anyIn || j.rg[in.id]
		}
		for i, o := range outs {
			masks[i] = anyIn && isDiffTensor(o)
		}
	case MasksExplicit:
		if len(j.opts.Masks) != len(outs) {
			return nil, &MaskError{Msg: fmt.Sprintf("%s: %d masks given, but the graph has %d outputs", j.file, len(j.opts.Masks), len(outs))}
		}
		for i, o := range outs {
			if j.opts.Masks[i] && !o.ok {
				return nil, &MaskError{Msg: fmt.Sprintf("%s: mask %d is 1, but output %d is not a tensor", j.file, i, i)}
			}
			masks[i] = j.opts.Masks[i]
		}
	}
	return masks, nil
}

// build builds the joint graph: the placeholders, the forward, the
// reverse walk from the tangents, the gradients of the primals, the
// write-back epilogue and the output, then dead code elimination and the
// module around the graph.
func (j *jointBuilder) build(src *ir.Module) (*Joint, error) {
	f := j.f
	masks, err := j.masks()
	if err != nil {
		return nil, err
	}
	conv := j.opts.Convention
	nt := j.numTangents(masks)
	primalSrc := j.startGraph(j.forwardInPlace(conv, nt), nt)
	primals, tangentFor := j.placeholders(masks, primalSrc)
	// An internal error names the node being processed (*j.at): each
	// phase below points it at its node, so none is blamed on the output.
	output := *j.at
	if err := j.forward(); err != nil {
		return nil, err
	}
	outs := make([]V, len(f.outputs))
	for i, o := range f.outputs {
		outs[i] = j.mapV(o)
	}
	*j.at = output
	for i, o := range outs {
		if tangentFor[i].ok && masks[i] && o.ok && j.jrg[o.id] {
			j.accumulate(o.id, tangentFor[i])
		}
	}
	if err := j.walk(); err != nil {
		return nil, err
	}
	grads, rgIn, err := j.primalGrads(primals)
	if err != nil {
		return nil, err
	}
	// Write-back epilogue, then the output.
	fg := f.b.g
	for _, e := range f.epilogue {
		*j.at = &fg.Nodes[e]
		id := j.copyNode(&fg.Nodes[e], fg.Nodes[e].Name)
		j.effect[id] = true
	}
	*j.at = output
	nf := 0
	var result []V
	if conv == ConventionNone {
		nf = len(outs)
		result = append(result, outs...)
	}
	j.b.output(append(result, grads...))
	var refs graphRefs
	j.b.g, refs = dce(j.b.g, j.effect)
	out, nested := j.module(src, refs, masks, nf)
	return &Joint{Module: out, File: j.file, Masks: masks, NumPrimals: len(primals), NumTangents: nt,
		NumFwdOutputs: nf, MutatedInputs: f.mutated, InPlaceInputs: f.inPlace, RequiresGrad: rgIn, Convention: conv, Effects: j.effects(),
		nested: nested}, nil
}

// numTangents counts the tangents: one per masked output, or for the HOP
// conventions one per tensor output.
func (j *jointBuilder) numTangents(masks []bool) int {
	nt := 0
	for i, o := range j.f.outputs {
		if masks[i] || j.opts.Convention != ConventionNone && o.ok {
			nt++
		}
	}
	return nt
}

// startGraph makes the joint's node list, and the per-node maps, and
// returns where the primals' values and metadata come from. In place
// (forwardInPlace) the joint takes over the functional graph's nodes: the
// other nodes move up, in order, past the primals and tangents (from the
// back: a node only moves up); the primals overwrite what is left. Names
// are taken first, from the graph as it was.
func (j *jointBuilder) startGraph(inPlace bool, nt int) func(i int) (*ir.Value, *ir.Meta) {
	f := j.f
	fg := f.b.g
	nfun := len(fg.Nodes)
	j.fmap = make([]ir.NodeID, nfun)
	for i := range j.fmap {
		j.fmap[i] = ir.NoNode
	}
	j.effect = map[ir.NodeID]bool{}
	j.valFn = j.val
	j.rgFn = func(r ir.NodeID) bool { return j.jrg[r] }
	j.inPlace = inPlace
	if !inPlace {
		j.b.g.Nodes = make([]ir.Node, 0, 3*nfun)
		return func(i int) (*ir.Value, *ir.Meta) {
			n := &fg.Nodes[f.inputs[i].id]
			return n.Val, n.Meta
		}
	}
	j.b.names.materialize()
	np := len(f.inputs)
	phVal, phMeta := make([]*ir.Value, np), make([]*ir.Meta, np)
	for i, in := range f.inputs {
		phVal[i], phMeta[i] = fg.Nodes[in.id].Val, fg.Nodes[in.id].Meta
	}
	nodes := fg.Nodes[:nfun+nt]
	w := nfun + nt
	for i := nfun - 1; i >= 0; i-- {
		if nodes[i].Op != ir.OpPlaceholder {
			w--
			nodes[w] = nodes[i]
		}
	}
	j.b.g.Nodes = nodes[:0]
	j.nfun = nfun
	fg.Nodes = nil // read no more: the joint's now
	return func(i int) (*ir.Value, *ir.Meta) { return phVal[i], phMeta[i] }
}

// placeholders adds the primals and the tangents (first for
// create_fw_bw_graph) and returns them, a tangent per output (undefined
// where the output has none).
func (j *jointBuilder) placeholders(masks []bool, primalSrc func(int) (*ir.Value, *ir.Meta)) (primals, tangentFor []V) {
	f := j.f
	conv := j.opts.Convention
	primals = make([]V, len(f.inputs))
	addPrimals := func() {
		for i, in := range f.inputs {
			val, meta := primalSrc(i)
			primals[i] = j.b.placeholder(j.b.names.numbered("primals_", i+1), val, meta)
			j.fmap[in.id] = primals[i].id
		}
	}
	tangentFor = make([]V, len(f.outputs))
	addTangents := func() {
		k := 0
		for i, o := range f.outputs {
			if !(masks[i] || conv != ConventionNone && o.ok) {
				continue
			}
			k++
			var val *ir.Value
			if o.meta != nil {
				val = j.b.value(j.b.like(o.meta))
			}
			tangentFor[i] = j.b.placeholder(j.b.names.numbered("tangents_", k), val, nil)
		}
	}
	if conv == ConventionCreateFwBwGraph {
		addTangents()
		addPrimals()
	} else {
		addPrimals()
		addTangents()
	}
	return primals, tangentFor
}

// forward adds the forward: the functional graph without its write-back
// epilogue, a while_loop or scan requiring grad rewritten to keep what its
// backward reads. Then it indexes the forward for the walk: the gradient
// slots, the getitems of each tuple and the requires-grad flags by joint
// node.
func (j *jointBuilder) forward() error {
	f := j.f
	j.scanCarries = map[ir.NodeID]scanCheckpoint{}
	// whileStacked are the getitems of the stacked carries of each
	// while_loop rewritten to while_loop_stack_output.
	var whileStacked map[ir.NodeID][]ir.NodeID
	if j.inPlace {
		j.forwardNodesInPlace(j.nfun)
	} else {
		var err error
		if whileStacked, err = j.copyForward(); err != nil {
			return err
		}
	}
	j.fwdEnd = ir.NodeID(len(j.b.g.Nodes))
	j.grad = make([]V, j.fwdEnd)
	j.itemIdx = make([]int32, j.fwdEnd)
	j.itemLists = make([][]ir.NodeID, 0, len(f.itemTuples)+len(whileStacked))
	for k, t := range f.itemTuples {
		// The functional graph's lists are read no more: renumbered in place.
		its := f.itemLists[k]
		for i, it := range its {
			if it != ir.NoNode {
				its[i] = j.fmap[it]
			}
		}
		j.setItems(j.fmap[t], its)
	}
	j.jrg = make([]bool, len(j.b.g.Nodes))
	for fi, ji := range j.fmap {
		if ji != ir.NoNode {
			j.jrg[ji] = j.rg[fi]
		}
	}
	for id, stacked := range whileStacked {
		j.setItems(id, stacked)
		for _, s := range stacked {
			m := valueTensor(j.b.g.Nodes[s].Val)
			j.jrg[s] = j.jrg[id] && m != nil && isDifferentiableDtype(m.Dtype)
		}
	}
	return nil
}

// copyForward copies the forward's nodes into the joint (forward), and
// returns the getitems of the stacked carries of each while_loop it
// rewrote.
func (j *jointBuilder) copyForward() (map[ir.NodeID][]ir.NodeID, error) {
	f := j.f
	fg := f.b.g
	epi := map[ir.NodeID]bool{}
	for _, e := range f.epilogue {
		epi[e] = true
	}
	// whileSel maps the getitems of a while_loop rewritten to
	// while_loop_stack_output to the selects standing for them.
	whileSel := map[ir.NodeID]ir.NodeID{}
	whileStacked := map[ir.NodeID][]ir.NodeID{}
	for i := range fg.Nodes {
		n := &fg.Nodes[i]
		id := ir.NodeID(i)
		if n.Op == ir.OpPlaceholder || epi[id] {
			continue
		}
		*j.at = n
		var err error
		switch s, sel := whileSel[id]; {
		case sel:
			j.fmap[i] = s
		case n.Target == whileTarget && j.rg[i]:
			var stacked []ir.NodeID
			j.fmap[i], stacked, err = j.augmentWhile(n, id, whileSel)
			whileStacked[j.fmap[i]] = stacked
		case n.Target == scanTarget && j.rg[i]:
			j.fmap[i], err = j.augmentScan(n)
		default:
			j.fmap[i] = j.copyNode(n, n.Name)
			if j.b.bad != "" {
				return nil, nodeError(j.file, fg, id, j.b.bad)
			}
			if f.effect[id] {
				j.effect[j.fmap[i]] = true
			}
		}
		if err != nil {
			return nil, nodeError(j.file, fg, id, err.Error())
		}
	}
	return whileStacked, nil
}

// primalGrads returns the gradient of each primal (zeros when it has none
// and the convention or --unmask-none-gradients wants one) and which
// primals require grad.
func (j *jointBuilder) primalGrads(primals []V) ([]V, []bool, error) {
	f := j.f
	conv := j.opts.Convention
	unmask := j.opts.UnmaskNoneGradients || conv != ConventionNone
	grads := make([]V, len(primals))
	rgIn := make([]bool, len(primals))
	j.b.meta = nil
	for i, p := range primals {
		*j.at = &f.src.Nodes[f.inputSrc[i]] // the functional placeholder's source (in place, the primal took its slot)
		rgIn[i] = j.jrg[p.id]
		if g := j.gradOf(p.id); g.Defined() && rgIn[i] {
			grads[i] = j.finish(g, p)
		} else if unmask && p.meta != nil {
			grads[i] = j.b.zerosLike(p)
		}
		if j.b.bad != "" {
			return nil, nil, nodeError(j.file, f.b.g, f.inputs[i].id, j.b.bad)
		}
	}
	if conv != ConventionNone {
		grads = j.cloneAliasing(grads)
	}
	return grads, rgIn, nil
}

// module assembles the joint's module around its graph (refs: what the
// graph calls and reads), with the annotations and, for an exported
// program, the joint's signature. It returns the nested backward modules
// the graph reads too.
func (j *jointBuilder) module(src *ir.Module, refs graphRefs, masks []bool, nf int) (*ir.Module, []nestedModule) {
	f := j.f
	conv := j.opts.Convention
	all := slices.Concat(j.functionalBodies(src, refs.getAttrs), j.extra)
	out := assembleModule(src, j.b.g, refs, all, src.Schemas)
	nested := nestedFor(j.nested, refs.getAttrs)
	out.Schemas = mergeSchemas(out.Schemas, nested)
	out.SetAnnotation(AnnotationMasks, FormatMasks(masks))
	out.SetAnnotation(AnnotationConvention, conv.String())
	out.SetAnnotation(AnnotationNumFwdOutputs, strconv.Itoa(nf))
	out.SetAnnotation(AnnotationMutatedInputs, formatInts(f.mutated))
	out.SetAnnotation(AnnotationRole, "joint")
	if conv == ConventionNone {
		out.Signature = jointSignature(src, out.Root(), nf)
	}
	return out, nested
}

// effects names the side-effecting nodes left after dce, in node order.
func (j *jointBuilder) effects() []string {
	var effects []string
	for _, id := range slices.Sorted(maps.Keys(j.effect)) {
		if j.effect[id] && int(id) < len(j.b.g.Nodes) {
			effects = append(effects, j.b.g.Nodes[id].Name)
		}
	}
	return effects
}

func formatInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// forwardInPlace reports whether the joint can be built on the
// functional graph's nodes (forwardNodesInPlace) rather than a copy of
// them: when the primals come first (not create_fw_bw_graph's tangents),
// no input is written back (no epilogue) and no node is a HOP call (a
// while_loop or scan is rewritten for its backward, and HOP backward
// rules read the functional graph).
func (j *jointBuilder) forwardInPlace(conv Convention, nt int) bool {
	f := j.f
	fg := f.b.g
	if copyForward || conv == ConventionCreateFwBwGraph || len(f.epilogue) > 0 || cap(fg.Nodes) < len(fg.Nodes)+nt {
		return false
	}
	np := 0
	for i := range fg.Nodes {
		n := &fg.Nodes[i]
		if n.Op == ir.OpPlaceholder {
			np++
		} else if opschema.IsHOPTarget(n.Target) {
			return false
		}
	}
	return np == len(f.inputs)
}

// copyForward makes every joint copy the functional graph
// (TestForwardInPlaceMatchesCopy compares the two ways).
var copyForward bool

// forwardNodesInPlace turns the functional graph's non-placeholder nodes,
// moved up past the primals and tangents (build), into the joint's
// forward: what copyNode does to a copy, done to the node where it is,
// in the functional graph's order. nf is the functional graph's node
// count.
func (j *jointBuilder) forwardNodesInPlace(nf int) {
	inputs := j.f.inputs // the placeholders, in the graph's order
	pos := len(j.b.g.Nodes)
	for i := range nf {
		if len(inputs) > 0 && inputs[0].id == ir.NodeID(i) {
			inputs = inputs[1:]
			continue
		}
		j.fmap[i] = ir.NodeID(pos)
		pos++
		if j.f.effect[ir.NodeID(i)] {
			j.effect[j.fmap[i]] = true
		}
	}
	j.b.g.Nodes = j.b.g.Nodes[:pos]
	// Every node's place is known first: a functional node refers only to
	// earlier ones, but its joint copy moved.
	for i := range nf {
		id := j.fmap[i]
		if id == ir.NoNode || j.b.g.Nodes[id].Op == ir.OpPlaceholder {
			continue
		}
		n := &j.b.g.Nodes[id]
		*j.at = n
		if n.Args != nil {
			// A list the functional graph made is remapped where it is;
			// the source's (shared) are copied.
			args := n.Args
			if !j.f.ownsArgs(ir.NodeID(i)) {
				args = j.b.arena.alloc(len(n.Args))
			}
			for k := range args {
				args[k] = j.remap(n.Args[k])
			}
			n.Args = args
		}
		n.Kwargs = slices.Clone(n.Kwargs)
		for k := range n.Kwargs {
			n.Kwargs[k].Value = j.remap(n.Kwargs[k].Value)
		}
	}
}

// copyNode copies functional node n into the joint graph with its
// references remapped; name "" picks a fresh name.
func (j *jointBuilder) copyNode(n *ir.Node, name string) ir.NodeID {
	c := *n
	if n.Args != nil {
		c.Args = j.b.arena.alloc(len(n.Args))
		for i := range c.Args {
			c.Args[i] = j.remap(n.Args[i])
		}
	}
	c.Kwargs = slices.Clone(n.Kwargs)
	for i := range c.Kwargs {
		c.Kwargs[i].Value = j.remap(c.Kwargs[i].Value)
	}
	if name == "" {
		name = j.b.names.freshOp(n.Target)
	}
	c.Name = name
	return j.b.append(c)
}

// remap returns a with its references mapped to the joint's nodes.
func (j *jointBuilder) remap(a ir.Arg) ir.Arg {
	if a.Kind == ir.ArgNode {
		return j.remapRef(a)
	}
	if len(a.Elems()) == 0 {
		return a
	}
	return ir.MapRefs(a, j.b.arena.alloc, j.remapRef)
}

func (j *jointBuilder) remapRef(a ir.Arg) ir.Arg {
	if a.Ref >= 0 && j.fmap[a.Ref] != ir.NoNode {
		return j.b.ref(j.fmap[a.Ref])
	}
	return a
}

func (j *jointBuilder) mapV(v V) V {
	if !v.ok {
		return v
	}
	return nodeV(j.fmap[v.id], v.meta)
}

func (j *jointBuilder) val(id ir.NodeID) V {
	return nodeV(id, valueTensor(j.b.g.Nodes[id].Val))
}

// accumulate adds g to the gradient of node id.
func (j *jointBuilder) accumulate(id ir.NodeID, g V) {
	if !g.Defined() {
		return
	}
	if int(id) >= len(j.grad) {
		j.grad = append(j.grad, make([]V, int(id)+1-len(j.grad))...)
	}
	if old := j.grad[id]; old.Defined() {
		j.grad[id] = j.b.add(old, g)
		return
	}
	j.grad[id] = g
}

// gradOf returns the gradient accumulated for node id (undefined: none).
func (j *jointBuilder) gradOf(id ir.NodeID) V {
	if int(id) < len(j.grad) {
		return j.grad[id]
	}
	return V{}
}

// itemsOf returns the getitems of forward tuple node id (nil: not a
// tuple).
func (j *jointBuilder) itemsOf(id ir.NodeID) []ir.NodeID {
	if int(id) < len(j.itemIdx) {
		if k := j.itemIdx[id]; k > 0 {
			return j.itemLists[k-1]
		}
	}
	return nil
}

// setItems records the getitems of forward tuple node id.
func (j *jointBuilder) setItems(id ir.NodeID, its []ir.NodeID) {
	if k := j.itemIdx[id]; k > 0 {
		j.itemLists[k-1] = its
		return
	}
	j.itemLists = append(j.itemLists, its)
	j.itemIdx[id] = int32(len(j.itemLists))
}

// finish reduces g to x's shape (sum_to_size, for broadcast inputs) and
// casts it to x's dtype, as the autograd engine does when it hands a
// gradient to an input.
func (j *jointBuilder) finish(g V, x V) V {
	if !g.ok || x.meta == nil || g.meta == nil {
		return g
	}
	if !ir.DimsEqual(g.Shape(), x.Shape()) {
		g = j.b.sumToSize(g, x.Shape())
	}
	if g.meta != nil && g.meta.Dtype != x.meta.Dtype && isDifferentiableDtype(x.meta.Dtype) {
		g = j.b.toDtype(g, x.meta.Dtype)
	}
	return g
}

// bwMeta is the metadata of backward nodes for forward node n: PyTorch's
// copy_fwd_metadata_to_bw_nodes, plus fwd_source naming the node. It is
// cut from a slab: one allocation per 128 forward nodes, not one per node
// (slabs start at 4 and double, so a small subgraph's builder holds little).
func (j *jointBuilder) bwMeta(n *ir.Node) *ir.Meta {
	if len(j.metaSlab) == cap(j.metaSlab) {
		j.metaSlab = make([]ir.Meta, 0, min(max(2*cap(j.metaSlab), 4), 128))
	}
	j.metaSlab = j.metaSlab[:len(j.metaSlab)+1]
	return fillBwMeta(&j.metaSlab[len(j.metaSlab)-1], n)
}

func fillBwMeta(m *ir.Meta, n *ir.Node) *ir.Meta {
	m.FwdSource = n.Name
	if n.Meta != nil {
		m.StackTrace = n.Meta.StackTrace
		m.NNModuleStack = n.Meta.NNModuleStack
		m.SourceFnStack = n.Meta.SourceFnStack
		m.SeqNr, m.HasSeqNr = n.Meta.SeqNr, n.Meta.HasSeqNr
	}
	return m
}

// walk visits the forward nodes in reverse and applies each one's rule.
func (j *jointBuilder) walk() error {
	g := j.b.g
	for id := j.fwdEnd - 1; id >= 0; id-- {
		n := &g.Nodes[id]
		if n.Op != ir.OpCallFunction || !j.jrg[id] || n.Target == "_operator.getitem" || n.Target == "aten.copy_.default" && j.effect[id] {
			continue
		}
		var grads []V
		if its := j.itemsOf(id); its != nil {
			grads = resize(j.grads, len(its))
			any := false
			for k, it := range its {
				if it != ir.NoNode {
					grads[k] = j.gradOf(it)
					any = any || grads[k].Defined()
				}
			}
			j.grads = grads
			if !any {
				continue
			}
		} else {
			gr := j.gradOf(id)
			if !gr.Defined() {
				continue
			}
			grads = append(j.grads[:0], gr)
			j.grads = grads
		}
		*j.at = n
		if err := j.apply(id, grads); err != nil {
			return err
		}
		if j.b.bad != "" {
			return nodeError(j.file, g, id, fmt.Sprintf("derivative of %s: %s", n.Target, j.b.bad))
		}
	}
	return nil
}

// resize returns buf with n zero elements, reusing its storage.
func resize[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

func (j *jointBuilder) apply(id ir.NodeID, grads []V) (err error) {
	g := j.b.g
	n := &g.Nodes[id]
	if it, ok := j.lastOfStacked(n); ok {
		// The result of a while_loop: its gradient is the loop's
		// (whileBackward), not a stacked output's.
		j.accumulate(it, grads[0])
		return nil
	}
	info := j.f.ops.get(n.Target)
	if hr := info.hop; hr != nil {
		j.b.meta = j.bwMeta(n)
		err = hr.backward(j, id, grads)
		j.b.meta = nil
		return err
	}
	rule := info.rule
	if rule == nil {
		return nodeError(j.file, g, id, fmt.Sprintf("no derivative rule for %s", n.Target))
	}
	s := info.schema
	if s == nil {
		return nodeError(j.file, g, id, fmt.Sprintf("no schema for %s", n.Target))
	}
	bound, berr := s.BindValuesInto(j.bound, n.Args, n.Kwargs)
	if berr != nil {
		return nodeError(j.file, g, id, berr.Error())
	}
	if len(bound) > 0 && (len(n.Args) == 0 || &bound[0] != &n.Args[0]) {
		j.bound = bound // keep the scratch storage (not the node's own list)
	}
	need := resize(j.need, len(bound))
	j.need = need
	for i := range bound {
		need[i] = anyRefIn(&bound[i], j.jrg)
	}
	var results []V
	if its := j.itemsOf(id); its != nil {
		results = resize(j.results, len(its))
		for k, it := range its {
			if it != ir.NoNode {
				results[k] = j.val(it)
			}
		}
	} else {
		results = append(j.results[:0], j.val(id))
	}
	j.results = results
	c := &j.ctx
	*c = Ctx{builder: j.b, fwdID: id, schema: s, args: bound, need: need, results: results, grads: grads,
		val: j.valFn, rg: j.rgFn}
	// A single-output formula runs only with a defined gradient.
	if len(grads) == 1 && !grads[0].Defined() {
		return nil
	}
	// After a panic the builder is not used again: no defer resets meta.
	j.b.meta = j.bwMeta(n)
	err = j.applyGrads(id, info, bound, need)
	j.b.meta = nil
	return err
}

// applyGrads runs rule's formulas whose arguments need a gradient
// (apply) and accumulates what they return.
func (j *jointBuilder) applyGrads(id ir.NodeID, info *opInfo, bound []ir.Arg, need []bool) error {
	c := &j.ctx
	for gi, gr := range info.rule.Grads {
		idx := info.gradIdx[gi]
		needed := false
		for _, i := range idx {
			if i >= 0 && need[i] {
				needed = true
			}
		}
		if !needed {
			continue
		}
		vals := gr.Fn(c)
		if c.err != "" {
			// What the formula built is unreferenced: the error ends the build.
			return nodeError(j.file, j.b.g, id, fmt.Sprintf("derivative of %s: %s", j.b.g.Nodes[id].Target, c.err))
		}
		if len(gr.Args) == 1 && bound[idx[0]].Kind == ir.ArgList {
			// Tensor[] argument: one gradient per element.
			elems := bound[idx[0]].Elems()
			for k, v := range vals {
				if k < len(elems) && elems[k].Kind == ir.ArgNode && elems[k].Ref >= 0 && j.jrg[elems[k].Ref] {
					j.accumulate(elems[k].Ref, j.finish(v, j.val(elems[k].Ref)))
				}
			}
			continue
		}
		for k, i := range idx {
			if i < 0 || !need[i] || k >= len(vals) || !vals[k].Defined() {
				continue
			}
			if bound[i].Kind != ir.ArgNode {
				continue
			}
			x := j.val(bound[i].Ref)
			j.accumulate(bound[i].Ref, j.finish(vals[k], x))
		}
	}
	return nil
}

// cloneAliasing clones gradient outputs that are placeholders, views of
// placeholders, or repeats of an earlier output (create_bw_fn's
// _clone_aliasing_output, create_fw_bw_graph's
// clone_outputs_aliasing_inputs).
func (j *jointBuilder) cloneAliasing(grads []V) []V {
	seen := map[ir.NodeID]bool{}
	for i, gv := range grads {
		if !gv.ok {
			continue
		}
		if seen[gv.id] || j.aliasesPlaceholder(gv.id) {
			grads[i] = j.b.clone(gv)
		}
		seen[grads[i].id] = true
	}
	return grads
}

func (j *jointBuilder) aliasesPlaceholder(id ir.NodeID) bool { return aliasesPlaceholder(j.b.g, id) }

// aliasesPlaceholder reports whether node id of g is a placeholder or a
// chain of views of one.
func aliasesPlaceholder(g *ir.Graph, id ir.NodeID) bool {
	for {
		n := &g.Nodes[id]
		if n.Op == ir.OpPlaceholder {
			return true
		}
		if n.Op != ir.OpCallFunction {
			return false
		}
		s, ok := builtinSchema(n.Target)
		if !ok || !s.IsView() || len(n.Args) == 0 || n.Args[0].Kind != ir.ArgNode || n.Args[0].Ref < 0 {
			return false
		}
		id = n.Args[0].Ref
	}
}

// builtinSchema looks a target up in torch 1.13's built-in table, then in
// torch 2.14's (ops only torch 2.x traces, such as _native_batch_norm_legit;
// the schemas of an overload both have agree where rules read them).
func builtinSchema(target string) (*opschema.Schema, bool) {
	n, err := opschema.ParseTarget(target)
	if err != nil {
		return nil, false
	}
	if s, ok := opschema.BuiltinTable().Lookup(n); ok {
		return s, true
	}
	return opschema.BuiltinTableFor("2.14").Lookup(n)
}

// freezeBySignature applies an exported program's signature to what is
// differentiated: only parameters and user inputs (that require grad) are;
// buffers, constants, custom objects and tokens never are, whatever their
// recorded requires_grad (torch records a mutated buffer's as True in
// training IR).
func freezeBySignature(m *ir.Module, f *functional) {
	sig := m.Signature
	if sig == nil || len(sig.Inputs) != len(f.inputs) {
		return
	}
	fg := f.b.g
	for i, in := range f.inputs {
		switch sig.Inputs[i].Kind {
		case ir.InputParameter, ir.InputUserInput:
			continue
		}
		n := &fg.Nodes[in.id]
		if n.Val != nil && n.Val.Kind == ir.ValTensor && n.Val.Tensor.RequiresGrad {
			c := n.Val.Clone()
			c.Tensor.RequiresGrad = false
			n.Val = c
		}
	}
}

// jointSignature labels the joint graph of an exported program as torch
// labels a joint (torch/export/graph_signature.py): the primals keep their
// input kinds and state_dict targets, tangents are user inputs; the
// forward outputs keep their output kinds, and each gradient is a
// gradient_to_parameter (target: the parameter's state_dict key) or
// gradient_to_user_input (target: the primal). A None gradient is a
// constant user output. nf is the number of forward outputs.
func jointSignature(src *ir.Module, g *ir.Graph, nf int) *ir.Signature {
	sig := src.Signature
	if sig == nil {
		return nil
	}
	var phs []string
	for i := range g.Nodes {
		if g.Nodes[i].Op == ir.OpPlaceholder {
			phs = append(phs, g.Nodes[i].Name)
		}
	}
	id := g.OutputNode()
	if id == ir.NoNode || len(phs) < len(sig.Inputs) {
		return nil
	}
	outs := g.Nodes[id].Args
	if len(outs) == 1 && (outs[0].Kind == ir.ArgTuple || outs[0].Kind == ir.ArgList) {
		outs = outs[0].Elems()
	}
	if len(outs) != nf+len(sig.Inputs) || len(sig.Outputs) != nf {
		return nil
	}
	renamed := map[string]string{}
	js := &ir.Signature{}
	for i, in := range sig.Inputs {
		renamed[in.Name] = phs[i]
		in.Name = phs[i]
		js.Inputs = append(js.Inputs, in)
	}
	for _, t := range phs[len(sig.Inputs):] {
		js.Inputs = append(js.Inputs, ir.InputSpec{Kind: ir.InputUserInput, Name: t})
	}
	name := func(a ir.Arg) string {
		if a.Kind == ir.ArgNode {
			return a.S
		}
		return ""
	}
	for j, o := range sig.Outputs {
		o.Name = name(outs[j])
		if o.Kind == ir.OutputUserInputMutation || o.Kind == ir.OutputGradientToUserInput {
			o.Target = renamed[o.Target]
		}
		js.Outputs = append(js.Outputs, o)
	}
	for i, in := range sig.Inputs {
		o := ir.OutputSpec{Kind: ir.OutputUserOutput, Name: name(outs[nf+i])}
		if o.Name != "" {
			switch in.Kind {
			case ir.InputParameter:
				o.Kind, o.Target = ir.OutputGradientToParameter, in.Target
			case ir.InputUserInput:
				o.Kind, o.Target = ir.OutputGradientToUserInput, phs[i]
			}
		}
		js.Outputs = append(js.Outputs, o)
	}
	return js
}
