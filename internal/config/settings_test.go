package config

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestSettingsSectionValueAndBoundFlag: a file saying `lint:` with no value
// holds nothing, and a flag bound under it (--fail-on, "lint.fail-on")
// applies, in every run.
func TestSettingsSectionValueAndBoundFlag(t *testing.T) {
	for _, file := range []string{"version: 1\nlint:\n", "version: 1\nlint: ~\n"} {
		for run := range 20 {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("fail-on", "error", "")
			if err := fs.Parse([]string{"--fail-on=info"}); err != nil {
				t.Fatal(err)
			}
			s := NewSettings()
			s.BindPFlag(KeyLintFailOn, fs.Lookup("fail-on"))
			if err := s.readConfig([]byte(file)); err != nil {
				t.Fatal(err)
			}
			var got Config
			if err := s.Unmarshal(&got); err != nil {
				t.Fatalf("%q, run %d: %v", file, run, err)
			}
			if got.Lint.FailOn != "info" {
				t.Fatalf("%q, run %d: fail-on %q, want the flag's \"info\"", file, run, got.Lint.FailOn)
			}
		}
	}
}

// TestSettingsEnvironment: HOPCTL_* variables set keys over the file, an
// empty one is unset, and a list decodes from comma-separated items.
func TestSettingsEnvironment(t *testing.T) {
	t.Setenv("HOPCTL_LINT_FAIL_ON", "warning")
	t.Setenv("HOPCTL_INPUT_MAX_SIZE", "")
	s := NewSettings()
	if err := s.readConfig([]byte("version: 1\nlint:\n  fail-on: info\ninput:\n  max-size: 2MiB\n")); err != nil {
		t.Fatal(err)
	}
	var got Config
	if err := s.Unmarshal(&got); err != nil {
		t.Fatal(err)
	}
	if got.Lint.FailOn != "warning" || got.Input.MaxSize != "2MiB" {
		t.Errorf("fail-on %q, max-size %q; want the variable's warning and the file's 2MiB", got.Lint.FailOn, got.Input.MaxSize)
	}
}
