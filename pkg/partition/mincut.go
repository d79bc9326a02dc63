package partition

import (
	"hash/maphash"
	"maps"
	"math"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// The min-cut partitioner follows functorch's
// min_cut_rematerialization_partition (torch 1.13; for a file from torch
// 2.x, with 2.x's longer list of recomputable ops): every joint node v
// becomes an edge v_in → v_out whose capacity is the cost of saving v
// (its size in bytes, scaled up the farther it is from the backward and
// doubled when it would be materialized only for saving); uses are
// infinite edges; the primals, and forward nodes that must not be
// recomputed (expensive or random ops, or ops whose output is much smaller
// than their inputs), hang off the source; nodes the tangents reach hang
// off the sink. The cut edges are the values to save; everything after the
// cut is recomputed by the backward.

// recomputableOps are the op packets (namespace.name) min-cut may
// recompute: functorch 1.13's list for its default compiler, plus the view
// ops, which cost nothing to recompute (torch 2.x recomputes views always).
var recomputableOps = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, op := range strings.Fields(`add sub div atan2 mul max min pow remainder fmod __and__ __or__
__xor__ __lshift__ __rshift__ eq ne ge gt le lt abs bitwise_not ceil floor frac neg relu round
silu trunc log log10 log1p log2 lgamma exp expm1 erf erfc cos acos cosh sin asin sinh tan atan
tanh atanh sqrt rsqrt reciprocal sigmoid softplus threshold threshold_backward clamp where lerp
addcmul gelu gelu_backward alias softmax _softmax _softmax_backward_data sum mean
_grad_sum_to_size sum_to_size amax to type_as squeeze unsqueeze`) {
		m["aten."+op] = true
	}
	for _, op := range strings.Fields(`view _unsafe_view _reshape_alias reshape t transpose permute
expand select slice detach`) {
		m["aten."+op] = true
	}
	m["_operator.getitem"] = true
	return m
})

// recomputableOps2 are the packets torch 2.x's min-cut recomputes beyond
// 1.13's (torch/_functorch/partitioners.py get_default_op_list, 2.14.1):
// its longer list (maximum, clone, the factories, index, gather, ...);
// besides, every op torch tags pointwise (its pointwise_ops()).
var recomputableOps2 = sync.OnceValue(func() map[string]bool {
	m := maps.Clone(recomputableOps())
	for _, op := range strings.Fields(`rsub _to_copy clone full_like var std broadcast_tensors
scalar_tensor ones new_zeros lift_fresh_copy arange triu var_mean isinf any full as_strided zeros
empty empty_like argmax maximum index gather split zeros_like`) {
		m["aten."+op] = true
	}
	return m
})

// recomputable reports whether min-cut may recompute target, by the rules
// of the torch that wrote the file (opschema.DiffMinCutRecompute113).
func recomputable(target, torchVersion string) bool {
	pk := opPacket(target)
	if opschema.TorchDiffers(opschema.DiffMinCutRecompute113, torchVersion) {
		return recomputableOps()[pk]
	}
	return recomputableOps2()[pk] || opschema.IsPointwise(target)
}

var randomOps = map[string]bool{
	"aten.native_dropout": true, "aten.rand_like": true, "aten.randn_like": true,
	"aten.bernoulli": true, "aten.rand": true, "aten.randn": true,
}

// opPacket is the overload packet of a target: aten.add.Tensor → aten.add.
func opPacket(target string) string {
	if target == "_operator.getitem" {
		return target
	}
	if i := strings.LastIndexByte(target, '.'); i > 0 && strings.Count(target, ".") >= 2 {
		return target[:i]
	}
	return target
}

// packetInfo is what the partitioner needs to know about a call target.
type packetInfo struct {
	recomputable, random, getitem bool
	fill                          fillOp
	hash                          uint64 // of the target, for CSE (hashNode)
}

func packetOf(target, torchVersion string) packetInfo {
	pk := opPacket(target)
	return packetInfo{recomputable: recomputable(target, torchVersion), random: randomOps[pk], getitem: target == "_operator.getitem",
		fill: fillOpOf(target), hash: maphash.String(cseSeed, target)}
}

// cseTable is an open-addressing hash set of call nodes keyed by target
// and arguments (references compared after redirection through canon).
type cseTable struct {
	mask  uint64
	slots []cseSlot
	used  int
}

type cseSlot struct {
	h  uint64
	id int32 // node id + 1; 0: empty
}

