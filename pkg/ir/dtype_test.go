package ir

import "testing"

// TestDtypeSizesCoverAbbreviations: every dtype print_readable abbreviates
// has an element size, so Verify accepts every dtype the printer knows.
func TestDtypeSizesCoverAbbreviations(t *testing.T) {
	for d := range dtypeAbbrs {
		if _, ok := dtypeSize(d); !ok {
			t.Errorf("dtype %s has an abbreviation but no element size", d)
		}
	}
}
