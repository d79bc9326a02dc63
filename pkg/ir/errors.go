package ir

import (
	"fmt"
	"strings"
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
		parts = append(parts, l.File)
	}
	if l.HasGraph {
		parts = append(parts, fmt.Sprintf("graph %s", DisplayName(l.Graph)))
	}
	if l.Node != "" {
		parts = append(parts, fmt.Sprintf("node %s", l.Node))
	}
	return strings.Join(parts, ": ")
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

// Problem is one structural defect found by Verify.
type Problem struct {
	Loc Location
	Msg string
}

func (p Problem) String() string { return p.Loc.String() + ": " + p.Msg }

// VerifyError lists every structural defect of a module.
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
