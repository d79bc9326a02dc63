package pt2

import (
	"strings"
)

// SympyString turns the sympy srepr text torch.export writes for symbolic
// values (expr_str: "Mul(Integer(2), Symbol('s77', positive=True,
// integer=True))") into the str() form torch prints and the bridge
// records ("2*s77"). Text that is not srepr (older files wrote str(expr)
// directly) is returned unchanged.
func SympyString(s string) string {
	p := &sreprParser{s: s}
	e, ok := p.expr(0)
	if !ok || p.skip() < len(p.s) {
		return s
	}
	return e.text
}

// rendered is a sub-expression's text and how tightly it binds.
type rendered struct {
	text string
	prec int // 0 atom, 1 power, 2 product, 3 sum, 4 relation/logic
}

type sreprParser struct {
	s string
	i int
}

const maxSreprDepth = 200

func (p *sreprParser) skip() int {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t') {
		p.i++
	}
	return p.i
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *sreprParser) ident() string {
	start := p.skip()
	for p.i < len(p.s) && isIdent(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *sreprParser) expr(depth int) (rendered, bool) {
	if depth > maxSreprDepth {
		return rendered{}, false
	}
	p.skip()
	if p.i >= len(p.s) {
		return rendered{}, false
	}
	c := p.s[p.i]
	if c == '\'' || c == '"' {
		end := strings.IndexByte(p.s[p.i+1:], c)
		if end < 0 {
			return rendered{}, false
		}
		lit := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return rendered{text: lit}, true
	}
	if c == '-' || c >= '0' && c <= '9' {
		start := p.i
		p.i++
		for p.i < len(p.s) && (isIdent(p.s[p.i]) || p.s[p.i] == '.' || p.s[p.i] == '+' && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E') || p.s[p.i] == '-' && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E')) {
			p.i++
		}
		return rendered{text: p.s[start:p.i]}, true
	}
	name := p.ident()
	if name == "" {
		return rendered{}, false
	}
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != '(' {
		return rendered{text: name}, true // True, False, oo, zoo, nan, …
	}
	p.i++
	var args []rendered
	for {
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ')' {
			p.i++
			break
		}
		// keyword arguments (positive=True, precision=53) are assumptions.
		save := p.i
		if id := p.ident(); id != "" {
			p.skip()
			if p.i < len(p.s) && p.s[p.i] == '=' {
				p.i++
				if _, ok := p.expr(depth + 1); !ok {
					return rendered{}, false
				}
				if !p.comma() {
					return rendered{}, false
				}
				continue
			}
		}
		p.i = save
		a, ok := p.expr(depth + 1)
		if !ok {
			return rendered{}, false
		}
		args = append(args, a)
		if !p.comma() {
			return rendered{}, false
		}
	}
	return render(name, args), true
}

// comma consumes a "," or sees a ")"; false on anything else.
func (p *sreprParser) comma() bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return true
	}
	return p.i < len(p.s) && p.s[p.i] == ')'
}

func paren(r rendered, prec int) string {
	if r.prec > prec {
		return "(" + r.text + ")"
	}
	return r.text
}

var relations = map[string]string{
	"StrictGreaterThan": " > ", "GreaterThan": " >= ", "StrictLessThan": " < ", "LessThan": " <= ",
	"And": " & ", "Or": " | ",
}

func render(name string, args []rendered) rendered {
	switch name {
	case "Symbol", "Dummy", "Integer", "Float":
		if len(args) >= 1 {
			return rendered{text: args[0].text}
		}
	case "Rational":
		if len(args) == 2 {
			return rendered{text: args[0].text + "/" + args[1].text, prec: 2}
		}
	case "Add":
		var b strings.Builder
		for i, a := range args {
			t := paren(a, 3)
			if i > 0 {
				if strings.HasPrefix(t, "-") {
					b.WriteString(" - ")
					t = t[1:]
				} else {
					b.WriteString(" + ")
				}
			}
			b.WriteString(t)
		}
		return rendered{text: b.String(), prec: 3}
	case "Mul":
		parts := make([]string, 0, len(args))
		neg := false
		for _, a := range args {
			if a.text == "-1" {
				neg = !neg
				continue
			}
			parts = append(parts, paren(a, 2))
		}
		t := strings.Join(parts, "*")
		if neg {
			t = "-" + t
		}
		return rendered{text: t, prec: 2}
	case "Pow":
		if len(args) == 2 {
			return rendered{text: paren(args[0], 0) + "**" + paren(args[1], 0), prec: 1}
		}
	case "Not":
		if len(args) == 1 {
			return rendered{text: "~" + paren(args[0], 0), prec: 1}
		}
	}
	if op, ok := relations[name]; ok && len(args) >= 2 {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = paren(a, 3)
		}
		return rendered{text: strings.Join(parts, op), prec: 4}
	}
	// Other functions print as calls: FloorDiv(s0, 2), Eq(s0, 3), Max(…).
	switch name {
	case "Equality":
		name = "Eq"
	case "Unequality":
		name = "Ne"
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.text
	}
	return rendered{text: name + "(" + strings.Join(parts, ", ") + ")"}
}
