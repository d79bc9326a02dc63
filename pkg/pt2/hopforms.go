package pt2

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Torch 2.6's HOP calling conventions that current torch changed. An
// archive of torch 2.6 (schema 8.2) records these calls in the old form;
// normalizeHOP rewrites them into the current one, which the HOP table
// (pkg/opschema/hops.go) describes, so that one analysis serves both. Each
// old form is a schema whose arguments are named as in the HOP's row: the
// rewrite moves arguments by name, and an old argument the current form
// lacks must hold its one admissible value (keep).
var torch26Forms = []struct {
	hop    string // the HOP's row in the table
	schema string // torch 2.6's form
	// keep refuses a call whose old-only arguments the current form cannot
	// express; nil when there are none.
	keep func(arg func(name string) ir.Arg) error
}{
	// invoke_subgraph(subgraph, identifier, [operands]): the current form
	// spreads the operands (torch/_higher_order_ops/invoke_subgraph.py).
	{hop: "invoke_subgraph", schema: "higher_order::invoke_subgraph(Any subgraph, str? identifier, Any[] operands) -> ..."},
	// scan(combine_fn, init, xs, dim, reverse, additional_inputs): current
	// torch moved dim and reverse out of the HOP into its caller's permute
	// and flip (torch/_higher_order_ops/scan.py), so only dim 0 and
	// reverse False have a current form.
	{hop: "scan", schema: "higher_order::scan(Any combine_fn, Any init, Any xs, int dim, bool reverse, Any additional_inputs) -> ...",
		keep: func(arg func(string) ir.Arg) error {
			if dim, rev := arg("dim"), arg("reverse"); dim.I != 0 || rev.B {
				return fmt.Errorf("scan over dim %d with reverse=%s (torch 2.6's form): hopctl reads this form only for dim 0, reverse False", dim.I, ir.PyBool(rev.B))
			}
			return nil
		}},
}

// oldForm is one entry of torch26Forms, resolved against the HOP table.
type oldForm struct {
	old, cur *opschema.Schema
	hop      *opschema.HOP
	keep     func(arg func(name string) ir.Arg) error
}

// oldForms maps a HOP target to its old form.
var oldForms = func() map[string]oldForm {
	out := map[string]oldForm{}
	for _, f := range torch26Forms {
		h, ok := opschema.LookupHOP(f.hop)
		if !ok {
			panic("pt2: torch 2.6 form of " + f.hop + ", which the HOP table lacks")
		}
		s, err := opschema.Parse(f.schema)
		if err != nil {
			panic("pt2: torch 2.6 form of " + f.hop + ": " + err.Error())
		}
		out[h.Target()] = oldForm{old: s, cur: h.ParsedSchema(), hop: h, keep: f.keep}
	}
	return out
}()

// normalizeHOP rewrites a call in one of torch 2.6's forms into the
// current form; other calls are left as they are.
func normalizeHOP(call *ir.Node) error {
	f, ok := oldForms[call.Target]
	if !ok || len(call.Kwargs) > 0 || len(call.Args) != len(f.old.Arguments) {
		return nil
	}
	for i, p := range f.old.Arguments {
		if !fitsKind(p.Type, call.Args[i]) {
			return nil // the current form, or one hopctl's checks refuse
		}
	}
	arg := func(name string) ir.Arg { return call.Args[f.old.Argument(name)] }
	if f.keep != nil {
		if err := f.keep(arg); err != nil {
			return err
		}
	}
	var args []ir.Arg
	for _, p := range f.cur.Arguments {
		if p.KwargOnly {
			break // keyword-only arguments of the current form take their defaults
		}
		args = append(args, arg(p.Name))
	}
	if f.cur.IsVararg {
		// The variadic operands are the old form's list argument named as
		// the row's "*name" operand group.
		for _, sg := range f.hop.Subgraphs {
			for _, grp := range sg.Operands {
				if len(grp.Arg) > 1 && grp.Arg[0] == '*' {
					args = append(args, arg(grp.Arg[1:]).Elems...)
				}
			}
		}
	}
	call.Args = args
	return nil
}

// fitsKind reports whether a matches the few schema types the old forms
// use to tell themselves apart from the current ones.
func fitsKind(t *opschema.Type, a ir.Arg) bool {
	if t.Kind == opschema.KindOptional {
		if a.Kind == ir.ArgNone {
			return true
		}
		t = t.Elem
	}
	switch t.Kind {
	case opschema.KindInt:
		return a.Kind == ir.ArgInt
	case opschema.KindBool:
		return a.Kind == ir.ArgBool
	case opschema.KindStr:
		return a.Kind == ir.ArgStr
	case opschema.KindList:
		return a.Kind == ir.ArgList
	}
	return true
}
