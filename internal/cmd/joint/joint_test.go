package joint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/partition"
	"github.com/hopctl/hopctl/pkg/report"
)

func TestNewCmdJoint(t *testing.T) {
	half := 0.5
	t.Chdir(t.TempDir())
	if err := os.WriteFile("a.pb", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmdtest.TestFlags(t, NewCmdJoint, func(o *Options, ios *iostreams.IOStreams) { o.IO = ios }, []cmdtest.FlagCase[Options]{
		{Args: "a.pb -o j.pb", Want: Options{In: "a.pb", Out: "j.pb", Masks: "auto", HOPConvention: "none", Format: "text"}},
		{Args: "a.pb -o j.pb --masks", Want: Options{In: "a.pb", Out: "j.pb", Masks: "auto", HOPConvention: "none", Format: "text"}},
		{Args: "a.pb -o j.pb --masks=1,0,1", Want: Options{In: "a.pb", Out: "j.pb", Masks: "1,0,1", HOPConvention: "none", Format: "text"}},
		// --masks VALUE as users type it: pflag leaves VALUE as an argument.
		{Args: "a.pb -o j.pb --masks 1,0,1", Want: Options{In: "a.pb", Out: "j.pb", Masks: "1,0,1", HOPConvention: "none", Format: "text"}},
		{Args: "--masks 1 a.pb -o j.pb", Want: Options{In: "a.pb", Out: "j.pb", Masks: "1", HOPConvention: "none", Format: "text"}},
		{Args: "a.pb --masks all -o j.pb", Want: Options{In: "a.pb", Out: "j.pb", Masks: "all", HOPConvention: "none", Format: "text"}},
		{Args: "a.pb --masks 1 b.pb -o j.pb", WantErr: "--masks takes its value after '=' (--masks=1,0,1"},
		{Args: "a.pb b.pb -o j.pb", WantErr: "too many arguments, want IN"},
		{Args: "a.pb --masks 1,x -o j.pb", WantErr: "--masks takes its value after '='"},
		{Args: "a.pb --masks=all --unmask-none-gradients --hop-convention create_bw_fn -o j.pb",
			Want: Options{In: "a.pb", Out: "j.pb", Masks: "all", UnmaskNone: true, HOPConvention: "create_bw_fn", Format: "text"}},
		{Args: "a.pb --partition mincut --fw-out f.pb --bw-out b.pb --report",
			Want: Options{In: "a.pb", Masks: "auto", HOPConvention: "none", Format: "text", Partition: "mincut", FwOut: "f.pb", BwOut: "b.pb", Report: true}},
		{Args: "", WantErr: "missing IN"},
		{Args: "a.pb --masks=1,x", WantErr: `invalid mask "x"`},
		{Args: "a.pb --partition fast", WantErr: `invalid value "fast" for --partition`},
		{Args: "a.pb --fw-out f.pb", WantErr: "need --partition"},
		{Args: "a.pb --report", WantErr: "need --partition"},
		{Args: "a.pb --partition default --hop-convention create_bw_fn", WantErr: "needs --hop-convention none"},
		{Args: "a.pb --hop-convention old", WantErr: `invalid value "old" for --hop-convention`},
		{Args: "a.pb -o x.pb --partition default --fw-out x.pb --bw-out y.pb", WantErr: "are the same file"},
		{Args: "a.pb", WantErr: "nothing to write: give -o OUT"},
		{Args: "a.pb --partition mincut", WantErr: "nothing to write: give --fw-out FW --bw-out BW"},
		{Args: "a.pb --partition mincut --fw-out f.pb", WantErr: "--fw-out and --bw-out go together"},
		{Args: "a.pb --partition mincut --bw-out b.pb -o j.pb", WantErr: "--fw-out and --bw-out go together"},
		{Args: "a.pb --partition mincut --fw-out - --bw-out b.pb", WantErr: "only a single output can go to standard output"},
		{Args: "a.pb --partition mincut --report", Want: Options{In: "a.pb", Masks: "auto", HOPConvention: "none", Format: "text", Partition: "mincut", Report: true}},
		{Args: "a.pb -o -", Want: Options{In: "a.pb", Out: "-", Masks: "auto", HOPConvention: "none", Format: "text"}},
		{Args: "a.pb --partition mincut --report --memory-budget 0.5",
			Want: Options{In: "a.pb", Masks: "auto", HOPConvention: "none", Format: "text", Partition: "mincut", Report: true, MemoryBudget: &half}},
		{Args: "a.pb --partition default --report --memory-budget 0.5", WantErr: "--memory-budget needs --partition mincut"},
		{Args: "a.pb --partition mincut --report --memory-budget 1.5", WantErr: "must be between 0 and 1"},
		{Args: "a.pb --partition mincut --report --memory-budget NaN", WantErr: "must be between 0 and 1"},
	})
}

func run(t *testing.T, opts *Options) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	opts.IO = ios
	if opts.Masks == "" {
		opts.Masks = "auto"
	}
	if opts.HOPConvention == "" {
		opts.HOPConvention = "none"
	}
	if err := validate(opts); err != nil {
		return "", err
	}
	err := jointRun(opts)
	return out.String(), err
}

