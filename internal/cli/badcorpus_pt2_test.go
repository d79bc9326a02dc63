package cli_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// archiveCases are hostile torch.export archives and program JSON, built
// around the program torch 2.14 wrote for testdata/pt2/2.14/cond.aten.pt2.
func archiveCases(pt2Dir string) ([]Case, error) {
	real, err := os.ReadFile(filepath.Join(pt2Dir, "2.14", "cond.aten.pt2"))
	if err != nil {
		return nil, err
	}
	prog, err := programOf(real)
	if err != nil {
		return nil, err
	}
	pkg := func(extra ...entry) []byte {
		es := []entry{{name: "m/archive_format", data: []byte("pt2")}, {name: "m/archive_version", data: []byte("0")},
			{name: "m/models/model.json", data: prog}}
		return zipOf(append(es, extra...)...)
	}
	legacy := func(version string, p []byte) []byte {
		return zipOf(entry{name: "serialized_exported_program.json", data: p}, entry{name: "version", data: []byte(version)},
			entry{name: "serialized_state_dict.pt", data: []byte("not read")})
	}
	deep := []byte(`{"graph_module": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}")
	newer := bytes.Replace(prog, []byte(`"schema_version": {"major": 8`), []byte(`"schema_version": {"major": 9`), 1)
	unknownArg := bytes.Replace(prog, []byte(`{"as_tensor": {"name": "p"}}`), []byte(`{"as_tensor_v9": {"name": "p"}}`), 1)
	badSig := bytes.Replace(prog, []byte(`{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}`), []byte(`{"user_input": {"arg": {"as_tensor": {"name": "y"}}}}`), 1)
	twoKeys := bytes.Replace(prog, []byte(`{"as_tensor": {"name": "p"}}`), []byte(`{"as_tensor": {"name": "p"}, "as_int": 3}`), 1)
	for _, b := range [][]byte{newer, unknownArg, badSig, twoKeys} {
		if bytes.Equal(b, prog) {
			return nil, fmt.Errorf("cond.aten.pt2's program changed shape: a hostile edit no longer applies")
		}
	}
	cases := []Case{
		{Name: "pt2_zip_bomb.pt2", Doc: "an archive whose program entry declares 4 GiB (a zip bomb: refused before inflating)",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
				entry{name: "m/models/model.json", data: []byte("{}"), claim: 4 << 30}),
			Want: []string{"m/models/model.json declares 4294967296 bytes", "zip bomb"}},
		{Name: "pt2_lying_size.pt2", Doc: "an entry that declares 1 KiB but inflates to 64 MiB",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
				entry{name: "m/models/model.json", data: bytes.Repeat([]byte(" "), 64<<20), claim: 1024}),
			Want: []string{"m/models/model.json", "truncated or corrupt archive"}},
		{Name: "pt2_symlink.pt2", Doc: "a valid package plus a symbolic link entry pointing at /etc/passwd",
			Data: pkg(entry{name: "m/data/link", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}),
			Want: []string{`"m/data/link" is a symbolic link`}},
		{Name: "pt2_nested_zip.pt2", Doc: "a package whose program entry is itself a zip archive (a nested zip)",
			Data: pkg2(pkg2(prog)), Want: []string{"m/models/model.json is not JSON", "byte 2: a zip archive"}},
		{Name: "pt2_zero_bomb.pt2", Doc: "a program entry of 64 MiB of NUL bytes, deflated to 64 KiB: refused at its first byte",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
				entry{name: "m/models/model.json", data: make([]byte, 64<<20), claim: 64 << 20}),
			Want: []string{"m/models/model.json is not JSON", "byte 0"}},
		{Name: "pt2_truncated_directory.pt2", Doc: "a package whose central directory loses its last 20 bytes (the end record kept)",
			Data: truncateDirectory(pkg()), Want: []string{"not a readable .pt2 (zip) archive"}},
		{Name: "pt2_traversal.pt2", Doc: "a valid package plus an entry named ../../evil (path traversal)",
			Data: pkg(entry{name: "../../evil", data: []byte("x")}), Want: []string{`"../../evil"`, "path traversal"}},
		{Name: "pt2_absolute.pt2", Doc: "a valid package plus an entry with an absolute name",
			Data: pkg(entry{name: "/etc/evil", data: []byte("x")}), Want: []string{`"/etc/evil"`, "absolute entry name"}},
		{Name: "pt2_duplicate.pt2", Doc: "the program entry twice (which one a reader takes is arbitrary)",
			Data: pkg(entry{name: "m/models/model.json", data: []byte("{}")}), Want: []string{`"m/models/model.json" appears twice`}},
		{Name: "pt2_truncated.pt2", Doc: "testdata/pt2/2.14/cond.aten.pt2 cut in half",
			Data: real[:len(real)/2], Want: []string{"not a readable .pt2 (zip) archive"}},
		{Name: "pt2_not_zip.pt2", Doc: "a text file named .pt2",
			Data: []byte("hello\n"), Want: []string{"not a zip archive"}},
		{Name: "pt2_no_program.pt2", Doc: "a pt2_archive package without models/*.json",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")}),
			Want: []string{"no m/models/*.json"}},
		{Name: "pt2_no_version.pt2", Doc: "a pt2_archive package without archive_version",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/models/model.json", data: prog}),
			Want: []string{"no m/archive_version"}},
		{Name: "pt2_archive_version.pt2", Doc: "archive_version 1, newer than torch's loader reads",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("1")}, entry{name: "m/models/model.json", data: prog}),
			Want: []string{`m/archive_version is "1"`}},
		{Name: "pt2_two_programs.pt2", Doc: "two programs, neither named model: which one to read is ambiguous",
			Data: zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
				entry{name: "m/models/a.json", data: prog}, entry{name: "m/models/b.json", data: prog}),
			Want: []string{"2 programs and none is named model"}},
		{Name: "pt2_neither_layout.pt2", Doc: "a zip with neither archive_format nor serialized_exported_program.json",
			Data: zipOf(entry{name: "readme.txt", data: []byte("x")}), Want: []string{"not a torch.export archive"}},
		{Name: "pt2_legacy_version.pt2", Doc: "a torch 2.1–2.7 archive whose version entry says 7.0",
			Data: legacy("7.0", prog), Want: []string{`version says schema "7.0"`}},
		{Name: "pt2_newer_major.pt2", Doc: "a program of schema 9.20, newer than hopctl reads",
			Data: pkg2(newer), Want: []string{"schema version 9.20 is newer than this hopctl reads"}},
		{Name: "pt2_unknown_variant.pt2", Doc: "an Argument variant no schema has (as_tensor_v9)",
			Data: pkg2(unknownArg), Want: []string{`unknown Argument variant "as_tensor_v9"`}},
		{Name: "pt2_two_keys.pt2", Doc: "an Argument union object with two keys",
			Data: pkg2(twoKeys), Want: []string{"Argument must have exactly one key"}},
		{Name: "pt2_bad_signature.pt2", Doc: "a signature whose user input names y where the graph's placeholder is x",
			Data: pkg2(badSig), Want: []string{"graph <root>", `graph signature input 2 is "y" but placeholder 2 is "x"`}},
		{Name: "pt2_deep.pt2", Doc: "a program JSON nested 100,000 deep",
			Data: pkg2(deep), Want: []string{"m/models/model.json", "exceeded max depth"}},
		{Name: "deep_program.json", Doc: "a bare ExportedProgram JSON nested 100,000 deep",
			Data: deep, Want: []string{"ExportedProgram JSON", "exceeded max depth"}},
		{Name: "truncated_program.json", Doc: "cond.aten.pt2's program JSON cut in half",
			Data: prog[:len(prog)/2], Want: []string{"ExportedProgram JSON", "unexpected end of JSON input"}},
	}
	return cases, nil
}

// pkg2 is a pt2_archive package holding program p.
func pkg2(p []byte) []byte {
	return zipOf(entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
		entry{name: "m/models/model.json", data: p})
}

type entry struct {
	name string
	data []byte
	// claim, when set, is the uncompressed size the central directory
	// declares instead of the real one (the data is deflated).
	claim uint64
	mode  fs.FileMode // when set, the entry's mode (a symbolic link)
}

// zipOf writes a zip archive of the entries, in order, stored; an entry
// with a claim is deflated and declares the claimed size.
func zipOf(es ...entry) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range es {
		if e.claim == 0 {
			h := &zip.FileHeader{Name: e.name, Method: zip.Store}
			if e.mode != 0 {
				h.SetMode(e.mode)
			}
			w, err := zw.CreateHeader(h)
			if err == nil {
				_, err = w.Write(e.data)
			}
			if err != nil {
				panic(err)
			}
			continue
		}
		var c bytes.Buffer
		fw, _ := flate.NewWriter(&c, flate.BestCompression)
		fw.Write(e.data)
		fw.Close()
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(e.data),
			CompressedSize64: uint64(c.Len()), UncompressedSize64: e.claim}
		w, err := zw.CreateRaw(h)
		if err == nil {
			_, err = w.Write(c.Bytes())
		}
		if err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// truncateDirectory removes the last 20 bytes of a zip's central
// directory, keeping its end record (which then points past the entries
// it lists).
func truncateDirectory(z []byte) []byte {
	eocd := bytes.LastIndex(z, []byte("PK\x05\x06"))
	out := append([]byte{}, z[:eocd-20]...)
	return append(out, z[eocd:]...)
}

// programOf extracts the program JSON of a pt2_archive package.
func programOf(data []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/models/model.json") {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("no models/model.json")
}
