package ir

// Encoding a module into memory (streamed to a writer: EncodeTo, textenc.go and
// wireenc.go). Writing files is the program's concern (hopctl: internal/atomicfile).

import (
	"bytes"
)

// Encode serialises the module. Binary output is deterministic; JSON output
// is re-indented so it is byte-stable (protobuf-go varies whitespace on
// purpose); text output is stable for a given hopctl build.
func Encode(m *Module, enc Encoding) ([]byte, error) {
	if enc == Binary {
		// The streaming encoder: protobuf-go's deterministic bytes, without
		// building the protobuf objects.
		return encodeBinary(m)
	}
	// The JSON and text encodings: streamed (textenc.go), into memory here.
	var out bytes.Buffer
	out.Grow(encodedSize(m) * 4)
	if err := EncodeTo(&out, m, enc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
