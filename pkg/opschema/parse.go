package opschema

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxTypeDepth bounds how deeply types may nest (Tensor[][]..., tuples of
// tuples, Optional of Optional, ...). Deeper input is a parse error, not a
// stack overflow.
const MaxTypeDepth = 1000

// maxListSize bounds the fixed size of int[N]; torch stores N as int32.
const maxListSize = math.MaxInt32

// Parse parses one schema in PyTorch's function-schema language:
//
//	[namespace::]name[.overload](arguments) -> returns
//
// where every argument is `Type[alias] name[=default]`, a bare `*` makes the
// following arguments keyword-only, `...` ends a vararg list, and the returns
// are `...`, one return `Type[alias] [name]`, or a parenthesised list of them
// (`()` for none). The alias semantics are torch's; see [AliasInfo].
//
// Parse is a little more permissive than torch 1.13 where newer torch
// accepts more (Await(T), defaults such as -inf, any named-constant default)
// and it checks a default's syntax, not its fit to the argument's type. It
// rejects what torch's FunctionSchema rejects after parsing: a positional
// argument without a default after one with a default (lists excepted, as in
// torch), and the reserved overload name "default".
//
// Errors are [*ParseError]s. Parse never panics.
func Parse(schema string) (*Schema, error) {
	return parseWith(schema, nil)
}

// shared memoizes the parses of parseShared: text → *Schema.
var (
	shared      sync.Map
	sharedCount atomic.Int32
)

// maxShared bounds shared: a process reads a few files, whose tables and
// the built-in lines looked up are a few hundred schemas.
const maxShared = 1 << 14

// parseShared is Parse for the schema tables of registries (files' tables,
// the built-in tables' lines), each text parsed once per process and the
// *Schema shared (schemas are immutable): joint checks every graph it
// writes as it checks its input (package load), and the second registry's
// table repeats the input's entries and the built-in lines the build
// looked up (resnet18: 18 schemas, all parsed before, 1.2 % of the
// command's samples). Errors are not kept.
func parseShared(text string) (*Schema, error) {
	if v, ok := shared.Load(text); ok {
		return v.(*Schema), nil
	}
	if sharedCount.Load() >= maxShared {
		return Parse(text)
	}
	// A copy: text may share the storage of a whole decoded file.
	s, err := Parse(strings.Clone(text))
	if err != nil {
		return nil, err
	}
	if v, loaded := shared.LoadOrStore(s.Text, s); loaded {
		return v.(*Schema), nil
	}
	sharedCount.Add(1)
	return s, nil
}

// parseWith parses schema, tokenizing into buf's storage when it is large
// enough (ParseTable reuses one buffer for all lines).
func parseWith(schema string, buf *[]token) (*Schema, error) {
	p := &parser{src: schema}
	var toks []token
	if buf != nil {
		toks = (*buf)[:0]
	}
	p.toks = lexAll(schema, toks)
	if buf != nil {
		*buf = p.toks
	}
	s, err := p.parseSchema()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// lexAll tokenizes the whole input into toks[:0]; the last token is tokEOF.
func lexAll(src string, toks []token) []token {
	l := lexer{src: src}
	if toks == nil {
		toks = make([]token, 0, len(src)/4+1)
	}
	for {
		t := l.next()
		toks = append(toks, t)
		if t.kind == tokEOF {
			return toks
		}
	}
}

type parser struct {
	src     string
	toks    []token
	i       int // index of the current token
	lastEnd int // byte offset just past the last consumed token
	nextID  int // counter for the fresh sets of the `!` shorthand
}

func (p *parser) cur() token { return p.toks[p.i] }

func (p *parser) peek() token {
	if p.i+1 < len(p.toks) {
		return p.toks[p.i+1]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.lastEnd = t.pos + len(t.text)
		p.i++
	}
	return t
}

func (p *parser) isPunct(c string) bool {
	t := p.cur()
	return t.kind == tokPunct && t.text == c
}

func (p *parser) nextIf(c string) bool {
	if p.isPunct(c) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) errAt(t token, format string, args ...any) *ParseError {
	return newParseError(p.src, t.pos, format, args...)
}

// unexpected reports the current token where something else was wanted.
func (p *parser) unexpected(want string) *ParseError {
	t := p.cur()
	if t.kind == tokBad {
		if t.text != "" && (t.text[0] == '"' || t.text[0] == '\'') {
			return p.errAt(t, "unterminated string literal")
		}
		return p.errAt(t, "%s", t.describe())
	}
	return p.errAt(t, "expected %s but found %s", want, t.describe())
}

func (p *parser) expect(c string) error {
	if p.nextIf(c) {
		return nil
	}
	return p.unexpected("'" + c + "'")
}

func (p *parser) expectIdent(what string) (token, error) {
	if p.cur().kind == tokIdent {
		return p.advance(), nil
	}
	return token{}, p.unexpected(what)
}

func (p *parser) parseSchema() (*Schema, error) {
	s := &Schema{Text: p.src}
	if err := p.parseName(s); err != nil {
		return nil, err
	}
	if !p.isPunct("(") {
		if p.cur().kind == tokEOF {
			return nil, p.errAt(p.cur(), "expected '(' and the argument list after the operator name")
		}
		return nil, p.unexpected("'(' and the argument list")
	}
	p.advance()

	kwargOnly := false
	seenDefault := false
	if !p.isPunct(")") {
		for {
			switch {
			case s.IsVararg:
				return nil, p.errAt(p.cur(), "... must be the last element of the argument list")
			case p.nextIf("*"):
				kwargOnly = true
			case p.cur().kind == tokDots:
				p.advance()
				s.IsVararg = true
			default:
				start := p.cur()
				a, err := p.parseArgument(kwargOnly)
				if err != nil {
					return nil, err
				}
				// torch's FunctionSchema::checkSchema, which exempts lists.
				if a.Default != nil {
					seenDefault = true
				} else if seenDefault && !a.KwargOnly && a.Type.Kind != KindList {
					return nil, p.errAt(start, "non-default positional argument %q follows an argument with a default", a.Name)
				}
				s.Arguments = append(s.Arguments, a)
			}
			if !p.nextIf(",") {
				break
			}
		}
	}
	if !p.nextIf(")") {
		return nil, p.unexpected("',' or ')' in the argument list")
	}

	if p.cur().kind != tokArrow {
		return nil, p.unexpected("'->' and the returns")
	}
	p.advance()

	switch {
	case p.cur().kind == tokDots:
		p.advance()
		s.IsVarret = true
	case p.isPunct("("):
		p.advance()
		if !p.isPunct(")") {
			for {
				switch {
				case s.IsVarret:
					return nil, p.errAt(p.cur(), "... must be the last element of the return list")
				case p.cur().kind == tokDots:
					p.advance()
					s.IsVarret = true
				default:
					r, err := p.parseReturn()
					if err != nil {
						return nil, err
					}
					s.Returns = append(s.Returns, r)
				}
				if !p.nextIf(",") {
					break
				}
			}
		}
		if !p.nextIf(")") {
			return nil, p.unexpected("',' or ')' in the return list")
		}
	default:
		r, err := p.parseReturn()
		if err != nil {
			return nil, err
		}
		s.Returns = append(s.Returns, r)
	}
	if p.cur().kind != tokEOF {
		return nil, p.unexpected("end of schema")
	}
	return s, nil
}

// parseName parses [namespace::]name[.overload].
func (p *parser) parseName(s *Schema) error {
	t, err := p.expectIdent("operator name")
	if err != nil {
		return err
	}
	s.Name = t.text
	if p.nextIf(":") {
		if !p.nextIf(":") {
			return p.unexpected("':' (the namespace separator is '::')")
		}
		t, err := p.expectIdent("operator name after '::'")
		if err != nil {
			return err
		}
		s.Namespace, s.Name = s.Name, t.text
	}
	if p.nextIf(".") {
		t, err := p.expectIdent("overload name after '.'")
		if err != nil {
			return err
		}
		if t.text == DefaultOverload {
			return p.errAt(t, "%q is not a legal overload name: it stands for the empty overload", t.text)
		}
		s.Overload = t.text
	}
	return nil
}

// parseArgument parses `Type[alias] name[=default]`, including the
// argument-level fixed-size list form `T[N][alias][?]`.
func (p *parser) parseArgument(kwargOnly bool) (Argument, error) {
	typ, alias, err := p.parseFullType()
	if err != nil {
		return Argument{}, err
	}
	name, err := p.expectIdent("argument name")
	if err != nil {
		return Argument{}, err
	}
	a := Argument{Name: name.text, Type: typ, Alias: alias, KwargOnly: kwargOnly}
	if p.nextIf("=") {
		v, err := p.parseDefault()
		if err != nil {
			return Argument{}, err
		}
		a.Default = v
	}
	return a, nil
}

// parseReturn parses `Type[alias] [name]`.
func (p *parser) parseReturn() (Return, error) {
	typ, alias, err := p.parseFullType()
	if err != nil {
		return Return{}, err
	}
	r := Return{Type: typ, Alias: alias}
	if p.cur().kind == tokIdent {
		r.Name = p.advance().text
	}
	return r, nil
}

// parseFullType parses a type and the argument-level suffix `[N][alias][?]`
// (a fixed-size list may only appear at argument level, as in torch), and
// records the type's spelling.
func (p *parser) parseFullType() (*Type, *AliasInfo, error) {
	start := p.cur().pos
	typ, alias, err := p.parseType(0)
	if err != nil {
		return nil, nil, err
	}
	if p.isPunct("[") {
		p.advance()
		nt := p.cur()
		if nt.kind != tokNumber {
			return nil, nil, p.unexpected("list size or ']'")
		}
		n, err := strconv.ParseUint(nt.text, 10, 32)
		if err != nil || n > maxListSize {
			return nil, nil, p.errAt(nt, "list size %s is not an integer in [0, %d]", nt.text, maxListSize)
		}
		p.advance()
		if err := p.expect("]"); err != nil {
			return nil, nil, err
		}
		typ = &Type{Kind: KindList, Elem: typ, N: int(n), Sized: true}
		container, err := p.parseAliasAnnotation()
		if err != nil {
			return nil, nil, err
		}
		alias = wrapContainer(container, alias)
		if p.nextIf("?") {
			typ = &Type{Kind: KindOptional, Elem: typ}
		}
	}
	typ.Spelling = p.src[start:p.lastEnd]
	return typ, alias, nil
}

// wrapContainer applies torch's rule for a list whose element carries alias
// info: the element's info becomes a contained type of the container's; an
// unannotated container gets a set-less info whose write flag is the
// element's.
func wrapContainer(container, elem *AliasInfo) *AliasInfo {
	if elem == nil {
		return container
	}
	if container == nil {
		container = &AliasInfo{IsWrite: elem.IsWrite}
	}
	container.Contained = append(container.Contained, elem)
	return container
}

// parseType parses a type with its alias annotation and any `[]` and `?`
// suffixes. depth counts enclosing types.
func (p *parser) parseType(depth int) (*Type, *AliasInfo, error) {
	if depth > MaxTypeDepth {
		return nil, nil, p.errAt(p.cur(), "type nested more than %d levels deep", MaxTypeDepth)
	}
	start := p.cur().pos
	var (
		typ   *Type
		alias *AliasInfo
		err   error
	)
	t := p.cur()
	switch {
	case t.kind == tokPunct && t.text == "(":
		// Tuple. torch drops the members' alias info and reads no
		// annotation after the closing parenthesis.
		p.advance()
		typ = &Type{Kind: KindTuple}
		if !p.isPunct(")") {
			for {
				e, _, err := p.parseType(depth + 1)
				if err != nil {
					return nil, nil, err
				}
				typ.Elems = append(typ.Elems, e)
				if !p.nextIf(",") {
					break
				}
			}
		}
		if !p.nextIf(")") {
			return nil, nil, p.unexpected("',' or ')' in the tuple type")
		}
	case t.kind == tokIdent && (t.text == "Future" || t.text == "RRef" || t.text == "Await"):
		// torch drops the element's alias info and reads no annotation.
		p.advance()
		kind := KindFuture
		if t.text == "RRef" {
			kind = KindRRef
		} else if t.text == "Await" {
			kind = KindAwait
		}
		if err := p.expect("("); err != nil {
			return nil, nil, err
		}
		e, _, err := p.parseType(depth + 1)
		if err != nil {
			return nil, nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, nil, err
		}
		typ = &Type{Kind: kind, Elem: e}
	case t.kind == tokIdent && t.text == "Dict":
		// Dict(K, V)(alias): the key's and value's alias info is dropped.
		p.advance()
		if err := p.expect("("); err != nil {
			return nil, nil, err
		}
		k, _, err := p.parseType(depth + 1)
		if err != nil {
			return nil, nil, err
		}
		if err := p.expect(","); err != nil {
			return nil, nil, err
		}
		v, _, err := p.parseType(depth + 1)
		if err != nil {
			return nil, nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, nil, err
		}
		typ = &Type{Kind: KindDict, Elems: []*Type{k, v}}
		if alias, err = p.parseAliasAnnotation(); err != nil {
			return nil, nil, err
		}
	case t.kind == tokIdent && t.text == "Union":
		p.advance()
		if err := p.expect("("); err != nil {
			return nil, nil, err
		}
		typ = &Type{Kind: KindUnion}
		for {
			e, _, err := p.parseType(depth + 1)
			if err != nil {
				return nil, nil, err
			}
			typ.Elems = append(typ.Elems, e)
			if p.nextIf(")") {
				break
			}
			if !p.nextIf(",") {
				return nil, nil, p.unexpected("',' or ')' in the Union type")
			}
		}
		if alias, err = p.parseAliasAnnotation(); err != nil {
			return nil, nil, err
		}
	case t.kind == tokIdent && t.text == "__torch__":
		// __torch__.torch.classes.NS.Name; torch reads no annotation.
		p.advance()
		name := "__torch__"
		for _, want := range []string{"torch", "classes", "", ""} {
			if err := p.expect("."); err != nil {
				return nil, nil, err
			}
			part, err := p.expectIdent("custom class path __torch__.torch.classes.<namespace>.<class>")
			if err != nil {
				return nil, nil, err
			}
			if want != "" && part.text != want {
				return nil, nil, p.errAt(part, "expected %q in custom class path __torch__.torch.classes.<namespace>.<class> but found %q", want, part.text)
			}
			name += "." + part.text
		}
		typ = &Type{Kind: KindClass, Name: name}
	case t.kind == tokIdent:
		p.advance()
		if k, ok := baseTypes[t.text]; ok {
			typ = &Type{Kind: k}
		} else if c := t.text[0]; 'a' <= c && c <= 'z' {
			// Lower-case identifiers that are no type are type variables.
			typ = &Type{Kind: KindTypeVar, Name: t.text}
		} else {
			return nil, nil, p.errAt(t, "unknown type specifier %q", t.text)
		}
		if alias, err = p.parseAliasAnnotation(); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, p.unexpected("a type")
	}
	typ.Spelling = p.src[start:p.lastEnd]

	for {
		switch {
		case p.isPunct("[") && p.peek().kind == tokPunct && p.peek().text == "]":
			open := p.advance()
			p.advance()
			if depth++; depth > MaxTypeDepth {
				return nil, nil, p.errAt(open, "type nested more than %d levels deep", MaxTypeDepth)
			}
			typ = &Type{Kind: KindList, Elem: typ}
			container, err := p.parseAliasAnnotation()
			if err != nil {
				return nil, nil, err
			}
			alias = wrapContainer(container, alias)
		case p.isPunct("?"):
			q := p.advance()
			if depth++; depth > MaxTypeDepth {
				return nil, nil, p.errAt(q, "type nested more than %d levels deep", MaxTypeDepth)
			}
			typ = &Type{Kind: KindOptional, Elem: typ}
		default:
			return typ, alias, nil
		}
		typ.Spelling = p.src[start:p.lastEnd]
	}
}

// parseAliasAnnotation parses an optional annotation after a type:
//
//	(a)  (a!)  (a|b)  (*)  (a -> *)  (a! -> a|b)  or the shorthand  !
//
// It returns nil when none follows.
func (p *parser) parseAliasAnnotation() (*AliasInfo, error) {
	switch {
	case p.isPunct("("):
		p.advance()
		info := &AliasInfo{}
		before, err := p.parseAliasSets()
		if err != nil {
			return nil, err
		}
		info.BeforeSets = before
		if p.nextIf("!") {
			info.IsWrite = true
		}
		last := before
		if p.cur().kind == tokArrow {
			p.advance()
			after, err := p.parseAliasSets()
			if err != nil {
				return nil, err
			}
			info.AfterSets = after
			last = after
		} else {
			// Without `->` the after sets equal the before sets.
			info.AfterSets = slices.Clone(before)
		}
		if !p.nextIf(")") {
			if p.cur().kind == tokIdent && p.toks[p.i-1].text == "|" && slices.Contains(last, Wildcard) {
				return nil, p.errAt(p.cur(), "alias set %q follows the wildcard '*' (nothing may follow it)", p.cur().text)
			}
			return nil, p.unexpected("'|', '!', '->' or ')' in the alias annotation")
		}
		return info, nil
	case p.isPunct("!"):
		p.advance()
		info := &AliasInfo{BeforeSets: []string{"$" + strconv.Itoa(p.nextID)}, IsWrite: true}
		p.nextID++
		return info, nil
	}
	return nil, nil
}

// parseAliasSets parses `set|set|...` where a set is a name or `*`. As in
// torch, once the wildcard is seen a following name is not consumed (and so
// the annotation fails to close), while another `*` is.
func (p *parser) parseAliasSets() ([]string, error) {
	var sets []string
	add := func(s string) {
		if !slices.Contains(sets, s) {
			sets = append(sets, s)
		}
	}
	for {
		switch {
		case p.nextIf("*"):
			add(Wildcard)
		case slices.Contains(sets, Wildcard):
			// nothing: torch ignores the slot
		case p.cur().kind == tokIdent:
			add(p.advance().text)
		default:
			return nil, p.unexpected("alias set name or '*'")
		}
		if !p.nextIf("|") {
			return sets, nil
		}
	}
}

// parseDefault parses a default value: None, True, False, a number
// (optionally negative), inf, nan, a string literal, a named constant, or a
// flat list of those.
func (p *parser) parseDefault() (*Value, error) {
	start := p.cur().pos
	var v Value
	if p.nextIf("[") {
		v.Kind = ValueList
		v.List = []Value{}
		if !p.isPunct("]") {
			for {
				e, err := p.parseSingleDefault()
				if err != nil {
					return nil, err
				}
				v.List = append(v.List, e)
				if !p.nextIf(",") {
					break
				}
			}
		}
		if !p.nextIf("]") {
			return nil, p.unexpected("',' or ']' in the default list")
		}
	} else {
		e, err := p.parseSingleDefault()
		if err != nil {
			return nil, err
		}
		v = e
	}
	v.Text = p.src[start:p.lastEnd]
	return &v, nil
}

func (p *parser) parseSingleDefault() (Value, error) {
	start := p.cur().pos
	t := p.cur()
	var v Value
	switch t.kind {
	case tokIdent:
		p.advance()
		switch t.text {
		case "None":
			v = Value{Kind: ValueNone}
		case "True", "False":
			v = Value{Kind: ValueBool, Bool: t.text == "True"}
		case "inf":
			v = Value{Kind: ValueFloat, Float: math.Inf(1)}
		case "nan":
			v = Value{Kind: ValueFloat, Float: math.NaN()}
		default:
			v = Value{Kind: ValueIdent, Str: t.text}
		}
	case tokString:
		p.advance()
		s, err := unquote(t.text)
		if err != nil {
			return Value{}, p.errAt(t, "bad string literal: %v", err)
		}
		v = Value{Kind: ValueStr, Str: s}
	case tokNumber:
		p.advance()
		n, err := parseNumber(t.text, false)
		if err != nil {
			return Value{}, p.errAt(t, "%v", err)
		}
		v = n
	case tokPunct:
		if t.text != "-" {
			return Value{}, p.unexpected("a default value")
		}
		p.advance()
		nt := p.cur()
		switch {
		case nt.kind == tokNumber:
			p.advance()
			n, err := parseNumber(nt.text, true)
			if err != nil {
				return Value{}, p.errAt(t, "%v", err)
			}
			v = n
		case nt.kind == tokIdent && nt.text == "inf":
			p.advance()
			v = Value{Kind: ValueFloat, Float: math.Inf(-1)}
		default:
			return Value{}, p.unexpected("a number after '-'")
		}
	default:
		return Value{}, p.unexpected("a default value")
	}
	v.Text = p.src[start:p.lastEnd]
	return v, nil
}

// parseNumber converts a number token: an imaginary literal (2j), a float
// (with '.', or an exponent) or an integer.
func parseNumber(text string, neg bool) (Value, error) {
	sign := ""
	if neg {
		sign = "-"
	}
	switch {
	case strings.HasSuffix(text, "j"):
		f, err := strconv.ParseFloat(sign+strings.TrimSuffix(text, "j"), 64)
		if err != nil {
			return Value{}, errorString("bad complex default " + sign + text)
		}
		return Value{Kind: ValueComplex, Float: f}, nil
	case strings.ContainsAny(text, ".eE"):
		f, err := strconv.ParseFloat(sign+text, 64)
		if err != nil && !isRangeErr(err) {
			return Value{}, errorString("bad float default " + sign + text)
		}
		return Value{Kind: ValueFloat, Float: f}, nil
	default:
		n, err := strconv.ParseInt(sign+text, 10, 64)
		if err != nil {
			return Value{}, errorString("integer default " + sign + text + " is out of range")
		}
		return Value{Kind: ValueInt, Int: n}, nil
	}
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

type errorString string

func (e errorString) Error() string { return string(e) }
