package pt2

import (
	"sync"

	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Older HOP calling conventions that current torch changed. An archive of
// torch 2.6 (schema 8.2) records these calls in the old form; normalizeHOP
// rewrites them into the current one, which the HOP table
// (pkg/opschema/hops.go) describes, so that one analysis serves both. The
// old forms are the table's (opschema.HOP.OlderForms, whose arguments are
// named as in the HOP's row: the rewrite moves arguments by name, and an
// old argument the current form lacks must hold the value the table says
// it implies, hop.CheckImplied), plus listForms.
//
// listForms are the old forms the table cannot hold because the current
// form spreads a list into variadic arguments, which only this rewrite
// undoes: invoke_subgraph(subgraph, identifier, [operands]) in torch 2.6,
// spread in current torch (torch/_higher_order_ops/invoke_subgraph.py).
var listForms = []struct{ hop, schema string }{
	{hop: "invoke_subgraph", schema: "higher_order::invoke_subgraph(Any subgraph, str? identifier, Any[] operands) -> ..."},
}

// oldForm is one old form of a HOP, resolved against the HOP table.
type oldForm struct {
	old, cur *opschema.Schema
	hop      *opschema.HOP // the HOP's row
	form     *opschema.HOP // the row reading the old form (implied values)
}

// oldForms maps a HOP target to its old forms: the table's, then
// listForms. Built on first use (it parses every HOP row's schemas, 0.1 ms
// that a command reading no torch.export file must not pay at start).
var oldForms = sync.OnceValue(func() map[string][]oldForm {
	out := map[string][]oldForm{}
	add := func(h *opschema.HOP, schema string) {
		s, err := opschema.Parse(schema)
		if err != nil {
			panic("pt2: old form of " + h.Name + ": " + err.Error())
		}
		form := h.FormFor(s.Positional())
		if form.Schema != schema {
			form = h
		}
		out[h.Target()] = append(out[h.Target()], oldForm{old: s, cur: h.ParsedSchema(), hop: h, form: form})
	}
	for _, h := range opschema.HOPs() {
		for _, f := range h.OlderForms {
			add(h, f.Schema)
		}
	}
	for _, f := range listForms {
		h, ok := opschema.LookupHOP(f.hop)
		if !ok {
			panic("pt2: torch 2.6 form of " + f.hop + ", which the HOP table lacks")
		}
		add(h, f.schema)
	}
	return out
})

// normalizeHOP rewrites a call in one of torch 2.6's forms into the
// current form; other calls are left as they are.
func normalizeHOP(call *ir.Node) error {
	if len(call.Kwargs) > 0 {
		return nil
	}
	var f *oldForm
	forms := oldForms()[call.Target]
	for i := range forms {
		if g := &forms[i]; fits(g.old, call) {
			f = g
			break
		}
	}
	if f == nil {
		return nil // the current form, or one hopctl's checks refuse
	}
	if err := hop.CheckImplied(f.form, call); err != nil {
		return err
	}
	arg := func(name string) ir.Arg { return call.Args[f.old.Argument(name)] }
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

// fits reports whether call's arguments are those of the old form s.
func fits(s *opschema.Schema, call *ir.Node) bool {
	if len(call.Args) != len(s.Arguments) {
		return false
	}
	for i, p := range s.Arguments {
		if !fitsKind(p.Type, call.Args[i]) {
			return false
		}
	}
	return true
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