// TestJointRunJSON: --format json gives the summary as the versioned
// document, its saved values those the text report lists, their bytes
// summing to the total.
func TestJointRunJSON(t *testing.T) {
	dir := t.TempDir()
	o := &Options{In: "../../../testdata/models/convbn.pb", Partition: "mincut",
		FwOut: filepath.Join(dir, "f.pb"), BwOut: filepath.Join(dir, "b.pb"), Format: "json"}
	stdout, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	var d report.JointDoc
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if d.SchemaVersion != report.JointSchemaVersion || len(d.Masks) != 1 || !d.Masks[0] || d.MaskSource != "auto" {
		t.Errorf("document %+v", d)
	}
	if len(d.MutatedInputs) != 1 || d.MutatedInputs[0].Name != "primals_9" || d.MutatedInputs[0].Index != 8 {
		t.Errorf("mutated inputs %+v, want primals_9 (8)", d.MutatedInputs)
	}
	if d.Partition == nil || d.Partition.Mode != "mincut" || len(d.Partition.Saved) != 12 {
		t.Fatalf("partition %+v, want mincut with 12 saved values", d.Partition)
	}
	var sum int64
	for _, s := range d.Partition.Saved {
		sum += s.Bytes
	}
	if sum != d.Partition.TotalBytes || sum == 0 {
		t.Errorf("saved bytes sum to %d, total %d", sum, d.Partition.TotalBytes)
	}
}

func TestJointRun(t *testing.T) {
	dir := t.TempDir()
	o := &Options{In: "../../../testdata/models/convbn.pb", Out: filepath.Join(dir, "j.pb"),
		Partition: "mincut", FwOut: filepath.Join(dir, "f.pbtxt"), BwOut: filepath.Join(dir, "b.json"), Report: true}
	stdout, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"masks: 1 (auto)", "mutated inputs (written back with copy_): primals_9",
		"partition mincut: 12 saved values", "saved value", "getitem_4", "total"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, p := range []string{o.Out, o.FwOut, o.BwOut} {
		m, err := ir.Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if p == o.Out {
			if a, _ := m.Annotation(jointgraph.AnnotationMasks); a != "1" {
				t.Errorf("mask annotation %q", a)
			}
		}
	}
}

func TestJointRunErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "j.pb")
	// An unreadable input is an input error (exit 3).
	_, err := run(t, &Options{In: filepath.Join(dir, "missing.pb"), Out: out})
	var ie ir.InputError
	if !errors.As(err, &ie) {
		t.Errorf("missing input: %v, want an ir.InputError", err)
	}
	// Masks that do not fit the graph: a usage error; nothing written.
	_, err = run(t, &Options{In: "../../../testdata/models/mlp.pb", Out: out, Masks: "1,0"})
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) {
		t.Errorf("bad masks: %v, want a FlagError", err)
	}
	// An op without a rule: an input error naming it; nothing written.
	src := filepath.Join(dir, "i1.pbtxt")
	g := `graph {
  nodes { name: "x" op: PLACEHOLDER target: "x" val {tensor {shape: [{value: 3}] stride: [{value: 1}] dtype: "float32" device: "cpu" requires_grad: true}} }
  nodes { name: "i1" op: CALL_FUNCTION target: "aten.special_i1.default" args {node: "x"} val {tensor {shape: [{value: 3}] stride: [{value: 1}] dtype: "float32" device: "cpu"}} }
  nodes { name: "output" op: OUTPUT target: "output" args {tuple {items {node: "i1"}}} }
}
format_version {major: 1}
`
	if err := os.WriteFile(src, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, &Options{In: src, Out: out, Partition: "default", FwOut: filepath.Join(dir, "f.pb"), BwOut: filepath.Join(dir, "b.pb")})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "aten.special_i1.default") || !strings.Contains(err.Error(), "node i1") {
		t.Errorf("no rule: %v, want an input error naming the op and node", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "i1.pbtxt" && e.Name() != "missing.pb" {
			t.Errorf("a failed run left %s behind", e.Name())
		}
	}
}