func (t *cseTable) init(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	t.slots = make([]cseSlot, size)
	t.mask = uint64(size - 1)
}

func (t *cseTable) insert(h uint64, id int32) {
	if 2*(t.used+1) > len(t.slots) {
		old := t.slots
		t.init(len(old))
		t.used = 0
		for _, s := range old {
			if s.id > 0 {
				t.insert(s.h, s.id-1)
			}
		}
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].id == 0 {
			t.slots[i] = cseSlot{h: h, id: id + 1}
			t.used++
			return
		}
	}
}

// lookup returns the earlier node equal to n, or -1.
func (t *cseTable) lookup(h uint64, n *ir.Node, g *ir.Graph, canon []int32) int32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s.id == 0 {
			return -1
		}
		if s.h == h && sameCall(&g.Nodes[s.id-1], n, canon) {
			return s.id - 1
		}
	}
}

// cseIndex finds, for a call node, the earlier node it duplicates. Equal
// nodes have the same first node reference, so the candidates are chained
// per first operand (a node's users are usually close to it, so the chains
// stay in cache) and told apart by target first; the users beyond the
// first cseChain of an operand, and nodes without node arguments, go to a
// hash table. Only those are hashed and kept in the table: hashing every
// call node's arguments is most of the search's work, and a table of every
// call node would be larger than the chains. A node equals at most one kept node (a later equal one would have been
// merged into it), so the order of the search does not change its result.
type cseIndex struct {
	last     []int32 // per operand: the newest chained user, +1 (0: none)
	prev     []int32 // per node: the previous chained user of its operand, +1
	chainLen []uint8 // per operand
	tab      cseTable
}

const cseChain = 8

func newCSEIndex(n int, ints *pool[int32]) *cseIndex {
	c := &cseIndex{last: ints.zeroed(n), prev: ints.get(n), chainLen: make([]uint8, n)}
	c.tab.init(64)
	return c
}

// find returns the earlier node call node i (n; its target's id and hash:
// tid, th; tids, every node's target id) duplicates, or records i and
// returns -1.
func (c *cseIndex) find(i int32, n *ir.Node, tid int32, th uint64, tids []int32, g *ir.Graph, canon []int32) int32 {
	if first := firstRef(n, canon); first >= 0 && first < int64(len(c.last)) {
		for j := c.last[first] - 1; j >= 0; j = c.prev[j] - 1 {
			if tids[j] == tid && sameCall(&g.Nodes[j], n, canon) {
				return j
			}
		}
		if c.chainLen[first] < cseChain {
			c.prev[i] = c.last[first]
			c.last[first] = i + 1
			c.chainLen[first]++
			return -1
		}
	}
	h := hashNode(n, th, canon)
	if prev := c.tab.lookup(h, n, g, canon); prev >= 0 {
		return prev
	}
	c.tab.insert(h, i)
	return -1
}

// firstRef returns call node n's first node reference (redirected through
// canon), in the order hashNode reads its arguments, or -1 if it has none.
func firstRef(n *ir.Node, canon []int32) int64 {
	for k := range n.Args {
		if r, ok := firstArgRef(&n.Args[k], canon); ok {
			return r
		}
	}
	for k := range n.Kwargs {
		if r, ok := firstArgRef(&n.Kwargs[k].Value, canon); ok {
			return r
		}
	}
	return -1
}

func firstArgRef(a *ir.Arg, canon []int32) (int64, bool) {
	if a.Kind == ir.ArgNode {
		return canonRef(a.Ref, canon), true
	}
	for i := range a.Elems() {
		if r, ok := firstArgRef(&a.Elems()[i], canon); ok {
			return r, true
		}
	}
	return 0, false
}

var cseSeed = maphash.MakeSeed()

