package lint

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hopctl/hopctl/pkg/pt2"
)

// GraphExtensions are the extensions directory walking takes for graph
// files: hopctl's three encodings and torch.export's .pt2 archives (package
// pt2). A ".json" file is taken only when it looks like a hopctl graph or
// an ExportedProgram (graphJSON): repositories hold many other JSON
// files.
var GraphExtensions = []string{".pb", ".binpb", ".pbtxt", ".txtpb", ".textproto", ".prototxt", ".pt2", ".json"}

// Expand turns lint's arguments into files, as go and golangci-lint read
// package patterns: "DIR/..." (and "./...") is every graph file under DIR,
// recursively; a directory is the graph files directly in it; anything
// else is a file, taken as given whatever its extension (a missing one is
// reported when it is read). Directories whose name starts with "." or
// "_", and node_modules, are skipped while walking, as go skips them.
// Files come in argument order, each directory's sorted by path, without
// repeats. Expand returns the files to check only; ExpandEntries also
// what a walk skipped or could not list.
func Expand(args []string) ([]string, error) {
	entries, err := ExpandEntries(args)
	var out []string
	for _, e := range entries {
		if e.Skip == "" && e.Err == nil {
			out = append(out, e.Path)
		}
	}
	return out, err
}

// Entry is one path an expansion found: a file to check, a file a walk
// skips (Skip says why), or a path it could not list (Err).
type Entry struct {
	Path string
	Skip string
	Err  error
}

// ExpandEntries is Expand with every file a walk met accounted for, so
// that nothing in a directory is dropped silently: besides the files to
// check, a graph file that is not a regular file (a named pipe, which
// would block the read, a socket, a device, or a symbolic link to one) is
// skipped with a reason and never opened, as is a link into /proc or
// /sys; in a recursive walk a symbolic
// link to a directory is skipped with a reason (walks do not follow links,
// so a link loop cannot make them endless); a directory that cannot be
// listed (permissions, a path too long, an entry that vanished) is an
// entry with its error and the walk goes on. A file given as an argument
// is always read, whatever it is.
func ExpandEntries(args []string) ([]Entry, error) {
	var out []Entry
	seen := map[string]bool{}
	add := func(e Entry) {
		if !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e)
		}
	}
	for _, a := range args {
		if dir, ok := strings.CutSuffix(filepath.ToSlash(a), "/..."); ok || a == "..." {
			if a == "..." || dir == "" {
				dir = "."
			}
			for _, e := range walk(filepath.FromSlash(dir), true) {
				add(e)
			}
			continue
		}
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			for _, e := range walk(a, false) {
				add(e)
			}
			continue
		}
		add(Entry{Path: a})
	}
	return out, nil
}

func walk(dir string, recursive bool) []Entry {
	var out []Entry
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// The root, or a directory that cannot be listed (WalkDir
			// calls again with the error), or an entry that vanished.
			out = append(out, Entry{Path: p, Err: err})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if !recursive || skippedDir(name) {
				return filepath.SkipDir
			}
			return nil
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			switch {
			case err != nil:
				// Dangling, a loop of links, or vanished: reading it
				// reports why.
				if hasGraphExtension(p) {
					out = append(out, Entry{Path: p})
				}
				return nil
			case st.IsDir():
				if recursive && !skippedDir(name) {
					out = append(out, Entry{Path: p, Skip: "a symbolic link to a directory: not followed (walk its target instead)"})
				}
				return nil
			}
			mode = st.Mode().Type()
			if fsys := kernelFS(p); fsys != "" && hasGraphExtension(p) {
				// /proc/kmsg is a regular file whose read blocks.
				out = append(out, Entry{Path: p, Skip: "a symbolic link into " + fsys + " (a kernel file system): not read in a directory walk (give it as an argument to read it)"})
				return nil
			}
		}
		if !hasGraphExtension(p) {
			return nil
		}
		if !mode.IsRegular() {
			out = append(out, Entry{Path: p, Skip: fmt.Sprintf("%s, not a regular file: not read in a directory walk (give it as an argument to read it)", describeMode(mode, d.Type()&fs.ModeSymlink != 0))})
			return nil
		}
		if ok, err := isGraphFile(p); ok || err != nil {
			out = append(out, Entry{Path: p}) // an unreadable file: reading it reports why
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// kernelFS is "/proc" or "/sys" when the link p leads into one of them,
// else "". Their files say they are regular, but their sizes are not their
// contents and some reads block (/proc/kmsg) or fail (/proc/self/mem).
func kernelFS(p string) string {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	for _, fsys := range []string{"/proc", "/sys"} {
		if target == fsys || strings.HasPrefix(target, fsys+"/") {
			return fsys
		}
	}
	return ""
}

// skippedDir reports whether a walk skips a directory of this name, as go
// does: hidden, "_"-prefixed and node_modules.
func skippedDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules"
}

// describeMode names a file type that is not a regular file.
func describeMode(mode fs.FileMode, link bool) string {
	what := "a special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	}
	if link {
		return "a symbolic link to " + what
	}
	return what
}

func hasGraphExtension(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return slices.Contains(GraphExtensions, ext)
}

// isGraphFile reports whether walking takes file p: its extension is one
// of GraphExtensions and, for ".json", graphJSON; the error is that of a
// ".json" file that could not be opened to look at.
func isGraphFile(p string) (bool, error) {
	if !hasGraphExtension(p) {
		return false, nil
	}
	if strings.ToLower(filepath.Ext(p)) != ".json" {
		return true, nil
	}
	return graphJSON(p)
}

// graphJSON reports whether a JSON file looks like a graph file: its
// first 64 KiB name hopctl's format version ("formatVersion", protobuf
// JSON's name of format_version), or it is an ExportedProgram
// (pt2.IsProgramJSON).
func graphJSON(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	head = head[:n]
	return bytes.Contains(head, []byte(`"formatVersion"`)) || bytes.Contains(head, []byte(`"format_version"`)) || pt2.IsProgramJSON(head), nil
}

// modelExtensions are the extensions of the files a PyTorch project keeps
// models in that are not graph files: torch.save checkpoints and
// TorchScript (.pt, .pth, .ckpt), ONNX and the Python source. A walk that
// finds no graph file but these says so (NotGraphFiles).
var modelExtensions = []string{".pt", ".pth", ".ckpt", ".onnx", ".py"}

// NotGraphFiles describes the model files that are not graph files which
// the directories of args hold, walked as Expand walks them: "2 .pt and 1
// .py files", or "" when there are none.
func NotGraphFiles(args []string) string {
	counts := map[string]int{}
	for _, a := range args {
		dir, recursive := strings.CutSuffix(filepath.ToSlash(a), "/...")
		if a == "..." || recursive && dir == "" {
			dir, recursive = ".", true
		}
		if st, err := os.Stat(filepath.FromSlash(dir)); err != nil || !st.IsDir() {
			continue
		}
		root := filepath.FromSlash(dir)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && p != root && (!recursive || skippedDir(d.Name())):
				return filepath.SkipDir
			case d.Type().IsRegular():
				if ext := strings.ToLower(filepath.Ext(p)); slices.Contains(modelExtensions, ext) {
					counts[ext]++
				}
			}
			return nil
		})
	}
	var parts []string
	for _, ext := range modelExtensions {
		if n := counts[ext]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ext))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, ", ")
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " and " + s[i+2:]
	}
	return s + " files"
}
