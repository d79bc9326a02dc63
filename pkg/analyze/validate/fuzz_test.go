package validate_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/report"
)

// FuzzAnalyze runs what `hopctl analyze` and `hopctl lint` run on a file —
// decode, Verify, the schema table, validate.Check, every analyzer — and
// checks that nothing panics, that a refusal is an ir.InputError, and that
// the analysis is deterministic: two runs give equal results, equal
// findings and byte-identical reports. Seeds: every shipped graph and the
// adversarial corpus, in the binary encoding.
func FuzzAnalyze(f *testing.F) {
	var paths []string
	for _, glob := range []string{"../../../testdata/models/*.pb", "../../../testdata/hops/*.pbtxt", "../../../testdata/lint/*.pbtxt", "../../../testdata/bad/*.p*"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	for _, p := range paths {
		m, err := ir.LoadFile(p)
		if err != nil {
			continue
		}
		if data, err := ir.Encode(m, ir.Binary); err == nil && len(data) < 1<<16 {
			f.Add(data)
		}
	}
	f.Fuzz(fuzzPipeline)
}

// fuzzPipeline runs decode, Verify, the schema table, validate.Check and
// every analyzer twice on data, checking determinism.
func fuzzPipeline(t *testing.T, data []byte) {
	const file = "fuzz.pb"
	m, err := ir.Decode(data, ir.Binary, file)
	if err == nil {
		err = ir.Verify(m, file)
	}
	if err != nil {
		return
	}
	reg, err := load.Registry(m, file)
	if err == nil {
		err = validate.Check(m, file, reg)
	}
	if err != nil {
		if _, ok := err.(ir.InputError); !ok {
			t.Fatalf("refusal is not an ir.InputError: %T %v", err, err)
		}
		return
	}
	var results [2]*analyze.Result
	var reports [2][]byte
	for i := range results {
		res, err := analyze.Run(m, file, reg, passes.All()...)
		if err != nil {
			// An analyzer that cannot finish on a valid file is a bug.
			t.Fatalf("analysis of a valid file failed: %v", err)
		}
		results[i] = res
		doc := &report.AnalyzeDoc{SchemaVersion: report.AnalyzeSchemaVersion, Files: []report.AnalyzeFile{report.NewAnalyzeFile(file, m, res)}}
		var b bytes.Buffer
		if err := report.WriteJSON(&b, doc); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteAnalyzeText(&b, doc); err != nil {
			t.Fatal(err)
		}
		reports[i] = b.Bytes()
	}
	if !reflect.DeepEqual(results[0].Findings, results[1].Findings) {
		t.Fatalf("findings differ between two runs:\n%v\n---\n%v", results[0].Findings, results[1].Findings)
	}
	if !reflect.DeepEqual(results[0].Results, results[1].Results) {
		t.Fatal("analyzer results differ between two runs")
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Fatal("reports differ between two runs")
	}
}

// editTargets are the call targets FuzzAnalyzeEdits rewrites nodes to: ops
// that write, view, alias through wildcards, and every HOP shape.
var editTargets = []string{
	"aten.add_.Tensor", "aten.add.Tensor", "aten.view.default", "aten.t.default", "aten.copy_.default",
	"aten.sin.default", "aten.split.Tensor", "aten.unbind.int", "aten.cat.default", "aten.native_batch_norm.default",
	"aten.index_put_.default", "_operator.getitem", "higher_order.cond", "higher_order.while_loop",
	"higher_order.scan", "higher_order.map_impl", "higher_order.associative_scan", "higher_order.invoke_subgraph",
	"higher_order.with_effects", "higher_order.auto_functionalized", "higher_order.flex_attention", "higher_order.unknown_hop",
}

var editSeeds []*ir.Module

func loadEditSeeds(f *testing.F) {
	paths, _ := filepath.Glob("../../../testdata/hops/*.pbtxt")
	more, _ := filepath.Glob("../../../testdata/models/*.pb")
	for _, p := range append(paths, more...) {
		m, err := ir.Load(p)
		if err != nil {
			f.Fatal(err)
		}
		if n := len(m.Root().Nodes); n < 2000 {
			editSeeds = append(editSeeds, m)
		}
	}
}

// FuzzAnalyzeEdits is FuzzAnalyze on graphs the fuzzer edits rather than
// bytes it flips: it starts from a shipped graph and applies edits (point
// an argument at another node, retarget a call, drop or wrap an argument,
// share a storage, change a value, add a keyword argument, point a get_attr
// at another subgraph), which reach the analyzers far more often than
// corrupt bytes, which mostly fail to decode.
func FuzzAnalyzeEdits(f *testing.F) {
	loadEditSeeds(f)
	for i := range editSeeds {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 1, 2, 3, 1, 0, 5, 12, 4, 0, 0, 0})
	}
	f.Fuzz(func(t *testing.T, seed uint8, edits []byte) {
		if len(editSeeds) == 0 || len(edits) > 64 {
			return
		}
		// Edit a copy: encode the seed, edit, re-encode so references
		// resolve, then run the pipeline on the bytes.
		data, err := ir.Encode(editSeeds[int(seed)%len(editSeeds)], ir.Binary)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Decode(data, ir.Binary, "seed")
		if err != nil {
			t.Fatal(err)
		}
		for len(edits) >= 4 {
			edit(m, edits[0], edits[1], edits[2], edits[3])
			edits = edits[4:]
		}
		if data, err = ir.Encode(m, ir.Binary); err != nil {
			t.Fatal(err)
		}
		fuzzPipeline(t, data)
	})
}

