package cmdutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/hopctl/hopctl/pkg/ir"
)

// Stdout is the output path that names standard output, for commands that
// write one output.
const Stdout = "-"

// CheckOutputs refuses, as a usage error, outputs a command cannot write
// safely (ir.CheckOutputs: a directory, two outputs that are one file, an
// output that is one of the inputs, however spelled). Stdout is skipped.
// Commands call it before they read anything.
func CheckOutputs(inputs []string, outputs ...string) error {
	var files []string
	for _, o := range outputs {
		if o != "" && o != Stdout {
			files = append(files, o)
		}
	}
	if err := ir.CheckOutputs(inputs, files); err != nil {
		return &FlagError{Err: err}
	}
	return nil
}

// WriteOutput writes data to path (ir.WriteFileAtomic), or to out when
// path is Stdout.
func WriteOutput(out io.Writer, path string, data []byte) error {
	if path == Stdout {
		_, err := out.Write(data)
		return err
	}
	return WriteError(path, ir.WriteFileAtomic(path, data))
}

// WriteError says err is a failure to write path ("cannot write PATH: "),
// unless it says so already (an *ir.OutputError). nil stays nil.
func WriteError(path string, err error) error {
	var oe *ir.OutputError
	if err != nil && !errors.As(err, &oe) {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return err
}
