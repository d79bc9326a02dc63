// Package config is hopctl's typed, versioned configuration: what a
// .hopctl.yaml file may say, how it is layered with HOPCTL_* environment
// variables and flags (file < environment < flag, through the Settings of
// each invocation), and how it is validated.
//
// A configuration file looks like:
//
//	version: 1
//	lint:
//	  fail-on: warning          # error | warning | info (or note) | none | supported
//	  suppress:
//	    - rule: hop-input-mutation
//	      path: "exported/**/*.pb"  # glob on the input file path
//	      graph: true_graph_0       # qualified graph name
//	      node: add_1
//	      reason: the branch writes a buffer on purpose (issue 12)
//	input:
//	  max-size: 1GiB            # read limit per input file (B, KiB, MiB, GiB)
//	  torch-version: "2.6"      # HOP rules of this torch release (default: the file's, else the newest);
//	                            # a list "2.6,2.14", a range "2.6..2.14" or supported: each release's
//	  torch-supported: 2.6..2.14  # the releases the project supports (torch-version supported, fail-on supported)
//	  grad-mode: disabled       # enabled | disabled | inference, for files that record none
//
// Unknown keys, a missing version, versions this build does not know,
// suppressions without a reason and a second YAML document are errors.
// The file itself is read up to MaxFileSize bytes. hopctl.schema.json
// beside this file is the same format as a JSON Schema, for editors and
// `hopctl config verify`.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Version is the configuration format version this build reads.
const Version = 1

// DefaultFile is the configuration file looked for, from the current
// directory up to the repository's root, when neither --config nor
// HOPCTL_CONFIG names one.
const DefaultFile = ".hopctl.yaml"

// EnvPrefix prefixes the environment variables that set configuration
// keys: lint.fail-on is HOPCTL_LINT_FAIL_ON.
const EnvPrefix = "HOPCTL"

// KeyConfig is the settings key of the configuration file path itself
// (--config, HOPCTL_CONFIG). It is not a key a file may contain.
const KeyConfig = "config"

// Keys of the layered settings.
const (
	KeyLintFailOn   = "lint.fail-on"
	KeyLintSuppress = "lint.suppress"
	KeyInputMaxSize = "input.max-size"
	// KeyInputTorchVersion selects the torch release whose HOP rules apply
	// (opschema.TorchDifferences); empty: the version each file records,
	// else the newest.
	KeyInputTorchVersion = "input.torch-version"
	// KeyInputTorchSupported is the torch releases the project supports
	// (what torch-version "supported" and fail-on "supported" mean).
	KeyInputTorchSupported = "input.torch-supported"
	// KeyInputGradMode is the grad mode (enabled, disabled, inference) of
	// files that record none (analyze.Options.GradMode); empty: enabled.
	KeyInputGradMode = "input.grad-mode"
	DefaultInputSize = "1GiB" // ir.DefaultMaxInputSize
)

// MaxFileSize bounds how much of a configuration file is read: a
// configuration is a few lines, and a path naming /dev/zero or a pipe that
// never ends must not make hopctl read forever.
const MaxFileSize = 1 << 20

// FailOn levels, most to least severe. "note" is SARIF's name for "info";
// "none" never fails; "supported" fails on the errors some supported
// release (input.torch-supported) reports: "refused by any supported
// release".
var FailOnLevels = []string{"error", "warning", "info", "note", "none", "supported"}

// Config is the validated configuration of one invocation.
type Config struct {
	// File is the configuration file it was read from, "" if none.
	File    string `mapstructure:"-" yaml:"-"`
	Version int    `mapstructure:"version" yaml:"version"`
	Lint    Lint   `mapstructure:"lint" yaml:"lint"`
	Input   Input  `mapstructure:"input" yaml:"input"`
}

// Input configures how graph files are read.
type Input struct {
	// MaxSize is how many bytes hopctl reads from one input file before it
	// refuses it (exit 3): a number of bytes, or with a B, KiB, MiB or GiB
	// suffix (KB, MB, GB and K, M, G are the same binary multiples).
	MaxSize string `mapstructure:"max-size" yaml:"max-size"`
	// TorchVersion is the torch release ("major.minor") whose HOP rules the
	// checks follow; empty: the version each file records, else the newest.
	// It may also be several (opschema.ParseTorchReleases): a list
	// "2.6,2.14", a range "2.6..2.14" or "supported"; the checks then run
	// under each and every finding says in which it is reported.
	TorchVersion string `mapstructure:"torch-version" yaml:"torch-version,omitempty"`
	// TorchSupported are the torch releases the project supports, in the
	// same syntax (not "supported"): what torch-version supported selects
	// and lint.fail-on supported gates on; empty: the version table's
	// releases.
	TorchSupported string `mapstructure:"torch-supported" yaml:"torch-supported,omitempty"`
	// GradMode is the grad mode ("enabled", "disabled", "inference") the
	// HOP rules assume for a file that records none; empty: enabled. A
	// file's own record wins.
	GradMode string `mapstructure:"grad-mode" yaml:"grad-mode,omitempty"`
}

