package config

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// Settings layers the configuration of one invocation through viper:
// defaults < the configuration file < HOPCTL_* environment variables <
// flags, by key ("lint.fail-on" is HOPCTL_LINT_FAIL_ON and --fail-on), as
// golangci-lint's pkg/config/loader.go layers its own. An empty variable is
// unset (viper's AllowEmptyEnv default); a variable's string decodes into
// a list as its comma-separated items (viper's default decode hooks).
type Settings struct {
	v *viper.Viper
}

// NewSettings returns the settings of one invocation, with the defaults
// of every key (which also make each key's environment variable apply
// when no file sets the key: viper's AutomaticEnv applies to known keys).
func NewSettings() *Settings {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	v.SetDefault(KeyLintFailOn, "error")
	v.SetDefault(KeyLintSuppress, []Suppression{})
	v.SetDefault(KeyInputMaxSize, DefaultInputSize)
	v.SetDefault(KeyInputTorchVersion, "")
	v.SetDefault(KeyInputTorchSupported, "")
	v.SetDefault(KeyInputGradMode, "")
	return &Settings{v: v}
}

// BindPFlag makes flag, when given, set key.
func (s *Settings) BindPFlag(key string, flag *pflag.Flag) {
	if err := s.v.BindPFlag(key, flag); err != nil {
		panic(err) // a programming error: a nil flag
	}
}

// GetString returns key's value as a string ("" when unset).
func (s *Settings) GetString(key string) string { return s.v.GetString(key) }

// readConfig sets the file's layer from a YAML configuration. A section
// written with no value (`lint:` alone) says nothing and is dropped: left
// in, viper would read it as the whole section's default map and, in an
// order that varies between runs, let that hide a flag bound under it.
func (s *Settings) readConfig(data []byte) error {
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return errors.New("While parsing config: " + err.Error()) // viper's ConfigParseError
	}
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return s.v.MergeConfigMap(m)
}

// Unmarshal decodes the layered settings into c (viper.Unmarshal: weakly
// typed, with viper's decode hooks).
func (s *Settings) Unmarshal(c *Config) error { return s.v.Unmarshal(c) }
