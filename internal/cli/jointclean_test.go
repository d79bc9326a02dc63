package cli_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"
)

// TestJointOutputsPassOwnRules is a property over the corpus: when hopctl
// lint finds nothing in a file, the graphs hopctl joint writes from it
// (the joint, and min-cut's forward and backward) lint clean too. They
// are the graphs AOTAutograd hands its compilers, and torch's own HOP
// checks accept the backward HOP calls its autograd functions build
// (torch/_higher_order_ops/scan.py, invoke_subgraph.py). An input joint
// refuses (torch refuses its training too) is skipped.
func TestJointOutputsPassOwnRules(t *testing.T) {
	td := cmdtest.Sandbox(t, "")
	var files []string
	for _, glob := range []string{"models/*.pb", "models-torch2.14/*.pb", "hops/*.pbtxt", "hops_real/*.pb",
		"hops_real/joint/*.pb", "hops_real/torch2.6/joint/*.pb", "hops_real/dynamo/*.pb", "pt2/*/*.pt2"} {
		m, err := filepath.Glob(filepath.Join(td, glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	checked := 0
	for i, f := range files {
		if code, _, _ := run(t, "lint", f); code != 0 {
			continue
		}
		o := strconv.Itoa(i)
		j, fw, bw := o+".joint.pb", o+".fw.pb", o+".bw.pb"
		if code, _, _ := run(t, "joint", f, "-o", j, "--partition", "mincut", "--fw-out", fw, "--bw-out", bw); code != 0 {
			continue
		}
		checked++
		if code, stdout, stderr := run(t, "lint", j, fw, bw); code != 0 {
			rel, _ := filepath.Rel(td, f)
			t.Errorf("%s lints clean, its joint graphs do not (exit %d):\n%s%s", rel, code, stdout, stderr)
		}
	}
	if checked < 100 {
		t.Errorf("only %d of %d files made joint graphs: the property covers too little", checked, len(files))
	}
}
