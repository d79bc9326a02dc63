// Package schemacheck is the schema analyzer: every call_function node whose
// target has a schema (the file's table, the built-in ATen table, or
// hopctl's HOP calling conventions) is checked against it the way torch
// binds a call of an OpOverload:
//
//   - schema-arity: more positional arguments than the schema takes (unless
//     it ends in `...`), an unknown keyword argument (unless the HOP takes
//     free keyword arguments), an argument given both positionally and by
//     keyword, a required argument (one without a default) missing;
//   - schema-arg-type: an argument of an obviously wrong kind — a list, a
//     string, a dtype or None where a Tensor is expected, a tensor or list
//     where an int is expected, and so on.
//
// make_fx records Python scalars passed to Tensor parameters
// (aten.add.Tensor(x, 1): "wrapped numbers"), SymInts passed as scalars, and
// 0-dim tensors passed to scalar parameters; those are accepted. A node
// without a recorded value is never judged. Nodes without a schema are left
// to the alias analyzer's unknown-op rule; call_method nodes are not checked
// (their overload is resolved at run time).
package schemacheck

import (
	"fmt"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Rule ids of the findings this analyzer reports.
const (
	RuleArity   = "schema-arity"
	RuleArgType = "schema-arg-type"
)

// Analyzer is the schema analyzer. It has no result.
var Analyzer = &analyze.Analyzer{
	Name: "schemacheck",
	Doc:  "calls whose arguments do not fit the op's schema (arity, keyword names, argument kinds)",
	Rules: []analyze.Rule{
		{ID: RuleArity, Name: "CallDoesNotFitSchema", Severity: analyze.Error, Category: "schema", Invalid: true,
			Short: "call does not fit the op's schema (arity, keyword names)",
			Doc:   "Too many positional arguments, an unknown keyword argument, an argument given twice, or a required argument missing. The file is invalid input.",
			Example: `~~~
add = torch.ops.aten.add.Tensor(x)   # add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)
~~~`,
			Fix: "re-export the graph; the file was edited or written by another tool."},
		{ID: RuleArgType, Name: "ArgumentKindMismatch", Severity: analyze.Error, Category: "schema", Invalid: true,
			Short: "argument of an obviously wrong kind for its schema type",
			Doc:   "A list, string, dtype or None where a Tensor is expected, a tensor or list where an int is expected, and so on. Python scalars passed to Tensor parameters (wrapped numbers, as make_fx records aten.add.Tensor(x, 1)) are accepted. The file is invalid input.",
			Example: `~~~
view = torch.ops.aten.view.default(x, "2, 3")   # a string where int[] is expected
~~~`,
			Fix: "re-export the graph; the file was edited or written by another tool."},
	},
	Run: run,
}

func run(pass *analyze.Pass) (any, error) {
	if pass.Schemas == nil {
		return nil, nil
	}
	g := pass.Graph
	checkNodes(pass, schemasOf(pass), valueClasses(g), pass.Report)
	return nil, nil
}

// checkNodes checks the calls of the pass's graph, giving its findings to
// report.
func checkNodes(pass *analyze.Pass, schemas *ir.TargetMemo[callTarget], cls []argClass, report func(analyze.Finding)) {
	g := pass.Graph
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpCallFunction {
			continue
		}
		t := schemas.Get(n.Target)
		s := t.s
		if s == nil {
			continue
		}
		freeKwargs := false
		if t.hop {
			if h, ok := hop.Lookup(pass.Schemas, n); ok {
				freeKwargs = h.FreeKwargs
				if fs := h.ParsedSchema(); fs != nil && !s.IsVararg && len(n.Args) > s.Positional() {
					s = fs // the older form the call follows (torch 2.6's scan)
				}
			}
		}
		c := &checker{report: report, g: g, cls: cls, n: n, s: s}
		c.arity(freeKwargs)
		c.types()
		if c.dropped > 0 {
			c.reported = 0
			c.reportf(RuleArity, "... and %d more problems with this call", c.dropped)
		}
	}
}

