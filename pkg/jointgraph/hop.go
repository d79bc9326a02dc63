package jointgraph

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Higher-order operators in the forward graph are differentiated the way
// PyTorch builds their backward (CondAutogradOp, MapAutogradOp and
// ScanAutogradOp in torch/_higher_order_ops/{cond,map,scan}.py, create_bw_fn
// in torch/_higher_order_ops/utils.py): the
// backward of each subgraph is the subgraph's own joint in create_bw_fn's
// convention (primals, then tangents → one gradient per primal, zeros for
// none, aliasing outputs cloned), and the backward of the HOP call is
// another call of the same HOP over those backward subgraphs:
//
//   - cond(pred, t, f, ops) → cond(pred, t_bw, f_bw, [*ops, *grads]), one
//     gradient per tensor operand (torch 2.6: [*grads, *ops] over
//     create_fw_bw_graph joints, a slot per operand);
//   - map_impl(body, xs, args) → map_impl(body_bw, [*xs, *grads], args),
//     the body_bw placeholders reordered to (*xs, *grads, *args), and the
//     args' gradients, stacked along the mapped dim, summed over it;
//   - scan(combine, init, xs, add) → a forward scan whose combine also
//     emits each step's incoming carry, and a backward scan over the
//     flipped (grad_ys, carries, xs) whose carry accumulates the
//     additional inputs' gradients next to the carry's gradient (the
//     checkpointing ScanAutogradOp).
//
// associative_scan's backward (hop_assocscan.go) and invoke_subgraph's
// (hop_invoke.go) are described in their files.

// hopRule is the derivative rule of one higher-order operator.
type hopRule struct {
	// row is the HOP's row of the convention table.
	row      *opschema.HOP
	backward func(j *jointBuilder, id ir.NodeID, grads []V) error
}

// operands returns the arguments of call n gradients can flow to: the
// caller values of the HOP's (first) subgraph, as the convention table
// records them.
func (r *hopRule) operands(n *ir.Node) []ir.Arg { return hop.CallerOperands(r.row, n) }

// hopBackward is the HOP rule table: the backward of each HOP, by name
// (a function, not a map variable: the backwards call Build, which reads
// the table).
func hopBackward(name string) (func(j *jointBuilder, id ir.NodeID, grads []V) error, bool) {
	switch name {
	case "cond":
		return condBackward, true
	case "map_impl":
		return mapBackward, true
	case "scan":
		return scanBackward, true
	case "while_loop", "while_loop_stack_output":
		// A while_loop requiring grad is rewritten to
		// while_loop_stack_output in the forward (augmentWhile).
		return whileBackward, true
	case "associative_scan":
		return assocScanBackward, true
	case "invoke_subgraph":
		return invokeSubgraphBackward, true
	}
	return nil, false
}

// Targets the joint builder treats specially: scan calls it augments,
// with_effects calls it keeps as they are.
var (
	scanTarget        = opschema.HOPTarget("scan")
	withEffectsTarget = opschema.HOPTarget("with_effects")
)

// hopArg returns argument name of HOP call n, named as in the HOP's row of
// the convention table (hop.Arg), or None when the call omits it. The
// backwards read calls only through it and hopArity, never by position.
func (j *jointBuilder) hopArg(n *ir.Node, name string) ir.Arg {
	if row := j.hopRow(n); row != nil {
		if a := hop.Arg(row, n, name); a != nil {
			return *a
		}
	}
	return ir.Arg{Kind: ir.ArgNone}
}

// hopRow returns the row of the convention table that reads HOP call n
// (hop.Lookup: the HOP's row, or the row of the older form the call
// follows, torch 2.6's scan), or nil when the HOP has no derivative rule.
func (j *jointBuilder) hopRow(n *ir.Node) *opschema.HOP {
	r := j.f.ops.get(n.Target).hop
	if r == nil {
		return nil
	}
	if h, ok := hop.Lookup(j.f.ops.reg, n); ok {
		return h
	}
	return r.row
}

