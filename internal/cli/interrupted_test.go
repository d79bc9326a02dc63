package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/atomicfile"
)

// TestInterruptedWriteIsSilent: a write that an interrupt's handler
// stopped (atomicfile.RemovePendingTempFiles ran, as on SIGINT) fails
// with os.ErrClosed, which is not reported as the command's error: the
// signal is the message, and main exits 128+signal. Run in a child
// process, since the interrupt's state lasts for the process.
func TestInterruptedWriteIsSilent(t *testing.T) {
	if os.Getenv("HOPCTL_TEST_INTERRUPTED") == "1" {
		atomicfile.RemovePendingTempFiles()
		code, _, stderr := run(t, "synth", "-n", "10", "-o", filepath.Join(t.TempDir(), "x.pb"))
		if code == 0 || stderr != "" {
			t.Fatalf("interrupted write: exit %d, stderr %q; want a failure and nothing printed", code, stderr)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptedWriteIsSilent$", "-test.v")
	cmd.Env = append(os.Environ(), "HOPCTL_TEST_INTERRUPTED=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
