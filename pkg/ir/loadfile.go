package ir

// Reading graph files: LoadFile (mapping large files), the formats
// registered with it, Load, Decode.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
)

// LoadFile reads a graph file in the encoding its extension names (or its
// content suggests). It does not run Verify.
//
// The file is opened once (a FIFO or a device is read as a stream, never
// reopened) and read up to MaxInputSize bytes: a regular file larger than
// that is refused before any of it is read, and a stream that goes on
// past it (/dev/zero) is refused when it does.
//
// Large regular files are mapped into memory rather than read (on Linux):
// the decoder copies what it keeps into compact blocks and the mapping is
// released before LoadFile returns, so nothing in the module refers to it.
// Small files and streams are read into a buffer the module's strings then
// share. A mapped file that another process truncates while it is decoded
// makes the decoding goroutines fault; they turn the fault into an error
// (guardFaults), so the file is refused as truncated instead of the
// process dying of SIGBUS.
func LoadFile(path string) (m *Module, err error) {
	fail := func(err error) (*Module, error) {
		return nil, &DecodeError{Loc: Location{File: path}, Err: WithoutPath(err)}
	}
	f, err := os.Open(path)
	if path == "-" && errors.Is(err, fs.ErrNotExist) {
		// "-" names an output on standard output, not an input.
		return fail(errors.New("no file named -: inputs are read from files; for standard input give /dev/stdin"))
	}
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if st.IsDir() {
		return fail(DirectoryError(path))
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	limit := MaxInputSize()
	if size > limit {
		return fail(&TooLargeError{Limit: limit, Size: size})
	}
	if data, unmap, ok := mapFile(f, size); ok {
		defer unmap()
		if afterMapHook != nil {
			afterMapHook(path)
		}
		defer guardFaults(data)()
		defer func() { // after catchFault
			if errors.Is(err, errTruncatedWhileRead) {
				m, err = fail(errTruncatedWhileRead)
			}
		}()
		defer catchFault(data, &err)
		if fm := formatOf(path, data); fm != nil {
			return mistaken(fm.Decode(data, path))(path, data)
		}
		return mistaken(decodeMapped(data, encodingOf(path, data), path))(path, data)
	}
	data, err := readInput(f, size, limit, checkStreamStart)
	if err != nil {
		return fail(err)
	}
	if fm := formatOf(path, data); fm != nil {
		return mistaken(fm.Decode(data, path))(path, data)
	}
	return mistaken(decode(data, encodingOf(path, data), path, true))(path, data)
}

// mistaken passes a decoding's result on, but replaces the decoder's
// error on a file torch users pass by mistake (mistakeOf) by what the
// file is and what to run instead.
func mistaken(m *Module, err error) func(path string, data []byte) (*Module, error) {
	return func(path string, data []byte) (*Module, error) {
		if err == nil || errors.Is(err, errTruncatedWhileRead) {
			return m, err
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			return m, err
		}
		if what := mistakeOf(path, data); what != nil {
			return nil, &DecodeError{Loc: Location{File: path}, Err: what}
		}
		return m, err
	}
}

// afterMapHook, when set (by tests), runs between mapping a file and
// decoding it.
var afterMapHook func(path string)

// Format is a file format other than hopctl's own that LoadFile reads
// (package pt2 registers torch.export's .pt2 archives and program JSON).
// Match sees the path and the whole content; Decode must copy what the
// module keeps out of data (it may be a mapping released afterwards) and
// return only InputErrors for bad input.
type Format struct {
	Name   string
	Match  func(path string, data []byte) bool
	Decode func(data []byte, path string) (*Module, error)
}

var (
	formatsMu sync.Mutex
	formats   []Format
)

// RegisterFormat adds a format LoadFile tries, in registration order,
// before its own encodings.
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	formats = append(formats, f)
}

// formatOf is the first registered format that matches the file, or nil.
func formatOf(path string, data []byte) *Format {
	formatsMu.Lock()
	fs := formats
	formatsMu.Unlock()
	for i := range fs {
		if fs[i].Match(path, data) {
			return &fs[i]
		}
	}
	return nil
}

// Load reads and verifies a graph file.
func Load(path string) (*Module, error) {
	m, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	if err := Verify(m, path); err != nil {
		return nil, err
	}
	return m, nil
}

// Decode decodes data in the given encoding. file names the input in errors.
func Decode(data []byte, enc Encoding, file string) (*Module, error) {
	return decode(data, enc, file, false)
}

// decode is Decode; alias lets the binary decoder share string memory with
// data, which the caller must then never modify.
func decode(data []byte, enc Encoding, file string, alias bool) (*Module, error) {
	return decodeIn(data, enc, file, alias, nil)
}

// decodeMapped is decode of data that is region, a mapping of the file:
// the binary decoder's goroutines guard their reads of it (guardFaults).
func decodeMapped(data []byte, enc Encoding, file string) (*Module, error) {
	return decodeIn(data, enc, file, false, data)
}

func decodeIn(data []byte, enc Encoding, file string, alias bool, region []byte) (*Module, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("empty file: not a hopctl graph file")}
	}
	if enc == Binary {
		m, err := decodeBinaryIn(data, file, alias, region)
		if errors.Is(err, errTruncatedWhileRead) {
			return nil, &DecodeError{Loc: Location{File: file}, Err: errTruncatedWhileRead}
		}
		if err != nil && SniffEncoding(data) != Binary && len(data) > 0 {
			if de, ok := err.(*DecodeError); ok && strings.HasPrefix(de.Err.Error(), "cannot decode") {
				de.Err = fmt.Errorf("%w (the content looks like %s encoding)", de.Err, SniffEncoding(data))
			}
		}
		return m, err
	}

	f := &pb.File{}
	var err error
	switch enc {
	case JSON:
		if err := checkJSONNodes(data, file); err != nil {
			return nil, err
		}
		err = protojson.Unmarshal(data, f)
	case Text:
		err = prototext.Unmarshal(data, f)
	default:
		err = fmt.Errorf("unknown encoding")
	}
	if err != nil {
		msg := fmt.Errorf("cannot decode as %s hopctl graph: %w", enc, err)
		if s := SniffEncoding(data); s != enc && len(data) > 0 {
			msg = fmt.Errorf("%w (the content looks like %s encoding)", msg, s)
		}
		return nil, &DecodeError{Loc: Location{File: file}, Err: msg}
	}
	return FromProto(f, file)
}

// WithoutPath drops the path from an *fs.PathError ("open a.pb: no such
// file" → "open: no such file"): the location names the file already,
// escaped (Printable), where the PathError's message holds it raw, so a
// path with a newline or an escape sequence could forge a line of output
// or clear the screen. errors.Is still sees the underlying error.
func WithoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
