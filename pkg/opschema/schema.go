package opschema

import (
	"slices"
	"strings"
)

// Schema is a parsed operator schema. Schemas returned by a [Registry] or
// [BuiltinTable] are shared: treat them as read-only.
type Schema struct {
	Namespace string // "aten"; empty when the schema names no namespace
	Name      string // "add_": the operator's name without namespace or overload
	Overload  string // "Tensor"; empty for the default overload

	Arguments []Argument
	Returns   []Return
	IsVararg  bool // the argument list ends with `...`
	IsVarret  bool // the return list ends with (or is) `...`

	// Text is the schema string Parse was given.
	Text string
}

// Argument is one parameter of a schema.
type Argument struct {
	Name string
	Type *Type
	// Alias is the argument's alias annotation, nil when it has none.
	Alias *AliasInfo
	// Default is the default value, nil when the argument has none.
	Default *Value
	// KwargOnly is set for arguments after a bare `*`.
	KwargOnly bool
}

// Return is one return slot of a schema. `-> (Tensor, Tensor)` has two.
type Return struct {
	Name  string // the optional field name (`-> Tensor(a!) out`), else ""
	Type  *Type
	Alias *AliasInfo // nil when the return has no annotation
}

// IsWrite reports whether the op may write the argument: it carries an alias
// annotation with `!`. This is torch's Argument.is_write (and
// FunctionSchema::is_mutable(arg)); for a list it is the container's flag,
// which for an unannotated container is copied from the element (see
// [AliasInfo.Contained]).
func (a *Argument) IsWrite() bool { return a.Alias != nil && a.Alias.IsWrite }

// IsOut reports whether the argument is an out= argument: keyword-only and
// written. This is torch's Argument.is_out.
func (a *Argument) IsOut() bool { return a.KwargOnly && a.IsWrite() }

// IsWrite reports whether the return carries a write annotation, as the
// returns of in-place and out= ops do (`-> Tensor(a!)`).
func (r *Return) IsWrite() bool { return r.Alias != nil && r.Alias.IsWrite }

// Positional returns the number of parameters a call may give
// positionally: those before the bare `*`.
func (s *Schema) Positional() int {
	k := 0
	for _, a := range s.Arguments {
		if !a.KwargOnly {
			k++
		}
	}
	return k
}

// OpName returns the schema's operator name.
func (s *Schema) OpName() OpName {
	return OpName{Namespace: s.Namespace, Name: s.Name, Overload: s.Overload}
}

// QualifiedName returns "namespace::name", e.g. "aten::add_".
func (s *Schema) QualifiedName() string { return s.OpName().Qualified() }

// Target returns hopctl's canonical spelling of the op, e.g.
// "aten.add_.Tensor" or "aten.relu.default".
func (s *Schema) Target() string { return s.OpName().Target() }

// Argument returns the index of the argument with the given name, or -1.
func (s *Schema) Argument(name string) int {
	for i := range s.Arguments {
		if s.Arguments[i].Name == name {
			return i
		}
	}
	return -1
}

// IsMutable reports whether the op may write any argument, as torch's
// FunctionSchema.is_mutable does.
func (s *Schema) IsMutable() bool {
	for i := range s.Arguments {
		if s.Arguments[i].IsWrite() {
			return true
		}
	}
	return false
}

// MutatedArguments returns the indices of the arguments the op may write, in
// order.
func (s *Schema) MutatedArguments() []int {
	var out []int
	for i := range s.Arguments {
		if s.Arguments[i].IsWrite() {
			out = append(out, i)
		}
	}
	return out
}

// IsOut reports whether the op is an out= variant: it has a keyword-only
// written argument (torchgen's SchemaKind.out).
func (s *Schema) IsOut() bool {
	for i := range s.Arguments {
		if s.Arguments[i].IsOut() {
			return true
		}
	}
	return false
}

// IsInplace reports whether the op is an in-place variant: its name ends in
// "_" (or is an in-place dunder such as __iadd__) and it writes its first,
// positional argument (add_, relu_, _foreach_add_).
func (s *Schema) IsInplace() bool {
	if len(s.Arguments) == 0 || !s.Arguments[0].IsWrite() || s.Arguments[0].KwargOnly {
		return false
	}
	n := s.Name
	if strings.HasPrefix(n, "__") && strings.HasSuffix(n, "__") {
		return strings.HasPrefix(n, "__i") && len(n) > 5
	}
	return strings.HasSuffix(n, "_")
}

// ReturnAlias says that a return may share storage with an argument because
// both mention the same alias set.
type ReturnAlias struct {
	Return int    // index into Schema.Returns
	Arg    int    // index into Schema.Arguments
	Set    string // the shared set, e.g. "a"
	// Contained is set when the return shares the set through its
	// elements (chunk's `-> Tensor(a)[]`), not as a whole.
	Contained bool
	// Write is set when the return is write-annotated: the op returns the
	// argument it wrote (in-place and out= ops), rather than a view.
	Write bool
}

