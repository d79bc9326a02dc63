package ir

// The three encodings of the interchange format, and how a file's is chosen
// (extension, else content).

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
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
