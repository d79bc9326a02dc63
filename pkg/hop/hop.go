// Package hop decodes higher-order operator (HOP) call sites by the HOP
// convention table (opschema.HOP): one generic decoder turns a call node
// into the subgraphs it runs, the caller values that feed each subgraph
// placeholder, which HOP outputs pass a subgraph output through, and the
// restrictions PyTorch places on each subgraph. The alias analysis,
// the metadata and operand type checks, validation and the joint builder
// all read HOP calls through this package; none of them knows a HOP's
// argument positions.
package hop

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Operand is the caller value that feeds one subgraph placeholder.
type Operand struct {
	// Arg is the caller's argument (usually a node reference); nil when the
	// HOP makes the value itself (flex_attention's score and indices).
	Arg *ir.Arg
	// Sliced is true when the placeholder receives a slice of Arg (scan and
	// map xs): writes to it still write Arg's storage.
	Sliced bool
	// Group is the operand group (opschema.Operands.Arg) Arg belongs to:
	// "carried_inputs", "xs", "*operands"; "" for values the HOP makes.
	Group string
}

// SubgraphCall is one subgraph a HOP call runs.
type SubgraphCall struct {
	Role    string    // the subgraph's argument name (or role): "true_fn", "body_fn", "mask_mod"
	Name    string    // PyTorch's name in its alias/mutation messages: "cond_true", "body_fn", "scan"
	GetAttr ir.NodeID // the get_attr node naming the subgraph
	Graph   string    // the subgraph's qualified name
	// Operands has one entry per subgraph placeholder, in order.
	Operands []Operand
	// Outputs[j] is the subgraph output index HOP output j passes through,
	// or -1 when HOP output j is a fresh tensor (stacked, cloned). Nil means
	// this subgraph's outputs are not HOP outputs (while_loop's cond_fn).
	Outputs []int
	// outputsOfCall: Outputs counts the call's own outputs, not a carry
	// group's (CheckOutputsExist).
	outputsOfCall bool
	// Restrictions are what PyTorch rejects in the subgraph (the table
	// row's, for every torch release; see Forbids).
	Restrictions []opschema.Restriction
}

// Forbids returns the restriction of the given kind that holds for torch
// release version ("" for the newest), or nil.
func (sc *SubgraphCall) Forbids(kind opschema.RestrictionKind, version string) *opschema.Restriction {
	for i := range sc.Restrictions {
		if r := &sc.Restrictions[i]; r.Kind == kind && r.Torch.Holds(version) {
			return r
		}
	}
	return nil
}

// Call is a decoded HOP call site.
type Call struct {
	Op        string        // the HOP's name: "cond", "while_loop", ...
	HOP       *opschema.HOP // its row of the convention table
	Subgraphs []SubgraphCall
}

// Subgraph returns the subgraph call of the given role, or nil.
func (c *Call) Subgraph(role string) *SubgraphCall {
	for i := range c.Subgraphs {
		if c.Subgraphs[i].Role == role {
			return &c.Subgraphs[i]
		}
	}
	return nil
}

// Lookup returns the convention row of a call_function node's target when
// it names a HOP the registry knows (nil reg: the built-in table), in the
// form the call follows: the row of the first older form whose arguments
// the call fits (opschema.HOP.OlderRows, Fits: torch 2.6's scan passes dim
// and reverse, its invoke_subgraph one tuple of operands), else the HOP's
// own.
func Lookup(reg *opschema.Registry, n *ir.Node) (*opschema.HOP, bool) {
	if n.Op != ir.OpCallFunction || !opschema.IsHOPTarget(n.Target) {
		return nil, false
	}
	h, ok := reg.HOP(n.Target)
	if !ok {
		return nil, false
	}
	if len(h.OlderForms) > 0 {
		for _, r := range h.OlderRows() {
			if Fits(r.ParsedSchema(), n) {
				return r, true
			}
		}
	}
	return h, true
}

// Fits reports whether call n follows the (older) calling convention s:
// no keyword arguments, one positional argument per argument of s, and
// those s types int, bool, str or list (optional or not) of that kind — the
// few types by which the older forms differ from the current ones (a list
// may be written as a tuple, as make_fx's traces write 2.6's
// invoke_subgraph operands).
func Fits(s *opschema.Schema, n *ir.Node) bool {
	if s == nil || s.IsVararg || len(n.Kwargs) > 0 || len(n.Args) != len(s.Arguments) {
		return false
	}
	for i, p := range s.Arguments {
		if !fitsKind(p.Type, n.Args[i]) {
			return false
		}
	}
	return true
}

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
		return a.Kind == ir.ArgList || a.Kind == ir.ArgTuple
	}
	return true
}