// hopArity refuses a call of the HOP at id whose positional arguments are
// not its row's schema's (at least as many for a variadic one), naming
// them: "cond takes (pred, true_fn, false_fn, operands)".
func (j *jointBuilder) hopArity(id ir.NodeID) error {
	n := &j.b.g.Nodes[id]
	row := j.hopRow(n)
	if row == nil {
		return nodeError(j.file, j.b.g, id, n.Target+" has no row in the HOP table")
	}
	if err := hop.CheckImplied(row, n); err != nil {
		return nodeError(j.file, j.b.g, id, err.Error())
	}
	s := row.ParsedSchema()
	var names []string
	for _, a := range s.Arguments {
		if !a.KwargOnly {
			names = append(names, a.Name)
		}
	}
	if s.IsVararg {
		for _, sg := range row.Subgraphs {
			for _, grp := range sg.Operands {
				if strings.HasPrefix(grp.Arg, "*") && !slices.Contains(names, grp.Arg) {
					names = append(names, grp.Arg)
				}
			}
		}
	}
	if len(n.Args) == len(names) || (s.IsVararg && len(n.Args) >= len(names)-1) {
		return nil
	}
	return nodeError(j.file, j.b.g, id, fmt.Sprintf("%s takes (%s)", row.Name, strings.Join(names, ", ")))
}

// lookupHOPRule returns the derivative rule of the HOP a target names, with
// its row of reg's convention table.
func lookupHOPRule(reg *opschema.Registry, target string) (*hopRule, bool) {
	name, ok := opschema.HOPName(target)
	if !ok {
		return nil, false
	}
	bw, ok := hopBackward(name)
	if !ok {
		return nil, false
	}
	row, ok := reg.HOP(target)
	if !ok {
		return nil, false
	}
	return &hopRule{row: row, backward: bw}, true
}

// subModule returns the module rooted at graph qual of m: that graph as
// root, the graphs nested under it renamed relative to it.
func subModule(m *ir.Module, qual string) (*ir.Module, bool) {
	sub, ok := m.Submodule(qual)
	if !ok {
		return nil, false
	}
	root := sub.Graphs[0]
	root.Nodes = slices.Clone(root.Nodes) // the joint builder edits the root
	return &ir.Module{Graphs: sub.Graphs, Attributes: sub.Attributes, Schemas: m.Schemas, TorchVersion: m.TorchVersion}, true
}

// graphTarget returns the qualified name of the subgraph a get_attr
// argument names.
func (j *jointBuilder) graphTarget(a ir.Arg) (string, bool) {
	if a.Kind != ir.ArgNode || a.Ref < 0 {
		return "", false
	}
	n := &j.b.g.Nodes[a.Ref]
	if n.Op != ir.OpGetAttr {
		return "", false
	}
	return n.Target, j.src.Graph(n.Target) != nil
}

// subJoints are the backward joints built so far, by subgraph and inputs
// requiring grad: a subgraph shared by several HOP calls, at several
// levels of nesting, is differentiated once (it was once per call path:
// exponential in the nesting). Builds are sequential: no lock.
type subJoints struct {
	m map[subJointKey]*Joint
	// nested are the modules installed in the backward modules handed to
	// HOP rules (registerNested).
	nested map[*ir.Module][]nestedModule
	// bodies are the forward subgraphs functionalized (functionalBody),
	// by their nodes.
	bodies map[*ir.Node]*ir.Graph
}

// subJointKey identifies a subgraph by its nodes (the builds of nested
// subgraphs see the same graphs under names relative to their root, but
// share their nodes) and the inputs that require grad.
type subJointKey struct {
	nodes *ir.Node
	rg    string
	conv  Convention
	masks MaskMode
}

func rgKey(rg []bool) string {
	b := make([]byte, len(rg))
	for i, r := range rg {
		b[i] = '0'
		if r {
			b[i] = '1'
		}
	}
	return string(b)
}

// ownRoot returns a copy of j whose module's root graph has nodes of its
// own: callers edit the root (permuting placeholders), the cache's copy
// must stay as built.
func (j *Joint) ownRoot() *Joint {
	c := *j
	m := *j.Module
	m.Graphs = slices.Clone(m.Graphs)
	m.Graphs[0] = &ir.Graph{Name: m.Graphs[0].Name, Nodes: slices.Clone(m.Graphs[0].Nodes)}
	c.Module = &m
	return &c
}

// subJoint builds the create_bw_fn joint of subgraph qual whose inputs
// require grad as rg says, once per subgraph and rg (subJoints).
func (j *jointBuilder) subJoint(id ir.NodeID, qual string, rg []bool) (*Joint, error) {
	return j.subJointAs(id, qual, rg, ConventionCreateBwFn, MasksAuto)
}

