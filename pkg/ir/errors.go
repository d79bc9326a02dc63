package ir

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Location names where a problem is: file, graph and node. Empty parts are
// left out of the printed form.
type Location struct {
	File  string
	Graph string // qualified graph name; "" is the root
	Node  string
	// HasGraph distinguishes the root graph ("") from "no graph".
	HasGraph bool
}

func (l Location) String() string {
	var parts []string
	if l.File != "" {
		parts = append(parts, Printable(l.File))
	}
	if l.HasGraph {
		parts = append(parts, "graph "+Abbrev(DisplayName(l.Graph)))
	}
	if l.Node != "" {
		parts = append(parts, "node "+Abbrev(l.Node))
	}
	return strings.Join(parts, ": ")
}

// maxNameInMessage bounds how much of a name a message spells out.
const maxNameInMessage = 240

// Abbrev shortens a name for a message when it is very long (a qualified
// name hundreds of levels deep): its start and end around "…(N bytes)…".
// Names of ordinary length are returned as they are.
//
// Control characters are escaped first (Printable): names come from the
// file and reach terminals.
func Abbrev(name string) string {
	name = Printable(name)
	if len(name) <= maxNameInMessage {
		return name
	}
	head, tail := maxNameInMessage/2, maxNameInMessage/2
	for head > 0 && !utf8.RuneStart(name[head]) {
		head--
	}
	start := len(name) - tail
	for start < len(name) && !utf8.RuneStart(name[start]) {
		start++
	}
	return fmt.Sprintf("%s…(%d bytes)…%s", name[:head], len(name), name[start:])
}

// Printable returns s with every control character (C0, DEL, C1), every
// bidirectional-text override and every invalid UTF-8 byte written as a
// Go escape (\n, \x1b, \u202e), and backslashes doubled only when
// something was escaped. Names and paths come from files and reach
// terminals: unescaped, a node named "a\nhopctl: 0 findings" forges a
// line of output, and one holding "\x1b[2J" clears the screen. Strings
// with nothing to escape are returned as they are.
func Printable(s string) string {
	clean := true
	for i, r := range s {
		if r == utf8.RuneError || needsEscape(r) {
			if r != utf8.RuneError || !validAt(s, i) {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// PrintableLines is Printable of each line of a multi-line text (a
// message and its continuation lines), and a line that would start, after
// its indentation, with "::" has its first colon written \x3a: a log
// that interprets GitHub workflow commands (an Actions step's output)
// takes such a line for one ("::error::…", "::add-mask::…"), and a line
// break inside a name from a file could otherwise put one there.
func PrintableLines(s string) string {
	if !strings.Contains(s, "\n") {
		return guardCommand(Printable(s))
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = guardCommand(Printable(l))
	}
	return strings.Join(lines, "\n")
}

// guardCommand escapes the first colon of a line that starts, after
// spaces and tabs, with "::".
func guardCommand(l string) string {
	t := strings.TrimLeft(l, " \t")
	if !strings.HasPrefix(t, "::") {
		return l
	}
	return l[:len(l)-len(t)] + `\x3a` + t[1:]
}

func validAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError || size > 1
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f
}

// InGraph returns a location in graph g of file.
func InGraph(file, graph string) Location {
	return Location{File: file, Graph: graph, HasGraph: true}
}

// At returns a location at node in graph g of file.
func At(file, graph, node string) Location {
	return Location{File: file, Graph: graph, Node: node, HasGraph: true}
}

// InputError is an error caused by unreadable or invalid input (exit code 3).
// Every error this package returns for bad files satisfies it.
type InputError interface {
	error
	InvalidInput()
}

// DecodeError reports a file that could not be read or decoded.
type DecodeError struct {
	Loc Location
	Err error
}

func (e *DecodeError) Error() string { return e.Loc.String() + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// InvalidInput marks DecodeError as an input error.
func (e *DecodeError) InvalidInput() {}

// Problem is one defect that makes a module invalid input.
type Problem struct {
	Loc  Location
	Msg  string
	Kind ProblemKind
}

// ProblemKind says what kind of defect a Problem is (hopctl lint reports
// each kind as a rule).
type ProblemKind uint8

// Problem kinds. The zero value is ProblemMalformed.
const (
	// ProblemMalformed: a node with an empty name or no op kind, a
	// submodule with an empty name, a module without a root graph,
	// subgraphs nested deeper than MaxNesting, or the "... and N more
	// problems" summary.
	ProblemMalformed     ProblemKind = iota
	ProblemUseBeforeDef              // a node uses a node defined after it
	ProblemDanglingRef               // a reference to no node of the graph
	ProblemDuplicateName             // two nodes, submodules or attributes share a name
	ProblemMissingOutput             // a graph without an output node
	ProblemExtraOutput               // a second output node, or nodes after it
	ProblemCycle                     // a node that uses itself, or a cycle of nodes
	ProblemMissingAttr               // a get_attr or call_module target that does not exist
	ProblemBadShape                  // a negative size, or an element count overflowing int64
	// ProblemCall: a call that does not fit its schema or its subgraphs
	// (package validate); the message ends in the rule id.
	ProblemCall
	// ProblemSchema: an entry of the file's schema table that does not
	// parse, names another op than its schema, or repeats an op with a
	// different schema (package load).
	ProblemSchema
)

func (p Problem) String() string { return p.Loc.String() + ": " + p.Msg }

// VerifyError lists every defect of a module that makes it invalid input:
// those Verify finds, and those later checks of the same kind find (calls
// that do not fit their schemas, package analyze/validate).
type VerifyError struct {
	Problems []Problem
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// InvalidInput marks VerifyError as an input error.
func (e *VerifyError) InvalidInput() {}

// InternalError is a bug in hopctl, not a problem of its input: a panic
// recovered where the work is known (the phase, and the file, graph and
// node being processed), or an output that fails the checks hopctl makes of
// its own work. It is deliberately not an InputError: commands exit 4.
type InternalError struct {
	// Phase names the work that failed: "joint", "partition", "analyzer
	// alias", "verify output".
	Phase string
	// Loc is what was being processed; parts may be empty.
	Loc Location
	// Err is what went wrong (a panic's value, as an error).
	Err error
	// Stack is the stack of the panicking goroutine, nil when the error
	// is not a panic.
	Stack []byte
}

func (e *InternalError) Error() string {
	s := "internal error (a bug in hopctl, please report it)"
	if e.Phase != "" {
		s += " in " + e.Phase
	}
	if loc := e.Loc.String(); loc != "" {
		s += " at " + loc
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns Err. A wrapped InputError does not make an InternalError
// an input error: callers deciding the exit code look for InternalError
// first.
func (e *InternalError) Unwrap() error { return e.Err }

// Panicked makes an InternalError of a value recovered from a panic, with
// the stack of the goroutine that panicked (call it in the deferred
// function that recovers). A value that already is an *InternalError is
// returned as it is: the innermost phase and location are the most precise.
func Panicked(phase string, loc Location, r any) *InternalError {
	if ie, ok := r.(*InternalError); ok {
		return ie
	}
	err, ok := r.(error)
	if !ok {
		err = fmt.Errorf("panic: %v", r)
	} else {
		err = fmt.Errorf("panic: %w", err)
	}
	return &InternalError{Phase: phase, Loc: loc, Err: err, Stack: debug.Stack()}
}
