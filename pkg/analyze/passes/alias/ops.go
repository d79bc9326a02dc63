package alias

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// callOp analyses a call of an op with a schema: written arguments mark
// their storages written, returns that share an alias set with an argument
// share its storage, other returns are fresh.
func (st *state) callOp(id ir.NodeID, target string, args []ir.Arg, kwargs []ir.Kwarg) error {
	n := &st.g.Nodes[id]
	info, ok := st.lookup(target)
	if !ok {
		st.unknown(id, fmt.Sprintf("no schema for %s: its aliasing and writes are unknown", target))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	st.vals[id] = st.applySchema(id, info, args, kwargs, n.Val)
	return nil
}

// opInfo caches what the analysis reads of one op's schema.
type opInfo struct {
	schema  *opschema.Schema
	rets    []opschema.ReturnAlias
	writes  []opschema.ConditionalWrite
	written []int // arguments the schema annotates as written
	// viewOrCopy: the op returns a view of self or a copy, as the
	// recorded layouts say (opschema.ViewOrCopy).
	viewOrCopy opschema.ViewOrCopyKind
}

// opsOf returns the run's memo of opInfo by call target (nil: no
// schema), shared by the graphs of the run: HOP subgraphs call the ops
// their callers call.
func opsOf(pass *analyze.Pass) *ir.TargetMemo[*opInfo] {
	reg := pass.Schemas
	return pass.Shared(func() any {
		return ir.NewTargetMemo(func(target string) *opInfo {
			if reg == nil {
				return nil
			}
			s, _, ok := reg.Lookup(target)
			if !ok {
				return nil
			}
			info := &opInfo{schema: s, rets: s.ReturnAliases(), writes: reg.ConditionalWrites(s), written: s.MutatedArguments(), viewOrCopy: opschema.ViewOrCopy(s)}
			if src := opschema.StorageSource(s); src >= 0 {
				// set_: the result is self on source's storage.
				info.rets = []opschema.ReturnAlias{{Return: 0, Arg: src, Set: "source"}}
			}
			return info
		})
	}).(*ir.TargetMemo[*opInfo])
}

func (st *state) lookup(target string) (*opInfo, bool) {
	info := st.ops.Get(target)
	return info, info != nil
}

func refOf(a *ir.Arg) ir.NodeID {
	if a != nil && a.Kind == ir.ArgNode {
		return a.Ref
	}
	return ir.NoNode
}

// applySchema records the writes of a call of s and returns its result.
func (st *state) applySchema(id ir.NodeID, info *opInfo, args []ir.Arg, kwargs []ir.Kwarg, val *ir.Value) aval {
	s := info.schema
	// One scratch list for the graph's calls: nothing keeps bound past
	// this call.
	st.bound = s.BindInto(st.bound, args, kwargs)
	bound := st.bound
	for _, i := range info.written {
		if bound[i] != nil {
			st.write(id, refOf(bound[i]), st.argVal(bound[i]).storages(), nil, "")
		}
	}
	for _, cw := range info.writes {
		if !conditionHolds(s, bound, cw.ConditionIndex) {
			continue
		}
		for _, j := range cw.Indices {
			if bound[j] != nil {
				st.write(id, refOf(bound[j]), st.argVal(bound[j]).storages(), nil, "")
			}
		}
	}
	// Most ops return one or two values: keep the scratch on the stack.
	var retBuf [4]aval
	var aliasedBuf [4]bool
	rets, aliased := retBuf[:0], aliasedBuf[:0]
	if len(s.Returns) > len(retBuf) {
		rets, aliased = make([]aval, 0, len(s.Returns)), make([]bool, 0, len(s.Returns))
	}
	rets, aliased = rets[:len(s.Returns)], aliased[:len(s.Returns)]
	for _, ra := range info.rets {
		a := bound[ra.Arg]
		if a == nil || info.viewOrCopy != opschema.AlwaysAsSchema && st.recordedCopy(info, bound, a, val) {
			continue
		}
		stor := st.argVal(a).storages()
		if len(stor) == 0 {
			continue
		}
		rets[ra.Return] = storAval(union(rets[ra.Return].stor(), stor))
		aliased[ra.Return] = true
		st.setView(id, refOf(a))
	}
	for ri := range s.Returns {
		r := &s.Returns[ri]
		if !aliased[ri] && r.Alias != nil && r.Alias.IsWildcardBefore() {
			// A return in the wildcard set may alias any argument in it, or
			// any tensor argument when none is marked.
			for i := range s.Arguments {
				if b := bound[i]; b != nil && (s.Arguments[i].Alias == nil || s.Arguments[i].Alias.IsWildcardAfter() || s.Arguments[i].Alias.IsWildcardBefore()) {
					rets[ri] = storAval(union(rets[ri].stor(), st.argVal(b).storages()))
				}
			}
			aliased[ri] = len(rets[ri].stor()) > 0
		}
		if aliased[ri] {
			continue
		}
		var rv *ir.Value
		if val != nil {
			if len(s.Returns) == 1 {
				rv = val
			} else if (val.Kind == ir.ValTuple || val.Kind == ir.ValList) && ri < len(val.Elems) {
				rv = &val.Elems[ri]
			}
		}
		rets[ri] = st.freshFor(rv)
		if r.Type != nil && r.Type.Unwrap().Kind == opschema.KindList && rv == nil {
			rets[ri] = seqOf(nil, true)
		}
	}
	switch len(rets) {
	case 0:
		return aval{}
	case 1:
		return rets[0]
	}
	return seqOf(slices.Clone(rets), false)
}

// recordedCopy reports whether a call that returns a view of self or a copy
// (reshape, contiguous) made a copy, as the recorded layouts of self and of
// the result say; without concrete recorded sizes and strides it did not
// (the schema's alias stands).
//
// contiguous with a memory_format other than the default is left to the
// schema: whether the input is already in that format is not judged.
func (st *state) recordedCopy(info *opInfo, bound []*ir.Arg, self *ir.Arg, val *ir.Value) bool {
	k := info.viewOrCopy
	if k == opschema.ContiguousLike {
		if i := info.schema.Argument("memory_format"); i >= 0 && i < len(bound) && bound[i] != nil &&
			bound[i].Kind == ir.ArgMemoryFormat && strings.TrimPrefix(bound[i].S, "torch.") != "contiguous_format" {
			return false
		}
	}
	out := tensorOf(val)
	if self.Kind != ir.ArgNode || self.Ref < 0 || out == nil {
		return false
	}
	in := tensorOf(st.g.Nodes[self.Ref].Val)
	if in == nil {
		return false
	}
	shape, ok1 := concreteDims(in.Shape)
	stride, ok2 := concreteDims(in.Stride)
	newShape, ok3 := concreteDims(out.Shape)
	if !ok1 || !ok2 || !ok3 || len(shape) != len(stride) {
		return false
	}
	return !k.IsView(shape, stride, newShape)
}

func concreteDims(ds []ir.Dim) ([]int64, bool) {
	out := make([]int64, len(ds))
	for i, d := range ds {
		v, ok := d.Concrete()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// conditionHolds reports whether bool argument j is true in this call (its
// literal value, else its default); j < 0 means the write is unconditional.
// A non-literal value counts as true: the write may happen.
func conditionHolds(s *opschema.Schema, bound []*ir.Arg, j int) bool {
	if j < 0 {
		return true
	}
	if a := bound[j]; a != nil {
		if a.Kind == ir.ArgBool {
			return a.B
		}
		return true
	}
	if d := s.Arguments[j].Default; d != nil {
		return d.String() == "True"
	}
	return false
}

// withEffects analyses with_effects(token, op, *args, **kwargs), whose
// result is (new_token, *op_results).
func (st *state) withEffects(id ir.NodeID, h *opschema.HOP) error {
	n := &st.g.Nodes[id]
	if err := hop.CheckOpArg(h, n); err != nil {
		st.pass.Report(badCall(n, err.Error()))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	opArg := h.ArgIndex(h.Op)
	target := n.Args[opArg].S
	info, ok := st.lookup(target)
	if !ok {
		st.unknown(id, fmt.Sprintf("no schema for %s (called through with_effects): its aliasing and writes are unknown", target))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	var rv *ir.Value
	if n.Val != nil && (n.Val.Kind == ir.ValTuple || n.Val.Kind == ir.ValList) && len(n.Val.Elems) == 2 {
		rv = &n.Val.Elems[1]
	}
	s := info.schema
	res := st.applySchema(id, info, n.Args[opArg+1:], n.Kwargs, rv)
	elems := []aval{st.one(st.newStorage())}
	if sq := res.sq(); sq != nil && len(s.Returns) > 1 {
		elems = append(elems, sq.elems...)
	} else {
		elems = append(elems, res)
	}
	st.vals[id] = seqOf(elems, false)
	return nil
}

func badCall(n *ir.Node, msg string) analyze.Finding {
	return analyze.Finding{Rule: RuleBadHOPCall, Severity: analyze.Error, Node: n.Name, Message: msg}
}
