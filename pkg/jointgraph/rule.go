package jointgraph

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Rule is the derivative rule of one ATen overload, the counterpart of a
// derivatives.yaml entry: which arguments are differentiable, the formula
// giving their gradients from the outputs' gradients, and which outputs
// carry gradient at all.
type Rule struct {
	// Op is the overload's target, "aten.mul.Tensor".
	Op string
	// Grads are the formulas, one per differentiable argument or group of
	// arguments computed together (convolution's input, weight, bias).
	// An argument no formula names gets no gradient.
	Grads []Grad
	// Outputs lists which outputs are differentiable (derivatives.yaml's
	// output_differentiability); nil means every output. Outputs of an
	// integer or bool dtype never are.
	Outputs []bool
}

// Grad is one formula: the gradients of Args, computed together.
type Grad struct {
	Args []string
	// Fn returns one gradient per name in Args (an undefined V for none).
	// For a Tensor[] argument it returns one per list element instead.
	Fn func(c *Ctx) []V
}

// one builds the formula of a single argument.
func one(arg string, f func(c *Ctx) V) Grad {
	return Grad{Args: []string{arg}, Fn: func(c *Ctx) []V {
		// The result is read before the next formula runs (apply):
		// Ctx's own storage, not a slice per call.
		c.one[0] = f(c)
		return c.one[:]
	}}
}

// many builds a formula covering several arguments at once; f returns one
// gradient per argument, in order.
func many(args string, f func(c *Ctx) []V) Grad {
	var names []string
	for _, a := range splitComma(args) {
		names = append(names, a)
	}
	return Grad{Args: names, Fn: f}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			part := s[start:i]
			for len(part) > 0 && part[0] == ' ' {
				part = part[1:]
			}
			for len(part) > 0 && part[len(part)-1] == ' ' {
				part = part[:len(part)-1]
			}
			if part != "" {
				out = append(out, part)
			}
			start = i + 1
		}
	}
	return out
}

// Family is one file of derivative rules.
type Family struct {
	Name  string // "pointwise" for rules_pointwise.go
	Rules []Rule
}

// Families returns the rule families. They live in rules_<family>.go; a
// new family is added here.
func Families() []Family {
	return []Family{
		{"pointwise", pointwiseRules()},
		{"reduction", reductionRules()},
		{"linalg", linalgRules()},
		{"view", viewRules()},
		{"nn", nnRules()},
		{"index", indexRules()},
		{"composite", compositeRules()},
	}
}

// Rules returns every derivative rule, the families concatenated in order.
func Rules() []Rule {
	fams := Families()
	lists := make([][]Rule, len(fams))
	for i, f := range fams {
		lists[i] = f.Rules
	}
	return slices.Concat(lists...) // one allocation, not one per family
}

// NonDiff is an entry of the non-differentiable list.
type NonDiff struct {
	Op     string
	Reason string
}

type ruleSet struct {
	rules   map[string]*Rule
	nondiff map[string]string
	// problems are table defects (a repeated rule); TestRuleTable fails on
	// them. The first rule for an op wins.
	problems []string
}

// builtinRules is built on first use: only joint needs it. The maps point
// into the rules' slice.
var builtinRules = sync.OnceValue(func() *ruleSet {
	rules := Rules()
	rs := &ruleSet{rules: make(map[string]*Rule, len(rules)), nondiff: make(map[string]string, len(nonDifferentiable))}
	for i := range rules {
		r := &rules[i]
		if _, dup := rs.rules[r.Op]; dup {
			rs.problems = append(rs.problems, "two rules for "+r.Op)
			continue
		}
		rs.rules[r.Op] = r
	}
	for _, n := range nonDifferentiable {
		if _, dup := rs.nondiff[n.Op]; dup {
			rs.problems = append(rs.problems, "repeated non-differentiable entry "+n.Op)
		}
		rs.nondiff[n.Op] = n.Reason
	}
	return rs
})

