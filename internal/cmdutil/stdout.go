package cmdutil

import (
	"io"
	"os"
)

// CheckStdout refuses, as a usage error, a file output that is the file
// standard output is redirected to (`hopctl print --format model-explorer
// --overlay o.json > o.json`): the command writes both, and the file it
// renames into place would replace what went to standard output, or the
// reverse. Files are compared by identity (os.SameFile), as CheckOutputs
// compares them; standard output that is not a regular file (a terminal,
// a pipe, /dev/null) is never the same as an output. Commands that write
// files and standard output call it before they read anything.
func CheckStdout(out io.Writer, outputs ...string) error {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	sfi, err := f.Stat()
	if err != nil || !sfi.Mode().IsRegular() {
		return nil
	}
	for _, o := range outputs {
		if o == "" || o == Stdout {
			continue
		}
		if fi, err := os.Stat(o); err == nil && os.SameFile(fi, sfi) {
			return FlagErrorf("output %s is where standard output goes (the same file): the command writes both; write the output or standard output elsewhere", o)
		}
	}
	return nil
}
