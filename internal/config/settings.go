package config

import (
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Settings layers the configuration of one invocation: defaults < the
// configuration file < HOPCTL_* environment variables < flags, by key
// ("lint.fail-on").
//
// It is the part of github.com/spf13/viper that hopctl used, with viper's
// rules (Viper.find, AllKeys, getSettings, Unmarshal, v1.21), and the
// same mapstructure decoding: an empty variable is unset, a variable or
// a non-map value of the file names a whole subtree ("lint") and hides
// the keys below it, file values are YAML-typed and converted weakly (a
// string from 1 or true), a variable's string decodes into a list as its
// comma-separated items. TestSettingsAgreeWithViper holds it to viper,
// which the tests keep as the oracle. Viper itself linked a hundred
// packages into every command (afero with net/http and crypto/tls, cast
// with html/template, gotenv, fsnotify, go-toml) whose initialisers and
// the binary's size cost every run: `hopctl version` executed 2.41 M
// instructions with viper and 1.96 M without, a resnet18 `analyze --format
// json` 7.56 M and 7.03 M (cachegrind, least of 5 runs), with 43 fewer
// page faults each.
type Settings struct {
	defaults map[string]any
	file     map[string]any
	flags    map[string]*pflag.Flag
}

// NewSettings returns the settings of one invocation, with the defaults
// of every key (which also make each key's environment variable apply
// when no file sets the key).
func NewSettings() *Settings {
	s := &Settings{defaults: map[string]any{}, flags: map[string]*pflag.Flag{}}
	s.setDefault(KeyLintFailOn, "error")
	s.setDefault(KeyLintSuppress, []Suppression{})
	s.setDefault(KeyInputMaxSize, DefaultInputSize)
	s.setDefault(KeyInputTorchVersion, "")
	return s
}

func (s *Settings) setDefault(key string, value any) {
	path := strings.Split(key, ".")
	deepSearch(s.defaults, path[:len(path)-1])[path[len(path)-1]] = value
}

// BindPFlag makes flag, when given, set key. hopctl's configuration flags
// are strings: the value is the flag's text.
func (s *Settings) BindPFlag(key string, flag *pflag.Flag) {
	s.flags[strings.ToLower(key)] = flag
}

// readConfig sets the file's layer from a YAML configuration, its keys
// in lower case (keys are case-insensitive, as in viper).
func (s *Settings) readConfig(data []byte) error {
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return errors.New("While parsing config: " + err.Error()) // viper's ConfigParseError
	}
	lowerKeys(m)
	s.file = m
	return nil
}

// lowerKeys puts the keys of the maps in v in lower case.
func lowerKeys(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			lowerKeys(x)
			if l := strings.ToLower(k); l != k {
				delete(v, k)
				v[l] = x
			}
		}
	case []any:
		for _, x := range v {
			lowerKeys(x)
		}
	}
}

// GetString returns key's value as a string ("" when unset). Only the
// configuration file's path (KeyConfig), a string, is read this way.
func (s *Settings) GetString(key string) string {
	switch v := s.get(key).(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		panic("config: GetString of a key that is not a string: " + key)
	}
}

// envKey spells a key as the tail of its environment variable.
var envKey = strings.NewReplacer("-", "_", ".", "_")

// env returns the value of key's environment variable (HOPCTL_LINT_FAIL_ON
// for lint.fail-on); an empty variable is unset.
func env(key string) (string, bool) {
	v, ok := os.LookupEnv(EnvPrefix + "_" + strings.ToUpper(envKey.Replace(key)))
	return v, ok && v != ""
}

// get is viper's find: the value of key from the first layer that has it,
// nil when a layer above holds a value (not a map) at one of its parents.
func (s *Settings) get(key string) any {
	key = strings.ToLower(key)
	path := strings.Split(key, ".")
	nested := len(path) > 1
	if f, ok := s.flags[key]; ok && f.Changed {
		return f.Value.String()
	}
	if nested && parentIn(path, func(p string) bool { _, ok := s.flags[p]; return ok }) {
		return nil
	}
	if v, ok := env(key); ok {
		return v
	}
	if nested && parentIn(path, func(p string) bool { _, ok := env(p); return ok }) {
		return nil
	}
	if v := searchIndexable(s.file, path); v != nil {
		return v
	}
	if nested && shadowedInDeepMap(path, s.file) {
		return nil
	}
	if v := searchMap(s.defaults, path); v != nil {
		return v
	}
	if nested && shadowedInDeepMap(path, s.defaults) {
		return nil
	}
	if f, ok := s.flags[key]; ok {
		return f.Value.String() // the flag's default
	}
	return nil
}

