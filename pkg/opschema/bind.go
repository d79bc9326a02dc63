package opschema

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Binding a call to a schema, the way torch binds a call of an OpOverload:
// positional arguments fill the parameters before the bare `*` in order
// (the extra ones of a schema ending in `...` are not bound), keyword
// arguments by name (a keyword given twice: the last wins). This is the one implementation;
// the alias analysis, the joint builder and the schema check all bind
// through it.

// CheckBind reports what makes a call impossible to bind: more positional
// arguments than s takes (unless it ends in `...`), or a keyword argument s
// does not have. It allocates nothing.
func (s *Schema) CheckBind(args []ir.Arg, kwargs []ir.Kwarg) error {
	if !s.IsVararg && s.positionalOf(len(args)) < len(args) {
		return fmt.Errorf("%d positional arguments for %s, which takes %d", len(args), s.OpName().Key(), s.Positional())
	}
	for _, k := range kwargs {
		if s.Argument(k.Name) < 0 {
			return fmt.Errorf("%s has no argument %q", s.OpName().Key(), k.Name)
		}
	}
	return nil
}

// Bind returns, for each parameter of s, the argument the call gives it
// (a pointer into args or kwargs), or nil when it gives none (the
// parameter takes its default). Arguments CheckBind rejects are ignored.
func (s *Schema) Bind(args []ir.Arg, kwargs []ir.Kwarg) []*ir.Arg {
	return s.BindInto(nil, args, kwargs)
}

// BindInto is Bind reusing out's storage (the alias analysis binds every
// call of a graph through one scratch list).
func (s *Schema) BindInto(out []*ir.Arg, args []ir.Arg, kwargs []ir.Kwarg) []*ir.Arg {
	n := len(s.Arguments)
	var bound []*ir.Arg
	if cap(out) < n {
		bound = make([]*ir.Arg, n)
	} else {
		bound = out[:n]
		clear(bound)
	}
	for i := range args[:s.positionalOf(len(args))] {
		bound[i] = &args[i]
	}
	for i := range kwargs {
		if j := s.Argument(kwargs[i].Name); j >= 0 {
			bound[j] = &kwargs[i].Value
		}
	}
	return bound
}

// positionalOf returns how many of n positional arguments s binds:
// min(n, s.Positional()), reading only the first n parameters (the
// keyword-only ones, after the bare `*`, are a suffix).
func (s *Schema) positionalOf(n int) int {
	k := 0
	for k < n && k < len(s.Arguments) && !s.Arguments[k].KwargOnly {
		k++
	}
	return k
}

// BoundAt returns the argument the call gives parameter i of s, or nil when
// it gives none: Bind(args, kwargs)[i] without allocating.
func (s *Schema) BoundAt(args []ir.Arg, kwargs []ir.Kwarg, i int) *ir.Arg {
	name := s.Arguments[i].Name
	for k := len(kwargs) - 1; k >= 0; k-- {
		if kwargs[k].Name == name {
			return &kwargs[k].Value
		}
	}
	if i < len(args) && !s.Arguments[i].KwargOnly {
		return &args[i]
	}
	return nil
}

// BindValues returns one argument per parameter of s, defaults filled in:
// the argument the call gives it, else the parameter's default, else None.
// It fails as CheckBind does. The result is a new slice.
func (s *Schema) BindValues(args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, error) {
	return s.bindValues(make([]ir.Arg, len(s.Arguments)), args, kwargs)
}

// BindValuesInto is BindValues reusing out's storage. When the call gives
// every parameter positionally and nothing else, the result is args
// itself: it must not be modified.
func (s *Schema) BindValuesInto(out []ir.Arg, args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, error) {
	n := len(s.Arguments)
	if !s.IsVararg && s.positionalOf(len(args)) < len(args) {
		return nil, s.CheckBind(args, nil)
	}
	if len(kwargs) == 0 && len(args) == n {
		return args, nil // every parameter given positionally: nothing to fill in
	}
	if cap(out) < n {
		out = make([]ir.Arg, n)
	} else {
		out = out[:n]
		clear(out)
	}
	return s.bindValues(out, args, kwargs)
}

// bindValues fills out (len(s.Arguments) zero Args, which are None).
func (s *Schema) bindValues(out []ir.Arg, args []ir.Arg, kwargs []ir.Kwarg) ([]ir.Arg, error) {
	n, npos := len(s.Arguments), s.positionalOf(len(args))
	if npos < len(args) && !s.IsVararg {
		return nil, s.CheckBind(args, nil)
	}
	copy(out, args[:npos])
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
			out[i] = DefaultArg(s.Arguments[i].Default)
		}
	}
	return out, nil
}

// DefaultArg returns a schema default value as the argument it stands for.
func DefaultArg(v *Value) ir.Arg {
	switch v.Kind {
	case ValueBool:
		return ir.Arg{Kind: ir.ArgBool, B: v.Bool}
	case ValueInt:
		return ir.IntArg(v.Int)
	case ValueFloat:
		return ir.FloatArg(v.Float)
	case ValueStr, ValueIdent:
		return ir.Arg{Kind: ir.ArgStr, S: v.Str}
	case ValueList:
		l := ir.WithElems(ir.Arg{Kind: ir.ArgList}, make([]ir.Arg, len(v.List)))
		for i := range v.List {
			l.Elems()[i] = DefaultArg(&v.List[i])
		}
		return l
	}
	return ir.Arg{Kind: ir.ArgNone}
}