// ReturnAliases lists every (return, argument) pair that share a named alias
// set, ordered by return, then argument, then set. The wildcard and the fresh
// sets of the `!` shorthand are not named sets and pair nothing: a return in
// the wildcard set (`-> t(*)`) may alias anything and must be treated
// conservatively by the caller.
//
// transpose(Tensor(a) self, ...) -> Tensor(a) gives {0, 0, "a"} (a view);
// add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!) gives {0, 0, "a", Write};
// chunk(Tensor(a -> *) self, ...) -> Tensor(a)[] gives {0, 0, "a", Contained}.
func (s *Schema) ReturnAliases() []ReturnAlias {
	var out []ReturnAlias
	for ri := range s.Returns {
		r := &s.Returns[ri]
		if r.Alias == nil {
			continue
		}
		top := namedSets(r.Alias.BeforeSets, nil)
		var inner []string
		for _, c := range r.Alias.Contained {
			inner = namedSets(c.Sets(), inner)
		}
		for ai := range s.Arguments {
			a := &s.Arguments[ai]
			if a.Alias == nil {
				continue
			}
			argSets := namedSets(a.Alias.Sets(), nil)
			for _, set := range argSets {
				switch {
				case slices.Contains(top, set):
					out = append(out, ReturnAlias{Return: ri, Arg: ai, Set: set, Write: r.IsWrite()})
				case slices.Contains(inner, set):
					out = append(out, ReturnAlias{Return: ri, Arg: ai, Set: set, Contained: true, Write: r.IsWrite()})
				}
			}
		}
	}
	return out
}

// namedSets appends to dst the sets of src that are named (not the wildcard,
// not a fresh `$n` set) and not yet in dst.
func namedSets(src, dst []string) []string {
	for _, s := range src {
		if s == Wildcard || strings.HasPrefix(s, "$") || slices.Contains(dst, s) {
			continue
		}
		dst = append(dst, s)
	}
	return dst
}

// AliasedArguments returns the indices of the arguments return ret may alias
// through a named set, in order.
func (s *Schema) AliasedArguments(ret int) []int {
	var out []int
	for _, ra := range s.ReturnAliases() {
		if ra.Return == ret && !slices.Contains(out, ra.Arg) {
			out = append(out, ra.Arg)
		}
	}
	return out
}

// IsView reports whether the op returns a view of an argument: some return
// shares a named alias set with an argument and no argument is written
// (transpose, view, chunk, split). In-place and out= ops, which return the
// argument they wrote, are not views.
func (s *Schema) IsView() bool {
	if s.IsMutable() {
		return false
	}
	return len(s.ReturnAliases()) > 0
}

// String renders the schema in torch's printed form, e.g.
// "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)".
// Parsing the result gives an equal schema, up to the numbering of the `!`
// shorthand's fresh sets (annotations inside tuple, Future and Dict members,
// which torch drops, are not printed, yet consumed a number); for a schema
// torch printed, the result is the same text.
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteString(s.OpName().Key())
	b.WriteString("(")
	kw := false
	for i := range s.Arguments {
		if i > 0 {
			b.WriteString(", ")
		}
		a := &s.Arguments[i]
		if a.KwargOnly && !kw {
			b.WriteString("*, ")
			kw = true
		}
		a.Type.write(&b, a.Alias)
		b.WriteString(" ")
		b.WriteString(a.Name)
		if a.Default != nil {
			b.WriteString("=")
			b.WriteString(a.Default.String())
		}
	}
	if s.IsVararg {
		if len(s.Arguments) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteString(") -> ")
	switch {
	case len(s.Returns) == 0 && s.IsVarret:
		b.WriteString("...")
	case len(s.Returns) == 1 && !s.IsVarret:
		// Like torch, parenthesise a lone return that starts with '('
		// (a tuple, or a list of tuples) so that it does not read as a
		// return list.
		var r strings.Builder
		s.Returns[0].write(&r)
		if strings.HasPrefix(r.String(), "(") {
			b.WriteString("(" + r.String() + ")")
		} else {
			b.WriteString(r.String())
		}
	default:
		b.WriteString("(")
		for i := range s.Returns {
			if i > 0 {
				b.WriteString(", ")
			}
			s.Returns[i].write(&b)
		}
		if s.IsVarret {
			b.WriteString(", ...")
		}
		b.WriteString(")")
	}
	return b.String()
}

func (r *Return) write(b *strings.Builder) {
	r.Type.write(b, r.Alias)
	if r.Name != "" {
		b.WriteString(" ")
		b.WriteString(r.Name)
	}
}