// subJointAs is subJoint in calling convention conv with output masks
// masks (ConventionNone: the AOTAutograd joint, as invoke_subgraph's
// backward traces it).
func (j *jointBuilder) subJointAs(id ir.NodeID, qual string, rg []bool, conv Convention, masks MaskMode) (*Joint, error) {
	var key subJointKey
	if g := j.src.Graph(qual); g != nil && len(g.Nodes) > 0 && j.opts.cache != nil {
		key = subJointKey{&g.Nodes[0], rgKey(rg), conv, masks}
		if bw, ok := j.opts.cache.m[key]; ok {
			return j.handOut(bw), nil
		}
	}
	bw, err := j.buildSubJoint(id, qual, rg, conv, masks)
	if err != nil {
		return nil, err
	}
	if key.nodes != nil {
		j.opts.cache.m[key] = bw
	}
	return j.handOut(bw), nil
}

// handOut returns a copy of bw a HOP rule may edit (ownRoot), its
// installed modules registered for addGraphs.
func (j *jointBuilder) handOut(bw *Joint) *Joint {
	c := bw.ownRoot()
	j.opts.cache.registerNested(c.Module, c.nested)
	return c
}

func (j *jointBuilder) buildSubJoint(id ir.NodeID, qual string, rg []bool, conv Convention, masks MaskMode) (*Joint, error) {
	sub, ok := subModule(j.src, qual)
	if !ok {
		return nil, nodeError(j.file, j.b.g, id, fmt.Sprintf("no subgraph %q", qual))
	}
	root := sub.Graphs[0]
	ph := root.Placeholders()
	if len(ph) != len(rg) {
		return nil, nodeError(j.file, j.b.g, id, fmt.Sprintf("subgraph %s has %d inputs, the call passes %d", qual, len(ph), len(rg)))
	}
	for k, p := range ph {
		n := &root.Nodes[p]
		if t := valueTensor(n.Val); t != nil {
			tc := *t
			tc.RequiresGrad = rg[k]
			n.Val = tensorValue(&tc)
		}
	}
	bw, err := Build(sub, Options{File: j.file, Convention: conv, MaskMode: masks, Registry: j.f.reg, cache: j.opts.cache})
	if err != nil {
		var e *Error
		var bug *ir.InternalError
		if errors.As(err, &e) {
			e.Loc.Graph = strings.TrimSuffix(qual+"."+e.Loc.Graph, ".")
		} else if errors.As(err, &bug) {
			bug.Loc.Graph = strings.TrimSuffix(qual+"."+bug.Loc.Graph, ".")
		}
		return nil, err
	}
	return bw, nil
}

func (j *jointBuilder) freshGraphName(patterns ...string) string {
	if j.nextFresh == nil {
		j.nextFresh = map[string]int{}
	}
	key := strings.Join(patterns, "\x00")
	for i := j.nextFresh[key]; ; i++ {
		free := true
		for _, p := range patterns {
			if j.graphTaken(fmt.Sprintf(p, i)) {
				free = false
			}
		}
		if free {
			j.nextFresh[key] = i + 1
			return fmt.Sprint(i)
		}
	}
}

func (j *jointBuilder) graphTaken(name string) bool {
	return j.src.Graph(name) != nil || j.extraNames[name]
}

// addGraphs installs module m (a subgraph's backward, or a graph built
// from one) under name: by reference, with the modules installed in it
// (nestedModule), not as copies of its graphs renamed.
func (j *jointBuilder) addGraphs(m *ir.Module, name string) {
	j.nested = append(j.nested, nestedModule{name: name, m: m, nested: j.opts.cache.nestedOf(m)})
	if j.extraNames == nil {
		j.extraNames = map[string]bool{}
	}
	j.extraNames[name] = true
}

// getAttr appends a get_attr node reading subgraph name.
func (j *jointBuilder) getAttr(name string) V {
	id := j.b.append(ir.Node{Name: j.b.names.fresh(name), Op: ir.OpGetAttr, Target: name,
		Val: &ir.Value{Kind: ir.ValOpaque, S: "GraphModule"}, Meta: j.b.meta})
	return nodeV(id, nil)
}

// operandRG returns, per operand, whether it is a node that requires grad.
func (j *jointBuilder) operandRG(ops []ir.Arg) []bool {
	out := make([]bool, len(ops))
	for i, a := range ops {
		out[i] = a.Kind == ir.ArgNode && a.Ref >= 0 && j.jrg[a.Ref]
	}
	return out
}