func mix(h, v uint64) uint64 {
	h ^= v
	h *= 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// hashNode hashes a call node's target (whose hash is th) and arguments.
func hashNode(n *ir.Node, th uint64, canon []int32) uint64 {
	h := th
	for k := range n.Args {
		h = hashArg(h, &n.Args[k], canon)
	}
	for k := range n.Kwargs {
		h = mix(h, maphash.String(cseSeed, n.Kwargs[k].Name))
		h = hashArg(h, &n.Kwargs[k].Value, canon)
	}
	return h
}

func canonRef(r ir.NodeID, canon []int32) int64 {
	if r >= 0 && int(r) < len(canon) {
		return int64(canon[r])
	}
	return int64(r)
}

func hashArg(h uint64, a *ir.Arg, canon []int32) uint64 {
	h = mix(h, uint64(a.Kind)+1)
	switch a.Kind {
	case ir.ArgNode:
		return mix(h, uint64(canonRef(a.Ref, canon)))
	case ir.ArgInt:
		return mix(h, uint64(a.Int()))
	case ir.ArgFloat, ir.ArgComplex:
		return mix(mix(h, math.Float64bits(a.Float())), math.Float64bits(a.Imag()))
	case ir.ArgBool:
		if a.B {
			return mix(h, 1)
		}
		return h
	case ir.ArgSym:
		return mix(h, maphash.String(cseSeed, a.Sym().Expr))
	case ir.ArgList, ir.ArgTuple, ir.ArgDict, ir.ArgSlice, ir.ArgConstant:
		h = mix(mix(h, maphash.String(cseSeed, a.S)), uint64(len(a.Elems())))
		for i := range a.Elems() {
			if a.Keys() != nil {
				h = mix(h, maphash.String(cseSeed, a.Keys()[i]))
			}
			h = hashArg(h, &a.Elems()[i], canon)
		}
		return h
	}
	return mix(h, maphash.String(cseSeed, a.S))
}

// sameCall reports whether two call nodes compute the same thing: same
// target, equal arguments (node references equal after redirection).
func sameCall(a, b *ir.Node, canon []int32) bool {
	if a.Target != b.Target || len(a.Args) != len(b.Args) || len(a.Kwargs) != len(b.Kwargs) {
		return false
	}
	for k := range a.Args {
		if !sameArg(&a.Args[k], &b.Args[k], canon) {
			return false
		}
	}
	for k := range a.Kwargs {
		if a.Kwargs[k].Name != b.Kwargs[k].Name || !sameArg(&a.Kwargs[k].Value, &b.Kwargs[k].Value, canon) {
			return false
		}
	}
	return true
}

func sameArg(a, b *ir.Arg, canon []int32) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case ir.ArgNode:
		return canonRef(a.Ref, canon) == canonRef(b.Ref, canon)
	case ir.ArgInt:
		return a.Int() == b.Int()
	case ir.ArgFloat, ir.ArgComplex:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float()) && math.Float64bits(a.Imag()) == math.Float64bits(b.Imag())
	case ir.ArgBool:
		return a.B == b.B
	case ir.ArgSym:
		return a.Sym().Expr == b.Sym().Expr
	case ir.ArgList, ir.ArgTuple, ir.ArgDict, ir.ArgSlice, ir.ArgConstant:
		if a.S != b.S || len(a.Elems()) != len(b.Elems()) || (a.Keys() != nil) != (b.Keys() != nil) {
			return false
		}
		for i := range a.Elems() {
			if a.Keys() != nil && a.Keys()[i] != b.Keys()[i] {
				return false
			}
			if !sameArg(&a.Elems()[i], &b.Elems()[i], canon) {
				return false
			}
		}
		return true
	}
	return a.S == b.S
}

// pow11 caches 1.1^d for the distance scaling of the node weights.
var pow11 = sync.OnceValue(func() [101]float64 {
	var t [101]float64
	for d := range t {
		t[d] = math.Pow(1.1, float64(d))
	}
	return t
})

// symbolicNumelFallback is the element count min-cut assumes for a tensor
// whose numel is symbolic (torch/_functorch/partitioners.py _size_of).
const symbolicNumelFallback = 4096

// minCut is min-cut's network as minCutSaved builds it, by compact node.
//
// Node c of the network is nodes 2k (in) and 2k+1 (out), k = at[c]; then
// source and sink. A node the backward requires would have only an
// infinite arc to the sink: it is merged into the sink, so an arc into it
// becomes an arc to the sink (one per node: they are all infinite). That
// leaves the cut and the residual reachability (sinkSide) as they were,
// and removes the backward half of the joint graph from the network (its
// nodes are left out, numbered in order, the others keep their arcs'
// order, so the flow found is the same step by step).
type minCut struct {
	p *partitioner
	n int
	// bwReq: the tangents reach the node (or it is a backward output the
	// forward does not need); fwReq: the forward computes it; bwOut: a
	// backward output the forward needs too, which must reach the sink.
	bwReq, fwReq, bwOut []bool
	at                  []int32 // network node of each node, -1: merged into the sink
	k                   int32   // network nodes
	// size holds, by network node, the size in bytes (-1: unknown), then
	// the weight of its arc (weigh).
	size    []int64
	sym     []bool  // symbolic ints
	dist    []int32 // distance from the backward, in forward nodes
	fusible []bool
	// isPrimal and cut (forward nodes that must not be recomputed) hang
	// off the source, toSink off the sink.
	isPrimal, toSink, cut []bool
	edges                 int // the merged network's edges, at most
	// aggressive and dontBan are the memory budget's (budget.go):
	// aggressive bans only what AOTAutograd's aggressive options ban
	// (ban_if_not_in_allowlist off), dontBan lifts the ban of the nodes the
	// knapsack recomputes; banned collects the banned forward nodes that
	// reach the backward (its candidates), when not nil.
	aggressive bool
	dontBan    []bool
	banned_    *[]int32
}

