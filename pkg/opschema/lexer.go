package opschema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token of the schema language.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokIdent          // [A-Za-z_][A-Za-z0-9_]*
	tokNumber         // 12, 1.5, .5, 5., 1e-05, 2j
	tokString         // "..." or '...'
	tokArrow          // ->
	tokDots           // ...
	tokPunct          // one of ( ) [ ] , * ! | ? = . : -
	tokBad            // a character that starts no token
)

// token is one lexical token. pos is the byte offset of its first byte.
type token struct {
	kind tokKind
	text string // source text; for tokPunct the single character
	pos  int
}

// describe renders a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of schema"
	case tokIdent:
		return fmt.Sprintf("identifier %q", t.text)
	case tokNumber:
		return fmt.Sprintf("number %s", t.text)
	case tokString:
		return fmt.Sprintf("string %s", truncate(t.text, 40))
	case tokArrow:
		return "'->'"
	case tokDots:
		return "'...'"
	case tokBad:
		return fmt.Sprintf("unexpected character %q", t.text)
	default:
		return "'" + t.text + "'"
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// lexer splits a schema string into tokens on demand. Whitespace (including
// newlines) separates tokens; '#' starts a comment that runs to the end of the
// line, as in torch's lexer.
type lexer struct {
	src string
	off int
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// next scans and returns the next token.
func (l *lexer) next() token {
	l.skipSpace()
	start := l.off
	if start >= len(l.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := l.src[start]
	switch {
	case isIdentStart(c):
		end := start + 1
		for end < len(l.src) && isIdentChar(l.src[end]) {
			end++
		}
		l.off = end
		return token{kind: tokIdent, text: l.src[start:end], pos: start}
	case isDigit(c) || (c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1])):
		end := scanNumber(l.src, start)
		l.off = end
		return token{kind: tokNumber, text: l.src[start:end], pos: start}
	case c == '"' || c == '\'':
		end, ok := scanString(l.src, start)
		l.off = end
		if !ok {
			return token{kind: tokBad, text: l.src[start:end], pos: start}
		}
		return token{kind: tokString, text: l.src[start:end], pos: start}
	case c == '-' && strings.HasPrefix(l.src[start:], "->"):
		l.off = start + 2
		return token{kind: tokArrow, text: "->", pos: start}
	case c == '.' && strings.HasPrefix(l.src[start:], "..."):
		l.off = start + 3
		return token{kind: tokDots, text: "...", pos: start}
	case strings.IndexByte("()[],*!|?=.:-", c) >= 0:
		l.off = start + 1
		return token{kind: tokPunct, text: l.src[start : start+1], pos: start}
	}
	_, size := utf8.DecodeRuneInString(l.src[start:])
	l.off = start + size
	return token{kind: tokBad, text: l.src[start : start+size], pos: start}
}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case c == '#':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.off++
			}
		default:
			return
		}
	}
}

// scanNumber returns the end of the number starting at start:
// digits [ '.' digits ] [ (e|E) [+-] digits ] [ 'j' ], or '.' digits ...
// An exponent marker not followed by digits is not part of the number.
func scanNumber(s string, start int) int {
	i := start
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' && !strings.HasPrefix(s[i:], "...") {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	if i < len(s) && s[i] == 'j' && (i+1 >= len(s) || !isIdentChar(s[i+1])) {
		i++
	}
	return i
}

// scanString returns the end of the quoted string starting at start and
// whether it was terminated on the same line.
func scanString(s string, start int) (int, bool) {
	q := s[start]
	i := start + 1
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '\n':
			return i, false
		case q:
			return i + 1, true
		}
		i++
	}
	return len(s), false
}

// unquote decodes a string literal token (quotes included) with the escapes
// torch's parseStringLiteral accepts: \\ \' \" \a \b \f \n \r \t \v, octal
// \ooo and \xhh.
func unquote(lit string) (string, error) {
	if len(lit) < 2 {
		return "", fmt.Errorf("malformed string literal")
	}
	body := lit[1 : len(lit)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", fmt.Errorf("string literal ends in a backslash")
		}
		switch e := body[i]; e {
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			if i+3 > len(body) {
				return "", fmt.Errorf("\\x escape needs two hex digits")
			}
			v, ok := hexByte(body[i+1 : i+3])
			if !ok {
				return "", fmt.Errorf("\\x escape needs two hex digits")
			}
			b.WriteByte(v)
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			n := 0
			for n < 3 && i < len(body) && body[i] >= '0' && body[i] <= '7' {
				v = v*8 + int(body[i]-'0')
				i++
				n++
			}
			i--
			if v > 0xff {
				return "", fmt.Errorf("octal escape out of range")
			}
			b.WriteByte(byte(v))
		default:
			return "", fmt.Errorf("unknown escape sequence \\%c", e)
		}
	}
	return b.String(), nil
}

func hexByte(s string) (byte, bool) {
	if len(s) != 2 {
		return 0, false
	}
	var v byte
	for i := 0; i < 2; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v*16 + c - '0'
		case 'a' <= c && c <= 'f':
			v = v*16 + c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = v*16 + c - 'A' + 10
		default:
			return 0, false
		}
	}
	return v, true
}
