package ir

// The three encodings of the interchange format, and how a file's is chosen
// (extension, else content).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Encoding is one of the three encodings of the interchange format.
type Encoding uint8

// The encodings.
const (
	EncodingUnknown Encoding = iota
	Binary                   // .pb
	JSON                     // .json
	Text                     // .pbtxt
)

func (e Encoding) String() string {
	switch e {
	case Binary:
		return "binary"
	case JSON:
		return "json"
	case Text:
		return "text"
	}
	return "unknown"
}

// ParseEncoding parses "pb"/"binary", "json", "pbtxt"/"text".
func ParseEncoding(s string) (Encoding, error) {
	switch strings.ToLower(s) {
	case "pb", "binary", "bin":
		return Binary, nil
	case "json":
		return JSON, nil
	case "pbtxt", "text", "txtpb", "textproto":
		return Text, nil
	}
	return EncodingUnknown, fmt.Errorf("unknown encoding %q (want pb, json or pbtxt)", s)
}

// EncodingForPath returns the encoding an extension names, or EncodingUnknown.
func EncodingForPath(path string) Encoding {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pb", ".bin", ".binpb":
		return Binary
	case ".json":
		return JSON
	case ".pbtxt", ".txtpb", ".textproto", ".prototxt":
		return Text
	}
	return EncodingUnknown
}

// SniffEncoding guesses the encoding from the content: JSON starts with '{',
// text format is valid UTF-8 without control bytes, anything else is binary.
func SniffEncoding(data []byte) Encoding {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return JSON
	}
	if len(data) > 0 && utf8.Valid(data) && !bytes.ContainsFunc(data, func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\r' && r != '\t'
	}) {
		return Text
	}
	return Binary
}

// encodingOf is the encoding path's extension names, else the one data's
// content suggests.
func encodingOf(path string, data []byte) Encoding {
	if enc := EncodingForPath(path); enc != EncodingUnknown {
		return enc
	}
	return SniffEncoding(data)
}

// checkStreamStart refuses prefix, the first bytes of a stream (a pipe, a
// device: an input whose size is not known before it is read), when no
// encoding or format hopctl reads can begin with it, so /dev/zero or
// /dev/urandom are refused after one chunk instead of after the input size
// limit. It accepts text (valid UTF-8 without control bytes other than
// tab, CR and LF: the text and JSON encodings, torch's program JSON), a
// zip archive (.pt2), and binary whose first field is format_version: every
// writer emits fields in field-number order (proto.Marshal, Python's
// SerializeToString, hopctl's own encoder) and the decoder requires that
// field, so a file without it first is refused either way. The rest of a
// binary prefix must be well-formed protobuf wire fields, the last one
// possibly cut by the end of the prefix.
func checkStreamStart(prefix []byte) error {
	if len(prefix) == 0 || bytes.HasPrefix(prefix, []byte("PK")) || textLike(prefix) || binaryStart(prefix) {
		return nil
	}
	return fmt.Errorf("does not start like a graph file in any encoding hopctl reads (first bytes % x): refused after reading %d bytes of a stream", prefix[:min(8, len(prefix))], len(prefix))
}

// textLike reports whether prefix could start a text file: valid UTF-8
// (a multi-byte character cut at its end aside) without NUL or other
// control bytes but tab, CR and LF.
func textLike(prefix []byte) bool {
	if i := len(prefix) - utf8.UTFMax; i >= 0 {
		// A rune cut by the end of the prefix: drop its bytes.
		for j := len(prefix) - 1; j > i && !utf8.RuneStart(prefix[j]); j-- {
			prefix = prefix[:j]
		}
		if n := len(prefix); n > 0 && !utf8.FullRune(prefix[n-1:]) {
			prefix = prefix[:n-1]
		}
	}
	return utf8.Valid(prefix) && !bytes.ContainsFunc(prefix, func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\r' && r != '\t'
	})
}

// binaryStart reports whether prefix could start a binary graph file: its
// first field format_version (field 1, length-delimited), then well-formed
// wire fields up to the end of the prefix.
func binaryStart(prefix []byte) bool {
	if prefix[0] != byte(protowire.EncodeTag(1, protowire.BytesType)) {
		return false
	}
	for b := prefix; len(b) > 0; {
		_, _, n := protowire.ConsumeField(b)
		if n < 0 {
			return errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF)
		}
		b = b[n:]
	}
	return true
}

// CheckText is a ReadBounded check for a text input (JSON): the chunk at
// offset off must be valid UTF-8 without NUL or other control bytes but
// tab, CR and LF (JSON allows none, raw, inside strings or out). A
// character cut by a chunk boundary is allowed on both sides.
func CheckText(off int64, chunk []byte) error {
	c := chunk
	if off > 0 {
		for i := 0; i < utf8.UTFMax-1 && len(c) > 0 && !utf8.RuneStart(c[0]); i++ {
			c = c[1:]
		}
	}
	if textLike(c) {
		return nil
	}
	bad := len(chunk) - len(c)
	for bad < len(chunk) {
		r, n := utf8.DecodeRune(chunk[bad:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			break
		}
		bad += n
	}
	what := "not text"
	if off == 0 && bytes.HasPrefix(chunk, []byte("PK")) {
		what = "a zip archive, not text"
	}
	return fmt.Errorf("byte %d: %s (byte %#02x; JSON is UTF-8 without control characters)", off+int64(bad), what, chunk[min(bad, len(chunk)-1)])
}