// A callTarget is what the check reads of a call target: its schema (nil:
// none) and whether it names a HOP (hop.Lookup then chooses among its forms
// by the call).
type callTarget struct {
	s   *opschema.Schema
	hop bool
}

// schemasOf returns the run's memo of each call target (callTarget),
// shared by the graphs of the run.
func schemasOf(pass *analyze.Pass) *ir.TargetMemo[callTarget] {
	return pass.Shared(func() any { return newSchemaMemo(pass.Schemas) }).(*ir.TargetMemo[callTarget])
}

// newSchemaMemo returns a memo of each call target in reg.
func newSchemaMemo(reg *opschema.Registry) *ir.TargetMemo[callTarget] {
	return ir.NewTargetMemo(func(target string) callTarget {
		s, _, _ := reg.Lookup(target)
		return callTarget{s: s, hop: opschema.IsHOPTarget(target)}
	})
}

type checker struct {
	report func(analyze.Finding)
	g      *ir.Graph
	cls    []argClass // valueClasses(g)
	n      *ir.Node
	s      *opschema.Schema
	// reported counts the findings of this call, dropped those over
	// maxPerCall: a call with a million bad keyword arguments is one
	// problem, not a million findings of a few hundred bytes each.
	reported, dropped int
}

// maxPerCall bounds the findings reported for one call; a last one says
// how many more there were.
const maxPerCall = 8

func (c *checker) reportf(rule, format string, args ...any) {
	if c.reported >= maxPerCall {
		c.dropped++
		return
	}
	c.reported++
	msg := fmt.Sprintf("%s: %s\nschema: %s", c.n.Target, fmt.Sprintf(format, args...), c.s.String())
	prov := &analyze.Provenance{InputIndex: -1, Node: c.n.Name}
	if c.n.Meta != nil {
		prov.StackTrace = c.n.Meta.StackTrace
	}
	c.report(analyze.Finding{Rule: rule, Severity: analyze.Error, Node: c.n.Name, Message: msg, Provenance: prov})
}

