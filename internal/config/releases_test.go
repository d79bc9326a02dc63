package config

import "testing"

// TestTorchReleaseKeys: input.torch-version takes one release, a list, a
// range or supported, input.torch-supported the same without supported,
// and the JSON schema (hopctl.schema.json) agrees with Validate on each.
func TestTorchReleaseKeys(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"torch-version", "2.6", true},
		{"torch-version", "2.6.0", true},
		{"torch-version", "2.6,2.14", true},
		{"torch-version", "2.6..2.14", true},
		{"torch-version", "supported", true},
		{"torch-version", "1.13, 2.6..2.14", true},
		{"torch-version", "2.x", false},
		{"torch-version", "2.6..", false},
		{"torch-version", "latest", false},
		{"torch-supported", "2.6..2.14", true},
		{"torch-supported", "2.6,2.14", true},
		{"torch-supported", "supported", false},
		{"torch-supported", "2.6,supported", false},
		{"torch-supported", "2", false},
	} {
		doc := "version: 1\ninput:\n  " + c.key + ": \"" + c.value + "\"\n"
		_, err := LoadBytes(NewSettings(), "c.yaml", []byte(doc))
		if (err == nil) != c.ok {
			t.Errorf("%s: %q: Load = %v, want ok %v", c.key, c.value, err, c.ok)
		}
		if err := CheckSchema([]byte(doc)); (err == nil) != c.ok {
			t.Errorf("%s: %q: CheckSchema = %v, want ok %v", c.key, c.value, err, c.ok)
		}
	}
	// A range whose bounds are out of order: the schema cannot tell, Load can.
	if _, err := LoadBytes(NewSettings(), "c.yaml", []byte("version: 1\ninput:\n  torch-version: \"2.14..2.6\"\n")); err == nil {
		t.Error("torch-version 2.14..2.6 loads")
	}
}
