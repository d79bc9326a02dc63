package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestGitHubAction runs the Lint step of the composite action (action.yml)
// as the runner would: its script under bash -e with the step's
// environment (inputs at their defaults, or set), a hopctl built from this
// source in RUNNER_TEMP, and GITHUB_OUTPUT. It checks the exit code the
// step records, the SARIF file the upload step reads, and the annotations.
func TestGitHubAction(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				ID   string            `yaml:"id"`
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"runs"`
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
	}
	data, err := os.ReadFile(filepath.Join(repo, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q", action.Runs.Using)
	}
	var script string
	var env map[string]string
	uploads := false
	for _, s := range action.Runs.Steps {
		if s.ID == "lint" {
			script, env = s.Run, s.Env
		}
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") && s.With["sarif_file"] == "${{ inputs.sarif-file }}" {
			uploads = true
		}
	}
	if script == "" || !uploads {
		t.Fatalf("action.yml: lint step found %v, upload-sarif of inputs.sarif-file %v", script != "", uploads)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "hopctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/hopctl")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	copyFile(t, testdata(t, "lint", "hop-input-mutation.pbtxt"), filepath.Join(work, "graphs", "m.pbtxt"))
	copyFile(t, testdata(t, "lint", "cycle_ok.pbtxt"), filepath.Join(work, "graphs", "ok.pbtxt"))
	input := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	step := func(set map[string]string) (code, stdout string) {
		t.Helper()
		out := filepath.Join(tmp, "github_output")
		os.Remove(out)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + out}
		for k, v := range env {
			m := input.FindStringSubmatch(v)
			if m == nil {
				t.Fatalf("step env %s = %q is not an input", k, v)
			}
			val, ok := set[m[1]]
			if !ok {
				val = action.Inputs[m[1]].Default
			}
			cmd.Env = append(cmd.Env, k+"="+val)
		}
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("lint step: %v\n%s", err, b)
		}
		o, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(o)), string(b)
	}
	code, stdout := step(nil)
	if code != "exit-code=1" || !strings.Contains(stdout, ",title=hopctl hop-input-mutation::cond_true might be modifying the input!") || !strings.HasPrefix(stdout, "::error file=graphs/m.pbtxt,line=") {
		t.Errorf("defaults: %s\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(work, action.Inputs["sarif-file"].Default)); err != nil {
		t.Errorf("no SARIF file for the upload step: %v", err)
	}
	if code, _ := step(map[string]string{"paths": "graphs/ok.pbtxt", "sarif-file": "out.sarif"}); code != "exit-code=0" {
		t.Errorf("clean file: %s", code)
	}
	if code, _ := step(map[string]string{"fail-on": "none", "args": "-j 1"}); code != "exit-code=0" {
		t.Errorf("fail-on none: %s", code)
	}
}
