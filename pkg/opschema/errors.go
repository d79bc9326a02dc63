package opschema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseError reports a schema that does not parse. Line and Column locate the
// offending token (both 1-based; Column counts runes), Offset is its byte
// offset in Schema.
type ParseError struct {
	Schema string // the input, as given
	Offset int    // byte offset of the offending token
	Line   int    // 1-based line
	Column int    // 1-based column, in runes
	Msg    string // what is wrong, e.g. "expected ')' but found identifier \"b\""
}

// Error renders the error as "column N: message in schema "...""; the line
// is named only for multi-line input.
func (e *ParseError) Error() string {
	where := fmt.Sprintf("column %d", e.Column)
	if e.Line > 1 || strings.Contains(e.Schema, "\n") {
		where = fmt.Sprintf("line %d, column %d", e.Line, e.Column)
	}
	return fmt.Sprintf("schema parse error at %s: %s in %q", where, e.Msg, truncate(e.Schema, 300))
}

// Caret returns the line of the schema holding the error and, below it, a
// caret under the offending column, for human-readable reports.
func (e *ParseError) Caret() string {
	start := strings.LastIndexByte(e.Schema[:clamp(e.Offset, len(e.Schema))], '\n') + 1
	end := strings.IndexByte(e.Schema[start:], '\n')
	if end < 0 {
		end = len(e.Schema)
	} else {
		end += start
	}
	return e.Schema[start:end] + "\n" + strings.Repeat(" ", max(e.Column-1, 0)) + "^"
}

func clamp(v, hi int) int {
	if v < 0 {
		return 0
	}
	if v > hi {
		return hi
	}
	return v
}

// newParseError builds a ParseError at byte offset off of src.
func newParseError(src string, off int, format string, args ...any) *ParseError {
	off = clamp(off, len(src))
	prefix := src[:off]
	line := strings.Count(prefix, "\n") + 1
	lineStart := strings.LastIndexByte(prefix, '\n') + 1
	col := utf8.RuneCountInString(prefix[lineStart:]) + 1
	return &ParseError{
		Schema: src,
		Offset: off,
		Line:   line,
		Column: col,
		Msg:    fmt.Sprintf(format, args...),
	}
}
