package jointgraph

import (
	"github.com/hopctl/hopctl/pkg/ir"
)

// Error is a failure to build a joint graph that the input graph causes:
// an op without a derivative rule, a mutation functionalization cannot
// express, a formula that cannot handle its node's arguments. It implements
// ir.InputError (exit code 3).
type Error struct {
	Loc ir.Location
	// Op is the node's target, "" when the error is not about one op.
	Op string
	// Node is the node's one-line canonical form, "" when there is none.
	Node string
	Msg  string
}

func (e *Error) Error() string {
	s := e.Loc.String() + ": " + e.Msg
	if e.Node != "" {
		s += "\n  " + e.Node
	}
	return s
}

// InvalidInput marks Error as an input error.
func (e *Error) InvalidInput() {}

var _ ir.InputError = (*Error)(nil)

func nodeError(file string, g *ir.Graph, id ir.NodeID, msg string) *Error {
	n := &g.Nodes[id]
	e := &Error{Loc: ir.At(file, g.Name, n.Name), Msg: msg, Node: ir.FormatNode(g, id)}
	if n.Op == ir.OpCallFunction {
		e.Op = n.Target
	}
	return e
}
