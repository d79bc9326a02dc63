package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdReport(t *testing.T) {
	cmdtest.TestFlags(t, NewCmdReport, func(o *Options, ios *iostreams.IOStreams) { o.IO = ios }, []cmdtest.FlagCase[Options]{
		{Args: "a.pb -o r.html", Want: Options{Files: []string{"a.pb"}, Out: "r.html", Partition: "mincut"}},
		{Args: "a.pb b.pbtxt --output r.html --joint --partition default", Want: Options{Files: []string{"a.pb", "b.pbtxt"}, Out: "r.html", Joint: true, Partition: "default"}},
		{Args: "a.pb", WantErr: "-o/--output is required"},
		{Args: "a.pb -o r.html --partition best", WantErr: `invalid value "best" for --partition`},
	})
}

// TestReportInvalidFileWritesNothing checks that one invalid file among
// valid ones fails the run with an input error and leaves an existing
// report untouched.
func TestReportInvalidFileWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pbtxt")
	if err := os.WriteFile(bad, []byte("graph { node { name: \"x\" op: OP_PLACEHOLDER } node { name: \"x\" op: OP_OUTPUT } }"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	err := reportRun(&Options{IO: ios, Files: []string{"../../../testdata/hops/nested3_mutation.pbtxt", bad}, Out: out, Partition: "mincut"})
	var ie ir.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "bad.pbtxt") {
		t.Fatalf("err = %v, want an input error naming bad.pbtxt", err)
	}
	if data, _ := os.ReadFile(out); string(data) != "old" {
		t.Errorf("the existing report was changed: %.40q", data)
	}
}
