package report

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdReport(t *testing.T) {
	tests := []struct {
		args    string
		want    Options
		wantErr string
	}{
		{args: "a.pb -o r.html", want: Options{Files: []string{"a.pb"}, Out: "r.html", Partition: "mincut"}},
		{args: "a.pb b.pbtxt --output r.html --joint --partition default", want: Options{Files: []string{"a.pb", "b.pbtxt"}, Out: "r.html", Joint: true, Partition: "default"}},
		{args: "a.pb", wantErr: "-o/--output is required"},
		{args: "a.pb -o r.html --partition best", wantErr: `invalid value "best" for --partition`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *Options
			cmd := NewCmdReport(&cmdutil.Factory{IOStreams: ios}, func(o *Options) error { got = o; return nil })
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			_, err := cmd.ExecuteC()
			if tt.wantErr != "" {
				var fe *cmdutil.FlagError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a FlagError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Files, tt.want.Files) || got.Out != tt.want.Out || got.Joint != tt.want.Joint || got.Partition != tt.want.Partition {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
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
