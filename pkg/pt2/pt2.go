// Package pt2 reads what torch.export writes: .pt2 archives
// (torch.export.save) in both layouts torch has used, and bare
// ExportedProgram JSON (torch/_export/serde/schema.yaml), into hopctl's IR.
// The program's graph becomes the module's graphs (HOP subgraphs become
// submodules), tensor_values and symbolic values become meta["val"], and
// the graph signature becomes ir.Signature.
//
// Only the program JSON is read: weights, constants and example inputs —
// pickles and raw storages — are skipped, never unpickled.
//
// Importing the package registers the format with ir.LoadFile, so every
// command that reads a graph file reads these too.
package pt2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

func init() {
	ir.RegisterFormat(ir.Format{Name: "torch.export", Match: Match, Decode: Decode})
}

// Match reports whether a file is a torch.export archive or program: by
// extension (.pt2), by content (a zip archive, or a JSON object whose
// first key is an ExportedProgram field).
func Match(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".pt2") || IsArchive(data) {
		return true
	}
	return IsProgramJSON(data)
}

// programKeys are ExportedProgram's top-level fields; a hopctl JSON file
// starts with formatVersion/format_version instead.
var programKeys = map[string]bool{
	"graph_module": true, "opset_version": true, "range_constraints": true,
	"schema_version": true, "verifiers": true, "torch_version": true, "guards_code": true,
}

// IsProgramJSON reports whether data is a JSON object whose first key is
// one of ExportedProgram's fields.
func IsProgramJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(t[:min(len(t), 4096)]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	k, ok := tok.(string)
	return ok && programKeys[k]
}

// Decode reads a .pt2 archive or an ExportedProgram JSON file. file names
// the input in errors; every error is an ir.InputError.
func Decode(data []byte, file string) (*ir.Module, error) {
	fail := func(err error) (*ir.Module, error) {
		return nil, &ir.DecodeError{Loc: ir.Location{File: file}, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(errors.New("empty file: not a .pt2 archive or ExportedProgram JSON"))
	}
	var src *archive
	prog := data
	if IsArchive(data) || !IsProgramJSON(data) && bytes.HasPrefix(bytes.TrimSpace(data), []byte("PK")) {
		a, err := readArchive(data)
		if err != nil {
			return fail(err)
		}
		src, prog = a, a.program
	} else if !IsProgramJSON(data) {
		if strings.EqualFold(filepath.Ext(file), ".pt2") {
			return fail(errors.New("not a zip archive: a .pt2 file is the zip torch.export.save writes"))
		}
		return fail(errors.New("not an ExportedProgram JSON object"))
	}
	m, err := decodeProgram(prog, file, src)
	if err != nil {
		var de *ir.DecodeError
		if errors.As(err, &de) {
			return nil, err
		}
		where := ""
		if src != nil {
			where = src.programPath + ": "
		}
		return fail(fmt.Errorf("%s%w", where, err))
	}
	if src != nil && src.sampleInputs != nil {
		recordSampleSharing(m, src.sampleInputs)
	}
	return m, nil
}

func decodeProgram(data []byte, file string, src *archive) (*ir.Module, error) {
	var ep exportedProgram
	if err := json.Unmarshal(quoteNonFinite(data), &ep); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("ExportedProgram JSON is malformed at byte %d: %w", se.Offset, err)
		}
		return nil, fmt.Errorf("ExportedProgram JSON: %w", err)
	}
	if ep.SchemaVersion == nil || ep.SchemaVersion.Major == nil {
		return nil, errors.New("ExportedProgram has no schema_version")
	}
	major, minor := *ep.SchemaVersion.Major, int64(0)
	if ep.SchemaVersion.Minor != nil {
		minor = *ep.SchemaVersion.Minor
	}
	if major != newestMajor {
		if major > newestMajor {
			return nil, fmt.Errorf("schema version %d.%d is newer than this hopctl reads (%d.x, torch 2.5–2.14 and later 8.x); upgrade hopctl", major, minor, newestMajor)
		}
		return nil, fmt.Errorf("schema version %d.%d is older than this hopctl reads (%d.x, written by torch 2.5 and later); re-export with a newer torch", major, minor, newestMajor)
	}
	if src != nil && src.version != "" && !strings.HasPrefix(src.version, fmt.Sprint(major)+".") {
		return nil, fmt.Errorf("archive version entry %q disagrees with the program's schema_version %d.%d", src.version, major, minor)
	}
	gm := ep.GraphModule
	if gm == nil || gm.Graph == nil {
		return nil, errors.New("ExportedProgram has no graph_module.graph")
	}
	if gm.Signature == nil {
		return nil, errors.New("ExportedProgram has no graph_module.signature")
	}
	// An archive carries no op schemas: ops resolve against the built-in
	// table of the torch version it records (opschema.BuiltinTableFor). A
	// program without torch_version gets schema.yaml's default, "<=2.4"
	// (every 8.x program was written by torch 2.x, so the 2.x table).
	torchVersion := "<=2.4"
	if ep.TorchVersion != nil {
		torchVersion = *ep.TorchVersion
	}
	m := &ir.Module{
		FormatMajor:  ir.FormatMajor,
		FormatMinor:  ir.FormatMinor,
		Producer:     fmt.Sprintf("torch.export (schema %d.%d)", major, minor),
		TorchVersion: torchVersion,
	}
	c := &converter{file: file, minor: minor, mod: m, builtin: opschema.BuiltinTableFor(torchVersion), registered: map[string]*ir.Graph{}, sig: gm.Signature}
	m.Graphs = append(m.Graphs, nil)
	root, err := c.convertGraph("", gm.Graph, true)
	if err != nil {
		return nil, err
	}
	m.Graphs[0] = root
	sig, err := signatureOf(gm.Signature, gm.Graph)
	if err != nil {
		return nil, &ir.DecodeError{Loc: ir.InGraph(file, ""), Err: fmt.Errorf("graph signature: %w", err)}
	}
	m.Signature = sig
	shareStorage(root, sig)
	annotate(m, &ep, src, major, minor)
	return m, nil
}