// gradsOrZeros returns the HOP outputs' gradients, zeros for undefined
// ones (the backward subgraphs take a tangent for every output).
func (j *jointBuilder) gradsOrZeros(id ir.NodeID, grads []V) []V {
	its := j.itemsOf(id)
	out := make([]V, len(grads))
	for k, g := range grads {
		if g.Defined() {
			out[k] = g
		} else if k < len(its) && its[k] != ir.NoNode {
			out[k] = j.b.zerosLike(j.val(its[k]))
		}
	}
	return out
}

// accumulateOperands adds the HOP backward's outputs to the operands'
// gradients; res[k] is operand k's gradient (undefined for none).
func (j *jointBuilder) accumulateOperands(ops []ir.Arg, res []V) {
	for k, a := range ops {
		if k < len(res) && res[k].Defined() && a.Kind == ir.ArgNode && a.Ref >= 0 && j.jrg[a.Ref] {
			j.accumulate(a.Ref, j.finish(res[k], j.val(a.Ref)))
		}
	}
}

// hopCall emits a HOP call returning tensors with the given metadata (nil:
// not a tensor) and a getitem per tensor element.
func (j *jointBuilder) hopCall(target string, args []any, outs []*ir.TensorMeta) []V {
	return j.b.tupleOp(target, outs, nonNil(outs), args...)
}

func nonNil(ms []*ir.TensorMeta) []bool {
	out := make([]bool, len(ms))
	for i, m := range ms {
		out[i] = m != nil
	}
	return out
}

func condBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	tq, ok1 := j.graphTarget(j.hopArg(n, "true_fn"))
	fq, ok2 := j.graphTarget(j.hopArg(n, "false_fn"))
	if !ok1 || !ok2 {
		return nodeError(j.file, j.b.g, id, "cond branches are not subgraphs of this file")
	}
	// trace_cond refuses branches that return different numbers of
	// outputs (hopctl lint: hop-structure); their backwards would take
	// different numbers of tangents.
	tl, _ := j.src.Graph(tq).Outputs()
	fl, _ := j.src.Graph(fq).Outputs()
	if len(tl) != len(fl) {
		return nodeError(j.file, j.b.g, id, fmt.Sprintf("cond branches return different numbers of outputs (true_fn %d, false_fn %d), which torch's cond refuses to trace", len(tl), len(fl)))
	}
	ops := j.hopArg(n, "operands").Elems()
	rg := j.operandRG(ops)
	// torch 2.6 (version row cond-backward-2.6): create_fw_bw_graph joints,
	// (*grads, *operands), a gradient for every operand.
	v26 := opschema.TorchDiffers(opschema.DiffCondBackward26, j.src.TorchVersion)
	conv := ConventionCreateBwFn
	if v26 {
		conv = ConventionCreateFwBwGraph
	}
	tbw, err := j.subJointAs(id, tq, rg, conv, MasksAuto)
	if err != nil {
		return err
	}
	var fbw *Joint // nil when both branches are one subgraph
	if fq != tq {
		if fbw, err = j.subJointAs(id, fq, rg, conv, MasksAuto); err != nil {
			return err
		}
	}
	list := []V{}
	var outs []*ir.TensorMeta
	var tensorOps []int // the operands that are tensors: cond's backward returns one gradient each
	for k, a := range ops {
		v := j.b.remapArgV(a)
		list = append(list, v)
		if v.meta != nil {
			outs = append(outs, like(v.meta))
			tensorOps = append(tensorOps, k)
		} else if v26 {
			outs = append(outs, nil)
		}
	}
	if v26 {
		// Every operand keeps its slot (None for a SymInt).
		tensorOps = tensorOps[:0]
		for k := range ops {
			tensorOps = append(tensorOps, k)
		}
	}
	// PyTorch's cond backward (torch/_higher_order_ops/cond.py,
	// CondAutogradOp.backward) drops the branch joints' None gradients with
	// utils.py create_fn_remove_none: one per tensor operand, no slot for a
	// SymInt (fill_none_with_masks puts the Nones back for autograd).
	// (subJoint's results have roots of their own: editing them leaves
	// the cache's copy as built.)
	keepOutputs(tbw.Module.Root(), tensorOps)
	i := j.freshGraphName("true_graph_%d", "false_graph_%d")
	tname, fname := "true_graph_"+i, "false_graph_"+i
	j.addGraphs(tbw.Module, tname)
	if fbw == nil {
		// Both branches are one subgraph: so are their backwards (one
		// copy, not two at every level of nesting).
		fname = tname
	} else {
		keepOutputs(fbw.Module.Root(), tensorOps)
		j.addGraphs(fbw.Module, fname)
	}
	tv, fv := j.getAttr(tname), j.getAttr(fname)
	if v26 {
		list = append(j.gradsOrZeros(id, grads), list...)
	} else {
		list = append(list, j.gradsOrZeros(id, grads)...)
	}
	tres := j.hopCall(opschema.HOPTarget("cond"), []any{j.hopArg(n, "pred"), tv, fv, list}, outs)
	res := make([]V, len(ops))
	for t, k := range tensorOps {
		if t < len(tres) {
			res[k] = tres[t]
		}
	}
	j.accumulateOperands(ops, res)
	return nil
}

