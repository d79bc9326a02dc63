package lint

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hopctl/hopctl/pkg/pt2"
)

// GraphExtensions are the extensions directory walking takes for graph
// files: hopctl's three encodings and torch.export's .pt2 archives (package
// pt2). A ".json" file is taken only when it looks like a hopctl graph or
// an ExportedProgram (IsGraphJSON): repositories hold many other JSON
// files.
var GraphExtensions = []string{".pb", ".binpb", ".pbtxt", ".txtpb", ".textproto", ".prototxt", ".pt2", ".json"}

// Expand turns lint's arguments into files, as go and golangci-lint read
// package patterns: "DIR/..." (and "./...") is every graph file under DIR,
// recursively; a directory is the graph files directly in it; anything
// else is a file, taken as given whatever its extension (a missing one is
// reported when it is read). Directories whose name starts with "." or
// "_", and node_modules, are skipped while walking, as go skips them.
// Files come in argument order, each directory's sorted by path, without
// repeats.
func Expand(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		if dir, ok := strings.CutSuffix(filepath.ToSlash(a), "/..."); ok || a == "..." {
			if a == "..." || dir == "" {
				dir = "."
			}
			files, err := walk(filepath.FromSlash(dir), true)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				add(f)
			}
			continue
		}
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			files, err := walk(a, false)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				add(f)
			}
			continue
		}
		add(a)
	}
	return out, nil
}

func walk(dir string, recursive bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == dir {
				return nil
			}
			name := d.Name()
			if !recursive || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if IsGraphFile(p) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// IsGraphFile reports whether walking takes file p: its extension is one
// of GraphExtensions and, for ".json", IsGraphJSON.
func IsGraphFile(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	for _, e := range GraphExtensions {
		if ext == e {
			return ext != ".json" || IsGraphJSON(p)
		}
	}
	return false
}

// IsGraphJSON reports whether a JSON file looks like a graph file: its
// first 64 KiB name hopctl's format version ("formatVersion", protobuf
// JSON's name of format_version), or it is an ExportedProgram
// (pt2.IsProgramJSON).
func IsGraphJSON(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return bytes.Contains(head, []byte(`"formatVersion"`)) || bytes.Contains(head, []byte(`"format_version"`)) || pt2.IsProgramJSON(head)
}
