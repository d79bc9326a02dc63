package partition

import (
	"cmp"
	"math"
	"slices"

	"github.com/hopctl/hopctl/pkg/ir"
)

// The activation memory budget, as AOTAutograd's
// torch._functorch.config.activation_memory_budget (torch 2.14.1:
// torch/_functorch/partitioners.py choose_saved_values_set). A budget b
// in [0, 1] places the saved bytes between those of the primals (0: save
// only the inputs, which cannot be recomputed, and recompute everything
// else) and those of the min-cut (1):
//
//  1. min-cut as usual; if it saves no more than the primals, done;
//  2. min-cut with the aggressive options (ban_if_not_in_allowlist off:
//     only random, compute-intensive and non-ATen ops stay banned); if its
//     memory ratio (saved − primals) / (min-cut − primals) is below b, done
//     (AOTAutograd's "more aggressive" step differs from its default only by
//     heuristics hopctl's min-cut, torch 1.13's rules, does not have);
//  3. else a 0-1 knapsack over the nodes step 2 still bans that reach the
//     backward (get_recomputable_banned_nodes), sorted by size, largest
//     first: memory is a node's size normalized by (min-cut − primals),
//     runtime its recompute cost, and the knapsack keeps saved the set of
//     largest runtime within memory b (dp_knapsack: memories quantized to
//     1/10000); the others are unbanned (dont_ban) and min-cut is solved
//     again with the aggressive options.
//
// The recompute cost is AOTAutograd's default estimator's
// (activation_memory_budget_runtime_estimator = "flops", estimate_runtime:
// FlopCounterMode's count, at least 1): the flops of the matrix products
// and convolutions, 1 for every other op.

// knapsackScale is dp_knapsack's quantization of the normalized memories.
const knapsackScale = 10000

// computeIntensive are the packets AOTAutograd's should_ban_recomputation
// never recomputes, whatever the options (get_default_op_list's
// compute_intensive_ops).
var computeIntensive = map[string]bool{
	"aten.mm": true, "aten.convolution": true, "aten.convolution_backward": true, "aten.bmm": true,
	"aten.addmm": true, "aten._scaled_dot_product_flash_attention": true,
	"aten._scaled_dot_product_efficient_attention": true, "aten._flash_attention_forward": true,
	"aten._efficient_attention_forward": true, "aten.upsample_bilinear2d": true, "aten._scaled_mm": true,
	"aten.baddbmm": true, "aten._scaled_dot_product_cudnn_attention": true,
}

// budgetSaved returns the values to save under memory budget b.
func (p *partitioner) budgetSaved(b float64) []int32 {
	if b >= 1 {
		return p.minCutSaved()
	}
	if b <= 0 {
		return p.inputsSaved()
	}
	size := func(cs []int32) float64 {
		var t float64
		for _, c := range cs {
			if s, _ := nodeSize(p.nd(c).Val); s > 0 {
				t += float64(s)
			}
		}
		return t
	}
	def := p.minCutSaved()
	minAct, maxAct := size(p.primals), size(def)
	if maxAct <= minAct {
		return def
	}
	ratio := func(cs []int32) float64 { return (size(cs) - minAct) / (maxAct - minAct) }
	var banned []int32
	aggr := p.minCutSavedWith(&minCut{aggressive: true, banned_: &banned})
	if ratio(aggr) < b {
		p.ints.put(def)
		return aggr
	}
	if len(banned) == 0 {
		p.ints.put(def)
		return aggr
	}
	sizes := make(map[int32]float64, len(banned))
	for _, c := range banned {
		s, _ := nodeSize(p.nd(c).Val)
		sizes[c] = float64(max(s, 0))
	}
	slices.SortStableFunc(banned, func(x, y int32) int { return cmp.Compare(sizes[y], sizes[x]) })
	mem := make([]int64, len(banned))
	run := make([]float64, len(banned))
	for i, c := range banned {
		mem[i] = int64(math.Round(sizes[c] / (maxAct - minAct) * knapsackScale))
		run[i] = p.recomputeCost(c)
	}
	keep := dpKnapsack(mem, run, int64(math.Round(b*knapsackScale)))
	dontBan := p.bools.zeroed(p.n)
	for i, c := range banned {
		if !keep[i] {
			dontBan[c] = true
		}
	}
	p.ints.put(def)
	p.ints.put(aggr)
	saved := p.minCutSavedWith(&minCut{aggressive: true, dontBan: dontBan})
	p.bools.put(dontBan)
	return saved
}