// parentIn reports whether in holds a proper prefix of path.
func parentIn(path []string, in func(string) bool) bool {
	for i := 1; i < len(path); i++ {
		if in(strings.Join(path[:i], ".")) {
			return true
		}
	}
	return false
}

// keys is viper's AllKeys: every key a layer sets, a key under a value of
// a higher layer left out, in sorted order. (Viper's order was a map's:
// when a key holds a whole section, "lint" of a file saying `lint:` with
// no value, and a bound flag's key is under it, "lint.fail-on", which of
// the two Unmarshal set last varied from run to run. In sorted order the
// key under the section comes last and applies.)
func (s *Settings) keys() []string {
	shadow := map[string]bool{}
outer:
	for k := range s.flags {
		path := strings.Split(k, ".")
		for i := 1; i < len(path); i++ {
			if shadow[strings.Join(path[:i], ".")] {
				continue outer
			}
		}
		shadow[k] = true
	}
	flatten(shadow, s.file, "")
	flatten(shadow, s.defaults, "")
	return slices.Sorted(func(yield func(string) bool) {
		for k := range shadow {
			if !yield(k) {
				return
			}
		}
	})
}

// flatten adds the paths of m's leaves to shadow, except under a path
// shadow already has.
func flatten(shadow map[string]bool, m map[string]any, prefix string) {
	if prefix != "" && shadow[prefix] {
		return
	}
	if prefix != "" {
		prefix += "."
	}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			flatten(shadow, sub, prefix+k)
		} else {
			shadow[strings.ToLower(prefix+k)] = true
		}
	}
}

// Unmarshal decodes the settings into c as viper.Unmarshal does: every
// key's value placed in a tree of maps, decoded by mapstructure with weak
// typing and viper's hooks.
func (s *Settings) Unmarshal(c *Config) error {
	settings := map[string]any{}
	for _, k := range s.keys() {
		v := s.get(k)
		if v == nil {
			continue
		}
		if m, ok := v.(map[string]any); ok {
			v = maps.Clone(m) // a key under it may be set in it next
		}
		path := strings.Split(k, ".")
		deepSearch(settings, path[:len(path)-1])[path[len(path)-1]] = v
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			stringToWeakSlice,
		),
		Result: c,
	})
	if err != nil {
		return err
	}
	return dec.Decode(settings)
}

// stringToWeakSlice is viper's hook: a string decoded into a list is its
// comma-separated items, none when empty.
func stringToWeakSlice(f, t reflect.Type, data any) (any, error) {
	if f.Kind() != reflect.String || t.Kind() != reflect.Slice {
		return data, nil
	}
	if raw := data.(string); raw != "" {
		return strings.Split(raw, ","), nil
	}
	return []string{}, nil
}

// deepSearch returns the map at path in m, making the maps missing on the
// way and replacing values that are not maps.
func deepSearch(m map[string]any, path []string) map[string]any {
	for _, k := range path {
		sub, ok := m[k].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[k] = sub
		}
		m = sub
	}
	return m
}

// searchMap returns the value at path in m, nil if none.
func searchMap(m map[string]any, path []string) any {
	for len(path) > 1 {
		sub, ok := m[path[0]].(map[string]any)
		if !ok {
			return nil
		}
		m, path = sub, path[1:]
	}
	return m[path[0]]
}

// searchIndexable is viper's searchIndexableWithPathPrefixes: the value at
// path in source, a key of a map possibly holding dots and a list indexed
// by number, longest prefix first.
func searchIndexable(source any, path []string) any {
	if len(path) == 0 {
		return source
	}
	for i := len(path); i > 0; i-- {
		prefix := strings.ToLower(strings.Join(path[:i], "."))
		var next any
		switch src := source.(type) {
		case []any:
			n, err := strconv.Atoi(prefix)
			if err != nil || n >= len(src) {
				continue
			}
			next = src[n]
		case map[string]any:
			var ok bool
			if next, ok = src[prefix]; !ok {
				continue
			}
		default:
			continue
		}
		if i == len(path) {
			if next != nil {
				return next
			}
			continue
		}
		switch next.(type) {
		case map[string]any, []any:
			if v := searchIndexable(next, path[i:]); v != nil {
				return v
			}
		}
	}
	return nil
}

// shadowedInDeepMap reports whether a proper prefix of path holds a value
// that is not a map in m.
func shadowedInDeepMap(path []string, m map[string]any) bool {
	for i := 1; i < len(path); i++ {
		switch searchMap(m, path[:i]).(type) {
		case nil:
			return false
		case map[string]any:
		default:
			return true
		}
	}
	return false
}