// MaxSizeBytes returns Input.MaxSize in bytes (Validate has checked it).
func (in Input) MaxSizeBytes() int64 {
	n, _ := ParseSize(in.MaxSize)
	return n
}

var sizeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([0-9]+)\s*([kKmMgG]?)(i?[bB]?)\s*$`) })

// ParseSize parses a byte count such as 1048576, 512MiB, 1GB or 64k
// (multiples are binary). It refuses zero, negative and unparsable
// values, and values over int64.
func ParseSize(s string) (int64, error) {
	m := sizeRE().FindStringSubmatch(s)
	if m == nil || (m[2] == "" && strings.HasPrefix(m[3], "i")) {
		return 0, fmt.Errorf("invalid size %q (want a number of bytes, optionally with a KiB, MiB or GiB suffix)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
	if n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("invalid size %q (want more than 0 and less than 2^63 bytes)", s)
	}
	return n << shift, nil
}

// Lint configures hopctl lint.
type Lint struct {
	// FailOn is the least severe finding level that makes lint exit 1.
	FailOn string `mapstructure:"fail-on" yaml:"fail-on"`
	// Suppress lists findings not to report.
	Suppress []Suppression `mapstructure:"suppress" yaml:"suppress"`
}

// Suppression silences the findings that match all of its non-empty
// fields. Every field is a path.Match glob: rule on the rule id ("hop-*"),
// path on the input file path as given (and on its base name when the glob
// has no slash), graph on the qualified graph name ("<root>" is the root),
// node on the node name.
//
// Path globs may use "**" for any number of directories, and match the
// path as given or relative to the configuration file's directory. Reason
// is required: it says why the finding is accepted, and SARIF output
// carries it as the suppression's justification.
type Suppression struct {
	Rule   string `mapstructure:"rule" yaml:"rule"`
	Path   string `mapstructure:"path" yaml:"path,omitempty"`
	Graph  string `mapstructure:"graph" yaml:"graph,omitempty"`
	Node   string `mapstructure:"node" yaml:"node,omitempty"`
	Reason string `mapstructure:"reason" yaml:"reason"`
}

// Error is a configuration problem: an unreadable or invalid file, or a bad
// value from the environment or a flag.
type Error struct {
	File string // "" when the problem is not in a file
	Err  error
}

func (e *Error) Error() string {
	if e.File == "" {
		return "config: " + e.Err.Error()
	}
	return ir.Printable(e.File) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Path returns the configuration file to read: the one --config or
// HOPCTL_CONFIG names (which must exist), else Discover(dir).
func Path(s *Settings, dir string) string {
	if p := s.GetString(KeyConfig); p != "" {
		return p
	}
	return Discover(dir)
}

// Discover looks for DefaultFile in dir, then in each parent directory up
// to the repository's root (the first directory with a .git entry), as
// golangci-lint looks for its configuration; outside a repository only dir
// is looked in. It returns "" when there is none. The path returned is
// relative when dir is.
func Discover(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if root := RepoRoot(abs); root != "" {
		for d, rel := abs, dir; ; d, rel = filepath.Dir(d), filepath.Join(rel, "..") {
			if p := filepath.Join(rel, DefaultFile); isFile(p) {
				return p
			}
			if d == root || d == filepath.Dir(d) {
				return ""
			}
		}
	}
	if p := filepath.Join(dir, DefaultFile); isFile(p) {
		return p
	}
	return ""
}

// RepoRoot is the nearest directory at or above abs that has a .git
// entry (a directory, or a file in worktrees and submodules), "" if none.
func RepoRoot(abs string) string {
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Load reads file (none when "") into s, validates it, and returns the
// configuration with the environment variables and flags bound to s
// layered on top.
func Load(s *Settings, file string) (*Config, error) {
	if file == "" {
		return LoadBytes(s, "", nil)
	}
	data, err := ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Err: err}
	}
	return LoadBytes(s, file, data)
}

// LoadBytes is Load of data, file's content read by ReadFile (file ""
// is none: data is ignored), for callers that read the file themselves (a
// FIFO cannot be read twice).
func LoadBytes(s *Settings, file string, data []byte) (*Config, error) {
	version := Version
	if file != "" {
		fc, err := decodeStrict(data)
		if err != nil {
			return nil, &Error{File: file, Err: err}
		}
		switch {
		case fc.Version == 0:
			return nil, &Error{File: file, Err: fmt.Errorf("missing version: the file must say 'version: %d'", Version)}
		case fc.Version > Version:
			return nil, &Error{File: file, Err: fmt.Errorf("config version %d is newer than this hopctl reads (%d); upgrade hopctl", fc.Version, Version)}
		case fc.Version < 0:
			return nil, &Error{File: file, Err: fmt.Errorf("invalid version %d (want %d)", fc.Version, Version)}
		}
		version = fc.Version
		if err := s.readConfig(data); err != nil {
			return nil, &Error{File: file, Err: err}
		}
	}
	c := &Config{}
	if err := s.Unmarshal(c); err != nil {
		return nil, &Error{Err: err}
	}
	c.File = file
	c.Version = version
	if err := c.Validate(); err != nil {
		return nil, &Error{File: file, Err: err}
	}
	return c, nil
}

// ReadFile reads a configuration file, at most MaxFileSize bytes, opening
// it once (a pipe is read as a stream).
func ReadFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, ir.WithoutPath(err) // Error names the file, escaped
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory, not a configuration file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes: not a configuration file", MaxFileSize)
	}
	return data, nil
}

// decodeStrict decodes a configuration file, refusing unknown keys and a
// second document (which Settings.readConfig would silently ignore).
func decodeStrict(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&c)
	var te *yaml.TypeError
	if err == nil {
		var next yaml.Node
		switch err2 := dec.Decode(&next); {
		case errors.Is(err2, io.EOF):
		case err2 != nil:
			err = err2
		default:
			return nil, fmt.Errorf("line %d: a second YAML document: a configuration file holds one, and hopctl would ignore the rest", next.Line)
		}
	}
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return &c, nil
	case errors.As(err, &te):
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = explainYAML(m)
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// yamlKeys are the keys each configuration type accepts, by the type name
// yaml.v3 puts in its "field x not found in type config.T" errors.
var yamlKeys = map[string]reflect.Type{
	"config.Config":      reflect.TypeFor[Config](),
	"config.Lint":        reflect.TypeFor[Lint](),
	"config.Suppression": reflect.TypeFor[Suppression](),
	"config.Input":       reflect.TypeFor[Input](),
}

var unknownFieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(line \d+): field (.+) not found in type (\S+)$`) })