// minCutSaved returns the values min-cut decides to save.
func (p *partitioner) minCutSaved() []int32 {
	return p.minCutSavedWith(&minCut{})
}

// minCutSavedWith is minCutSaved with mc's options (aggressive, dontBan,
// banned_).
func (p *partitioner) minCutSavedWith(mc *minCut) []int32 {
	mc.p, mc.n = p, p.n
	mc.classify()
	mc.number()
	mc.measure()
	mc.flag()
	mc.weigh()
	return mc.saved(mc.solve())
}

// classify finds the nodes the tangents reach and the nodes the forward
// computes.
func (mc *minCut) classify() {
	p, n := mc.p, mc.n
	bwReq := p.bools.zeroed(n)
	for _, t := range p.tangents {
		bwReq[t] = true
	}
	for c := range int32(n) {
		if !bwReq[c] {
			continue
		}
		for _, u := range p.usersOf(c) {
			bwReq[u] = true
		}
	}
	fwReq := p.forwardNodes()
	for _, c := range p.primals {
		fwReq[c] = true
	}
	// Gradients that do not depend on a tangent (zeros_like(primal) for an
	// input without a gradient, under --unmask-none-gradients) are still
	// the backward's outputs: one the forward does not need is computed in
	// the backward, like the tangent-reached nodes (as later torch does:
	// required_bw_nodes includes the backward outputs); one it does need
	// must reach the backward, saved or recomputed (bwOut, an arc to the
	// sink from its value).
	bwOut := p.bools.zeroed(n)
	for _, a := range p.bwdOuts {
		if a.Kind != ir.ArgNode || a.Ref < 0 {
			continue
		}
		c := p.refCompact(a.Ref)
		switch {
		case c < 0 || bwReq[c]:
		case fwReq[c]:
			bwOut[c] = true
		default:
			bwReq[c] = true
		}
	}
	mc.bwReq, mc.fwReq, mc.bwOut = bwReq, fwReq, bwOut
}

// number numbers the network's nodes (at): every node but those merged
// into the sink (none in the full network).
func (mc *minCut) number() {
	p := mc.p
	mc.at = p.ints.get(mc.n)
	for c := range int32(mc.n) {
		mc.at[c] = -1
		if mc.bwReq[c] && !p.fullNetwork {
			continue
		}
		mc.at[c] = mc.k
		mc.k++
	}
}

// measure reads the sizes of the nodes the backward does not require
// (only those are weighed), notes which are symbolic ints, and finds the
// distances from the backward and the fusible ops.
func (mc *minCut) measure() {
	p, n := mc.p, mc.n
	mc.size = make([]int64, mc.k)
	mc.sym = p.bools.zeroed(n)
	p.sym = mc.sym // the saved values are among these nodes
	for c := range int32(n) {
		if !mc.bwReq[c] {
			mc.size[mc.at[c]], mc.sym[c] = nodeSize(p.nd(c).Val)
		}
	}
	mc.dist = p.ints.zeroed(n)
	for c := int32(n) - 1; c >= 0; c-- {
		if !mc.fwReq[c] {
			continue
		}
		d := int32(1e9)
		for _, u := range p.usersOf(c) {
			d = min(d, mc.dist[u]+1)
		}
		mc.dist[c] = d
	}
	mc.fusible = p.bools.get(n)
	for c := range int32(n) {
		mc.fusible[c] = false
		if p.class[c] == classCall {
			in := p.infos[p.tgt[c]]
			mc.fusible[c] = in.recomputable || in.random
		}
	}
}

