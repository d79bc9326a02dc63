package jointgraph

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestRuleFailures builds the joints of real graphs (make_fx with symbolic
// sizes, torch 2.14; python/tools/make_rulefail.py) whose nodes a rule
// cannot differentiate: each is an input error (*Error, exit 3) naming the
// node and the rule's reason, never an internal error.
func TestRuleFailures(t *testing.T) {
	cases := []struct{ file, node, msg string }{
		// A formula of several gradients failing itself.
		{"cat_symbolic", "cat", "derivative of aten.cat.default: cat over a symbolic dimension"},
		// A formula of one gradient failing itself.
		{"embedding_sparse", "embedding", "derivative of aten.embedding.default: sparse embedding gradients are not supported"},
		// An argument accessor failing (Ctx.Int on a SymInt node).
		{"slice_symbolic", "slice_1", "derivative of aten.slice.Tensor: argument end is not an int"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata/rulefail", tc.file+".pbtxt")
			m, err := ir.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			j, err := Build(m, Options{File: path})
			if err == nil {
				t.Fatalf("joint built (%d nodes); want the rule's failure", len(j.Module.Root().Nodes))
			}
			var bug *ir.InternalError
			if errors.As(err, &bug) {
				t.Fatalf("internal error, want an input error: %v", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T (%v), want *Error", err, err)
			}
			if e.Loc.Node != tc.node || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("error at node %q: %q; want node %q, message containing %q", e.Loc.Node, e.Msg, tc.node, tc.msg)
			}
		})
	}
}

// TestCtxAccessorsFailWithoutPanicking reads arguments a rule cannot use
// (one the schema lacks, a symbolic int, a non-int list element, an output
// the node lacks): each records the first failure and returns a zero value.
func TestCtxAccessorsFailWithoutPanicking(t *testing.T) {
	s, err := opschema.Parse("aten::f(Tensor self, SymInt n, int[2] k, bool b) -> Tensor")
	if err != nil {
		t.Fatal(err)
	}
	sym := ir.SymArg(&ir.SymExpr{Expr: "s0"})
	args := []ir.Arg{{Kind: ir.ArgNone}, sym, ir.WithElems(ir.Arg{Kind: ir.ArgList}, []ir.Arg{ir.IntArg(1), sym}), ir.IntArg(3)}
	reads := []struct {
		name string
		read func(c *Ctx) any
		want string
	}{
		{"missing argument", func(c *Ctx) any { return c.Int("nope") }, `rule reads argument "nope", which aten::f does not have`},
		{"missing argument needs", func(c *Ctx) any { return c.Need("nope") }, `rule reads argument "nope"`},
		{"symbolic int", func(c *Ctx) any { return c.Int("n") }, "argument n is symbolic (s0); this rule needs a concrete int"},
		{"symbolic element", func(c *Ctx) any { return c.Ints("k") }, "argument k has a non-int element"},
		{"not a bool", func(c *Ctx) any { return c.Bool("b") }, "argument b is not a bool"},
		{"missing output", func(c *Ctx) any { return c.Result(2) }, "rule reads output 2 of a node with 1"},
		{"missing gradient", func(c *Ctx) any { return c.GradOrZeros(1) }, "rule reads the gradient of output 1 of a node with 1"},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			c := &Ctx{schema: s, args: args, need: make([]bool, len(args)), results: []V{{}}, grads: []V{{}}}
			r.read(c)
			if !c.Failed() || !strings.Contains(c.err, r.want) {
				t.Errorf("failure %q, want %q", c.err, r.want)
			}
			c.fail("second")
			if strings.Contains(c.err, "second") {
				t.Errorf("a second failure replaced the first: %q", c.err)
			}
		})
	}
}

// TestRuleFailuresAreReturned checks that every call of a fail method in the
// package's code is returned (`return c.fail(...)`) or followed by a return:
// fail records an error and returns, so code after it would run on.
func TestRuleFailuresAreReturned(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			b, ok := n.(*ast.BlockStmt)
			if !ok {
				return true
			}
			for i, st := range b.List {
				es, ok := st.(*ast.ExprStmt)
				if !ok || !isFailCall(es.X) {
					continue
				}
				checked++
				if i+1 >= len(b.List) {
					t.Errorf("%s: fail(...) is not followed by a return", fset.Position(es.Pos()))
					continue
				}
				if _, ok := b.List[i+1].(*ast.ReturnStmt); !ok {
					t.Errorf("%s: fail(...) is not followed by a return", fset.Position(es.Pos()))
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Error("no statement call of fail found: the check checks nothing (is the method renamed?)")
	}
}

func isFailCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "fail"
}