// Decode decodes node id of g by its row of reg's convention table (nil
// reg: the built-in table), finding subgraphs with graphOf (qualified name
// → graph, nil when there is none). It returns nil, nil for nodes that are
// not calls of a HOP whose subgraphs hopctl analyses (other nodes, HOPs
// with an operator instead of subgraphs, opaque and unknown HOPs), and an
// error naming the HOP and the argument for a call that does not follow
// the convention.
func Decode(reg *opschema.Registry, graphOf func(qualname string) *ir.Graph, g *ir.Graph, id ir.NodeID) (*Call, error) {
	n := &g.Nodes[id]
	h, ok := Lookup(reg, n)
	if !ok || h.Opaque || len(h.Subgraphs) == 0 {
		return nil, nil
	}
	d := decoder{h: h, n: n, g: g, graphOf: graphOf}
	call := &Call{Op: h.Name, HOP: h, Subgraphs: make([]SubgraphCall, 0, len(h.Subgraphs))}
	for i := range h.Subgraphs {
		sc, ok, err := d.subgraph(&h.Subgraphs[i])
		if err != nil {
			return nil, fmt.Errorf("%s call: %w", h.Name, err)
		}
		if ok {
			call.Subgraphs = append(call.Subgraphs, sc)
		}
	}
	return call, nil
}

// DecodeIn is Decode with subgraphs found in module m.
func DecodeIn(reg *opschema.Registry, m *ir.Module, g *ir.Graph, id ir.NodeID) (*Call, error) {
	return Decode(reg, m.Graph, g, id)
}

type decoder struct {
	h       *opschema.HOP
	n       *ir.Node
	g       *ir.Graph
	graphOf func(string) *ir.Graph
}

// arg returns the argument named name, or nil when the call omits it.
func (d *decoder) arg(name string) (*ir.Arg, int) {
	i := d.h.ArgIndex(name)
	if i < 0 || i >= len(d.n.Args) {
		return nil, i
	}
	return &d.n.Args[i], i
}

// subgraph decodes one subgraph of the row; ok is false when an optional
// subgraph is absent.
func (d *decoder) subgraph(sg *opschema.Subgraph) (sc SubgraphCall, ok bool, err error) {
	role := sg.RoleName()
	a, i := d.arg(sg.Arg)
	if sg.Last {
		if elems, isSeq := Seq(a); isSeq && len(elems) > 0 {
			a = &elems[len(elems)-1]
		} else {
			a = nil
		}
	}
	get, q, found := d.subgraphRef(a)
	if !found {
		if sg.Optional {
			return SubgraphCall{}, false, nil
		}
		return SubgraphCall{}, false, fmt.Errorf("argument %d (%s) is not a get_attr of an existing subgraph", i, role)
	}
	sc = SubgraphCall{Role: role, Name: sg.Name, GetAttr: get, Graph: q, Restrictions: sg.Restrictions}
	for _, grp := range sg.Operands {
		if grp.Arg == "" {
			sc.Operands = append(sc.Operands, make([]Operand, grp.Made)...)
			continue
		}
		elems, err := d.group(grp.Arg, grp.Optional, grp.Lenient)
		if err != nil {
			return SubgraphCall{}, false, err
		}
		for k := range elems {
			sc.Operands = append(sc.Operands, Operand{Arg: &elems[k], Sliced: grp.Sliced, Group: grp.Arg})
		}
	}
	if o := sg.Outputs; o != nil {
		k := max(NumOutputs(d.n), 0)
		if d.n.Val != nil && d.n.Val.Kind == ir.ValTensor {
			k = 1 // a call whose value is one tensor (a BaseHOP's subgraph returning one): output 0
		}
		sc.outputsOfCall = o.Count == "" && !o.Fresh
		if o.Count != "" {
			elems, err := d.group(o.Count, false, false)
			if err != nil {
				return SubgraphCall{}, false, err
			}
			k = len(elems)
		}
		sc.Outputs = make([]int, k)
		for j := range sc.Outputs {
			if o.Fresh {
				sc.Outputs[j] = -1
			} else {
				sc.Outputs[j] = j
			}
		}
		if o.RestFresh {
			for j := k; j < NumOutputs(d.n); j++ {
				sc.Outputs = append(sc.Outputs, -1)
			}
		}
	}
	return sc, true, nil
}