// keepOutputs keeps the elements idx (ascending) of g's output tuple.
func keepOutputs(g *ir.Graph, idx []int) {
	o := g.OutputNode()
	if o == ir.NoNode || len(g.Nodes[o].Args) != 1 {
		return
	}
	res := g.Nodes[o].Args[0]
	if res.Kind != ir.ArgTuple && res.Kind != ir.ArgList {
		return
	}
	kept := make([]ir.Arg, 0, len(idx))
	for _, k := range idx {
		if k < len(res.Elems()) {
			kept = append(kept, res.Elems()[k])
		}
	}
	res.SetElems(kept)
	args := slices.Clone(g.Nodes[o].Args)
	args[0] = res
	g.Nodes[o].Args = args
}

func mapBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	bq, ok := j.graphTarget(j.hopArg(n, "f"))
	if !ok {
		return nodeError(j.file, j.b.g, id, "map_impl body is not a subgraph of this file")
	}
	xs, pos := j.hopArg(n, "xs").Elems(), j.hopArg(n, "pos_args").Elems()
	ops := slices.Concat(xs, pos)
	bw, err := j.subJoint(id, bq, j.operandRG(ops))
	if err != nil {
		return err
	}
	// create_bw_fn's (*xs, *pos_args, *grads) becomes (*xs, *grads, *pos_args).
	g := bw.Module.Root()
	ph := g.Placeholders()
	nx, np := len(xs), len(pos)
	order := slices.Concat(ph[:nx], ph[nx+np:], ph[nx:nx+np])
	permutePlaceholders(g, order)
	name := "body_graph_" + j.freshGraphName("body_graph_%d")
	j.addGraphs(bw.Module, name)
	bv := j.getAttr(name)
	var mapped []V
	var length ir.Dim
	outs := make([]*ir.TensorMeta, len(ops))
	for k, a := range xs {
		v := j.b.remapArgV(a)
		mapped = append(mapped, v)
		if v.meta != nil {
			outs[k] = like(v.meta)
			length = v.Shape()[0]
		}
	}
	mapped = append(mapped, j.gradsOrZeros(id, grads)...)
	var rest []V
	for k, a := range pos {
		v := j.b.remapArgV(a)
		rest = append(rest, v)
		if v.meta != nil {
			outs[nx+k] = withShape(v.meta, slices.Concat([]ir.Dim{length}, v.Shape()))
		}
	}
	res := j.hopCall(opschema.HOPTarget("map_impl"), []any{bv, mapped, rest}, outs)
	for k := nx; k < len(res); k++ {
		if res[k].Defined() {
			res[k] = j.b.sum(res[k], []int64{0}, false)
		}
	}
	j.accumulateOperands(ops, res)
	return nil
}

// remapArgV returns a node argument of the graph under construction as a
// value.
func (b *builder) remapArgV(a ir.Arg) V {
	if a.Kind == ir.ArgNode && a.Ref >= 0 {
		return nodeV(a.Ref, valueTensor(b.g.Nodes[a.Ref].Val))
	}
	return constV(a)
}