// banned returns why forward node c must not be recomputed (whyCut if it
// may be): a side-effecting or non-recomputable op, or one whose output is
// much smaller than its inputs (should_ban_recomputation).
func (mc *minCut) banned(c int32) why {
	p := mc.p
	if p.class[c] != classCall || p.isFill(c) {
		return whyCut // a constant fill has no operands: never saved
	}
	if mc.sym[c] {
		return whyCut // sym_size and SymInt arithmetic: saved or recomputed, as weighed
	}
	in := p.infos[p.tgt[c]]
	if p.effect[c] {
		return whyEffect
	}
	if mc.dontBan != nil && mc.dontBan[c] {
		return whyCut
	}
	if mc.aggressive {
		// ban_if_not_in_allowlist off: only random, compute-intensive and
		// non-ATen ops (HOP calls) are banned (should_ban_recomputation).
		switch {
		case in.random:
			return whyRandom
		case computeIntensive[opPacket(p.nd(c).Target)]:
			return whyComputeIntensive
		case !in.getitem && !strings.HasPrefix(p.nd(c).Target, "aten."):
			return whyNonATen
		}
	} else if !in.recomputable {
		if in.random {
			return whyRandom
		}
		return whyNotRecomputable
	}
	size := mc.size[mc.at[c]]
	if in.getitem || size < 0 {
		return whyCut
	}
	// c is a forward node (flag asks only of those), and so are its
	// operands (forwardNodes): none is bwReq, each has a size.
	var sum int64
	for _, o := range p.operands(c) {
		if s := mc.size[mc.at[o]]; s >= 0 {
			sum = satAdd(sum, s)
		}
	}
	if satMul(size, 4) < sum {
		return whyReduction
	}
	return whyCut
}

// materialized reports whether node c's value exists outside a fusion
// group: a placeholder, or a node with a user it cannot fuse with.
func (mc *minCut) materialized(c int32) bool {
	p := mc.p
	if p.class[c] == classPlaceholder {
		return true
	}
	for _, u := range p.usersOf(c) {
		if !(mc.fusible[c] && mc.fusible[u]) {
			return true
		}
	}
	return false
}

// flag marks the nodes hanging off the source (primals, cut) and the sink
// (toSink), and counts the edges.
func (mc *minCut) flag() {
	p, n := mc.p, mc.n
	mc.isPrimal = p.bools.zeroed(n)
	for _, c := range p.primals {
		mc.isPrimal[c] = true
	}
	mc.toSink = p.bools.get(n)
	mc.cut = p.bools.get(n)
	p.resetWhy(whyCut)
	for c := range int32(n) {
		mc.toSink[c], mc.cut[c] = mc.bwOut[c], false
		if mc.bwReq[c] {
			continue
		}
		// An edge's head is a network node, which has an edge from each
		// of its operands at most.
		mc.edges += int(p.opStart[c+1] - p.opStart[c])
		if !p.fullNetwork {
			for _, u := range p.usersOf(c) {
				if mc.bwReq[u] {
					mc.toSink[c] = true
					break
				}
			}
		}
		w := whyCut
		if mc.fwReq[c] {
			w = mc.banned(c)
		}
		mc.cut[c] = w != whyCut
		p.why[c] = w
		if mc.isPrimal[c] {
			p.why[c] = whyInput
		}
		if mc.cut[c] && mc.banned_ != nil && !mc.isPrimal[c] && mc.dist[c] < 1e9 {
			*mc.banned_ = append(*mc.banned_, c)
		}
	}
}

// weigh turns the sizes into the weights of the nodes' arcs, in place:
// the size scaled up 1.1× per step from the backward, doubled for a value
// materialized only for saving. Finite weights stay below flowInf in any
// sum: a weight is at most maxWeight (sizes of exabytes compare as equal,
// where AOTAutograd's Python floats would keep growing).
func (mc *minCut) weigh() {
	p := mc.p
	pow11 := pow11()
	maxWeight := flowInf / int64(2*mc.n+2)
	weight := func(c int32) int64 {
		s := mc.size[mc.at[c]]
		if s < 0 {
			return flowInf
		}
		f := float64(s) * pow11[max(min(mc.dist[c], 100), 1)]
		if !mc.materialized(c) {
			f *= 2
		}
		if f >= float64(maxWeight) {
			return maxWeight
		}
		return int64(f)
	}
	for c := range int32(mc.n) {
		if !mc.bwReq[c] {
			mc.size[mc.at[c]] = weight(c)
		}
	}
	// The network's arrays reuse these (pool).
	p.ints.put(mc.dist)
	p.bools.put(mc.fwReq, mc.bwOut, mc.fusible)
}

