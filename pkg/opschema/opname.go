package opschema

import (
	"fmt"
	"strings"
)

// OpName names one operator overload.
type OpName struct {
	Namespace string // "aten"
	Name      string // "add_"
	Overload  string // "Tensor"; empty for the default overload
}

// DefaultOverload is how targets spell the empty overload name:
// aten::relu is the target aten.relu.default.
const DefaultOverload = "default"

// HigherOrderNamespace is the namespace of higher-order operator targets
// (higher_order.cond).
const HigherOrderNamespace = "higher_order"

// Qualified returns "namespace::name" (or just the name without a namespace).
func (n OpName) Qualified() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "::" + n.Name
}

// Key returns the schema spelling of the overload, "aten::add_.Tensor" or
// "aten::relu": the name torch's schemas, and hopctl's graph files, use.
func (n OpName) Key() string {
	if n.Overload == "" {
		return n.Qualified()
	}
	return n.Qualified() + "." + n.Overload
}

// Target returns hopctl's canonical target spelling, "aten.add_.Tensor" or
// "aten.relu.default". Higher-order operators have no overload:
// "higher_order.cond".
func (n OpName) Target() string {
	var b strings.Builder
	if n.Namespace != "" {
		b.WriteString(n.Namespace)
		b.WriteString(".")
	}
	b.WriteString(n.Name)
	if n.Namespace == HigherOrderNamespace && n.Overload == "" {
		return b.String()
	}
	b.WriteString(".")
	if n.Overload == "" {
		b.WriteString(DefaultOverload)
	} else {
		b.WriteString(n.Overload)
	}
	return b.String()
}

// Compare orders names by namespace, then name, then overload.
func (n OpName) Compare(o OpName) int {
	if c := strings.Compare(n.Namespace, o.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(n.Name, o.Name); c != 0 {
		return c
	}
	return strings.Compare(n.Overload, o.Overload)
}

// String returns n.Key().
func (n OpName) String() string { return n.Key() }

// ParseTarget parses an op target in any of the spellings hopctl meets:
//
//	aten.add_.Tensor, aten.relu.default       canonical target (OpOverload)
//	torch.ops.aten.add_.Tensor                with the torch.ops prefix
//	higher_order.cond                         higher-order operator
//	aten::add_.Tensor, aten::relu             schema spelling
//
// The overload "default" means the empty overload. A two-part dotted name
// other than a higher-order operator (aten.add, an OpOverloadPacket) names no
// single overload and is an error.
func ParseTarget(target string) (OpName, error) {
	t := strings.TrimPrefix(target, "torch.ops.")
	if ns, rest, ok := strings.Cut(t, "::"); ok {
		name, overload, _ := strings.Cut(rest, ".")
		n := OpName{Namespace: ns, Name: name, Overload: overload}
		if !validIdent(ns) || !validIdent(name) || (overload != "" && !validIdent(overload)) {
			return OpName{}, fmt.Errorf("malformed op name %q", target)
		}
		if overload == DefaultOverload {
			n.Overload = ""
		}
		return n, nil
	}
	first, rest, ok1 := strings.Cut(t, ".")
	second, third, ok2 := strings.Cut(rest, ".")
	switch {
	case !ok1 || !validIdent(first) || !validIdent(second) || (ok2 && !validIdent(third)):
		return OpName{}, fmt.Errorf("malformed op target %q (want namespace.name.overload)", target)
	case !ok2 && first == HigherOrderNamespace:
		return OpName{Namespace: first, Name: second}, nil
	case !ok2:
		return OpName{}, fmt.Errorf("op target %q names no overload (want %s.%s.<overload>, e.g. %s.%s.default)",
			target, first, second, first, second)
	}
	n := OpName{Namespace: first, Name: second, Overload: third}
	if n.Overload == DefaultOverload {
		n.Overload = ""
	}
	return n, nil
}

func validIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}
