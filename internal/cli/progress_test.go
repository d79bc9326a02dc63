package cli_test

import (
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
)

// --progress and --quiet are accepted by every command that works on
// graphs, exclude each other (a usage error), and a short run prints no
// progress line even when asked (it appears after a second).
func TestProgressFlags(t *testing.T) {
	const model = "../../testdata/models/mlp.pb"
	for _, flag := range []string{"--progress", "--quiet"} {
		code, stdout, stderr := run(t, "analyze", flag, model)
		if code != cli.ExitOK || stdout == "" || strings.Contains(stderr, "hopctl: analyze") {
			t.Errorf("analyze %s: exit %d, stderr %q", flag, code, stderr)
		}
	}
	code, _, stderr := run(t, "analyze", "--progress", "--quiet", model)
	if code != cli.ExitUsage || !strings.Contains(stderr, "progress") {
		t.Errorf("--progress --quiet: exit %d, stderr %q; want a usage error", code, stderr)
	}
}