// annotate records what the program says beyond its graph: where it came
// from, its dialect and its symbols' ranges.
func annotate(m *ir.Module, ep *exportedProgram, src *archive, major, minor int64) {
	m.SetAnnotation("torch.export.schema_version", fmt.Sprintf("%d.%d", major, minor))
	if src != nil {
		m.SetAnnotation("torch.export.archive_layout", src.layout)
	}
	if len(ep.Verifiers) > 0 {
		m.SetAnnotation("torch.export.verifiers", strings.Join(ep.Verifiers, ","))
	}
	if len(ep.RangeConstraints) > 0 {
		keys := make([]string, 0, len(ep.RangeConstraints))
		for k := range ep.RangeConstraints {
			keys = append(keys, k)
		}
		sortStrings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			rc := ep.RangeConstraints[k]
			fmt.Fprintf(&b, "%s: VR[%s, %s]", k, bound(rc.MinVal, "-int_oo"), bound(rc.MaxVal, "int_oo"))
		}
		b.WriteByte('}')
		m.SetAnnotation("torch.export.range_constraints", b.String())
	}
}

func bound(v *pyInt, inf string) string {
	if v == nil {
		return inf
	}
	return fmt.Sprint(int64(*v))
}

// shareStorage gives root placeholders that lift the same state_dict entry
// (torch 2.6's training IR lifted a parameter twice when the forward both
// called the module and read the parameter) one storage_id, so the alias
// analysis sees them alias, as torch's own check does (inp_inp_alias).
// Other placeholders get storages of their own, except user inputs: which
// of those were one tensor only the archive's example inputs say
// (recordSampleSharing); without them it is unknown, and they get none.
func shareStorage(g *ir.Graph, sig *ir.Signature) {
	ids := map[string]int64{}
	next := int64(0)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op != ir.OpPlaceholder || n.Val == nil || n.Val.Kind != ir.ValTensor {
			continue
		}
		key := "placeholder:" + n.Name
		sp := sig.InputByName(n.Name)
		if sp != nil && sp.Kind == ir.InputUserInput {
			continue
		}
		if sp != nil && sp.Target != "" {
			key = sp.Kind.String() + ":" + sp.Target
		}
		id, ok := ids[key]
		if !ok {
			id = next
			ids[key] = id
			next++
		}
		n.Val.Tensor.StorageID, n.Val.Tensor.HasStorageID = id, true
	}
}
