package ir

import (
	"bytes"
	"fmt"
)

// emptyJSONNode finds a node written as an empty object ({}) in a "nodes"
// list of a JSON graph file, and returns its index in the list and the
// list's position, or ok false. protojson decodes the whole file before
// hopctl sees any node, and an empty node — three bytes of JSON — costs
// about 180 bytes as a message: a file of millions of them held more than
// 50 times its size before it was refused. A node without a name is
// invalid whatever else it holds (Verify), so the file is refused before
// decoding. The scan is one pass over the bytes, without allocating; the
// key is matched only where a key can be (followed by ':'), and values
// are skipped with strings' escapes honoured.
func emptyJSONNode(data []byte) (index int, offset int, ok bool) {
	key := []byte(`"nodes"`)
	for i := 0; ; {
		k := bytes.Index(data[i:], key)
		if k < 0 {
			return 0, 0, false
		}
		j := skipSpace(data, i+k+len(key))
		i += k + len(key)
		if j >= len(data) || data[j] != ':' {
			continue
		}
		j = skipSpace(data, j+1)
		if j >= len(data) || data[j] != '[' {
			continue
		}
		for n := 0; ; n++ {
			j = skipSpace(data, j+1)
			if j >= len(data) || data[j] == ']' {
				break
			}
			if data[j] == '{' {
				if e := skipSpace(data, j+1); e < len(data) && data[e] == '}' {
					return n, j, true
				}
			}
			j = skipValue(data, j)
			j = skipSpace(data, j)
			if j >= len(data) || data[j] != ',' {
				break
			}
		}
		i = min(max(i, j), len(data))
	}
}

func skipSpace(data []byte, j int) int {
	for j < len(data) && (data[j] == ' ' || data[j] == '\n' || data[j] == '\r' || data[j] == '\t') {
		j++
	}
	return j
}

// skipValue returns the offset after the JSON value starting at j (an
// object or array with everything nested in it, a string, or a scalar).
func skipValue(data []byte, j int) int {
	depth := 0
	for ; j < len(data); j++ {
		switch data[j] {
		case '"':
			for j++; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return j
}

// checkJSONNodes refuses a JSON file with an empty node before it is
// decoded (emptyJSONNode).
func checkJSONNodes(data []byte, file string) error {
	if n, off, ok := emptyJSONNode(data); ok {
		return &DecodeError{Loc: Location{File: file}, Err: fmt.Errorf("node #%d of the nodes list at byte %d: node has an empty name", n, off)}
	}
	return nil
}
