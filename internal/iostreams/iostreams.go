// Package iostreams holds the standard streams a command reads and writes,
// so commands never touch os.Stdin/os.Stdout/os.Stderr and tests can run
// them in-process against buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"
)

// IOStreams are the streams of one invocation.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's standard streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Test returns streams backed by buffers, and the buffers: stdin, stdout,
// stderr.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
