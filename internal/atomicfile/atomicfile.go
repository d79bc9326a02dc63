// Package atomicfile is how hopctl writes its output files: all-or-nothing
// through temporary files renamed into place, several files as one step,
// devices and FIFOs written through, symbolic links followed, the same file
// refused twice; and the temporary files of a write in progress removed
// when the process is interrupted (tempfiles.go: the hopctl command's
// signal handler, installed before the first one is created). Encoding a
// module is pkg/ir's; what file it goes to, and what becomes of it when
// the process dies, is the program's.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// How hopctl writes its outputs (README, Reliability):
//
//   - A regular file, or a path that does not exist yet, is written to a
//     temporary file beside it that is renamed into place after the whole
//     output is written (an existing file exchanged with it and then
//     removed: replace): readers see the old file or the new one, never a
//     part, and a failure leaves the old one.
//   - A symbolic link, dangling or not, is followed (to its final target)
//     and the target is written as above: the link stays.
//   - A destination that exists and is neither a regular file nor a
//     directory — a device such as /dev/null, a FIFO — is written through:
//     opened for writing and written, never replaced by a regular file.
//   - A directory is refused, before anything is written.
//   - Several outputs of one command (WriteFiles) are all-or-nothing:
//     every destination is checked, every temporary file written and every
//     write-through done before the first rename; a failure in any of
//     these replaces none of them.
//   - Two outputs that are the same file, or an output that is one of the
//     command's inputs (CheckOutputs), are refused: files are compared by
//     identity (device and inode: os.SameFile), not by spelling, so
//     "./j.pb" and "j.pb", symbolic links and hard links are caught; a file
//     that does not exist yet by its directory's identity and its name.

// SameFileError is the error of two outputs, or an input and an output,
// that are the same file.
type SameFileError struct {
	A, B  string
	Input bool // A is an input
}

func (e *SameFileError) Error() string {
	if e.Input {
		return fmt.Sprintf("output %s is the input %s (the same file): write the output elsewhere", e.B, e.A)
	}
	return fmt.Sprintf("outputs %s and %s are the same file: name different files", e.A, e.B)
}

// OutputError is the error of a destination that cannot be written: a
// directory, a directory that does not exist, too many symbolic links.
type OutputError struct {
	Path string
	Err  error
}

func (e *OutputError) Error() string { return "cannot write " + e.Path + ": " + e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// output is a destination, resolved.
type output struct {
	path   string      // as given
	target string      // symbolic links followed, even dangling ones
	fi     os.FileInfo // target's, nil if it does not exist
	dir    os.FileInfo // target's directory's, when fi is nil
}

// throughWrite reports whether the output is written through rather than
// replaced: it exists and is not a regular file (a device, a FIFO).
func (o *output) throughWrite() bool { return o.fi != nil && !o.fi.Mode().IsRegular() }

// maxLinks bounds the symbolic links followed, as the kernel does (ELOOP).
const maxLinks = 40

// resolveOutput follows path's symbolic links to the file a write would
// create or replace, even when the last link dangles (filepath.EvalSymlinks
// fails then, and renaming onto the link would replace it).
func resolveOutput(path string) (*output, error) {
	o := &output{path: path, target: path}
	fail := func(err error) (*output, error) { return nil, &OutputError{Path: path, Err: err} }
	for range maxLinks {
		fi, err := os.Lstat(o.target)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return fail(err)
			}
			dir, err := os.Stat(filepath.Dir(o.target))
			if err != nil {
				return fail(err)
			}
			if !dir.IsDir() {
				return fail(fmt.Errorf("%s is not a directory", filepath.Dir(o.target)))
			}
			o.dir = dir
			return o, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if fi.IsDir() {
				return fail(errors.New("is a directory"))
			}
			o.fi = fi
			return o, nil
		}
		link, err := os.Readlink(o.target)
		if err != nil {
			return fail(err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(o.target), link)
		}
		o.target = link
	}
	return fail(errors.New("too many levels of symbolic links"))
}

// same reports whether two outputs are the same file.
func (o *output) same(p *output) bool {
	switch {
	case o.fi != nil && p.fi != nil:
		return os.SameFile(o.fi, p.fi)
	case o.fi == nil && p.fi == nil:
		return filepath.Base(o.target) == filepath.Base(p.target) && os.SameFile(o.dir, p.dir)
	}
	return false
}

// discards reports whether the output is a character device (/dev/null):
// one every output may name at once.
func (o *output) discards() bool { return o.fi != nil && o.fi.Mode()&os.ModeCharDevice != 0 }

// resolveOutputs resolves every output and refuses directories and two
// outputs that are the same file (but for character devices).
func resolveOutputs(paths []string) ([]*output, error) {
	outs := make([]*output, len(paths))
	for i, p := range paths {
		o, err := resolveOutput(p)
		if err != nil {
			return nil, err
		}
		for _, q := range outs[:i] {
			if o.same(q) && !o.discards() {
				return nil, &SameFileError{A: q.path, B: p}
			}
		}
		outs[i] = o
	}
	return outs, nil
}

// CheckOutputs refuses outputs a command cannot write safely: a directory,
// two outputs that are the same file, and an output that is the same file
// as one of the inputs (replacing it while reading it, or reading what it
// writes). Commands call it before they start, so the mistake costs no
// work; WriteFiles checks the outputs again.
func CheckOutputs(inputs, outputs []string) error {
	outs, err := resolveOutputs(outputs)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		fi, err := os.Stat(in)
		if err != nil {
			continue // the load reports it
		}
		for _, o := range outs {
			if o.fi != nil && os.SameFile(fi, o.fi) && !o.discards() {
				return &SameFileError{A: in, B: o.path, Input: true}
			}
		}
	}
	return nil
}

