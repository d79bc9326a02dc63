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
// named as in the HOP's row: the rewrite moves arguments by name, spreads
// the list a variadic operand group "*name" is in the old form, and an old
// argument the current form lacks must hold the value the table says it
// implies, hop.CheckImplied).

// oldForm is one old form of a HOP, resolved against the HOP table.
type oldForm struct {
	old, cur *opschema.Schema
	hop      *opschema.HOP // the HOP's row
	form     *opschema.HOP // the row reading the old form (implied values)
}

// oldForms maps a HOP target to its old forms, the table's. Built on
// first use: it parses every HOP row's schemas, which a command reading
// no torch.export file does not need.
var oldForms = sync.OnceValue(func() map[string][]oldForm {
	out := map[string][]oldForm{}
	for _, h := range opschema.HOPs() {
		for _, form := range h.OlderRows() {
			out[h.Target()] = append(out[h.Target()], oldForm{old: form.ParsedSchema(), cur: h.ParsedSchema(), hop: h, form: form})
		}
	}
	return out
})

// normalizeHOP rewrites a call in one of torch 2.6's forms into the
// current form; other calls are left as they are.
func normalizeHOP(call *ir.Node) error {
	var f *oldForm
	forms := oldForms()[call.Target]
	for i := range forms {
		if g := &forms[i]; hop.Fits(g.old, call) {
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
					args = append(args, arg(grp.Arg[1:]).Elems()...)
				}
			}
		}
	}
	call.Args = args
	return nil
}