// permutePlaceholders reorders g's leading placeholders to order, in new
// node and argument slices; placeholders order leaves out are removed
// (they must have no users: unusedPlaceholders).
func permutePlaceholders(g *ir.Graph, order []ir.NodeID) {
	newID := make([]ir.NodeID, len(g.Nodes))
	nodes := make([]ir.Node, 0, len(g.Nodes))
	for _, id := range order {
		newID[id] = ir.NodeID(len(nodes))
		nodes = append(nodes, g.Nodes[id])
	}
	in := map[ir.NodeID]bool{}
	for _, id := range order {
		in[id] = true
	}
	for i := range g.Nodes {
		if in[ir.NodeID(i)] {
			continue
		}
		if g.Nodes[i].Op == ir.OpPlaceholder {
			newID[i] = ir.NoNode
			continue
		}
		newID[i] = ir.NodeID(len(nodes))
		nodes = append(nodes, g.Nodes[i])
	}
	for i := range nodes {
		// g may be a copy of a cached joint (handOut copies the nodes,
		// not their arguments; a body shared by two calls): rewrite
		// copies of the arguments, never the cached ones.
		n := &nodes[i]
		args := make([]ir.Arg, len(n.Args))
		for k := range n.Args {
			args[k] = n.Args[k].Clone()
		}
		n.Args = args
		if len(n.Kwargs) > 0 {
			n.Kwargs = slices.Clone(n.Kwargs)
			for k := range n.Kwargs {
				n.Kwargs[k].Value = n.Kwargs[k].Value.Clone()
			}
		}
		n.WalkRefs(func(a *ir.Arg) {
			if a.Ref >= 0 {
				a.Ref = newID[a.Ref]
			}
		})
	}
	g.Nodes = nodes
	g.Reindex()
}

// unusedPlaceholders says, per placeholder of g (in order), whether no
// node reads it.
func unusedPlaceholders(g *ir.Graph) []bool {
	ph := g.Placeholders()
	at := make(map[ir.NodeID]int, len(ph))
	for k, id := range ph {
		at[id] = k
	}
	unused := make([]bool, len(ph))
	for k := range unused {
		unused[k] = true
	}
	for i := range g.Nodes {
		g.Nodes[i].WalkRefs(func(a *ir.Arg) {
			if k, ok := at[a.Ref]; ok && a.Ref >= 0 {
				unused[k] = false
			}
		})
	}
	return unused
}

// augmentScan copies the forward scan node n (a functional-graph node)
// into the joint graph with a combine_fn that also returns each step's
// incoming carry, so the scan's outputs are (*final_carry, *ys,
// *carries), carries[t] being the carry step t started from. It returns
// the scan node; the getitems of the carries are recorded for the
// backward. torch 2.6 has no autograd for scan (opschema.DiffScanGrad26):
// the call is refused with 2.6's message.
func (j *jointBuilder) augmentScan(n *ir.Node) (ir.NodeID, error) {
	if opschema.TorchDiffers(opschema.DiffScanGrad26, j.src.TorchVersion) {
		return 0, fmt.Errorf("%s", scanGradMessage26)
	}
	r := j.f.ops.get(n.Target).hop
	ci := -1
	if r != nil {
		ci = r.row.ArgIndex("combine_fn")
	}
	if ci < 0 || ci >= len(n.Args) || n.Args[ci].Kind != ir.ArgNode || n.Args[ci].Ref < 0 {
		return 0, fmt.Errorf("scan takes (combine_fn, init, xs, additional_inputs)")
	}
	fg := j.f.b.g
	cq := fg.Nodes[n.Args[ci].Ref].Target
	comb := j.src.Graph(cq)
	if comb == nil {
		return 0, fmt.Errorf("scan combine_fn %q is not a subgraph of this file", cq)
	}
	nc := len(j.hopArg(n, "init").Elems())
	aug, err := augmentCombine(j.functionalBody(comb), nc)
	if err != nil {
		return 0, err
	}
	name := "scan_combine_graph_" + j.freshGraphName("scan_combine_graph_%d")
	aug.Name = name
	j.extra = append(j.extra, aug)
	av := j.getAttr(name)
	c := *n
	c.Args = slices.Clone(n.Args)
	for k := range c.Args {
		if k != ci {
			c.Args[k] = j.remap(c.Args[k])
		}
	}
	c.Args[ci] = j.b.ref(av.id)
	var carries []*ir.TensorMeta
	for _, a := range j.hopArg(n, "init").Elems() {
		m := valueTensor(fg.Nodes[a.Ref].Val)
		if m == nil {
			// The checkpointed carries are typed from init: scan's carries
			// are tensors, and a file may omit a node's value.
			return 0, fmt.Errorf("scan init operand %s has no tensor value", ir.Printable(fg.Nodes[a.Ref].Name))
		}
		carries = append(carries, m)
	}
	length := ir.Dim{Val: 1}
	if xs := j.hopArg(n, "xs").Elems(); len(xs) > 0 {
		if t := valueTensor(fg.Nodes[xs[0].Ref].Val); t != nil && len(t.Shape) > 0 {
			length = t.Shape[0]
		}
	}
	if n.Val != nil {
		v := *n.Val
		v.Elems = slices.Clone(v.Elems)
		for _, m := range carries {
			v.Elems = append(v.Elems, *tensorValue(withShape(m, slices.Concat([]ir.Dim{length}, m.Shape))))
		}
		c.Val = &v
	}
	c.Name = n.Name
	id := j.b.append(c)
	base := 0
	if n.Val != nil {
		base = len(n.Val.Elems)
	}
	var its []ir.NodeID
	for k, m := range carries {
		its = append(its, j.b.getitem(nodeV(id, nil), base+k, withShape(m, slices.Concat([]ir.Dim{length}, m.Shape))).id)
	}
	j.scanCarries[id] = scanCheckpoint{combine: cq, carries: its}
	return id, nil
}

