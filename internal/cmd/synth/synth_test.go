package synth

import (
	"strconv"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"
)

// TestNodeLimit: -n outside [2, MaxNodes] is a usage error before anything
// is generated (-n 2000000000 ran until memory ran out).
func TestNodeLimit(t *testing.T) {
	for _, n := range []int{1, MaxNodes + 1, 2000000000, 2, MaxNodes} {
		got, _, err := cmdtest.Parse(NewCmdSynth, "-n", strconv.Itoa(n), "-o", "out.pb")
		ran := got != nil
		if ok := n >= 2 && n <= MaxNodes; ok != ran || !ok && !cmdtest.IsFlagError(err, "-n must be between 2 and") {
			t.Errorf("-n %d: ran %v, err %v", n, ran, err)
		}
	}
}