// edit applies one edit op to node n of graph g, with operand v.
func edit(m *ir.Module, op, gi, ni, v byte) {
	g := m.Graphs[int(gi)%len(m.Graphs)]
	if len(g.Nodes) == 0 {
		return
	}
	n := &g.Nodes[int(ni)%len(g.Nodes)]
	other := g.Nodes[int(v)%len(g.Nodes)].Name
	ref := ir.Arg{Kind: ir.ArgNode, S: other, Ref: ir.NoNode}
	tensor := func() *ir.Value {
		return &ir.Value{Kind: ir.ValTensor, Tensor: &ir.TensorMeta{Shape: []ir.Dim{{Val: 4}}, Stride: []ir.Dim{{Val: 1}}, Dtype: "float32", Device: "cpu"}}
	}
	switch op % 8 {
	case 0:
		if len(n.Args) == 0 {
			n.Args = append(n.Args, ref)
		} else {
			n.Args[int(v)%len(n.Args)] = ref
		}
	case 1:
		if n.Op != ir.OpPlaceholder && n.Op != ir.OpOutput {
			n.Op, n.Target = ir.OpCallFunction, editTargets[int(v)%len(editTargets)]
		}
	case 2:
		if len(n.Args) > 0 {
			n.Args = n.Args[:len(n.Args)-1]
		}
	case 3:
		if len(n.Args) > 0 {
			k := int(v) % len(n.Args)
			n.Args[k] = ir.Arg{Kind: ir.ArgList + ir.ArgKind(v%2), Elems: []ir.Arg{n.Args[k], ref}}
		}
	case 4:
		if n.Val != nil && n.Val.Kind == ir.ValTensor {
			c := n.Val.Clone()
			c.Tensor.HasStorageID, c.Tensor.StorageID = true, int64(v%3)
			n.Val = c
		}
	case 5:
		switch v % 3 {
		case 0:
			n.Val = nil
		case 1:
			n.Val = &ir.Value{Kind: ir.ValTuple, Elems: []ir.Value{*tensor(), *tensor()}}
		default:
			n.Val = tensor()
		}
	case 6:
		names := []string{"out", "alpha", "self", "other", "training"}
		n.Kwargs = append(n.Kwargs, ir.Kwarg{Name: names[int(v)%len(names)], Value: ref})
	case 7:
		if n.Op == ir.OpGetAttr && len(m.Graphs) > 1 {
			sub := m.Graphs[1+int(v)%(len(m.Graphs)-1)].Name
			if g.Name == "" {
				n.Target = sub
			} else if rest, ok := strings.CutPrefix(sub, g.Name+"."); ok {
				n.Target = rest
			}
		}
	}
}
