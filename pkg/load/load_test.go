package load_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
)

// TestShippedGraphsAreValid checks that validation accepts every real and
// hand-written graph: it must never refuse what torch produces.
func TestShippedGraphsAreValid(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../testdata/models/*.pb", "../../testdata/hops/*.pbtxt"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Fatal("no graphs")
	}
	for _, p := range paths {
		if _, err := load.Open(p, load.Strict); err != nil {
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
		path := filepath.Join("../../testdata/bad", file)
		_, err := load.Open(path, load.Strict)
		var ie ir.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), path+": "+want) {
			t.Errorf("%s: err = %v, want an InputError containing %q", file, err, want)
		}
		// Run refuses the same files the same way, the analysis running
		// meanwhile (here one that panics on everything) notwithstanding.
		f, res, runErr := load.Analyze(path, alias.Analyzer, panicky)
		if f != nil || res != nil || runErr == nil || runErr.Error() != err.Error() {
			t.Errorf("%s: Analyze = %v, %v, %v; want Open's error %v", file, f, res, runErr, err)
		}
	}
}

// panicky is an analyzer that panics on every graph.
var panicky = &analyze.Analyzer{Name: "panicky", Doc: "panics", Run: func(*analyze.Pass) (any, error) {
	panic("panicky analyzer")
}}

// TestRunEqualsLoadThenAnalyze checks load.Analyze against its definition,
// Load followed by analyze.Run, on every shipped graph.
func TestRunEqualsLoadThenAnalyze(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/hops/*.pbtxt")
	models, _ := filepath.Glob("../../testdata/models/*.pb")
	for _, p := range append(paths, models...) {
		f, err := load.Open(p, load.Strict)
		if err != nil {
			t.Fatal(err)
		}
		want, err := analyze.Run(f.Module, p, f.Registry, passes.All()...)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := load.Analyze(p, passes.All()...)
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
	_, _, err := load.Analyze("../../testdata/models/mlp.pb", panicky)
	var bug *ir.InternalError
	if !errors.As(err, &bug) || bug.Phase != "analyzer panicky" || !bug.Loc.HasGraph || len(bug.Stack) == 0 ||
		!strings.Contains(err.Error(), "panicky analyzer") {
		t.Fatalf("Run = %v, want an internal error of the panicky analyzer", err)
	}
}

// TestRunOnInvalidFiles runs every analyzer, beside the checks, on every
// file of the bad and lint corpora: Run must come back (the analysis of an
// invalid module is dropped, not waited on forever or let crash) with
// exactly Load's verdict.
func TestRunOnInvalidFiles(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../testdata/bad/*.p*", "../../testdata/lint/*.pbtxt"} {
		p, _ := filepath.Glob(glob)
		paths = append(paths, p...)
	}
	refused := 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".want") {
			continue
		}
		_, loadErr := load.Open(p, load.Strict)
		_, _, runErr := load.Analyze(p, passes.All()...)
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

// TestLenient: a lenient open returns what a strict one refuses, as
// problems of their kinds beside the module.
func TestLenient(t *testing.T) {
	for file, kind := range map[string]ir.ProblemKind{
		"bad_schema.pbtxt":   ir.ProblemSchema,
		"dangling.pbtxt":     ir.ProblemDanglingRef,
		"hop_operands.pbtxt": ir.ProblemCall, // a call that does not fit: left to lint's analyzers
	} {
		path := filepath.Join("../../testdata/bad", file)
		if _, err := load.Open(path, load.Strict); err == nil {
			t.Errorf("%s: Strict accepted it", file)
		}
		f, err := load.Open(path, load.Lenient)
		if err != nil {
			t.Errorf("%s: Lenient: %v", file, err)
			continue
		}
		if kind == ir.ProblemCall {
			if f.Invalid() || !f.Verified || f.Registry == nil {
				t.Errorf("%s: Lenient = %+v, want a valid-looking file", file, f)
			}
			continue
		}
		if !f.Invalid() || f.Problems[0].Kind != kind {
			t.Errorf("%s: problems %+v, want kind %d first", file, f.Problems, kind)
		}
		if (kind == ir.ProblemSchema) != f.Verified {
			t.Errorf("%s: Verified = %v", file, f.Verified)
		}
	}
}

// failing is an analyzer that returns an error on every graph.
var failing = &analyze.Analyzer{Name: "failing", Doc: "fails", Run: func(*analyze.Pass) (any, error) {
	return nil, errors.New("cannot finish")
}}

// TestAnalyzeErrorOnValidFile: an analyzer that cannot finish on a file
// the checks accept is a bug of hopctl (exit 4), not a refusal of the file
// (exit 3) that the commands which only open it would not make. It used to
// be reported as invalid input.
func TestAnalyzeErrorOnValidFile(t *testing.T) {
	_, _, err := load.Analyze("../../testdata/models/mlp.pb", failing)
	var bug *ir.InternalError
	if !errors.As(err, &bug) || bug.Phase != "analyze" || !strings.Contains(err.Error(), "cannot finish") {
		t.Fatalf("Analyze = %v, want an internal error", err)
	}
	if _, err := load.Open("../../testdata/models/mlp.pb", load.Strict); err != nil {
		t.Fatal(err)
	}
}
