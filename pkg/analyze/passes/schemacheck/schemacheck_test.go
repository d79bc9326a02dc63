package schemacheck

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// TestValueClassesAgree: the findings are the same whether node
// arguments' classes come from the table of a large graph (valueClasses)
// or from the nodes, on the files whose calls do not fit their schemas and
// on ones whose calls do.
func TestValueClassesAgree(t *testing.T) {
	more, _ := filepath.Glob("../../../../testdata/models/*.pb")
	agreeWith(t, &classNodes, more...)
}

// TestSameTargetCallsCheckedEach: a call of the same target as one that
// passed, whose arguments differ only in a node argument's value or a list
// element's kind, is checked and reported.
func TestSameTargetCallsCheckedEach(t *testing.T) {
	const tensor = `val {tensor {shape: [{value: 4}] stride: [{value: 1}] dtype: "float32" device: "cpu" layout: "strided" memory_format: "contiguous_format"}}`
	src := `format_version {major: 1 minor: 0}
graph {
  nodes {name: "x" op: PLACEHOLDER target: "x" ` + tensor + `}
  nodes {name: "l" op: PLACEHOLDER target: "l" val {list {items {int: 4}}}}
  nodes {name: "add" op: CALL_FUNCTION target: "aten.add.Tensor" args {node: "x"} args {node: "x"} ` + tensor + `}
  nodes {name: "add_bad" op: CALL_FUNCTION target: "aten.add.Tensor" args {node: "x"} args {node: "l"} ` + tensor + `}
  nodes {name: "view" op: CALL_FUNCTION target: "aten.view.default" args {node: "x"} args {list {items {int: 2} items {int: 2}}} ` + tensor + `}
  nodes {name: "view_bad" op: CALL_FUNCTION target: "aten.view.default" args {node: "x"} args {list {items {int: 2} items {str: "2"}}} ` + tensor + `}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "add"} items {node: "add_bad"} items {node: "view"} items {node: "view_bad"}}}}
}`
	m, err := ir.Decode([]byte(src), ir.Text, "shapes.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := opschema.NewRegistryForModule(m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.RunWith(m, "shapes.pbtxt", reg, analyze.Options{}, Analyzer)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, f := range res.Findings {
		nodes = append(nodes, f.Node)
	}
	if want := []string{"add_bad", "view_bad"}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("findings at %v, want %v", nodes, want)
	}
}

// agreeWith checks that the findings on the files whose calls do not fit
// their schemas, and on more, are the same with the size threshold at
// *knob set to none and to every graph.
func agreeWith(t *testing.T, knob *int, more ...string) {
	files, _ := filepath.Glob("../../../../testdata/lint/schema-*.pbtxt")
	files = append(files, append(more, "../../../../testdata/bad/arg_type.pbtxt", "../../../../testdata/bad/arity.pbtxt")...)
	defer func(n int) { *knob = n }(*knob)
	findings := 0
	for _, f := range files {
		m, err := ir.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := opschema.NewRegistryForModule(m)
		if err != nil {
			t.Fatal(err)
		}
		var got [2][]analyze.Finding
		for i, n := range []int{1 << 30, 0} {
			*knob = n
			res, err := analyze.RunWith(m, f, reg, analyze.Options{}, Analyzer)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = res.Findings
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: threshold off %v, on every graph %v", f, got[0], got[1])
		}
		findings += len(got[0])
	}
	if findings == 0 {
		t.Error("no findings: the files tested no mismatch")
	}
}