// LookupRule returns the rule for target.
func LookupRule(target string) (*Rule, bool) {
	r, ok := builtinRules().rules[target]
	return r, ok
}

// IsNonDifferentiable reports whether target is in the non-differentiable
// list.
func IsNonDifferentiable(target string) bool {
	_, ok := builtinRules().nondiff[target]
	return ok
}

// RuleTargets returns the targets of every rule, sorted.
func RuleTargets() []string {
	out := make([]string, 0, len(builtinRules().rules))
	for k := range builtinRules().rules {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Ctx is what a formula sees: the forward node's bound arguments and
// results, the gradients of its outputs, which arguments need gradients,
// and the builder that emits backward nodes (tagged with the forward
// node's metadata).
//
// A formula that cannot handle its node says so with
//
//	return c.fail("mean over a symbolic shape")
//
// (for a formula of several gradients: c.fail(...); return nil). fail
// records the first such error on the Ctx and returns an undefined V; the
// walk reports it, naming the node, once the formula returns, and throws
// away what the formula built. The argument accessors (Int, Ints, Float,
// Bool, Arg, Need, Result) record an error the same way when the argument
// is not what the rule needs (a symbolic int where a concrete one is
// needed, an argument the schema lacks) and return a zero value of the
// right shape, so a formula reads its arguments without checking each:
// its result is discarded. Nothing here panics on input; a panic is a bug
// of hopctl (an internal error, exit 4, at Build's one recover).
type Ctx struct {
	*builder
	fwdID   ir.NodeID
	schema  *opschema.Schema
	args    []ir.Arg
	need    []bool
	results []V
	grads   []V
	val     func(ir.NodeID) V
	rg      func(ir.NodeID) bool
	err     string // the first failure, "" while none
	one     [1]V   // the result of a one() formula
}

// needElem reports whether a Tensor[] element needs a gradient.
func (c *Ctx) needElem(v V) bool { return v.ok && c.rg(v.id) }

// fail records that the formula cannot handle its node (the first failure
// wins) and returns an undefined V, for `return c.fail(...)`.
func (c *Ctx) fail(format string, a ...any) V {
	if c.err == "" {
		c.err = fmt.Sprintf(format, a...)
	}
	return V{}
}

// Failed reports whether the formula has failed (its result is discarded).
func (c *Ctx) Failed() bool { return c.err != "" }

// index returns the position of argument name in the schema, or -1 (and
// records a failure) when the schema has none.
func (c *Ctx) index(name string) int {
	i := c.schema.Argument(name)
	if i < 0 || i >= len(c.args) {
		c.fail("rule reads argument %q, which %s does not have", name, c.schema.OpName().Key())
		return -1
	}
	return i
}

// Arg returns the raw bound argument (default filled in).
// An argument the schema lacks reads as None.
func (c *Ctx) Arg(name string) ir.Arg {
	i := c.index(name)
	if i < 0 {
		return ir.Arg{Kind: ir.ArgNone}
	}
	return c.args[i]
}

// In returns argument name as a value: a node (tensor) or a constant.
func (c *Ctx) In(name string) V { return c.argV(c.Arg(name)) }

func (c *Ctx) argV(a ir.Arg) V {
	if a.Kind == ir.ArgNode {
		return c.val(a.Ref)
	}
	if a.Kind == ir.ArgNone {
		return V{}
	}
	return constV(a)
}

// InList returns a Tensor[] argument's elements.
func (c *Ctx) InList(name string) []V {
	a := c.Arg(name)
	out := make([]V, len(a.Elems()))
	for i, e := range a.Elems() {
		out[i] = c.argV(e)
	}
	return out
}

// Has reports whether an optional argument is given (not None).
func (c *Ctx) Has(name string) bool { return c.Arg(name).Kind != ir.ArgNone }

// Need reports whether argument name needs a gradient.
func (c *Ctx) Need(name string) bool {
	i := c.index(name)
	return i >= 0 && c.need[i]
}

// Int returns an int argument.
func (c *Ctx) Int(name string) int64 {
	a := c.Arg(name)
	switch a.Kind {
	case ir.ArgInt:
		return a.Int()
	case ir.ArgBool:
		if a.B {
			return 1
		}
		return 0
	case ir.ArgSym:
		c.fail("argument %s is symbolic (%s); this rule needs a concrete int", name, a.Sym().Expr)
		return 0
	}
	c.fail("argument %s is not an int", name)
	return 0
}

// IntOr returns an optional int argument, or def when it is None.
func (c *Ctx) IntOr(name string, def int64) int64 {
	if !c.Has(name) {
		return def
	}
	return c.Int(name)
}

// Ints returns an int[] argument; a scalar is repeated n times when the
// schema type is a sized list (int[2] stride=1).
func (c *Ctx) Ints(name string) []int64 {
	a := c.Arg(name)
	if a.Kind == ir.ArgInt {
		n := 1
		if t := c.schema.Arguments[c.schema.Argument(name)].Type.Unwrap(); t != nil && t.Sized {
			n = t.N
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = a.Int()
		}
		return out
	}
	if a.Kind == ir.ArgNone {
		return nil
	}
	out := make([]int64, len(a.Elems()))
	for i, e := range a.Elems() {
		if e.Kind != ir.ArgInt {
			c.fail("argument %s has a non-int element", name)
			return out
		}
		out[i] = e.Int()
	}
	return out
}

// Dims returns a SymInt[] argument as dims (symbolic elements kept).
func (c *Ctx) Dims(name string) []ir.Dim {
	a := c.Arg(name)
	out := make([]ir.Dim, len(a.Elems()))
	for i, e := range a.Elems() {
		switch e.Kind {
		case ir.ArgInt:
			out[i] = ir.Dim{Val: e.Int()}
		case ir.ArgSym:
			out[i] = ir.Dim{Expr: e.Sym().Expr}
		default:
			c.fail("argument %s has an element that is not an int", name)
			return out
		}
	}
	return out
}

// Float returns a float (or int) argument.
func (c *Ctx) Float(name string) float64 {
	a := c.Arg(name)
	switch a.Kind {
	case ir.ArgFloat:
		return a.Float()
	case ir.ArgInt:
		return float64(a.Int())
	}
	c.fail("argument %s is not a number", name)
	return 0
}

// Bool returns a bool argument.
func (c *Ctx) Bool(name string) bool {
	a := c.Arg(name)
	if a.Kind != ir.ArgBool {
		c.fail("argument %s is not a bool", name)
		return false
	}
	return a.B
}

// Str returns a str argument ("" for None).
func (c *Ctx) Str(name string) string { return c.Arg(name).S }

// Result returns forward output i (undefined, and a failure, when the node
// has fewer outputs).
func (c *Ctx) Result(i int) V {
	if i < 0 || i >= len(c.results) {
		return c.fail("rule reads output %d of a node with %d", i, len(c.results))
	}
	return c.results[i]
}

// Out returns the forward node's (first) result.
func (c *Ctx) Out() V { return c.Result(0) }

// Grad returns the gradient of the first output (defined whenever a
// single-output formula runs).
func (c *Ctx) Grad() V { return c.gradAt(0) }

func (c *Ctx) gradAt(i int) V {
	if i < 0 || i >= len(c.grads) {
		return c.fail("rule reads the gradient of output %d of a node with %d", i, len(c.grads))
	}
	return c.grads[i]
}

// GradOrZeros returns the gradient of output i, materializing zeros for an
// undefined one.
func (c *Ctx) GradOrZeros(i int) V {
	if g := c.gradAt(i); g.Defined() || c.Failed() {
		return g
	}
	return c.zerosLike(c.Result(i))
}