// solve returns the sink side of the network's minimum cut, by network
// node: cutNet's, or for the full network or an unbounded flow flowNet's,
// whose cut then depends on the order it explores the network in.
func (mc *minCut) solve() []bool {
	p := mc.p
	var sinkSide []bool
	if !p.fullNetwork {
		g := newCutNet(mc.size, mc.edges, &p.ints, &p.bools)
		for c := range int32(mc.n) {
			if mc.at[c] < 0 {
				continue
			}
			g.addNode(mc.isPrimal[c] || mc.cut[c], mc.toSink[c])
			for _, u := range p.usersOf(c) {
				if mc.at[u] >= 0 {
					g.addEdge(mc.at[u])
				}
			}
		}
		sinkSide = g.sinkSide()
		g.release(&p.bools)
	}
	if sinkSide == nil {
		sinkSide = p.flowNetSinkSide(int(mc.k), mc.at, mc.bwReq, mc.isPrimal, mc.cut, mc.toSink, mc.size)
	}
	p.bools.put(mc.isPrimal, mc.toSink, mc.cut)
	return sinkSide
}

// saved returns the nodes whose arc the cut crosses: the values to save.
func (mc *minCut) saved(sinkSide []bool) []int32 {
	p := mc.p
	saved := p.ints.get(mc.n)[:0] // extract gives it back
	for c := range int32(mc.n) {
		if p.class[c] == classOutput || mc.bwReq[c] {
			continue
		}
		if i := mc.at[c]; !sinkSide[2*i] && sinkSide[2*i+1] {
			saved = append(saved, c)
		}
	}
	p.ints.put(mc.at)
	p.bools.put(mc.bwReq, sinkSide)
	return saved
}

// nodeSize returns what min-cut weighs a node of value v by: its size in
// bytes, 1 for a symbolic int (sym), -1 when unknown.
func nodeSize(v *ir.Value) (size int64, sym bool) {
	if t := valueTensor(v); t != nil {
		if b, ok := jointgraph.TensorBytes(t); ok {
			return b, false
		}
		if es, ok := ir.ElementSize(t.Dtype); ok {
			// A symbolic numel counts as 4096 elements, as AOTAutograd's
			// _size_of does (hint_int(numel, fallback=4096)): an unbacked
			// size has no hint, and hopctl keeps none (a while_loop's
			// stacked carries).
			return satMul(symbolicNumelFallback, es), false
		}
		return -1, false
	}
	if isSymValue(v) {
		// A symbolic int weighs 1 (partitioners.py sym_node_size) and may
		// be saved: AOTAutograd passes the backward its saved_sym_nodes
		// beside the tensors.
		return 1, true
	}
	return -1, false
}

// flowNetSinkSide builds min-cut's network as a flowNet and returns the
// sink side of its cut (minCutSaved's arrays: at, the network node of
// each node, -1 for none; the flags of the nodes with one; weight, the
// capacity of a node's arc, by network node).
func (p *partitioner) flowNetSinkSide(k int, at []int32, bwReq, isPrimal, cut, toSink []bool, w []int64) []bool {
	// The network is laid out in two passes over the same edges: count
	// each node's arcs, then place them.
	net := &flowNet{n: 2*k + 2, ints: &p.ints}
	src, sink := net.n-2, net.n-1
	net.start = p.ints.zeroed(net.n + 1)
	countArcs := func(u, v int, _ int64) {
		net.start[u+1]++
		net.start[v+1]++
	}
	edges := func(placing bool, arc func(u, v int, c int64)) {
		for c := range int32(p.n) {
			if at[c] < 0 {
				continue
			}
			i := int(at[c])
			if bwReq[c] {
				arc(2*i, sink, flowInf) // the full network only
				continue
			}
			if isPrimal[c] {
				arc(src, 2*i, flowInf)
			}
			if cut[c] {
				arc(src, 2*i, flowInf)
			}
			if toSink[c] {
				arc(2*i+1, sink, flowInf)
			}
			arc(2*i, 2*i+1, w[i])
			for _, u := range p.usersOf(c) {
				if at[u] >= 0 {
					arc(2*i+1, 2*int(at[u]), flowInf)
				}
			}
		}
	}
	edges(false, countArcs)
	net.prepareArcs()
	edges(true, net.place)
	net.maxFlow(src, sink)
	side := net.sinkSide(sink)
	net.release()
	return side
}
