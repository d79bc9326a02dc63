package cli_test

import (
	"strings"
	"testing"
)

// TestTorchVersionFlag: --torch-version and HOPCTL_INPUT_TORCH_VERSION
// reach the analysis of each command that analyses (passed as the run's
// analyze.Options, not process state): torch 2.14's trace of a cond branch
// returning two views of one tensor (testdata/hops_real/cond_out_out_alias.pb)
// is refused under 2.14's rules and accepted under 2.6's, by analyze and
// lint alike, one run after the other in one process.
func TestTorchVersionFlag(t *testing.T) {
	file := testdata(t, "hops_real", "cond_out_out_alias.pb")
	sandbox(t)
	t.Setenv("HOPCTL_INPUT_TORCH_VERSION", "")
	for _, tc := range []struct {
		args []string
		env  string
		want bool // the aliasing finding
	}{
		{[]string{"analyze", file}, "", true},
		{[]string{"analyze", "--torch-version", "2.6", file}, "", false},
		{[]string{"analyze", file}, "", true}, // nothing left behind by the run before
		{[]string{"lint", "--torch-version", "2.6", file}, "", false},
		{[]string{"lint", file}, "", true},
		{[]string{"analyze", file}, "2.6", false},
		{[]string{"analyze", "--torch-version", "2.14", file}, "2.6", true},
	} {
		t.Setenv("HOPCTL_INPUT_TORCH_VERSION", tc.env)
		code, out, errOut := run(t, tc.args...)
		if code > 1 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		if got := strings.Contains(out, "hop-input-alias") || strings.Contains(out, "must not alias"); got != tc.want {
			t.Errorf("%v (env %q): aliasing finding %v, want %v:\n%s", tc.args, tc.env, got, tc.want, out)
		}
	}
}
