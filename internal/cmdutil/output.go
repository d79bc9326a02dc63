package cmdutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/hopctl/hopctl/internal/atomicfile"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Stdout is the output path that names standard output, for commands that
// write one output.
const Stdout = "-"

// CheckOutputs refuses outputs a command cannot write safely
// (atomicfile.CheckOutputs: a directory, two outputs that are one file, an
// output that is one of the graph files it reads, however spelled). Stdout
// is skipped. An output that is an input graph is invalid input (exit 3,
// "convert IN IN": the command was given a file it would destroy), the
// others usage errors (exit 2). Commands call it before they read anything.
func CheckOutputs(inputs []string, outputs ...string) error {
	err := CheckConfigOutputs(inputs, outputs...)
	var se *atomicfile.SameFileError
	if errors.As(err, &se) && se.Input {
		return &OutputIsInputError{se}
	}
	return err
}

// CheckConfigOutputs is CheckOutputs for inputs that are configuration
// (lint's --baseline): an output that is one of them is a usage error.
func CheckConfigOutputs(inputs []string, outputs ...string) error {
	var files []string
	for _, o := range outputs {
		if o != "" && o != Stdout {
			files = append(files, o)
		}
	}
	if err := atomicfile.CheckOutputs(inputs, files); err != nil {
		return &FlagError{Err: err}
	}
	return nil
}

// OutputIsInputError is an output that is one of the command's input
// graphs.
type OutputIsInputError struct{ *atomicfile.SameFileError }

// InvalidInput marks it as an input error (exit code 3).
func (*OutputIsInputError) InvalidInput() {}

// WriteOutput writes data to path (atomicfile.WriteFile), or to out when
// path is Stdout.
func WriteOutput(out io.Writer, path string, data []byte) error {
	if path == Stdout {
		_, err := out.Write(data)
		return err
	}
	return WriteError(path, atomicfile.WriteFile(path, data))
}

// WriteError says err is a failure to write path ("cannot write PATH: "),
// unless it says so already (an *atomicfile.OutputError). nil stays nil.
func WriteError(path string, err error) error {
	var oe *atomicfile.OutputError
	if err != nil && !errors.As(err, &oe) {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return err
}

// SaveModule encodes m in the encoding path's extension names (binary when
// it names none) and writes it atomically (atomicfile): JSON and text
// streamed, binary encoded in memory first (the streaming binary encoder
// needs the sizes of what it writes).
func SaveModule(path string, m *ir.Module) error {
	enc := ir.EncodingForPath(path)
	if enc == ir.EncodingUnknown {
		enc = ir.Binary
	}
	if enc != ir.Binary { // streamed: the output is not held in memory
		return atomicfile.WriteFileFunc(path, func(w io.Writer) error { return ir.EncodeTo(w, m, enc) })
	}
	data, err := ir.Encode(m, enc)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", path, err)
	}
	return atomicfile.WriteFile(path, data)
}
