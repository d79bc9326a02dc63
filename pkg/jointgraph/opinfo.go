package jointgraph

import (
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// opInfo is everything the passes look up about one call target, looked
// up once per target instead of once per node.
type opInfo struct {
	schema  *opschema.Schema // nil when no registry layer knows the target
	hop     *hopRule
	rule    *Rule
	nonDiff bool

	// Functionalization.
	condWrites []opschema.ConditionalWrite
	muts       []int
	isView     bool
	// inplaceView is an in-place view op's out-of-place overload
	// (functionalOverload), "" for another op.
	inplaceView string

	// gradIdx[g][k] is the schema index of rule.Grads[g].Args[k] (-1 when
	// the schema has no such argument); diffIdx lists the ones >= 0.
	gradIdx [][]int
	diffIdx []int
}

// opCache memoizes opInfo per target for one registry.
type opCache struct {
	reg *opschema.Registry
	m   map[string]*opInfo
}

func newOpCache(reg *opschema.Registry) *opCache {
	return &opCache{reg: reg, m: map[string]*opInfo{}}
}

func (c *opCache) get(target string) *opInfo {
	if in, ok := c.m[target]; ok {
		return in
	}
	in := &opInfo{}
	if s, _, ok := c.reg.Lookup(target); ok {
		in.schema = s
		in.condWrites = opschema.ConditionalWrites(s)
		in.muts = s.MutatedArguments()
		// The unsafe_ split ops return views autograd does not track:
		// differentiate their pieces as fresh tensors, as eager does.
		in.isView = s.IsView() && !opschema.HasAliasCorrection(s)
	}
	in.inplaceView = functionalOverload[target]
	in.hop, _ = lookupHOPRule(c.reg, target)
	in.rule, _ = LookupRule(target)
	in.nonDiff = IsNonDifferentiable(target)
	if in.rule != nil && in.schema != nil {
		in.gradIdx = make([][]int, len(in.rule.Grads))
		for g, gr := range in.rule.Grads {
			in.gradIdx[g] = make([]int, len(gr.Args))
			for k, a := range gr.Args {
				i := in.schema.Argument(a)
				in.gradIdx[g][k] = i
				if i >= 0 {
					in.diffIdx = append(in.diffIdx, i)
				}
			}
		}
	}
	c.m[target] = in
	return in
}

// anyRefIn reports whether a refers to a node marked in set.
func anyRefIn(a *ir.Arg, set []bool) bool {
	if a.Kind == ir.ArgNode {
		return a.Ref >= 0 && set[a.Ref]
	}
	for i := range a.Elems() {
		if anyRefIn(&a.Elems()[i], set) {
			return true
		}
	}
	return false
}
