package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"HOPCTL_CONFIG", "HOPCTL_LINT_FAIL_ON", "HOPCTL_LINT_SUPPRESS"} {
		t.Setenv(k, "")
	}
}

func TestLoadDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load(NewViper(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Version: 1, Lint: Lint{FailOn: "error", Suppress: []Suppression{}}}
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
	}}}
	load := func(args ...string) *Config {
		t.Helper()
		v := NewViper()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("fail-on", "", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := v.BindPFlag(KeyLintFailOn, fs.Lookup("fail-on")); err != nil {
			t.Fatal(err)
		}
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
	if got := Path(NewViper(), dir); got != "" {
		t.Errorf("Path without a file = %q", got)
	}
	def := filepath.Join(dir, DefaultFile)
	if err := os.WriteFile(def, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Path(NewViper(), dir); got != def {
		t.Errorf("Path = %q, want %q", got, def)
	}
	t.Setenv("HOPCTL_CONFIG", "/elsewhere.yaml")
	if got := Path(NewViper(), dir); got != "/elsewhere.yaml" {
		t.Errorf("Path with HOPCTL_CONFIG = %q", got)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("version: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(NewViper(), file)
	if err == nil || !strings.HasPrefix(err.Error(), file+": config version 7 is newer") {
		t.Errorf("err = %v", err)
	}
	if _, err := Load(NewViper(), file+".missing"); err == nil || !strings.HasPrefix(err.Error(), file+".missing: ") {
		t.Errorf("err = %v", err)
	}
}
