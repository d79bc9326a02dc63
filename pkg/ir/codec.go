package ir

// Encoding a module (writing it to files: output.go).

import (
	"bytes"
	"fmt"
	"io"
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

// SaveFile encodes the module in the encoding the path's extension names
// (binary when it names none) and writes it atomically.
func SaveFile(path string, m *Module) error {
	enc := EncodingForPath(path)
	if enc == EncodingUnknown {
		enc = Binary
	}
	if enc != Binary { // streamed: the output is not held in memory
		return WriteFileAtomicFunc(path, func(w io.Writer) error { return EncodeTo(w, m, enc) })
	}
	data, err := Encode(m, enc)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", path, err)
	}
	return WriteFileAtomic(path, data)
}