// explainYAML rewrites yaml.v3's unknown-field message as
// `line 3: unknown key "fail_on" (want fail-on, suppress)`.
func explainYAML(msg string) string {
	m := unknownFieldRE().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	out := fmt.Sprintf("%s: unknown key %q", m[1], m[2])
	if t, ok := yamlKeys[m[3]]; ok {
		var keys []string
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
				keys = append(keys, k)
			}
		}
		out += fmt.Sprintf(" (want %s)", strings.Join(keys, ", "))
	}
	return out
}

// Validate checks the values of c.
func (c *Config) Validate() error {
	var errs []error
	if !contains(FailOnLevels, c.Lint.FailOn) {
		errs = append(errs, fmt.Errorf("lint.fail-on: invalid level %q (want %s)", c.Lint.FailOn, strings.Join(FailOnLevels, ", ")))
	}
	if _, err := ParseSize(c.Input.MaxSize); err != nil {
		errs = append(errs, fmt.Errorf("input.max-size: %w", err))
	}
	if v := c.Input.TorchSupported; strings.Contains(v, "supported") {
		errs = append(errs, fmt.Errorf("input.torch-supported: invalid releases %q (name releases: 2.6,2.14 or 2.6..2.14)", v))
	} else if _, err := opschema.ParseTorchReleases(v, ""); err != nil {
		errs = append(errs, fmt.Errorf("input.torch-supported: %w", err))
	}
	if _, err := opschema.ParseTorchReleases(c.Input.TorchVersion, c.Input.TorchSupported); err != nil && !strings.Contains(c.Input.TorchSupported, "supported") {
		errs = append(errs, fmt.Errorf("input.torch-version: %w", err))
	}
	if !analyze.ValidGradMode(c.Input.GradMode) {
		errs = append(errs, fmt.Errorf("input.grad-mode: invalid mode %q (want %s)", c.Input.GradMode, strings.Join(analyze.GradModes, ", ")))
	}
	for i, s := range c.Lint.Suppress {
		if s.Rule == "" {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: missing rule", i))
		}
		if strings.TrimSpace(s.Reason) == "" {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: missing reason (say why the finding is accepted)", i))
		}
		for _, g := range []struct{ name, glob string }{{"rule", s.Rule}, {"path", s.Path}, {"graph", s.Graph}, {"node", s.Node}} {
			if !doublestar.ValidatePattern(g.glob) {
				errs = append(errs, fmt.Errorf("lint.suppress[%d]: invalid %s glob %q", i, g.name, g.glob))
			}
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// LintSuppressions converts and checks the configured suppressions: every
// glob is valid and a rule without glob characters is a known rule id.
// Path globs are also matched relative to the configuration file's
// directory.
func (c *Config) LintSuppressions() ([]lint.Suppression, error) {
	var out []lint.Suppression
	var errs []error
	dir := ""
	if c.File != "" {
		dir = filepath.Dir(c.File)
	}
	for i, s := range c.Lint.Suppress {
		ls := lint.Suppression{Rule: s.Rule, Path: s.Path, Graph: s.Graph, Node: s.Node, Reason: s.Reason, Dir: dir}
		if err := ls.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: %w", i, err))
		}
		if _, known := lint.LookupRule(s.Rule); !known && !strings.ContainsAny(s.Rule, "*?[{") {
			errs = append(errs, fmt.Errorf("lint.suppress[%d]: unknown rule %q (see 'hopctl lint --list-rules')", i, s.Rule))
		}
		out = append(out, ls)
	}
	if len(errs) > 0 {
		return nil, &Error{File: c.File, Err: errors.Join(errs...)}
	}
	return out, nil
}
