package opschema

import (
	"slices"
	"strings"
)

// Wildcard is the name of the wildcard alias set, written `*` in schemas
// (Tensor(*), Tensor(a -> *)). A value in the wildcard set may alias any other
// value in it.
const Wildcard = "*"

// AliasInfo is the alias annotation of one argument or return, with the
// semantics of torch's c10::AliasInfo as built by its schema parser.
//
// Set names are given without torch's "alias::" prefix: "a" for Tensor(a),
// [Wildcard] for `*`, and "$0", "$1", ... for the fresh sets the `Tensor!`
// shorthand creates (numbered in order of appearance within one schema).
type AliasInfo struct {
	// BeforeSets are the sets the value is in when the op starts, in the
	// order written, without duplicates. A wildcard ends the list: torch
	// ignores nothing after it but rejects a name following it.
	BeforeSets []string
	// AfterSets are the sets the value is in when the op ends. Without an
	// explicit `->` they equal BeforeSets, except for the `Tensor!`
	// shorthand, whose after set torch leaves empty.
	AfterSets []string
	// IsWrite is set by `!`: the op may write the value.
	IsWrite bool
	// Contained holds the alias info of a container's element: for
	// Tensor(a)[](b) the container's info has BeforeSets [b] and one
	// contained info with BeforeSets [a].
	//
	// When the element is annotated but the container is not (Tensor(a!)[],
	// the foreach ops' `self`), torch 1.13 creates a container info with no
	// sets whose IsWrite is copied from the element, and that is what this
	// parser does: Tensor(a!)[] is written, Tensor(a)[] is not. Parsers
	// older than this generation dropped the element's annotation instead,
	// so they reported no alias info (and is_write false) for Tensor(a!)[].
	Contained []*AliasInfo
}

// IsWildcardBefore reports whether the before sets include the wildcard.
func (a *AliasInfo) IsWildcardBefore() bool {
	return a != nil && slices.Contains(a.BeforeSets, Wildcard)
}

// IsWildcardAfter reports whether the after sets include the wildcard.
func (a *AliasInfo) IsWildcardAfter() bool {
	return a != nil && slices.Contains(a.AfterSets, Wildcard)
}

// isImplicitContainer reports whether a is the set-less container info the
// parser creates for an annotated element of an unannotated list.
func (a *AliasInfo) isImplicitContainer() bool {
	return len(a.BeforeSets) == 0 && len(a.AfterSets) == 0
}

// isFresh reports whether a came from the `!` shorthand.
func (a *AliasInfo) isFresh() bool {
	return len(a.BeforeSets) == 1 && strings.HasPrefix(a.BeforeSets[0], "$") && len(a.AfterSets) == 0 && a.IsWrite
}

// Sets returns every set name a mentions, before and after sets of a and of
// its contained infos, deduplicated, in first-mention order.
func (a *AliasInfo) Sets() []string {
	var out []string
	var walk func(x *AliasInfo, depth int)
	walk = func(x *AliasInfo, depth int) {
		if x == nil || depth > MaxTypeDepth {
			return
		}
		for _, s := range x.BeforeSets {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		for _, s := range x.AfterSets {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		for _, c := range x.Contained {
			walk(c, depth+1)
		}
	}
	walk(a, 0)
	return out
}

// String renders the annotation as torch writes it after a type: "(a!)",
// "(a -> *)", "(a|b)", or "!" for the shorthand.
func (a *AliasInfo) String() string {
	var b strings.Builder
	a.writeAnnotation(&b)
	return b.String()
}

func (a *AliasInfo) writeAnnotation(b *strings.Builder) {
	if a == nil {
		return
	}
	if a.isFresh() {
		b.WriteString("!")
		return
	}
	b.WriteString("(")
	b.WriteString(strings.Join(a.BeforeSets, "|"))
	if a.IsWrite {
		b.WriteString("!")
	}
	if !slices.Equal(a.BeforeSets, a.AfterSets) {
		b.WriteString(" -> ")
		b.WriteString(strings.Join(a.AfterSets, "|"))
	}
	b.WriteString(")")
}
