package report

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// interpreted are the runes a terminal or log viewer acts on that
// encoding/json and encoding/xml write raw: DEL, the C1 controls (U+009B is a
// terminal's CSI) and the bidirectional formatting characters (U+202E
// reverses the text after it).
const interpreted = "\u007f\u0080\u0081\u0082\u0083\u0084\u0085\u0086\u0087\u0088\u0089\u008a\u008b\u008c\u008d\u008e\u008f" +
	"\u0090\u0091\u0092\u0093\u0094\u0095\u0096\u0097\u0098\u0099\u009a\u009b\u009c\u009d\u009e\u009f" +
	"\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

// escapeRunes writes the interpreted runes of encoded JSON or XML as
// escapes (format: `\u%04x` for JSON, `&#x%x;` for XML). Outside strings
// and character data both documents are ASCII here, so every such rune is
// in a string, text or attribute value, where the escape means the same
// rune: the document decodes to the same values.
func escapeRunes(data []byte, format string) []byte {
	if !bytes.ContainsAny(data, interpreted) {
		return data
	}
	out := make([]byte, 0, len(data)+64)
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if bytes.ContainsRune([]byte(interpreted), r) {
			out = fmt.Appendf(out, format, r)
		} else {
			out = append(out, data[:n]...)
		}
		data = data[n:]
	}
	return out
}
