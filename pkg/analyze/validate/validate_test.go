package validate_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
)

// TestShippedGraphsAreValid checks that validation accepts every real and
// hand-written graph: it must never refuse what torch produces.
func TestShippedGraphsAreValid(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../../testdata/models/*.pb", "../../../testdata/hops/*.pbtxt"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Fatal("no graphs")
	}
	for _, p := range paths {
		if _, _, err := validate.Load(p); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestRefusals(t *testing.T) {
	for file, want := range map[string]string{
		"hop_operands.pbtxt":     "graph <root>: node cond: cond call: true_fn subgraph true_graph_0 takes 1 inputs but the call passes 2 [hop-call]",
		"hop_not_subgraph.pbtxt": "graph <root>: node cond: cond call: argument 1 (true_fn) is not a get_attr of an existing subgraph [hop-call]",
		"arity.pbtxt":            "graph <root>: node add: aten.add.Tensor: takes at most 2 positional arguments but 4 were given [schema-arity]\nschema: ",
		"arg_type.pbtxt":         "graph <root>: node sin: aten.sin.default: argument 'self' (Tensor) got a string (\"x\") [schema-arg-type]\nschema: ",
		"bad_schema.pbtxt":       "schema table: file schema 0 (aten::sin): schema parse error",
	} {
		path := filepath.Join("../../../testdata/bad", file)
		_, _, err := validate.Load(path)
		var ie ir.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), path+": "+want) {
			t.Errorf("%s: err = %v, want an InputError containing %q", file, err, want)
		}
		// Run refuses the same files the same way, the analysis running
		// meanwhile (here one that panics on everything) notwithstanding.
		m, res, runErr := validate.Run(path, alias.Analyzer, panicky)
		if m != nil || res != nil || runErr == nil || runErr.Error() != err.Error() {
			t.Errorf("%s: Run = %v, %v, %v; want Load's error %v", file, m, res, runErr, err)
		}
	}
}

// panicky is an analyzer that panics on every graph.
var panicky = &analyze.Analyzer{Name: "panicky", Doc: "panics", Run: func(*analyze.Pass) (any, error) {
	panic("panicky analyzer")
}}

// TestRunEqualsLoadThenAnalyze checks validate.Run against its definition,
// Load followed by analyze.Run, on every shipped graph.
func TestRunEqualsLoadThenAnalyze(t *testing.T) {
	paths, _ := filepath.Glob("../../../testdata/hops/*.pbtxt")
	models, _ := filepath.Glob("../../../testdata/models/*.pb")
	for _, p := range append(paths, models...) {
		m, reg, err := validate.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := analyze.Run(m, p, reg, passes.All()...)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := validate.Run(p, passes.All()...)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !reflect.DeepEqual(want.Findings, got.Findings) || len(want.Results) != len(got.Results) {
			t.Errorf("%s: Run's findings differ from Load + analyze.Run:\n%v\n---\n%v", p, got.Findings, want.Findings)
		}
	}
}

// TestRunReportsPanicsOnValidFiles: an analyzer that panics on a valid
// file is a bug, and Run must not hide it: it returns an internal error
// (exit 4) naming the analyzer and the graph, not an input error.
func TestRunReportsPanicsOnValidFiles(t *testing.T) {
	_, _, err := validate.Run("../../../testdata/models/mlp.pb", panicky)
	var bug *ir.InternalError
	if !errors.As(err, &bug) || bug.Phase != "analyzer panicky" || !bug.Loc.HasGraph || len(bug.Stack) == 0 ||
		!strings.Contains(err.Error(), "panicky analyzer") {
		t.Fatalf("Run = %v, want an internal error of the panicky analyzer", err)
	}
}

func TestCallModuleAndWithEffects(t *testing.T) {
	src := `format_version { major: 1 }
graph {
  nodes { name: "x" op: PLACEHOLDER target: "x" }
  nodes { name: "sub" op: CALL_MODULE target: "sub" args { node: "x" } args { node: "x" } }
  nodes { name: "eff" op: CALL_FUNCTION target: "higher_order.with_effects" args { node: "x" } args { int: 1 } }
  nodes { name: "af" op: CALL_FUNCTION target: "higher_order.auto_functionalized" args { node: "x" } kwargs { name: "self" value { node: "x" } } }
  nodes { name: "af_ok" op: CALL_FUNCTION target: "higher_order.auto_functionalized" args { op: "aten.add_.Tensor" } kwargs { name: "self" value { node: "x" } } }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "sub" } }
}
submodules { qualified_name: "sub" graph {
  nodes { name: "y" op: PLACEHOLDER target: "y" }
  nodes { name: "output" op: OUTPUT target: "output" args { node: "y" } }
} }`
	m, err := ir.Decode([]byte(src), ir.Text, "m.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	err = validate.Check(m, "m.pbtxt", nil)
	var ve *ir.VerifyError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("err = %v, want three problems", err)
	}
	for i, want := range []string{
		"m.pbtxt: graph <root>: node sub: module subgraph sub takes 1 inputs but the call passes 2 [hop-call]",
		"m.pbtxt: graph <root>: node eff: with_effects call: argument 1 must be the op [hop-call]",
		// Fixed with the HOP convention table: every HOP with an operator
		// argument is checked as with_effects was; auto_functionalized's
		// _mutable_op used to be accepted whatever it held.
		"m.pbtxt: graph <root>: node af: auto_functionalized call: argument 0 must be the op [hop-call]",
	} {
		if got := ve.Problems[i].String(); got != want {
			t.Errorf("problem %d = %q, want %q", i, got, want)
		}
	}
}

// TestRunOnInvalidFiles runs every analyzer, beside the checks, on every
// file of the bad and lint corpora: Run must come back (the analysis of an
// invalid module is dropped, not waited on forever or let crash) with
// exactly Load's verdict.
func TestRunOnInvalidFiles(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../../testdata/bad/*.p*", "../../../testdata/lint/*.pbtxt"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	refused := 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".want") {
			continue
		}
		_, _, loadErr := validate.Load(p)
		_, _, runErr := validate.Run(p, passes.All()...)
		if (loadErr == nil) != (runErr == nil) || loadErr != nil && loadErr.Error() != runErr.Error() {
			t.Errorf("%s: Run = %v, Load = %v", p, runErr, loadErr)
		}
		if loadErr != nil {
			refused++
		}
	}
	if refused < 20 {
		t.Errorf("only %d of %d files refused: the corpora are not what this test expects", refused, len(paths))
	}
}
