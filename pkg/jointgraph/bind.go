package jointgraph

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// bindArgs matches a call's positional and keyword arguments to the
// schema's parameters, filling in defaults: the result has one Arg per
// schema argument. Arguments the call omits and the schema gives no default
// are None.
func bindArgs(s *opschema.Schema, args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, error) {
	out := make([]ir.Arg, len(s.Arguments))
	set := make([]bool, len(s.Arguments))
	if len(args) > len(s.Arguments) && !s.IsVararg {
		return nil, fmt.Errorf("%d positional arguments for %s, which takes %d", len(args), s.OpName().Key(), len(s.Arguments))
	}
	for i := range args {
		if i >= len(out) {
			break
		}
		out[i], set[i] = args[i], true
	}
	for _, k := range kwargs {
		i := s.Argument(k.Name)
		if i < 0 {
			return nil, fmt.Errorf("%s has no argument %q", s.OpName().Key(), k.Name)
		}
		out[i], set[i] = k.Value, true
	}
	for i := range out {
		if !set[i] && s.Arguments[i].Default != nil {
			out[i] = defaultArg(s.Arguments[i].Default)
		}
	}
	return out, nil
}

// bindArgsInto is bindArgs reusing out's storage. The result may be args
// itself; it must not be modified.
func bindArgsInto(out []ir.Arg, s *opschema.Schema, args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, error) {
	n := len(s.Arguments)
	if len(args) > n && !s.IsVararg {
		return nil, fmt.Errorf("%d positional arguments for %s, which takes %d", len(args), s.OpName().Key(), n)
	}
	if len(kwargs) == 0 && len(args) == n {
		return args, nil // every parameter given positionally: nothing to fill in
	}
	out = resize(out, n)
	copy(out, args[:min(len(args), n)])
	for _, k := range kwargs {
		i := s.Argument(k.Name)
		if i < 0 {
			return nil, fmt.Errorf("%s has no argument %q", s.OpName().Key(), k.Name)
		}
		out[i] = k.Value
	}
	for i := len(args); i < n; i++ {
		if s.Arguments[i].Default == nil {
			continue
		}
		set := false
		for _, k := range kwargs {
			if k.Name == s.Arguments[i].Name {
				set = true
				break
			}
		}
		if !set {
			out[i] = defaultArg(s.Arguments[i].Default)
		}
	}
	return out, nil
}

func defaultArg(v *opschema.Value) ir.Arg {
	switch v.Kind {
	case opschema.ValueBool:
		return ir.Arg{Kind: ir.ArgBool, B: v.Bool}
	case opschema.ValueInt:
		return ir.Arg{Kind: ir.ArgInt, I: v.Int}
	case opschema.ValueFloat:
		return ir.Arg{Kind: ir.ArgFloat, F: v.Float}
	case opschema.ValueStr, opschema.ValueIdent:
		return ir.Arg{Kind: ir.ArgStr, S: v.Str}
	case opschema.ValueList:
		l := ir.Arg{Kind: ir.ArgList, Elems: make([]ir.Arg, len(v.List))}
		for i := range v.List {
			l.Elems[i] = defaultArg(&v.List[i])
		}
		return l
	}
	return ir.Arg{Kind: ir.ArgNone}
}
