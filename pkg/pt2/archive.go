package pt2

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
)

// maxEntries bounds how many entries an archive may list.
const maxEntries = 1 << 20

// zipMagic starts every zip file whose first entry is a local header.
var zipMagic = []byte("PK\x03\x04")

// IsArchive reports whether data looks like a zip archive.
func IsArchive(data []byte) bool {
	return bytes.HasPrefix(data, zipMagic) || bytes.HasPrefix(data, []byte("PK\x05\x06"))
}

// archive is what a .pt2 file yields: the program JSON and where it came
// from.
type archive struct {
	layout      string // "pt2_archive" (torch ≥ 2.8) or "legacy" (torch 2.1–2.7)
	programPath string // entry name of the program JSON
	program     []byte
	version     string // legacy "version" entry ("8.2"), if any
	// sampleInputs is the torch.save zip of the program's example inputs,
	// nil when the archive has none (sampleinputs.go).
	sampleInputs []byte
}

// readArchive finds and reads the ExportedProgram JSON of a .pt2 archive
// in either layout:
//
//   - pt2_archive (torch/export/pt2_archive/_package.py, torch ≥ 2.8):
//     every entry under one top-level folder holding archive_format
//     ("pt2"), archive_version ("0") and models/<name>.json;
//   - legacy (torch/_export/__init__.py save, torch 2.1–2.7): entries at
//     the root, the program in serialized_exported_program.json and its
//     schema version in "version".
//
// Weights, constants and example inputs (pickles and raw storages) are
// never read. Entry names that escape the archive (absolute, "..",
// backslashes, NUL) and duplicate names are refused: a reader that
// unpacked the archive would write outside its folder or keep either copy.
func readArchive(data []byte) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("not a readable .pt2 (zip) archive: %w", err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("archive lists %d entries (at most %d are read)", len(zr.File), maxEntries)
	}
	byName := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if err := checkEntryName(f.Name); err != nil {
			return nil, fmt.Errorf("archive entry %q: %w", f.Name, err)
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("archive entry %q is a symbolic link (torch.export never writes one)", f.Name)
		}
		if _, dup := byName[f.Name]; dup {
			return nil, fmt.Errorf("archive entry %q appears twice", f.Name)
		}
		byName[f.Name] = f
	}
	// pt2_archive: a folder holding archive_format.
	var prefixes []string
	for name := range byName {
		if dir, base := path.Split(name); base == "archive_format" && strings.Count(dir, "/") <= 1 {
			prefixes = append(prefixes, dir)
		}
	}
	slices.Sort(prefixes)
	if len(prefixes) > 1 {
		return nil, fmt.Errorf("archive has %d archive_format entries (%s): which package to read is ambiguous", len(prefixes), strings.Join(prefixes, ", "))
	}
	if len(prefixes) == 1 {
		return readPackage(byName, prefixes[0])
	}
	f, ok := byName["serialized_exported_program.json"]
	if !ok {
		return nil, errors.New("archive has neither archive_format (torch ≥ 2.8 layout) nor serialized_exported_program.json (torch 2.1–2.7 layout): not a torch.export archive")
	}
	a := &archive{layout: "legacy", programPath: f.Name}
	if vf, ok := byName["version"]; ok {
		v, err := readEntry(vf, 64)
		if err != nil {
			return nil, err
		}
		a.version = strings.TrimSpace(string(v))
		major, _, _ := strings.Cut(a.version, ".")
		if n, err := strconv.Atoi(major); err != nil || n != newestMajor {
			return nil, fmt.Errorf("archive entry version says schema %q; this hopctl reads major %d", a.version, newestMajor)
		}
	}
	if a.program, err = readProgram(f); err != nil {
		return nil, err
	}
	a.sampleInputs = readSampleInputs(byName["serialized_example_inputs.pt"])
	return a, nil
}

// readSampleInputs reads the example inputs entry f, if any, within the
// input size limit; nil when there is none or it cannot be read (the
// program does not need it: storage sharing then stays unknown).
func readSampleInputs(f *zip.File) []byte {
	if f == nil {
		return nil
	}
	b, err := readEntry(f, ir.MaxInputSize())
	if err != nil {
		return nil
	}
	return b
}