func (c *checker) arity(freeKwargs bool) {
	s, n := c.s, c.n
	npos := s.Positional()
	if len(n.Args) > npos && !s.IsVararg {
		c.reportf(RuleArity, "takes at most %d positional argument%s but %d were given", npos, plural(npos), len(n.Args))
	}
	bound := make([]bool, len(s.Arguments))
	for i := range n.Args {
		if i < npos {
			bound[i] = true
		}
	}
	for _, kw := range n.Kwargs {
		j := s.Argument(kw.Name)
		switch {
		case j < 0:
			if !freeKwargs {
				c.reportf(RuleArity, "unknown keyword argument '%s'", kw.Name)
			}
		case bound[j] && !s.Arguments[j].KwargOnly:
			c.reportf(RuleArity, "argument '%s' given both positionally (#%d) and as a keyword", kw.Name, j)
		default:
			bound[j] = true
		}
	}
	var missing []string
	for j, a := range s.Arguments {
		if !bound[j] && a.Default == nil {
			missing = append(missing, "'"+a.Name+"'")
		}
	}
	if len(missing) > 0 {
		c.reportf(RuleArity, "missing required argument%s %s", plural(len(missing)), strings.Join(missing, ", "))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (c *checker) types() {
	s, n := c.s, c.n
	for j := range s.Arguments {
		a := s.BoundAt(n.Args, n.Kwargs, j) // Bind without allocating
		if a == nil {
			continue
		}
		p := &s.Arguments[j]
		if got, ok := accepts(c.g, c.cls, p.Type, a, 0); !ok {
			c.reportf(RuleArgType, "argument '%s' (%s) got %s", p.Name, p.Type.String(), got)
		}
	}
}

// what describes an argument for messages: "a list", "None", "a tensor".
func what(g *ir.Graph, a *ir.Arg) string {
	switch a.Kind {
	case ir.ArgNone:
		return "None"
	case ir.ArgInt:
		return fmt.Sprintf("an int (%d)", a.Int())
	case ir.ArgFloat:
		return "a float"
	case ir.ArgBool:
		return "a bool"
	case ir.ArgStr:
		return fmt.Sprintf("a string (%q)", a.S)
	case ir.ArgList:
		return "a list"
	case ir.ArgTuple:
		return "a tuple"
	case ir.ArgDtype:
		return "a dtype (" + a.S + ")"
	case ir.ArgDevice:
		return "a device (" + a.S + ")"
	case ir.ArgLayout:
		return "a layout"
	case ir.ArgMemoryFormat:
		return "a memory format"
	case ir.ArgDict:
		return "a dict"
	case ir.ArgOp:
		return "an operator"
	case ir.ArgComplex:
		return "a complex"
	case ir.ArgSlice:
		return "a slice"
	case ir.ArgEllipsis:
		return "Ellipsis"
	case ir.ArgConstant:
		return "a constant (" + a.S + ")"
	case ir.ArgSym:
		return "a symbolic scalar"
	case ir.ArgNode:
		v := nodeVal(g, a)
		desc := "node " + a.S
		switch {
		case v == nil:
			return desc
		case v.Kind == ir.ValTensor:
			return desc + ", a tensor"
		case v.Kind == ir.ValList || v.Kind == ir.ValTuple:
			return desc + ", a list/tuple value"
		case v.Kind == ir.ValNone:
			return desc + ", None"
		case v.Kind == ir.ValOpaque:
			return desc + ", a " + v.S
		}
		return desc + ", a scalar"
	}
	return "an argument"
}

func nodeVal(g *ir.Graph, a *ir.Arg) *ir.Value {
	if a.Ref >= 0 && int(a.Ref) < len(g.Nodes) {
		return g.Nodes[a.Ref].Val
	}
	return nil
}

type argClass uint8

const (
	clsUnknown argClass = iota // cannot tell: accept
	clsTensor
	clsScalarTensor // a 0-dim tensor
	clsInt
	clsFloat
	clsBool
	clsComplex
	clsSym
	clsNone
	clsSeq
	clsStr
	clsDtype
	clsDevice
	clsLayout
	clsMemoryFormat
	clsOther
)

// classify is the class of argument a of a node of g, whose values
// classes are cls (valueClasses; nil: read from the nodes).
func classify(g *ir.Graph, cls []argClass, a *ir.Arg) argClass {
	switch a.Kind {
	case ir.ArgNone:
		return clsNone
	case ir.ArgInt:
		return clsInt
	case ir.ArgFloat:
		return clsFloat
	case ir.ArgBool:
		return clsBool
	case ir.ArgComplex:
		return clsComplex
	case ir.ArgSym:
		return clsSym
	case ir.ArgStr:
		return clsStr
	case ir.ArgList, ir.ArgTuple:
		return clsSeq
	case ir.ArgDtype:
		return clsDtype
	case ir.ArgDevice:
		return clsDevice
	case ir.ArgLayout:
		return clsLayout
	case ir.ArgMemoryFormat:
		return clsMemoryFormat
	case ir.ArgDict, ir.ArgOp, ir.ArgSlice, ir.ArgEllipsis, ir.ArgConstant:
		return clsOther
	case ir.ArgNode:
		if cls == nil {
			return valueClass(nodeVal(g, a))
		}
		if a.Ref >= 0 && int(a.Ref) < len(cls) {
			return cls[a.Ref]
		}
	}
	return clsUnknown
}

// valueClasses is the class of each node's value in g (valueClass), read
// in one pass over the nodes: the arguments a call passes are mostly
// nodes far before it, whose values read from the node itself cost a
// cache miss each in a large graph, where a byte a node stays in cache.
// Nil for a graph of fewer than classNodes nodes.
func valueClasses(g *ir.Graph) []argClass {
	if len(g.Nodes) < classNodes {
		return nil
	}
	cls := make([]argClass, len(g.Nodes))
	for i := range g.Nodes {
		cls[i] = valueClass(g.Nodes[i].Val)
	}
	return cls
}

// classNodes is the size from which valueClasses makes its table: a
// smaller graph's nodes stay in cache, and the table's fresh pages cost
// more than it saves.
var classNodes = 1 << 16 // a variable for the tests

// valueClass is the class of an argument that is a node with value v.
func valueClass(v *ir.Value) argClass {
	if v == nil {
		return clsUnknown
	}
	switch v.Kind {
	case ir.ValTensor:
		if v.Tensor != nil && len(v.Tensor.Shape) == 0 {
			return clsScalarTensor
		}
		return clsTensor
	case ir.ValInt:
		return clsInt
	case ir.ValFloat:
		return clsFloat
	case ir.ValBool:
		return clsBool
	case ir.ValSym:
		return clsSym
	case ir.ValNone:
		return clsNone
	case ir.ValList, ir.ValTuple:
		return clsSeq
	}
	return clsUnknown
}

// accepts reports whether argument a obviously fits type t; when not, got
// describes what was passed.
func accepts(g *ir.Graph, classes []argClass, t *opschema.Type, a *ir.Arg, depth int) (got string, ok bool) {
	if t == nil || depth > 32 {
		return "", true
	}
	cls := classify(g, classes, a)
	if cls == clsUnknown {
		return "", true
	}
	if t.Kind == opschema.KindOptional {
		if cls == clsNone {
			return "", true
		}
		return accepts(g, classes, t.Elem, a, depth+1)
	}
	in := func(cs ...argClass) (string, bool) {
		for _, c := range cs {
			if c == cls {
				return "", true
			}
		}
		return what(g, a), false
	}
	switch t.Kind {
	case opschema.KindTensor:
		// Python scalars are wrapped numbers when passed to a Tensor.
		return in(clsInt, clsFloat, clsBool, clsComplex, clsSym, clsScalarTensor, clsTensor)
	case opschema.KindInt, opschema.KindSymInt:
		return in(clsInt, clsBool, clsSym, clsScalarTensor)
	case opschema.KindFloat, opschema.KindSymFloat:
		return in(clsInt, clsFloat, clsBool, clsSym, clsScalarTensor)
	case opschema.KindBool, opschema.KindSymBool:
		return in(clsInt, clsBool, clsSym, clsScalarTensor)
	case opschema.KindScalar, opschema.KindComplex:
		return in(clsInt, clsFloat, clsBool, clsComplex, clsSym, clsScalarTensor)
	case opschema.KindStr:
		return in(clsStr)
	case opschema.KindScalarType:
		return in(clsDtype, clsInt)
	case opschema.KindLayout:
		return in(clsLayout, clsInt)
	case opschema.KindMemoryFormat:
		return in(clsMemoryFormat, clsInt)
	case opschema.KindDevice:
		return in(clsDevice, clsStr, clsInt)
	case opschema.KindNone:
		return in(clsNone)
	case opschema.KindList:
		if cls == clsSeq {
			if a.Kind != ir.ArgList && a.Kind != ir.ArgTuple {
				return "", true // a node holding a list
			}
			for i := range a.Elems() {
				if got, ok := accepts(g, classes, t.Elem, &a.Elems()[i], depth+1); !ok {
					return fmt.Sprintf("%s (element %d: %s)", what(g, a), i, got), false
				}
			}
			return "", true
		}
		// int[2] x=1 takes a single int, repeated.
		if e := t.Elem.Unwrap(); t.Sized && e != nil && (e.Kind == opschema.KindInt || e.Kind == opschema.KindSymInt) {
			return in(clsInt, clsSym)
		}
		return what(g, a), false
	}
	return "", true
}
