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
	files, _ := filepath.Glob("../../../../testdata/lint/schema-*.pbtxt")
	more, _ := filepath.Glob("../../../../testdata/models/*.pb")
	files = append(files, append(more, "../../../../testdata/bad/arg_type.pbtxt", "../../../../testdata/bad/arity.pbtxt")...)
	defer func(n int) { classNodes = n }(classNodes)
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
			classNodes = n
			res, err := analyze.Run(m, f, reg, Analyzer)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = res.Findings
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: from the nodes %v, from the table %v", f, got[0], got[1])
		}
		findings += len(got[0])
	}
	if findings == 0 {
		t.Error("no findings: the files tested no mismatch")
	}
}