// readPackage reads a pt2_archive package rooted at prefix ("model/").
func readPackage(byName map[string]*zip.File, prefix string) (*archive, error) {
	small := func(name string) (string, error) {
		f, ok := byName[prefix+name]
		if !ok {
			return "", fmt.Errorf("archive has no %s%s", prefix, name)
		}
		b, err := readEntry(f, 64)
		return strings.TrimSpace(string(b)), err
	}
	format, err := small("archive_format")
	if err != nil {
		return nil, err
	}
	if format != "pt2" {
		return nil, fmt.Errorf("%sarchive_format is %q, not \"pt2\"", prefix, format)
	}
	version, err := small("archive_version")
	if err != nil {
		return nil, err
	}
	if version != "0" {
		return nil, fmt.Errorf("%sarchive_version is %q; this hopctl reads archive version 0", prefix, version)
	}
	var models []string
	for name := range byName {
		if rest, ok := strings.CutPrefix(name, prefix+"models/"); ok && strings.HasSuffix(rest, ".json") && !strings.Contains(rest, "/") {
			models = append(models, name)
		}
	}
	slices.Sort(models)
	var pick string
	switch {
	case len(models) == 0:
		return nil, fmt.Errorf("archive has no %smodels/*.json: no exported program in it (an AOTInductor-only package?)", prefix)
	case slices.Contains(models, prefix+"models/model.json"):
		// torch.export.save writes "model"; torch.export.load reads it.
		pick = prefix + "models/model.json"
	case len(models) == 1:
		pick = models[0]
	default:
		return nil, fmt.Errorf("archive has %d programs and none is named model (%s): which one to read is ambiguous", len(models), strings.Join(models, ", "))
	}
	prog, err := readProgram(byName[pick])
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.TrimPrefix(pick, prefix+"models/"), ".json")
	return &archive{layout: "pt2_archive", programPath: pick, program: prog,
		sampleInputs: readSampleInputs(byName[prefix+"data/sample_inputs/"+name+".pt"])}, nil
}

// checkEntryName refuses names that would escape the archive's folder.
func checkEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("empty entry name")
	case strings.ContainsAny(name, "\\\x00"):
		return errors.New("entry name contains a backslash or NUL")
	case strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':'):
		return errors.New("absolute entry name (path traversal)")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return errors.New("entry name escapes the archive (path traversal)")
		}
	}
	return nil
}

// readProgram reads a program JSON entry, at most the input size limit
// (ir.MaxInputSize, input.max-size: an entry is an input as much as the
// archive) as it inflates, and stops at the first chunk that is not JSON
// text, so a zip bomb — a few bytes that inflate to gigabytes — costs what
// of it looks like JSON, within the limit.
func readProgram(f *zip.File) ([]byte, error) {
	return readEntryChecked(f, ir.MaxInputSize(), ir.CheckText)
}

// readEntry reads a small entry (archive_format, version), at most limit
// bytes.
func readEntry(f *zip.File, limit int64) ([]byte, error) {
	return readEntryChecked(f, limit, nil)
}

// readEntryChecked reads one entry, refusing it when its declared size
// exceeds limit (before inflating anything) and, as it inflates, when its
// data passes limit or check refuses a chunk (ir.ReadBounded: memory
// follows the data read, never the declared size); archive/zip itself
// refuses an entry whose data inflates past the declared size or fails
// its CRC.
func readEntryChecked(f *zip.File, limit int64, check func(off int64, chunk []byte) error) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("archive entry %s declares %d bytes, more than the input size limit of %d bytes (a zip bomb?)", f.Name, f.UncompressedSize64, limit)
	}
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return nil, fmt.Errorf("archive entry %s uses compression method %d (only stored and deflate are read)", f.Name, f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("archive entry %s: %w", f.Name, err)
	}
	defer rc.Close()
	checkErr := false
	var c func(int64, []byte) error
	if check != nil {
		c = func(off int64, chunk []byte) error {
			err := check(off, chunk)
			checkErr = err != nil
			return err
		}
	}
	b, err := ir.ReadBounded(rc, limit, c)
	var tl *ir.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("archive entry %s inflates past %d bytes (a zip bomb?)", f.Name, limit)
	case checkErr:
		return nil, fmt.Errorf("archive entry %s is not JSON: %w", f.Name, err)
	case err != nil:
		return nil, fmt.Errorf("archive entry %s: %w (truncated or corrupt archive)", f.Name, err)
	}
	return b, nil
}

// quoteNonFinite rewrites the bare tokens NaN, Infinity and -Infinity
// that Python's json writes by default (torch 2.6) into the strings torch
// 2.14 writes, so encoding/json can read them. Only text outside strings
// is touched; data without such tokens is returned as is.
func quoteNonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out []byte
	last := 0
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == 'N' && bytes.HasPrefix(data[i:], []byte("NaN")),
			c == 'I' && bytes.HasPrefix(data[i:], []byte("Infinity")),
			c == '-' && bytes.HasPrefix(data[i:], []byte("-Infinity")):
			n := 3
			if c == 'I' {
				n = 8
			} else if c == '-' {
				n = 9
			}
			if out == nil {
				out = make([]byte, 0, len(data)+64)
			}
			out = append(out, data[last:i]...)
			out = append(out, '"')
			out = append(out, data[i:i+n]...)
			out = append(out, '"')
			i += n - 1
			last = i + 1
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
