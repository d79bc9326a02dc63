package cli

import "testing"

// TestHooksReserveForInputs: every command that decodes graph files
// reserves heap for a large one (hugeheap.Reserve, through ir's Input
// hook), and the others do not.
func TestHooksReserveForInputs(t *testing.T) {
	readers := map[string]bool{"analyze": true, "joint": true, "lint": true, "meta-diff": true, "print": true, "report": true, "convert": true}
	for _, c := range subcommands {
		if got := hooksFor(c.name).Input != nil; got != readers[c.name] {
			t.Errorf("%s: reserves heap for its input: %v, want %v", c.name, got, readers[c.name])
		}
	}
}