// TestJointTimings checks --timings: one line on stderr naming each phase,
// nothing on stdout, and no line without the flag.
func TestJointTimings(t *testing.T) {
	dir := t.TempDir()
	want := regexp.MustCompile(`^timings: load \d+\.\d ms, joint \d+\.\d ms, partition \d+\.\d ms, write \d+\.\d ms, total \d+\.\d ms\n$`)
	for _, on := range []bool{true, false} {
		ios, _, out, errOut := iostreams.Test()
		o := &Options{IO: ios, In: "../../../testdata/models/mlp.pb", Out: filepath.Join(dir, "j.pb"), Masks: "auto",
			HOPConvention: "none", Partition: "mincut", FwOut: filepath.Join(dir, "f.pb"), BwOut: filepath.Join(dir, "b.pb"), Timings: on}
		if err := jointRun(o); err != nil {
			t.Fatal(err)
		}
		if on && !want.MatchString(errOut.String()) || !on && errOut.Len() != 0 {
			t.Errorf("--timings=%v: stderr %q", on, errOut.String())
		}
		if strings.Contains(out.String(), "timings") {
			t.Errorf("--timings=%v: timings on stdout:\n%s", on, out.String())
		}
	}
}

// TestJointHOPOutputs partitions graphs with HOP subgraphs, which the
// joint, forward and backward modules share, and writes all three.
func TestJointHOPOutputs(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{"cond.pbtxt", "scan.pbtxt"} {
		for _, withJoint := range []bool{true, false} {
			o := &Options{In: filepath.Join("../../../testdata/hops", in), Partition: "mincut",
				FwOut: filepath.Join(dir, "f.pb"), BwOut: filepath.Join(dir, "b.pb")}
			if withJoint {
				o.Out = filepath.Join(dir, "j.pb")
			}
			if _, err := run(t, o); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			for _, p := range []string{o.FwOut, o.BwOut} {
				if _, err := ir.Load(p); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		}
	}
}

// TestCheckPartitioned: the forward and backward graphs of real models
// pass both checkPartitioned and the full check, and each thing the
// partition could get wrong is reported.
func TestCheckPartitioned(t *testing.T) {
	for _, model := range []string{"convbn", "lstm", "attention", "inplace_views"} {
		in, err := load.Open("../../../testdata/models/"+model+".pb", load.Strict)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jointgraph.Build(in.Module, jointgraph.Options{File: model, Registry: in.Registry})
		if err != nil {
			t.Fatal(err)
		}
		p, err := partition.Split(j, partition.MinCut)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := partition.SplitLazy(j, partition.MinCut)
		if err != nil {
			t.Fatal(err)
		}
		for _, backward := range []bool{false, true} {
			// what the command checks: the graphs read from the joint in place
			if m, nodes := lazy.Source(backward); checkPartitionedNodes(m, nodes, model) != nil {
				t.Errorf("%s (backward %v), in place: %v", model, backward, checkPartitionedNodes(m, nodes, model))
			}
		}
		for _, m := range []*ir.Module{p.Forward, p.Backward} {
			if err := checkPartitioned(m, model); err != nil {
				t.Errorf("%s: %v", model, err)
			}
			if err := checkWritten(m, model); err != nil {
				t.Errorf("%s: full check: %v", model, err)
			}
		}
		g := p.Backward.Root()
		last := len(g.Nodes) - 1
		// the first node with a reference
		k := -1
		for i := range g.Nodes {
			if g.Nodes[i].Op == ir.OpCallFunction && len(g.Nodes[i].Args) > 0 && g.Nodes[i].Args[0].Kind == ir.ArgNode {
				k = i
				break
			}
		}
		if k < 0 {
			t.Fatalf("%s: no call with a node argument", model)
		}
		corrupt := []struct {
			name, want string
			edit       func(g *ir.Graph)
		}{
			{"forward reference", "before its definition", func(g *ir.Graph) { g.Nodes[k].Args[0].Ref = ir.NodeID(last) }},
			{"dangling", "dangling reference", func(g *ir.Graph) { g.Nodes[k].Args[0].Ref = ir.NodeID(len(g.Nodes)) }},
			{"self", "uses itself", func(g *ir.Graph) { g.Nodes[k].Args[0].Ref = ir.NodeID(k) }},
			{"renamed", "points to node", func(g *ir.Graph) { g.Nodes[k].Args[0].S += "_x" }},
			{"no output", "missing output", func(g *ir.Graph) { g.Nodes = g.Nodes[:last] }},
			{"output first", "not the last", func(g *ir.Graph) { g.Nodes[0], g.Nodes[last] = g.Nodes[last], g.Nodes[0] }},
			{"empty name", "empty name", func(g *ir.Graph) { g.Nodes[k].Name = "" }},
			{"get_attr", `get_attr target "nope"`, func(g *ir.Graph) { g.Nodes[k] = ir.Node{Name: "x", Op: ir.OpGetAttr, Target: "nope"} }},
		}
		for _, c := range corrupt {
			ng := &ir.Graph{Nodes: slices.Clone(g.Nodes)}
			ng.Nodes[k].Args = slices.Clone(ng.Nodes[k].Args)
			c.edit(ng)
			m := *p.Backward
			m.Graphs = append([]*ir.Graph{ng}, p.Backward.Graphs[1:]...)
			err := verifyPartitioned(&m, ir.GraphNodes(ng), "bw.pb")
			var ie *ir.InternalError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: got %v, want an internal error with %q", model, c.name, err, c.want)
			}
		}
		// A reference whose name is equal to its node's but another string.
		ng := &ir.Graph{Nodes: slices.Clone(g.Nodes)}
		ng.Nodes[k].Args = slices.Clone(ng.Nodes[k].Args)
		ng.Nodes[k].Args[0].S = strings.Clone(ng.Nodes[k].Args[0].S)
		m := *p.Backward
		m.Graphs = append([]*ir.Graph{ng}, p.Backward.Graphs[1:]...)
		if err := checkPartitionedNodes(&m, ir.GraphNodes(ng), "bw.pb"); err != nil {
			t.Errorf("%s, an equal name in another string: %v", model, err)
		}
	}
}

