package config

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// newOracle is the viper instance hopctl used before Settings, set up as
// NewSettings is.
func newOracle() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	v.SetDefault(KeyLintFailOn, "error")
	v.SetDefault(KeyLintSuppress, []Suppression{})
	v.SetDefault(KeyInputMaxSize, DefaultInputSize)
	v.SetDefault(KeyInputTorchVersion, "")
	return v
}

// TestSettingsAgreeWithViper: for configuration files (valid, with YAML
// values of other types than strings, with null and scalar sections),
// environment variables (set, empty, naming a whole section, unfit for
// their key) and flags, Settings gives what viper gave: the same
// configuration or the same error, and the same configuration file path.
func TestSettingsAgreeWithViper(t *testing.T) {
	files := []string{
		"",
		"version: 1\n",
		"version: 1\nlint:\n  fail-on: warning\n  suppress:\n    - rule: hop-*\n      path: a/**/*.pb\n      reason: why\n    - rule: unknown-op\n      node: add_1\n      graph: g\n      reason: r\n",
		"version: 1\nlint:\n  fail-on: true\n",
		"version: 1\nlint:\n  fail-on: 3\n",
		"version: 1\nlint:\n  fail-on: 1.50\n",
		"version: 1\nlint:\n  fail-on:\n",
		"version: 1\nlint:\n  fail-on: 2001-12-14\n",
		"version: 1\nlint:\n",
		"version: 1\nlint: ~\ninput: ~\n",
		"version: 1\nlint: x\n",
		"version: 1\ninput:\n  max-size: 0x10\n  torch-version: 2.10\n",
		"version: 1\ninput:\n  max-size: 2KiB\n  torch-version: \"2.6\"\n",
		"version: 1\nlint:\n  suppress: ~\n",
		"version: 1\nlint:\n  suppress: []\n",
		"version: 1\nlint:\n  suppress:\n    - ~\n    - rule: 5\n      reason: yes\n",
		"version: 1\nlint:\n  suppress:\n    - rule: [a]\n",
		"version: 2\n",
		"Version: 1\nLINT:\n  Fail-On: note\n",
	}
	envs := []map[string]string{
		{},
		{"HOPCTL_LINT_FAIL_ON": "warning", "HOPCTL_INPUT_MAX_SIZE": "4MiB", "HOPCTL_INPUT_TORCH_VERSION": "2.5"},
		{"HOPCTL_LINT_FAIL_ON": ""},
		{"HOPCTL_LINT": "x"},
		{"HOPCTL_INPUT": "x", "HOPCTL_LINT_FAIL_ON": "info"},
		{"HOPCTL_LINT_SUPPRESS": "a,b"},
		{"HOPCTL_LINT_SUPPRESS": ""},
		{"HOPCTL_CONFIG": "/from/env.yaml"},
	}
	flagSets := [][]string{
		nil,
		{"--fail-on=info"},
		{"--config=/from/flag.yaml", "--max-input-size=1MiB", "--torch-version=2.4"},
		{"--fail-on="},
	}
	for fi, file := range files {
		for ei, env := range envs {
			for gi, args := range flagSets {
				// A flag bound under a section the file gives a value that
				// is not a map ("lint:" alone): viper's result depended on
				// the order it iterated a map in (Settings.keys).
				sectionValue := false
				var top map[string]any
				if err := yaml.Unmarshal([]byte(file), &top); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"lint", "input"} {
					if x, ok := top[k]; ok {
						if _, isMap := x.(map[string]any); !isMap {
							sectionValue = true
						}
					}
				}
				if sectionValue && gi > 0 {
					continue
				}
				t.Run(fmt.Sprintf("file%d/env%d/flags%d", fi, ei, gi), func(t *testing.T) {
					for _, k := range []string{"HOPCTL_LINT_FAIL_ON", "HOPCTL_INPUT_MAX_SIZE", "HOPCTL_INPUT_TORCH_VERSION", "HOPCTL_LINT", "HOPCTL_INPUT", "HOPCTL_LINT_SUPPRESS", "HOPCTL_CONFIG"} {
						t.Setenv(k, env[k])
					}
					flags := func() map[string]*pflag.Flag {
						fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
						fs.String("fail-on", "error", "")
						fs.String("config", "", "")
						fs.String("max-input-size", DefaultInputSize, "")
						fs.String("torch-version", "", "")
						if err := fs.Parse(args); err != nil {
							t.Fatal(err)
						}
						return map[string]*pflag.Flag{KeyLintFailOn: fs.Lookup("fail-on"), KeyConfig: fs.Lookup("config"),
							KeyInputMaxSize: fs.Lookup("max-input-size"), KeyInputTorchVersion: fs.Lookup("torch-version")}
					}
					v, s := newOracle(), NewSettings()
					for k, f := range flags() {
						if sectionValue {
							break
						}
						if err := v.BindPFlag(k, f); err != nil {
							t.Fatal(err)
						}
					}
					for k, f := range flags() {
						if sectionValue {
							break
						}
						s.BindPFlag(k, f)
					}
					if got, want := s.GetString(KeyConfig), v.GetString(KeyConfig); got != want {
						t.Errorf("config path %q, viper %q", got, want)
					}
					var wantErr, gotErr error
					if file != "" {
						v.SetConfigType("yaml")
						wantErr = v.ReadConfig(bytes.NewReader([]byte(file)))
						gotErr = s.readConfig([]byte(file))
					}
					var want, got Config
					if wantErr == nil {
						wantErr = v.Unmarshal(&want)
					}
					if gotErr == nil {
						gotErr = s.Unmarshal(&got)
					}
					if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
						t.Fatalf("error %v, viper %v", gotErr, wantErr)
					}
					if !cmp.Equal(got, want) {
						t.Errorf("(-Settings +viper):\n%s", cmp.Diff(got, want))
					}
				})
			}
		}
	}
}

// TestSettingsSectionValueAndBoundFlag: where Settings departs from viper
// on purpose. A file saying `lint:` with no value holds the whole section,
// and a flag bound under it (--fail-on, "lint.fail-on") still applies,
// after the section, in every run (keys' sorted order: viper's followed a
// map's, and its result varied between runs).
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
