package synth

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
)

// TestNodeLimit: -n outside [2, MaxNodes] is a usage error before anything
// is generated (-n 2000000000 ran until memory ran out).
func TestNodeLimit(t *testing.T) {
	for _, n := range []int{1, MaxNodes + 1, 2000000000, 2, MaxNodes} {
		ios, _, _, _ := iostreams.Test()
		ran := false
		cmd := NewCmdSynth(&cmdutil.Factory{IOStreams: ios}, func(o *Options) error { ran = true; return nil })
		cmd.SetArgs([]string{"-n", strconv.Itoa(n), "-o", "out.pb"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		_, err := cmd.ExecuteC()
		var fe *cmdutil.FlagError
		if ok := n >= 2 && n <= MaxNodes; ok != ran || !ok && (!errors.As(err, &fe) || !strings.Contains(err.Error(), "-n must be between 2 and")) {
			t.Errorf("-n %d: ran %v, err %v", n, ran, err)
		}
	}
}
