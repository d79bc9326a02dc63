package atomicfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// replace puts the temporary file tmp in place of dst, an existing regular
// file or a name that does not exist yet (exists says which, as dst was
// resolved). On failure it reports whether tmp is still the temporary
// file, for the caller to remove; after a double failure it is not
// (below).
//
// An existing destination is exchanged with the temporary file
// (renameat2 RENAME_EXCHANGE) and its old content, now under the
// temporary name, removed: readers see the old file or the new one, as
// with a rename. A rename onto an existing file costs more on ext4, whose
// replace-by-rename heuristic (auto_da_alloc) starts the new file's
// writeback inside the call and whose removal of the old file then waits
// for the writeback a previous run started: 0.23–0.74 s of the three
// renames of a 1M-node joint over its previous outputs, 0.5 ms for a
// 64 KB file, against 0.03–0.04 s and 0.04–0.07 ms exchanged and
// removed (docs/performance-log.md, Tenth pass). The heuristic is ext4's
// guard against an empty file after a crash of the machine for programs
// that do not sync; hopctl's outputs are regenerable and not synced
// (writeTemp), so what a crash may leave is unchanged: the old file, the
// new one, or an empty or partial one that rerunning repairs. A file
// system that cannot exchange (EINVAL), or a destination that is gone,
// falls back to the rename.
func replace(tmp, dst string, exists bool) (tmpIntact bool, err error) {
	if exists {
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE); err == nil {
			// unlink, never rmdir: what was swapped out is only removed
			// if it is not a directory put at dst since it was resolved.
			if err := unix.Unlink(tmp); err == nil {
				return false, nil
			}
			// Swapped back, the rename below fails as it would have
			// (a directory) or replaces what it would have.
			if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE); err != nil {
				// The new file is in place and what it replaced is
				// under the temporary name, which is no longer ours to
				// remove.
				return false, fmt.Errorf("replaced, but what it replaced could not be removed from %s nor put back: %w", tmp, err)
			}
		}
	}
	return true, os.Rename(tmp, dst)
}