// augmentCombine returns a copy of a scan combine graph that also returns
// a clone of each of its nc carry inputs.
func augmentCombine(g *ir.Graph, nc int) (*ir.Graph, error) {
	out := &ir.Graph{Name: g.Name, Nodes: slices.Clone(g.Nodes)}
	on := out.OutputNode()
	ph := out.Placeholders()
	if on < 0 || len(ph) < nc || len(out.Nodes[on].Args) != 1 {
		return nil, fmt.Errorf("scan combine_fn %s does not have %d carry inputs and one output", g.Name, nc)
	}
	b := &builder{g: out, names: newNames()}
	for i := range out.Nodes {
		b.names.reserve(out.Nodes[i].Name)
	}
	outNode := out.Nodes[on]
	out.Nodes = out.Nodes[:on]
	res := outNode.Args[0].Clone()
	elems := res.Elems()
	for _, p := range ph[:nc] {
		m := valueTensor(out.Nodes[p].Val)
		c := b.clone(nodeV(p, m))
		elems = append(elems, b.ref(c.id))
	}
	res.SetElems(elems)
	outNode.Args = []ir.Arg{res}
	outNode.Val = nil
	out.Nodes = append(out.Nodes, outNode)
	out.Reindex()
	return out, nil
}

// scanGradMessage26 is what torch 2.6 raises when a gradient flows into a
// scan (autograd_not_implemented in torch/_higher_order_ops/scan.py).
const scanGradMessage26 = "Autograd not implemented for scan"

func scanBackward(j *jointBuilder, id ir.NodeID, grads []V) error {
	n := &j.b.g.Nodes[id]
	if err := j.hopArity(id); err != nil {
		return err
	}
	ck, ok := j.scanCarries[id]
	if !ok {
		return nodeError(j.file, j.b.g, id, "scan was not checkpointed in the forward")
	}
	cq, carryItems := ck.combine, ck.carries
	init, xs, add := j.hopArg(n, "init").Elems(), j.hopArg(n, "xs").Elems(), j.hopArg(n, "additional_inputs").Elems()
	nc, nx, na := len(init), len(xs), len(add)
	ny := len(grads) - nc
	if ny < 0 {
		// torch's scan returns every final carry first; a combine_fn
		// returning fewer values than its carries is what torch 2.6 traced
		// without complaint (testdata/hops_real/torch2.6/scan_count.pb).
		return nodeError(j.file, j.b.g, id, fmt.Sprintf("scan has %d carries (init) but %d outputs: it must return every final carry", nc, len(grads)))
	}
	ops := slices.Concat(init, xs, add)
	for _, a := range ops {
		if a.Kind != ir.ArgNode || j.b.remapArgV(a).meta == nil {
			return nodeError(j.file, j.b.g, id, "scan backward supports tensor operands only")
		}
	}
	bwc, err := j.subJoint(id, cq, j.operandRG(ops))
	if err != nil {
		return err
	}
	w, err := scanBackwardCombine(bwc.Module.Root(), nc, nx, na, ny)
	if err != nil {
		return nodeError(j.file, j.b.g, id, err.Error())
	}
	wm := &ir.Module{Graphs: append([]*ir.Graph{w}, bwc.Module.Graphs[1:]...), Attributes: bwc.Module.Attributes,
		Schemas: mergeSchemas(schemasForTargets(bwc.Module.Schemas, scanGraphRefs(w).calls), []nestedModule{{m: bwc.Module}})}
	j.opts.cache.registerNested(wm, j.opts.cache.nestedOf(bwc.Module))
	name := "scan_combine_graph_" + j.freshGraphName("scan_combine_graph_%d")
	j.addGraphs(wm, name)
	wv := j.getAttr(name)

	b := j.b
	flip := func(v V) V { return b.op("aten.flip.default", like(v.meta), v, []int64{0}) }
	g := j.gradsOrZeros(id, grads)
	var bwInit, bwXs, bwAdd []V
	outs := make([]*ir.TensorMeta, 0, na+nc+nx)
	for _, a := range add {
		v := b.remapArgV(a)
		bwInit = append(bwInit, b.zerosLike(v))
		bwAdd = append(bwAdd, v)
		outs = append(outs, like(v.meta))
	}
	for k := range nc {
		bwInit = append(bwInit, g[k])
		outs = append(outs, like(b.remapArgV(init[k]).meta))
	}
	for k := range ny {
		bwXs = append(bwXs, flip(g[nc+k]))
	}
	for _, c := range carryItems {
		bwXs = append(bwXs, flip(j.val(c)))
	}
	for _, a := range xs {
		v := b.remapArgV(a)
		bwXs = append(bwXs, flip(v))
		outs = append(outs, like(v.meta))
	}
	res := j.hopCall(opschema.HOPTarget("scan"), []any{wv, bwInit, bwXs, bwAdd}, outs)
	gradOf := make([]V, len(ops))
	for k := range nc {
		gradOf[k] = res[na+k]
	}
	for k := range nx {
		gradOf[nc+k] = flip(res[na+nc+k])
	}
	for k := range na {
		gradOf[nc+nx+k] = res[k]
	}
	j.accumulateOperands(ops, gradOf)
	return nil
}