// TestCheckPartitionedRefOrder: a node's references are checked in the
// order n.WalkRefs gives them, whatever holds them (an argument, a flat
// list, a nested one, a dict, a keyword argument), so the problems keep
// their order.
func TestCheckPartitionedRefOrder(t *testing.T) {
	ref := func(k int) ir.Arg { return ir.NodeArg(0, fmt.Sprint("r", k)) } // each misnamed: a problem
	list := func(kind ir.ArgKind, els ...ir.Arg) ir.Arg { return ir.WithElems(ir.Arg{Kind: kind}, els) }
	call := ir.Node{Name: "c", Op: ir.OpCallFunction, Target: "t",
		Args: []ir.Arg{ref(0), ir.IntArg(1), list(ir.ArgList, ref(1), ir.IntArg(2), ref(2)),
			list(ir.ArgTuple, ref(3), list(ir.ArgList, ref(4), ref(5)), ref(6)),
			ir.DictArg([]string{"a", "b"}, []ir.Arg{ref(7), ref(8)}), ref(9)},
		Kwargs: []ir.Kwarg{{Name: "k", Value: list(ir.ArgList, ref(10), ref(11))}, {Name: "l", Value: ref(12)}}}
	g := &ir.Graph{Nodes: []ir.Node{{Name: "x", Op: ir.OpPlaceholder, Target: "x"}, call,
		{Name: "output", Op: ir.OpOutput, Target: "output", Args: []ir.Arg{ir.NodeArg(1, "c")}}}}
	var want []string
	call.WalkRefs(func(a *ir.Arg) { want = append(want, a.S) })
	if len(want) != 13 {
		t.Fatalf("WalkRefs gave %d references", len(want))
	}
	err := checkPartitionedNodes(&ir.Module{Graphs: []*ir.Graph{g}}, ir.GraphNodes(g), "x.pb")
	var ve *ir.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want the misnamed references", err)
	}
	var got []string
	for _, p := range ve.Problems {
		name, _, _ := strings.Cut(strings.TrimPrefix(p.Msg, `reference named "`), `"`)
		got = append(got, name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems at %v, want %v", got, want)
	}
}

// --torch-version selects the release whose HOP backward rules apply, as
// it does for analyze: a torch 2.14 scan trace is differentiated as 2.14
// differentiates it, and refused as torch 2.6 refuses it (row
// scan-grad-2.6) under --torch-version 2.6, nothing written; the output
// records the version it follows.
func TestJointTorchVersion(t *testing.T) {
	dir := t.TempDir()
	in := "../../../testdata/hops_real/joint/scan_inplace.pb"
	out := filepath.Join(dir, "j.pb")
	if _, err := run(t, &Options{In: in, Out: out, TorchVersion: "2.14"}); err != nil {
		t.Fatalf("2.14: %v", err)
	}
	if m, err := ir.Load(out); err != nil || m.TorchVersion != "2.14" {
		t.Fatalf("2.14 output: %v, torch version %q", err, m.TorchVersion)
	}
	out26 := filepath.Join(dir, "j26.pb")
	_, err := run(t, &Options{In: in, Out: out26, TorchVersion: "2.6"})
	var ie ir.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "node scan: Autograd not implemented for scan") {
		t.Fatalf("2.6: %v, want torch 2.6's refusal at the scan", err)
	}
	if _, err := os.Stat(out26); !os.IsNotExist(err) {
		t.Errorf("2.6: an output was written (%v)", err)
	}
}