// group returns the elements of list argument name, or the variadic
// arguments for "*name".
func (d *decoder) group(name string, optional, lenient bool) ([]ir.Arg, error) {
	i := d.h.ArgIndex(name)
	if len(name) > 0 && name[0] == '*' {
		if i < 0 || i >= len(d.n.Args) {
			return nil, nil
		}
		return d.n.Args[i:], nil
	}
	a, _ := d.arg(name)
	if a == nil && optional {
		return nil, nil
	}
	elems, ok := Seq(a)
	if !ok {
		if lenient {
			return nil, nil
		}
		return nil, fmt.Errorf("argument %d (%s) is not a list or tuple", i, name)
	}
	return elems, nil
}

// subgraphRef resolves an argument naming a subgraph: a reference to a
// get_attr node whose target is an existing graph.
func (d *decoder) subgraphRef(a *ir.Arg) (ir.NodeID, string, bool) {
	if a == nil || a.Kind != ir.ArgNode || a.Ref < 0 || int(a.Ref) >= len(d.g.Nodes) {
		return ir.NoNode, "", false
	}
	ga := &d.g.Nodes[a.Ref]
	if ga.Op != ir.OpGetAttr {
		return ir.NoNode, "", false
	}
	q := ir.Qualify(d.g, ga.Target)
	if d.graphOf(q) == nil {
		return ir.NoNode, "", false
	}
	return a.Ref, q, true
}

// Seq returns the elements of a list or tuple argument.
func Seq(a *ir.Arg) ([]ir.Arg, bool) {
	if a != nil && (a.Kind == ir.ArgList || a.Kind == ir.ArgTuple) {
		return a.Elems(), true
	}
	return nil, false
}

// Arg returns the argument of HOP call n named name in the HOP's schema,
// or nil when the call omits it.
func Arg(h *opschema.HOP, n *ir.Node, name string) *ir.Arg {
	i := h.ArgIndex(name)
	if i < 0 || i >= len(n.Args) || name[0] == '*' {
		return nil
	}
	return &n.Args[i]
}

// Group returns the elements of argument name of HOP call n: a list
// argument's elements, or for "*name" the variadic arguments. ok is false
// when the argument is missing or not a list or tuple.
func Group(h *opschema.HOP, n *ir.Node, name string) (elems []ir.Arg, tuple, ok bool) {
	i := h.ArgIndex(name)
	if name != "" && name[0] == '*' {
		if i < 0 {
			return nil, false, false
		}
		if i >= len(n.Args) {
			return nil, true, true
		}
		return n.Args[i:], true, true
	}
	a := Arg(h, n, name)
	elems, ok = Seq(a)
	return elems, ok && a.Kind == ir.ArgTuple, ok
}

// CallerOperands returns the caller arguments that feed the placeholders
// of the HOP's first subgraph, in placeholder order, without resolving the
// subgraph: the values gradients of a cond, map_impl or scan flow to.
// Groups that are missing or not lists contribute nothing.
func CallerOperands(h *opschema.HOP, n *ir.Node) []ir.Arg {
	if len(h.Subgraphs) == 0 {
		return nil
	}
	var out []ir.Arg
	for _, grp := range h.Subgraphs[0].Operands {
		if grp.Arg == "" {
			continue
		}
		elems, _, _ := Group(h, n, grp.Arg)
		out = append(out, elems...)
	}
	return out
}

// NumOutputs is the number of elements of a node's tuple or list value,
// or -1 when its value is not a sequence.
func NumOutputs(n *ir.Node) int {
	if n.Val != nil && (n.Val.Kind == ir.ValTuple || n.Val.Kind == ir.ValList) {
		return len(n.Val.Elems)
	}
	return -1
}

// CheckOperands checks that the subgraph sc calls takes as many inputs
// (placeholders) as the call passes it.
func CheckOperands(m *ir.Module, sc *SubgraphCall) error {
	callee := m.Graph(sc.Graph)
	if callee == nil {
		return fmt.Errorf("%s subgraph %s does not exist", sc.Role, sc.Graph)
	}
	nph := 0
	for i := range callee.Nodes {
		if callee.Nodes[i].Op == ir.OpPlaceholder {
			nph++
		}
	}
	if nph != len(sc.Operands) {
		return fmt.Errorf("%s subgraph %s takes %d inputs but the call passes %d", sc.Role, sc.Graph, nph, len(sc.Operands))
	}
	return nil
}

