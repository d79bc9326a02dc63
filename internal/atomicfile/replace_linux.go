package atomicfile

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// swapIn puts the temporary file tmp in place of dst, an existing regular
// file or a name that does not exist yet (exists says which, as dst was
// resolved), and reports whether it exchanged them: then tmp names what
// dst held, for removeSwapped to remove. Otherwise tmp was renamed onto
// dst, or, on failure, is still the temporary file.
//
// An existing destination is exchanged with the temporary file
// (renameat2 RENAME_EXCHANGE) and its old content, now under the
// temporary name, removed: readers see the old file or the new one, as
// with a rename (a file watcher sees two moves and a removal). Renaming
// onto an existing file costs more on ext4, whose replace-by-rename
// heuristic (auto_da_alloc) writes the new file's data out from inside
// the call, and whose removal of the old file then waits for the
// writeback a previous run started.
//
// What this gives up is that heuristic's guard for a crash of the
// machine: within the kernel's writeback delay (about 30 s) after a run,
// a crash can now leave a replaced output empty, where ext4 would have
// kept the new content. hopctl's outputs are regenerable and never
// synced (writeTemp), an empty or partial graph file is refused when
// read (exit 3), and rerunning the command repairs it. Any failure of
// the exchange (a file system without it, a destination gone) falls back
// to the rename.
func swapIn(tmp, dst string, exists bool) (swapped bool, err error) {
	if exists && exchange(tmp, dst) == nil {
		return true, nil
	}
	return false, os.Rename(tmp, dst)
}

// removeSwapped removes what swapIn swapped out of a destination, now
// under the temporary name tmp: unlink, never rmdir, as what was swapped
// out is only removed if it is not a directory put at the destination
// since it was resolved; gone already (a file system that renamed instead
// of exchanging, another process, an interrupt's RemovePendingTempFiles),
// it need not be. On failure the caller puts the new file in place
// another way (putBack).
func removeSwapped(tmp string) error {
	if err := unlink(tmp); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// putBack, after removeSwapped failed with uerr, swaps what tmp holds back
// into dst and renames the new file onto it, which then fails as it would
// have (a directory) or replaces what it would have. On failure it reports
// whether tmp is still the temporary file (holding the new content), for
// the caller to remove; after a double failure it is not: the new file is
// in place and what it replaced is under the temporary name, which is no
// longer ours to remove.
func putBack(tmp, dst string, uerr error) (tmpIntact bool, err error) {
	if err := exchange(tmp, dst); err != nil {
		return false, fmt.Errorf("replaced, but what it replaced is left as %s: %w", tmp, errors.Join(uerr, err))
	}
	return true, os.Rename(tmp, dst)
}

// removePending removes a pending temporary file for
// RemovePendingTempFiles: unlink, never rmdir, as removeSwapped, for the
// name may hold what swapIn swapped out of a destination, a directory put
// there since it was resolved.
func removePending(name string) error { return unix.Unlink(name) }

// The system calls of swapIn, removeSwapped and putBack, variables for
// their tests.
var (
	exchange = func(a, b string) error {
		return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	}
	unlink = unix.Unlink
)
