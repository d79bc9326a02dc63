package ir

import "testing"

func TestContiguousStrides(t *testing.T) {
	d := func(v int64) Dim { return Dim{Val: v} }
	s := func(e string) Dim { return Dim{Expr: e} }
	for _, tt := range []struct {
		shape []Dim
		want  string
	}{
		{nil, "[]"},
		{[]Dim{d(5)}, "[1]"},
		{[]Dim{d(2), d(3), d(4)}, "[12, 4, 1]"},
		{[]Dim{s("s0"), d(3), s("s1")}, "[3*s1, s1, 1]"},
		{[]Dim{d(2), s("s1"), s("s0")}, "[s0*s1, s0, 1]"},
		{[]Dim{d(2), s("s0 + 1"), d(1)}, "[(s0 + 1), 1, 1]"},
		{[]Dim{s("s0"), s("4"), d(2)}, "[8, 2, 1]"},
		{[]Dim{s("s0"), d(0), d(2)}, "[0, 2, 1]"},
	} {
		if got := FormatDims(ContiguousStrides(tt.shape)); got != tt.want {
			t.Errorf("ContiguousStrides(%v) = %s, want %s", tt.shape, got, tt.want)
		}
	}
}

func TestDimEqual(t *testing.T) {
	for _, tt := range []struct {
		a, b Dim
		want bool
	}{
		{Dim{Val: 3}, Dim{Val: 3}, true},
		{Dim{Val: 3}, Dim{Val: 4}, false},
		{Dim{Val: 3}, Dim{Expr: " 3"}, true},
		{Dim{Val: 3}, Dim{Expr: "s0"}, false},
		{Dim{Expr: "3*s0"}, Dim{Expr: "3 * s0"}, true},
		{Dim{Expr: "3*s0"}, Dim{Expr: "3*s1"}, false},
		{Dim{Expr: "s0"}, Dim{Val: 0}, false},
	} {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%v.Equal(%v) = %v", tt.a, tt.b, got)
		}
		if got := tt.b.Equal(tt.a); got != tt.want {
			t.Errorf("%v.Equal(%v) = %v", tt.b, tt.a, got)
		}
	}
	if !DimsEqual([]Dim{{Val: 2}, {Expr: "s0"}}, []Dim{{Expr: "2"}, {Expr: "s0"}}) || DimsEqual([]Dim{{Val: 2}}, nil) {
		t.Error("DimsEqual")
	}
}

func TestIsContiguous(t *testing.T) {
	s0 := Dim{Expr: "s0"}
	for _, tt := range []struct {
		shape, stride []Dim
		want          bool
	}{
		{[]Dim{{Val: 2}, {Val: 3}}, []Dim{{Val: 3}, {Val: 1}}, true},
		{[]Dim{{Val: 2}, {Val: 3}}, []Dim{{Val: 1}, {Val: 2}}, false},
		// Size-1 dims have any stride.
		{[]Dim{{Val: 1}, {Val: 3}}, []Dim{{Val: 7}, {Val: 1}}, true},
		// Symbolic strides in torch's (sympy's) spelling.
		{[]Dim{{Val: 2}, s0, {Val: 3}}, []Dim{{Expr: "3*s0"}, {Val: 3}, {Val: 1}}, true},
		{[]Dim{{Val: 2}, s0, {Val: 3}}, []Dim{{Expr: "3*s1"}, {Val: 3}, {Val: 1}}, false},
		{[]Dim{{Val: 2}}, nil, false},
	} {
		if got := IsContiguous(tt.shape, tt.stride); got != tt.want {
			t.Errorf("IsContiguous(%v, %v) = %v", tt.shape, tt.stride, got)
		}
	}
}
