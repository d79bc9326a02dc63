package cmdutil

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// TestNoGraphErrorBounded: an unknown --graph/--lhs/--rhs name lists at
// most maxGraphNames of the file's graphs, each abbreviated, and counts
// the rest (issue 12: meta-diff printed every graph name of a deeply
// nested file in one line of 229 KB).
func TestNoGraphErrorBounded(t *testing.T) {
	m := &ir.Module{}
	name := ""
	for i := range 2000 {
		if i == 0 {
			m.Graphs = append(m.Graphs, &ir.Graph{})
			continue
		}
		name = strings.TrimPrefix(name+".g"+fmt.Sprint(i), ".")
		m.Graphs = append(m.Graphs, &ir.Graph{Name: name})
	}
	msg := NoGraphError("f.pb", m, strings.Repeat("x", 5000)).Error()
	if len(msg) > 4096 || !strings.Contains(msg, "and 1990 more: hopctl analyze lists them") || !strings.HasPrefix(msg, `f.pb: no graph "xxx`) {
		t.Errorf("message of %d bytes: %.600s", len(msg), msg)
	}
}