// WriteFile writes data to path as WriteFiles does: through a
// temporary file renamed into place, so a failed write never leaves a
// partial or clobbered file; through to a device or FIFO; to a symbolic
// link's target. An existing file keeps its permissions; a new one gets
// 0644.
func WriteFile(path string, data []byte) error {
	return WriteFiles([]string{path}, [][]byte{data})
}

// WriteFiles writes several files as one step (see the rules at the
// top of this file).
func WriteFiles(paths []string, datas [][]byte) error {
	writes := make([]func(io.Writer) error, len(datas))
	for i, data := range datas {
		writes[i] = func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		}
	}
	return WriteFilesFunc(paths, writes)
}

// WriteFileFunc is WriteFile with the content written by
// write, which may stream it (EncodeTo): a failing write leaves the
// destination untouched (but for a device or FIFO, written through).
func WriteFileFunc(path string, write func(io.Writer) error) error {
	return WriteFilesFunc([]string{path}, []func(io.Writer) error{write})
}

// WriteFilesFunc is WriteFiles with each file's content written
// by a function: every destination is resolved and checked, every file is
// written in full to a temporary file next to its destination and every
// device or FIFO destination written through, and only then are the
// temporary files renamed into place. A failure before the renames leaves
// every regular destination untouched.
func WriteFilesFunc(paths []string, writes []func(io.Writer) error) error {
	outs, err := resolveOutputs(paths)
	if err != nil {
		return err
	}
	temps := make([]string, len(paths))
	cleanup := func() {
		for _, t := range temps {
			if t != "" {
				settleTemp(t, func() error { return os.Remove(t) })
			}
		}
	}
	// The temporary files are written at the same time (copies into the
	// page cache, on both cores for large outputs).
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, o := range outs {
		if !o.throughWrite() {
			wg.Go(func() { temps[i], errs[i] = writeTemp(o.target, o.fi, writes[i]) })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return err
	}
	for i, o := range outs {
		if o.throughWrite() {
			if err := writeThrough(o, writes[i]); err != nil {
				cleanup()
				return err
			}
		}
	}
	// Each destination in turn is replaced by its temporary file, and what
	// the exchanges swapped out (swapIn) is removed at the same time, off
	// this goroutine: removing a large file frees its pages, and may wait
	// for writeback a previous run started. A failed removal puts the
	// new file in place by a rename (putBack), under the lock an interrupt
	// takes (settleTemp), as the rename of a new destination is. What
	// changes is the order of failures: a destination whose replacement
	// fails after its exchange (the removal and that rename fail, or the
	// swap back does) may now come after later destinations were
	// replaced, where before those were left as they were.
	var removals sync.WaitGroup
	removeErrs := make([]error, len(temps))
	for i, name := range temps {
		if name == "" {
			continue
		}
		o := outs[i]
		swapped, err := swapTemp(name, func() (bool, error) { return swapIn(name, o.target, o.fi != nil) })
		if err != nil {
			removals.Wait()
			cleanup() // name is still the temporary file, as are those after it
			return errors.Join(append(removeErrs, fmt.Errorf("%s: %w", o.target, err))...)
		}
		temps[i] = "" // renamed, or swapped and in removal's hands
		if swapped {
			removals.Go(func() {
				defer forgetTemp(name)
				uerr := removeSwapped(name)
				if uerr == nil {
					return
				}
				if err := settleTemp(name, func() error {
					intact, err := putBack(name, o.target, uerr)
					if err != nil && intact {
						os.Remove(name)
					}
					return err
				}); err != nil {
					removeErrs[i] = fmt.Errorf("%s: %w", o.target, err)
				}
			})
		}
	}
	removals.Wait()
	return errors.Join(removeErrs...)
}

// writeThrough writes to an existing device or FIFO.
func writeThrough(o *output, write func(io.Writer) error) error {
	f, err := os.OpenFile(o.target, os.O_WRONLY, 0)
	if err != nil {
		return &OutputError{Path: o.path, Err: err}
	}
	werr := write(f)
	if err := errors.Join(werr, f.Close()); err != nil {
		return &OutputError{Path: o.path, Err: err}
	}
	return nil
}

// writeTemp writes a temporary file beside path with write, with the
// permissions of fi, path's existing file (0644 for a new file), and
// returns its name.
//
// The file is not synced (fsync) before it is renamed into place: what
// hopctl writes is regenerable from its input, and this is what build
// tools (go build, make, ninja) do for their outputs. The rename still
// makes every write all-or-nothing for readers; only a crash of the
// machine (not of hopctl) within the kernel's writeback delay can leave
// a destination empty or partial, which rerunning the command repairs.
func writeTemp(path string, fi os.FileInfo, write func(io.Writer) error) (string, error) {
	mode := os.FileMode(0o644)
	if fi != nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("%s: write: %w", path, err)
	}
	name := tmp.Name()
	discard := func() { settleTemp(name, func() error { return os.Remove(name) }) }
	werr := write(tmp)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		discard()
		return "", fmt.Errorf("%s: write: %w", path, err)
	}
	if err := os.Chmod(name, mode); err != nil {
		discard()
		return "", err
	}
	return name, nil
}
