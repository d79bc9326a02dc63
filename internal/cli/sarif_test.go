package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hopctl/hopctl/internal/cli"
)

// corpusSARIF writes, into dir, the SARIF log `hopctl lint` writes for
// each corpus directory (every file of testdata/lint, hops, models, the
// torch.export archives of testdata/pt2 and the adversarial testdata/bad, which yields findings of every rule, codeFlows,
// source locations and unreadable-file notifications) and for single
// files (a clean one, whose log has no results), `--list-rules`, and a
// run with a baseline (every result with a baselineState); it returns the
// paths.
func corpusSARIF(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, c := range []struct {
		name string
		args []string
	}{
		{"lint", []string{"../../testdata/lint"}},
		{"hops", []string{"../../testdata/hops"}},
		{"models", []string{"../../testdata/models"}},
		{"bad", badArgs(t)},
		{"pt2", []string{"../../testdata/pt2/..."}},
		{"clean", []string{"../../testdata/lint/cycle_ok.pbtxt"}},
		// Several torch releases: every result has its torchReleases property.
		{"releases", []string{"--torch-version", "2.6,2.14", "../../testdata/releases", "../../testdata/hops_real"}},
		{"rules", []string{"--list-rules"}},
		{"baseline", []string{"--write-baseline", filepath.Join(dir, "base.json"), "../../testdata/hops", "../../testdata/lint/hop-input-alias.pbtxt"}},
		{"suppressed", []string{"--config", cmdtest.WriteFile(t, filepath.Join(dir, "supp.yaml"),
			"version: 1\nlint:\n  suppress:\n    - rule: hop-*\n      path: \"**/hops/*.pbtxt\"\n      reason: hand-written examples of what PyTorch rejects\n    - rule: cycle\n      reason: matches nothing here\n"),
			"../../testdata/hops"}},
	} {
		p := filepath.Join(dir, c.name+".sarif")
		code, _, stderr := run(t, append([]string{"lint", "--format", "sarif=" + p, "--fail-on", "none"}, c.args...)...)
		if code != cli.ExitOK && code != cli.ExitInput {
			t.Fatalf("lint %s: exit %d: %s", c.name, code, stderr)
		}
		out = append(out, p)
	}
	return out
}

// badArgs are the files of testdata/bad (every one, whatever its
// extension: walking a directory takes graph-like files only).
func badArgs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".want") && !strings.HasSuffix(f, ".md") {
			out = append(out, f)
		}
	}
	if len(out) < 20 {
		t.Fatalf("testdata/bad: %d files", len(out))
	}
	return out
}

// TestSARIFSchema validates every SARIF log hopctl writes for the corpus
// against the official OASIS SARIF 2.1.0 JSON schema
// (testdata/sarif/sarif-schema-2.1.0.json, formats asserted).
func TestSARIFSchema(t *testing.T) {
	dir := t.TempDir()
	logs := corpusSARIF(t, dir)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	f, err := os.Open("../../testdata/sarif/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s does not match the SARIF 2.1.0 schema: %v", filepath.Base(p), err)
		}
	}
	// The schema check can fail: a result without a message does not pass.
	bad := `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "r"}]}]}`
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if sch.Validate(inst) == nil {
		t.Error("the schema accepts a result without a message")
	}
}

// multitool is Microsoft's SARIF validator, as installed by
// scripts/install-deps.sh (the Makefile passes its path); the test is
// skipped when HOPCTL_SARIF_MULTITOOL is unset (a plain `go test`) and
// fails when it is set but the program does not run.
func multitool(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HOPCTL_SARIF_MULTITOOL")
	if p == "" {
		t.Skip("HOPCTL_SARIF_MULTITOOL is not set (make test sets it after scripts/install-deps.sh installs the multitool)")
	}
	return p
}

// validate runs `sarif-multitool validate --rule-kind "Sarif;Gh"` on logs
// and returns its errors and warnings, one line each.
func validate(t *testing.T, mt string, logs []string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "validation.sarif")
	cmd := exec.Command(mt, append([]string{"validate", "--rule-kind", "Sarif;Gh", "--log", "ForceOverwrite", "--output", out}, logs...)...)
	cmd.Env = append(os.Environ(), "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1", "DOTNET_CLI_TELEMETRY_OPTOUT=1")
	stdout, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", mt, err, stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the multitool wrote no validation log: %v\n%s", err, stdout)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					Text      string   `json:"text"`
					ID        string   `json:"id"`
					Arguments []string `json:"arguments"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
			Invocations []struct {
				ExecutionSuccessful bool `json:"executionSuccessful"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Invocations) == 0 || !log.Runs[0].Invocations[0].ExecutionSuccessful {
		t.Fatalf("the multitool did not run to completion:\n%s", stdout)
	}
	var problems []string
	for _, r := range log.Runs[0].Results {
		// A result's level defaults to warning; note and none are not
		// problems.
		if r.Level == "note" || r.Level == "none" {
			continue
		}
		where := ""
		if len(r.Locations) > 0 {
			where = filepath.Base(r.Locations[0].PhysicalLocation.ArtifactLocation.URI) + ": "
		}
		msg := r.Message.Text
		if msg == "" {
			msg = r.Message.ID + " " + strings.Join(r.Message.Arguments, "; ")
		}
		problems = append(problems, fmt.Sprintf("%s%s %s: %s", where, r.Level, r.RuleID, msg))
	}
	return problems
}

// TestSARIFMultitool: Microsoft's validator with GitHub's rules reports no
// error and no warning on any SARIF log hopctl writes for the corpus; and
// it does report the problems hopctl's SARIF used to have (a rule without
// help, a name equal to the id), so the check can fail.
func TestSARIFMultitool(t *testing.T) {
	mt := multitool(t)
	dir := t.TempDir()
	logs := corpusSARIF(t, dir)
	old := cmdtest.WriteFile(t, filepath.Join(dir, "old.sarif"), `{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
  "runs": [{"tool": {"driver": {"name": "hopctl", "informationUri": "https://github.com/hopctl/hopctl",
    "rules": [{"id": "cycle", "name": "cycle", "shortDescription": {"text": "a cycle."}, "fullDescription": {"text": "A cycle."}}]}},
    "results": []}]}`)
	problems := validate(t, mt, append(logs, old))
	var others []string
	sawHelp, sawName := false, false
	for _, p := range problems {
		switch {
		case strings.HasPrefix(p, "old.sarif: ") && strings.Contains(p, "GH2012"):
			sawHelp = true
		case strings.HasPrefix(p, "old.sarif: ") && strings.Contains(p, "SARIF1001"):
			sawName = true
		case strings.HasPrefix(p, "old.sarif: "):
		default:
			others = append(others, p)
		}
	}
	if !sawHelp || !sawName {
		t.Errorf("the multitool did not flag the old log (help: %v, name: %v): %q", sawHelp, sawName, problems)
	}
	if len(others) > 0 {
		t.Errorf("the multitool reports %d problems in hopctl's SARIF:\n%s", len(others), strings.Join(others, "\n"))
	}
}
