package metadiff_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/pkg/report"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cmdtest.Main(t, cli.Main, append([]string{"meta-diff"}, args...)...)
}

// setup moves into a temporary directory holding a.pbtxt (a graph file),
// same.pbtxt (a copy) and f64.pbtxt (the copy with a float64 output), and
// returns the testdata directory.
func setup(t *testing.T) string {
	t.Helper()
	td := cmdtest.Sandbox(t, "")
	data, err := os.ReadFile(filepath.Join(td, "lint", "hop-input-mutation_ok.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	const getitem = `nodes {name: "getitem" op: CALL_FUNCTION target: "_operator.getitem" args {node: "cond"} args {int: 0} val {tensor {shape: [{value: 4}] stride: [{value: 1}] dtype: "float32"`
	if !strings.Contains(string(data), getitem) {
		t.Fatal("testdata changed: no getitem node to edit")
	}
	f64 := strings.Replace(string(data), getitem, strings.Replace(getitem, "float32", "float64", 1), 1)
	for name, content := range map[string]string{"a.pbtxt": string(data), "same.pbtxt": string(data), "f64.pbtxt": f64} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return td
}

func TestTwoFiles(t *testing.T) {
	setup(t)
	code, stdout, _ := run(t, "a.pbtxt", "same.pbtxt")
	if code != cli.ExitOK || !strings.Contains(stdout, "same metadata") {
		t.Errorf("equal files: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr := run(t, "a.pbtxt", "f64.pbtxt")
	want := "Expected a.pbtxt and f64.pbtxt to have same metadata but found:\n" +
		"pair[0] differ in 'dtype: torch.float32 vs torch.float64', where lhs is FakeTensor(..., size=(4,)) and rhs is FakeTensor(..., size=(4,), dtype=torch.float64)\n"
	if code != cli.ExitFindings || !strings.HasSuffix(stdout, want) {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
	// Inputs agree.
	if code, stdout, _ := run(t, "--inputs", "a.pbtxt", "f64.pbtxt"); code != cli.ExitOK {
		t.Errorf("--inputs: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "--format", "json", "a.pbtxt", "f64.pbtxt")
	var doc report.MetaDiffDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != cli.ExitFindings {
		t.Fatalf("json: exit %d, %v\n%s", code, err, stdout)
	}
	if doc.Equal || len(doc.Pairs) != 1 || doc.Pairs[0].Fields[0].Field != "dtype" || doc.Pairs[0].Fields[0].RHS != "torch.float64" ||
		doc.LHS.Name != "a.pbtxt" || doc.LHS.Side != "outputs" || doc.LHS.Count != 1 || !doc.IncludeContiguity || doc.CheckGrad {
		t.Errorf("doc %+v", doc)
	}
}

func TestSubgraphs(t *testing.T) {
	td := setup(t)
	f := filepath.Join(td, "hops", "while_loop_meta_mismatch.pbtxt")
	code, stdout, _ := run(t, f, "--lhs", "<root>", "--rhs", "while_loop_body_graph_0")
	for _, want := range []string{
		"Expected <root> and while_loop_body_graph_0 to have same metadata but found:\n",
		"pair[1] differ in 'shape: torch.Size([2, 3]) vs torch.Size([3, 2])', 'stride: (3, 1) vs (2, 1)', where",
	} {
		if code != cli.ExitFindings || !strings.Contains(stdout, want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s", code, want, stdout)
		}
	}
	if code, stdout, _ := run(t, f, "--lhs", "while_loop_cond_graph_0", "--rhs", "while_loop_body_graph_0", "--inputs"); code != cli.ExitOK {
		t.Errorf("inputs of cond_fn and body_fn: exit %d\n%s", code, stdout)
	}
	// Different lengths: the cond graph returns one value, the body two.
	code, stdout, _ = run(t, f, "--lhs", "while_loop_cond_graph_0", "--rhs", "while_loop_body_graph_0")
	if code != cli.ExitFindings || !strings.Contains(stdout, "Expected while_loop_cond_graph_0 and while_loop_body_graph_0 to have same number of outputs but got lhs:") {
		t.Errorf("lengths: exit %d\n%s", code, stdout)
	}
}

func TestExitCodes(t *testing.T) {
	td := setup(t)
	f := filepath.Join(td, "hops", "while_loop_meta_mismatch.pbtxt")
	for _, format := range []string{"text", "json"} {
		for _, tt := range []struct {
			args []string
			want int
		}{
			{[]string{"a.pbtxt", "same.pbtxt"}, cli.ExitOK},
			{[]string{"a.pbtxt", "f64.pbtxt"}, cli.ExitFindings},
			{[]string{"a.pbtxt", "f64.pbtxt", "--no-contiguity", "--check-grad"}, cli.ExitFindings},
			{[]string{"a.pbtxt", "missing.pbtxt"}, cli.ExitInput},
			{[]string{filepath.Join(td, "lint", "cycle.pbtxt"), "a.pbtxt"}, cli.ExitInput},
			{[]string{"a.pbtxt"}, cli.ExitUsage},
			{[]string{"a.pbtxt", "b", "c"}, cli.ExitUsage},
			{[]string{"a.pbtxt", "same.pbtxt", "--inputs", "--outputs"}, cli.ExitUsage},
			{[]string{f, "--lhs", "nope", "--rhs", "<root>"}, cli.ExitUsage},
		} {
			args := append([]string{"--format", format}, tt.args...)
			if code, stdout, stderr := run(t, args...); code != tt.want {
				t.Errorf("meta-diff %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, tt.want, stdout, stderr)
			} else if format == "json" && code <= cli.ExitFindings && !json.Valid([]byte(stdout)) {
				t.Errorf("meta-diff %s: stdout is not JSON:\n%s", strings.Join(args, " "), stdout)
			}
		}
	}
}
