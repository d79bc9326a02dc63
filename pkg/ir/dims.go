package ir

import (
	"slices"
	"strconv"
	"strings"
)

// Sizes and strides. A Dim is a concrete value or a symbolic expression as
// torch prints it (sympy's spelling: "s0", "3*s0*s1", "s0 + 1"). These are
// the one implementation of comparing, printing and deriving them.

// Concrete returns the dim's value when it is concrete, or an expression
// that is a plain integer ("3").
func (d Dim) Concrete() (int64, bool) {
	if d.Expr == "" {
		return d.Val, true
	}
	v, err := strconv.ParseInt(strings.TrimSpace(d.Expr), 10, 64)
	return v, err == nil
}

// Equal compares concrete values, or expressions as written with spaces
// ignored; an expression that is a plain integer is that integer.
func (d Dim) Equal(o Dim) bool {
	if d.Expr == "" && o.Expr == "" {
		return d.Val == o.Val
	}
	if d.Expr == o.Expr {
		return true
	}
	dv, dok := d.Concrete()
	ov, ook := o.Concrete()
	if dok || ook {
		return dok && ook && dv == ov
	}
	return normExpr(d.Expr) == normExpr(o.Expr)
}

func normExpr(s string) string { return strings.Join(strings.Fields(s), "") }

// DimsEqual reports whether two shapes (or stride lists) are equal dim by
// dim (Dim.Equal).
func DimsEqual(a, b []Dim) bool { return slices.EqualFunc(a, b, Dim.Equal) }

// FormatDim prints a dim: its value, or its expression.
func FormatDim(d Dim) string {
	if d.Expr != "" {
		return d.Expr
	}
	return strconv.FormatInt(d.Val, 10)
}

// JoinDims prints dims separated by ", ": "2, s0, 3".
func JoinDims(ds []Dim) string {
	var b strings.Builder
	joinDims(&b, ds)
	return b.String()
}

// FormatDims prints dims as a list: "[2, s0, 3]", "[]".
func FormatDims(ds []Dim) string {
	var b strings.Builder
	writeDims(&b, ds)
	return b.String()
}

func writeDims(b textSink, ds []Dim) {
	b.WriteByte('[')
	joinDims(b, ds)
	b.WriteByte(']')
}

func joinDims(b textSink, ds []Dim) {
	for i, d := range ds {
		if i > 0 {
			b.WriteString(", ")
		}
		if d.Expr != "" {
			b.WriteString(d.Expr)
		} else {
			b.WriteString(strconv.FormatInt(d.Val, 10))
		}
	}
}

// ContiguousStrides returns the row-major strides of shape. Symbolic
// products are written coefficient first, symbols sorted ("3*s0*s1"), the
// way sympy prints them in the common cases; a compound expression is
// parenthesized ("2*(s0 + 1)").
func ContiguousStrides(shape []Dim) []Dim {
	out := make([]Dim, len(shape))
	coef := int64(1)
	var syms []string
	for i := len(shape) - 1; i >= 0; i-- {
		out[i] = product(coef, syms)
		d := shape[i]
		if v, ok := d.Concrete(); ok {
			coef *= v
			continue
		}
		e := strings.TrimSpace(d.Expr)
		if strings.ContainsAny(e, "+- /") {
			e = "(" + e + ")"
		}
		syms = append(syms, e)
		slices.Sort(syms)
	}
	return out
}

func product(coef int64, syms []string) Dim {
	if len(syms) == 0 || coef == 0 {
		return Dim{Val: coef}
	}
	s := strings.Join(syms, "*")
	if coef != 1 {
		s = strconv.FormatInt(coef, 10) + "*" + s
	}
	return Dim{Expr: s}
}

// IsContiguous reports whether strides are the row-major strides of shape,
// ignoring the strides of size-1 dims (as torch's is_contiguous does).
func IsContiguous(shape, stride []Dim) bool {
	if len(shape) != len(stride) {
		return false
	}
	want := ContiguousStrides(shape)
	for i := range shape {
		if v, ok := shape[i].Concrete(); ok && v == 1 {
			continue
		}
		if !stride[i].Equal(want[i]) {
			return false
		}
	}
	return true
}
