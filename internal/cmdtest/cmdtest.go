// Package cmdtest holds what hopctl's command tests share, as gh's
// commands share their test helpers: parsing a command line into a
// command's Options through its runF (NewCmdX(f, runF)), and running
// hopctl in-process in a sandbox.
package cmdtest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// NewCmd is a command's constructor: NewCmdX(f, runF).
type NewCmd[O any] func(*cmdutil.Factory, func(*O) error) *cobra.Command

// Parse runs the command newCmd makes on args with test streams and
// returns the Options its runF received (nil when it did not run), the
// streams, and the command's error.
func Parse[O any](newCmd NewCmd[O], args ...string) (*O, *iostreams.IOStreams, error) {
	ios, _, _, _ := iostreams.Test()
	var got *O
	cmd := newCmd(&cmdutil.Factory{IOStreams: ios}, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	_, err := cmd.ExecuteC()
	return got, ios, err
}

// FlagCase is one command line (split at spaces) and the Options it
// parses to, or the usage error it gets.
type FlagCase[O any] struct {
	Args    string
	Want    O
	WantErr string
}

// TestFlags parses each case's command line: a wanted error must be a
// *cmdutil.FlagError (exit 2) containing WantErr; otherwise the Options
// must equal Want with its streams set by withIO.
func TestFlags[O any](t *testing.T, newCmd NewCmd[O], withIO func(*O, *iostreams.IOStreams), cases []FlagCase[O]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Args, func(t *testing.T) {
			got, ios, err := Parse(newCmd, strings.Fields(tt.Args)...)
			if tt.WantErr != "" {
				if !IsFlagError(err, tt.WantErr) {
					t.Fatalf("err = %v, want a FlagError containing %q", err, tt.WantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			withIO(&tt.Want, ios)
			if !reflect.DeepEqual(*got, tt.Want) {
				t.Errorf("options = %+v, want %+v", *got, tt.Want)
			}
		})
	}
}

// IsFlagError reports whether err is a usage error (*cmdutil.FlagError)
// whose message contains want.
func IsFlagError(err error, want string) bool {
	var fe *cmdutil.FlagError
	return err != nil && errors.As(err, &fe) && strings.Contains(err.Error(), want)
}

// Main runs hopctl's main (cli.Main, which this package cannot import:
// the command packages' own tests use it) in-process on args and returns
// its exit code and output.
func Main(t testing.TB, main func([]string, *iostreams.IOStreams) int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code = main(args, ios)
	return code, out.String(), errOut.String()
}

// Sandbox moves the test into dir (a fresh temporary directory when "")
// with no HOPCTL_* settings from the environment, and returns the
// repository's testdata directory.
func Sandbox(t *testing.T, dir string) string {
	t.Helper()
	td := Testdata(t)
	if dir == "" {
		dir = t.TempDir()
	}
	t.Chdir(dir)
	for _, k := range []string{"HOPCTL_CONFIG", "HOPCTL_LINT_FAIL_ON", "HOPCTL_LINT_SUPPRESS", "HOPCTL_INPUT_MAX_SIZE", "HOPCTL_INPUT_TORCH_VERSION", "HOPCTL_INPUT_TORCH_SUPPORTED"} {
		t.Setenv(k, "")
	}
	return td
}

// Testdata returns the absolute path of the repository's testdata
// directory, found above the working directory.
func Testdata(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// WriteFile writes content to path and returns path.
func WriteFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
