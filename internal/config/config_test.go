package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/hopctl/hopctl/pkg/ir"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"HOPCTL_CONFIG", "HOPCTL_LINT_FAIL_ON", "HOPCTL_LINT_SUPPRESS", "HOPCTL_INPUT_MAX_SIZE"} {
		t.Setenv(k, "")
	}
}

func TestLoadDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load(NewSettings(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Version: 1, Lint: Lint{FailOn: "error", Suppress: []Suppression{}}, Input: Input{MaxSize: DefaultInputSize}}
	if !cmp.Equal(c, want) {
		t.Errorf("defaults (-got +want):\n%s", cmp.Diff(c, want))
	}
}

func TestLoadLayers(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	yaml := `version: 1
lint:
  fail-on: warning
  suppress:
    - rule: hop-input-alias
      path: "models/*.pb"
      graph: true_graph_0
      node: add_1
      reason: the branch writes a buffer on purpose
    - rule: unknown-op
      reason: mylib ops
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	want := &Config{File: file, Version: 1, Lint: Lint{FailOn: "warning", Suppress: []Suppression{
		{Rule: "hop-input-alias", Path: "models/*.pb", Graph: "true_graph_0", Node: "add_1", Reason: "the branch writes a buffer on purpose"},
		{Rule: "unknown-op", Reason: "mylib ops"},
	}}, Input: Input{MaxSize: DefaultInputSize}}
	load := func(args ...string) *Config {
		t.Helper()
		v := NewSettings()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("fail-on", "", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		v.BindPFlag(KeyLintFailOn, fs.Lookup("fail-on"))
		c, err := Load(v, file)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := load(); !cmp.Equal(got, want) {
		t.Errorf("file (-got +want):\n%s", cmp.Diff(got, want))
	}
	t.Setenv("HOPCTL_LINT_FAIL_ON", "note")
	want.Lint.FailOn = "note"
	if got := load(); !cmp.Equal(got, want) {
		t.Errorf("file+env (-got +want):\n%s", cmp.Diff(got, want))
	}
	want.Lint.FailOn = "none"
	if got := load("--fail-on=none"); !cmp.Equal(got, want) {
		t.Errorf("file+env+flag (-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestPath(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	if got := Path(NewSettings(), dir); got != "" {
		t.Errorf("Path without a file = %q", got)
	}
	def := filepath.Join(dir, DefaultFile)
	if err := os.WriteFile(def, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Path(NewSettings(), dir); got != def {
		t.Errorf("Path = %q, want %q", got, def)
	}
	t.Setenv("HOPCTL_CONFIG", "/elsewhere.yaml")
	if got := Path(NewSettings(), dir); got != "/elsewhere.yaml" {
		t.Errorf("Path with HOPCTL_CONFIG = %q", got)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("version: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(NewSettings(), file)
	if err == nil || !strings.HasPrefix(err.Error(), file+": config version 7 is newer") {
		t.Errorf("err = %v", err)
	}
	if _, err := Load(NewSettings(), file+".missing"); err == nil || !strings.HasPrefix(err.Error(), file+".missing: ") {
		t.Errorf("err = %v", err)
	}
}

// TestLoadRefusesWhatItCannotReadWhole checks the errors that would
// otherwise pass silently or never end: a second YAML document (Settings
// reads the first only), a file that never ends, a bad input.max-size.
func TestLoadRefusesWhatItCannotReadWhole(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, yaml, want string }{
		{"second document", "version: 1\n---\nlint:\n  fail-on: bogus\n", "line 2: a second YAML document"},
		{"empty second document", "version: 1\n---\n", "a second YAML document"},
		{"bad size", "version: 1\ninput:\n  max-size: lots\n", `input.max-size: invalid size "lots"`},
		{"zero size", "version: 1\ninput:\n  max-size: 0\n", `input.max-size: invalid size "0"`},
	} {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(NewSettings(), file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Load(NewSettings(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("/dev/zero: err = %v", err)
	}
	file := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(file, []byte("version: 1\ninput:\n  max-size: 64MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(NewSettings(), file)
	if err != nil || c.Input.MaxSizeBytes() != 64<<20 {
		t.Errorf("64MiB: %v, %+v", err, c)
	}
	t.Setenv("HOPCTL_INPUT_MAX_SIZE", "2k")
	if c, err := Load(NewSettings(), file); err != nil || c.Input.MaxSizeBytes() != 2048 {
		t.Errorf("HOPCTL_INPUT_MAX_SIZE=2k: %v, %+v", err, c)
	}
}

func TestParseSize(t *testing.T) {
	if n, err := ParseSize(DefaultInputSize); err != nil || n != ir.DefaultMaxInputSize {
		t.Errorf("ParseSize(DefaultInputSize) = %d, %v; want ir.DefaultMaxInputSize, %d", n, err, ir.DefaultMaxInputSize)
	}
	for in, want := range map[string]int64{"1": 1, "512": 512, "1k": 1 << 10, "1KiB": 1 << 10, "2MB": 2 << 20, "3 MiB": 3 << 20, "1GiB": 1 << 30, "1Gi": 1 << 30, "4g": 4 << 30, "10B": 10} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5GB", "lots", "1TB", "1iB", "9223372036854775807G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}