// CheckCall checks that node id of g, if it calls subgraphs, matches them:
// a HOP's subgraph arguments are get_attr nodes of existing subgraphs, its
// operand lists are lists, and each subgraph takes as many inputs as the
// call passes; a HOP with an operator argument names an operator there; a
// call_module of a graph submodule passes as many arguments as the graph
// has placeholders. A call that fails these cannot have come from tracing
// and cannot be analysed: the file is invalid. Calls of anything else are
// not judged.
func CheckCall(reg *opschema.Registry, m *ir.Module, g *ir.Graph, id ir.NodeID) error {
	n := &g.Nodes[id]
	if n.Op == ir.OpCallModule {
		q := ir.Qualify(g, n.Target)
		if m.Graph(q) == nil {
			return nil
		}
		sc := SubgraphCall{Role: "module", Graph: q, Operands: make([]Operand, len(n.Args))}
		return CheckOperands(m, &sc)
	}
	h, ok := Lookup(reg, n)
	if !ok {
		// Not a HOP, so not one Decode decodes either.
		return nil
	}
	if h.Op != "" {
		return CheckOpArg(h, n)
	}
	call, err := DecodeIn(reg, m, g, id)
	if err != nil || call == nil {
		return err
	}
	for i := range call.Subgraphs {
		if err := CheckOperands(m, &call.Subgraphs[i]); err != nil {
			return fmt.Errorf("%s call: %w", call.Op, err)
		}
	}
	if err := CheckOutputsExist(m, call); err != nil {
		return fmt.Errorf("%s call: %w", call.Op, err)
	}
	return nil
}

// CheckOutputsExist refuses a call with an output that none of its
// subgraphs returns: tracing makes the call's outputs from its subgraphs'
// (a cond whose branches return nothing cannot have an output 0), so such
// a call was not traced, and joint once wrote such graphs. Subgraphs that
// disagree with each other (one branch returns more) are what torch itself
// reports, a hop-structure finding; outputs counted from a carry group are
// hopmeta's.
func CheckOutputsExist(m *ir.Module, call *Call) error {
	most, judged := -1, false
	var first *SubgraphCall
	for i := range call.Subgraphs {
		sc := &call.Subgraphs[i]
		if !sc.outputsOfCall {
			continue
		}
		callee := m.Graph(sc.Graph)
		if callee == nil {
			continue
		}
		leaves, _ := callee.Outputs()
		if !judged || len(leaves) > most {
			most, first = len(leaves), sc
		}
		judged = true
	}
	if !judged {
		return nil
	}
	for j, k := range first.Outputs {
		if k >= most {
			return fmt.Errorf("output %d of the call is output %d of its subgraphs, but none returns more than %d (%s subgraph %s)", j, k, most, first.Role, first.Graph)
		}
	}
	return nil
}

// CheckOpArg checks that a call of a HOP with an operator argument
// (with_effects, auto_functionalized) passes an operator there.
func CheckOpArg(h *opschema.HOP, n *ir.Node) error {
	i := h.ArgIndex(h.Op)
	if i < 0 || i >= len(n.Args) || n.Args[i].Kind != ir.ArgOp {
		return fmt.Errorf("%s call: argument %d must be the op", h.Name, i)
	}
	return nil
}

// CheckImplied refuses a call n read by h, the row of an older calling
// convention (Lookup), that passes an argument the current form implies
// with another value (torch 2.6's scan over dim 1, or reversed): such a
// call cannot be read as the current form.
func CheckImplied(h *opschema.HOP, n *ir.Node) error {
	imp := h.Implied()
	if len(imp) == 0 {
		return nil
	}
	var odd []string
	for _, p := range h.ParsedSchema().Arguments {
		want, ok := imp[p.Name]
		if !ok {
			continue
		}
		a := Arg(h, n, p.Name)
		got := "?"
		if a != nil {
			switch a.Kind {
			case ir.ArgInt:
				got = strconv.FormatInt(a.Int(), 10)
			case ir.ArgBool:
				got = ir.PyBool(a.B)
			}
		}
		if got != want {
			odd = append(odd, p.Name+"="+got)
		}
	}
	if len(odd) == 0 {
		return nil
	}
	var want []string
	for _, p := range h.ParsedSchema().Arguments {
		if v, ok := imp[p.Name]; ok {
			want = append(want, p.Name+"="+v)
		}
	}
	return fmt.Errorf("%s with %s (an older torch's form): hopctl reads this form only with %s", h.Name, strings.Join(odd, ", "), strings.Join(want, ", "))
}