// scanCheckpoint is what the forward scan keeps for its backward: the
// original combine_fn and the getitems of the per-step carries.
type scanCheckpoint struct {
	combine string
	carries []ir.NodeID
}

// scanBackwardCombine wraps the create_bw_fn joint bw of a combine_fn —
// (*carry, *xs_t, *add, *g_next_carry, *g_ys_t) → (*g_carry, *g_xs_t,
// *g_add) — into the backward scan's combine_fn:
// (*g_add_acc, *g_carry, *g_ys_t, *carry_t, *xs_t, *add) →
// (*g_add_acc + g_add, *g_carry_prev, *g_xs_t).
func scanBackwardCombine(bw *ir.Graph, nc, nx, na, ny int) (*ir.Graph, error) {
	ph := bw.Placeholders()
	if len(ph) != nc+nx+na+nc+ny {
		return nil, fmt.Errorf("scan combine_fn backward has %d inputs, want %d", len(ph), nc+nx+na+nc+ny)
	}
	b := newBuilder("")
	for i := range bw.Nodes {
		if bw.Nodes[i].Op != ir.OpPlaceholder {
			b.names.reserve(bw.Nodes[i].Name)
		}
	}
	m := make([]ir.NodeID, len(bw.Nodes))
	val := func(id ir.NodeID) *ir.Value { return bw.Nodes[id].Val }
	primal := func(k int) ir.NodeID { return ph[k] }
	tangent := func(k int) ir.NodeID { return ph[nc+nx+na+k] }
	var acc []V
	for k := range na {
		// The accumulator is a fresh tensor shaped like the additional
		// input (the zeros the caller passes), not the input itself: a
		// recorded storage shared with `add` would be an input-input
		// alias, which scan's own check refuses.
		acc = append(acc, b.placeholder("g_add_acc", withoutStorage(val(primal(nc+nx+k))), nil))
	}
	place := func(id ir.NodeID, name string) { m[id] = b.placeholder(name, val(id), nil).id }
	for k := range nc {
		place(tangent(k), "g_carry")
	}
	for k := range ny {
		place(tangent(nc+k), "g_y")
	}
	for k := range nc {
		place(primal(k), "carry")
	}
	for k := range nx {
		place(primal(nc+k), "x")
	}
	for k := range na {
		place(primal(nc+nx+k), "add")
	}
	outs, err := inlineGraph(b, bw, m)
	if err != nil {
		return nil, err
	}
	if len(outs) != nc+nx+na {
		return nil, fmt.Errorf("scan combine_fn backward returns %d values, want %d", len(outs), nc+nx+na)
	}
	res := make([]V, 0, na+nc+nx)
	for k := range na {
		g := b.remapArgV(outs[nc+nx+k])
		res = append(res, b.add(acc[k], g))
	}
	for k := range nc + nx {
		res = append(res, b.remapArgV(outs[k]))
	}
	b.output(res)
	return b.g, nil
}
