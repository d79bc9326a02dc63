package ir

// Files a PyTorch user is likely to pass by mistake: the model's Python
// source, a torch.save checkpoint, a TorchScript or ONNX export. A decoder
// error on them ("unknown field: import", "not a torch.export archive")
// says nothing a user can act on, so LoadFile, when a file fails to
// decode, asks mistakeOf what it is and says that, with the export to run
// instead. testdata/mistaken holds each kind as real torch writes it
// (python/tools/make_mistaken.py).

import (
	"archive/zip"
	"bytes"
	"errors"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ExportHint is what to run to get a file hopctl reads from a model: the
// torch.export program, or the bridge's graph file for an FX GraphModule
// (python/hopctl_torch).
const ExportHint = `torch.export.save(torch.export.export(model, args), "model.pt2") and pass model.pt2 ` +
	`(for an FX GraphModule, the bridge: hopctl_torch.export(gm, "model.pb", example_inputs=args))`

// mistakes are the kinds of file recognised, each with what it is and
// what to do instead; the first that matches names the file.
var mistakes = []struct {
	match func(path string, data []byte, zipNames []string) bool
	what  string // what the file is
	next  string // what to do instead, before ExportHint
}{
	{isTorchScript, "a TorchScript archive (torch.jit.save: a zip with code/ and constants.pkl), not a torch.export archive",
		"export the eager nn.Module, not the scripted one"},
	{isTorchSaveZip, "a torch.save checkpoint (a zip with data.pkl: a state_dict or a pickled module), not a torch.export archive",
		"it holds weights, not the program: load them into the model and export it"},
	{isTorchSavePickle, "a torch.save file in the legacy pickle format (torch < 1.6, or _use_new_zipfile_serialization=False), not a graph file",
		"it holds weights, not the program: load them into the model and export it"},
	{isPickle, "a Python pickle, not a graph file", "export the model"},
	{isONNX, "an ONNX model (torch.onnx.export), not a graph file", "hopctl reads torch.export programs: export the nn.Module"},
	{isPython, "a Python source file, not a graph file", "build the model in Python and export it"},
}

// mistakeOf describes data, the content of the file at path, when it is
// one of the files torch users pass by mistake, else returns nil. It is
// only asked about files that failed to decode.
func mistakeOf(path string, data []byte) error {
	var names []string
	if bytes.HasPrefix(data, []byte("PK")) {
		if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil || errors.Is(err, zip.ErrInsecurePath) {
			for _, f := range zr.File {
				names = append(names, f.Name)
			}
		}
	}
	for _, m := range mistakes {
		if m.match(path, data, names) {
			return errors.New(m.what + "; " + m.next + ": " + ExportHint)
		}
	}
	return nil
}

// DirectoryError is the error of a directory given where a graph file is
// read: lint is the command that reads directories.
func DirectoryError(path string) error {
	return errors.New("is a directory, not a graph file; 'hopctl lint " + Printable(path) + "' checks every graph file in it ('" +
		Printable(strings.TrimSuffix(path, "/")) + "/...' recursively)")
}

// zipEntry reports whether an archive lists an entry whose name, below
// the one top-level folder torch writes every entry under, is rel (or
// starts with it, for a folder "code/").
func zipEntry(names []string, rel string) bool {
	for _, n := range names {
		if _, below, ok := strings.Cut(n, "/"); ok && (below == rel || strings.HasSuffix(rel, "/") && strings.HasPrefix(below, rel)) || n == rel {
			return true
		}
	}
	return false
}

// isExportArchive reports whether an archive has the entries of either
// torch.export layout; such an archive is a broken .pt2, not a mistake.
func isExportArchive(names []string) bool {
	return zipEntry(names, "archive_format") || zipEntry(names, "serialized_exported_program.json")
}

// isTorchScript: torch.jit.save writes the module's code under code/ and
// its constants in constants.pkl (torch/csrc/jit/serialization/export_module.cpp),
// beside a data.pkl.
func isTorchScript(_ string, _ []byte, names []string) bool {
	return !isExportArchive(names) && zipEntry(names, "constants.pkl") && zipEntry(names, "code/")
}

// isTorchSaveZip: torch.save's zip format (torch ≥ 1.6) is data.pkl and
// the storages under data/ (torch/serialization.py, _save).
func isTorchSaveZip(_ string, _ []byte, names []string) bool {
	return !isExportArchive(names) && zipEntry(names, "data.pkl")
}

// torchMagic is the first thing torch's legacy save pickles: the magic
// number 0x1950a86a20f9469cfc6c, as pickle's LONG1 opcode (0x8a) of 10
// little-endian bytes (torch/serialization.py, MAGIC_NUMBER).
var torchMagic = []byte("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")

// isPickle: a pickle of protocol 2 or later starts with PROTO (0x80) and
// its version.
func isPickle(_ string, data []byte, _ []string) bool {
	return len(data) >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5
}

func isTorchSavePickle(path string, data []byte, names []string) bool {
	return isPickle(path, data, names) && bytes.HasPrefix(data[2:], torchMagic)
}

// isONNX: by extension, or an ONNX ModelProto's start: ir_version (field
// 1, a varint; hopctl's files start with field 1 as bytes) followed by
// another ModelProto field (producer_name, graph, opset_import: 2 to 8).
func isONNX(path string, data []byte, _ []string) bool {
	if strings.EqualFold(filepath.Ext(path), ".onnx") {
		return true
	}
	num, typ, n := protowire.ConsumeTag(data)
	if n < 0 || num != 1 || typ != protowire.VarintType {
		return false
	}
	_, m := protowire.ConsumeVarint(data[n:])
	if m < 0 {
		return false
	}
	num, _, n = protowire.ConsumeTag(data[n+m:])
	return n > 0 && num >= 2 && num <= 8
}

// isPython: by extension, or text whose first statement is an import, a
// def or a class, or that starts with a python #! line.
func isPython(path string, data []byte, _ []string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py", ".pyw", ".pyi":
		return true
	}
	// Only the start is read: a large file that failed to decode is not
	// scanned again.
	head := data[:min(len(data), 4096)]
	if !textLike(head) {
		return false
	}
	if bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bytes.Cut(head, []byte("\n"))
		return bytes.Contains(line, []byte("python"))
	}
	for _, line := range strings.Split(string(head), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, kw := range []string{"import ", "from ", "def ", "class ", "@"} {
			if strings.HasPrefix(line, kw) {
				return true
			}
		}
		return false
	}
	return false
}