// inputsSaved is budget 0: choose_saved_values_set returns node_info.inputs,
// the primals (extract keeps those the backward reads), and the backward
// recomputes everything else. What cannot be recomputed is saved beside
// them: the results of side-effecting forward nodes (a training-mode
// native_batch_norm that updates its running statistics in place:
// recomputed, it would update them twice) and of random ones (recomputed,
// they would draw other numbers). AOTAutograd saves only the inputs there
// and then fails at the backward (its recomputed batch norm writes the
// statistics autograd saved: "modified by an inplace operation"); hopctl
// gives the partition that runs.
func (p *partitioner) inputsSaved() []int32 {
	mc := &minCut{p: p, n: p.n}
	mc.classify() // bwReq and fwReq
	p.sym = p.bools.zeroed(p.n)
	p.resetWhy(whyInput)
	saved := append(p.ints.get(p.n)[:0], p.primals...)
	for c := range int32(p.n) {
		if !mc.fwReq[c] || mc.bwReq[c] || p.class[c] != classCall {
			continue
		}
		if !p.effect[c] && !p.infos[p.tgt[c]].random {
			continue
		}
		w := whyEffect
		if !p.effect[c] {
			w = whyRandom
		}
		p.why[c] = w
		if !p.isTuple(c, p.nd(c).Val) {
			saved = append(saved, c)
			p.sym[c] = isSymValue(p.nd(c).Val)
			continue
		}
		for _, u := range p.usersOf(c) {
			if n := p.nd(u); n.Target == "_operator.getitem" {
				saved = append(saved, u)
				p.sym[u] = isSymValue(n.Val)
				p.why[u] = w
			}
		}
	}
	p.bools.put(mc.bwReq, mc.fwReq, mc.bwOut)
	return saved
}

// dpKnapsack is dp_knapsack (torch/_functorch/_activation_checkpointing/
// knapsack.py): the 0-1 knapsack of items of quantized memory mem and
// value run within capacity, by dynamic programming over the capacity,
// backtracked from the last item; it returns which items are kept.
func dpKnapsack(mem []int64, run []float64, capacity int64) []bool {
	n := len(mem)
	if capacity < 0 {
		capacity = 0
	}
	w := int(capacity) + 1
	dp := make([]float64, (n+1)*w)
	for i := 1; i <= n; i++ {
		prev, cur := dp[(i-1)*w:i*w], dp[i*w:(i+1)*w]
		m := int(mem[i-1])
		for j := range w {
			cur[j] = prev[j]
			if m == 0 {
				cur[j] = prev[j] + run[i-1]
			} else if j >= m {
				cur[j] = max(prev[j], prev[j-m]+run[i-1])
			}
		}
	}
	keep := make([]bool, n)
	j := w - 1
	for i := n; i > 0; i-- {
		if dp[i*w+j] != dp[(i-1)*w+j] {
			keep[i-1] = true
			j -= int(mem[i-1])
		}
	}
	return keep
}

// recomputeCost is estimate_runtime's "flops" estimate of recomputing
// node c: 2·M·N·K of a matrix product, 2 · output elements · input
// channels per group · kernel elements of a convolution, 1 otherwise.
func (p *partitioner) recomputeCost(c int32) float64 {
	n := p.nd(c)
	out := valueTensor(n.Val)
	numel := func(t *ir.TensorMeta) (float64, bool) {
		if t == nil {
			return 0, false
		}
		e := 1.0
		for _, d := range t.Shape {
			if d.Expr != "" {
				return 0, false
			}
			e *= float64(d.Val)
		}
		return e, true
	}
	arg := func(i int) *ir.TensorMeta {
		if i < len(n.Args) && n.Args[i].Kind == ir.ArgNode && n.Args[i].Ref >= 0 && int(n.Args[i].Ref) < len(p.g.Nodes) {
			return valueTensor(p.g.Nodes[n.Args[i].Ref].Val)
		}
		return nil
	}
	oe, ok := numel(out)
	if !ok {
		return 1
	}
	// The contracted dimension: the last of the first matrix operand.
	k := func(t *ir.TensorMeta) float64 {
		if t == nil || len(t.Shape) == 0 || t.Shape[len(t.Shape)-1].Expr != "" {
			return 0
		}
		return float64(t.Shape[len(t.Shape)-1].Val)
	}
	var f float64
	switch opPacket(n.Target) {
	case "aten.mm", "aten.bmm":
		f = 2 * oe * k(arg(0))
	case "aten.addmm", "aten.baddbmm":
		f = 2 * oe * k(arg(1))
	case "aten.convolution":
		if w := arg(1); w != nil && len(w.Shape) >= 2 {
			if we, ok := numel(w); ok && w.Shape[0].Expr == "" && w.Shape[0].Val > 0 {
				f = 2 * oe * we / float64(w.Shape[0].Val) // Cin/groups × kernel
			}
		}
	}
	return max(f, 1)
}
