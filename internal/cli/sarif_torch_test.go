package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/pkg/lint"
)

// torchExports runs python/tools/sarif_models.py in the torch 2.14 chroot
// and returns the directory of its exports (inside the repository, which
// is all the chroot sees). With HOPCTL_NO_CHROOTS=1 (install-deps.sh built
// no chroot) the test is skipped; without the chroot otherwise it is
// skipped too, except in CI (CI=true), where install-deps.sh has built it.
func torchExports(t *testing.T) (repo, out string) {
	t.Helper()
	if os.Getenv("HOPCTL_NO_CHROOTS") == "1" {
		t.Skip("HOPCTL_NO_CHROOTS=1: no torch 2.14 chroot")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(filepath.Join(repo, "scripts", "chroot.sh"), "path", "2.14").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the torch 2.14 chroot is missing in CI: %v", err)
		}
		t.Skipf("no torch 2.14 chroot (scripts/chroot.sh build 2.14): %v", err)
	}
	// bin/ is ignored by git.
	if err := os.MkdirAll(filepath.Join(repo, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = os.MkdirTemp(filepath.Join(repo, "bin"), "sarif-exports-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	cmd := exec.Command(filepath.Join(repo, "scripts", "torch.sh"), "2.14", "--", "python3", "python/tools/sarif_models.py", out)
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("exporting with torch 2.14: %v\n%s", err, b)
	}
	return repo, out
}

type sarifLog struct {
	Runs []struct {
		OriginalURIBaseIDs map[string]struct {
			URI string `json:"uri"`
		} `json:"originalUriBaseIds"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
						Snippet   struct {
							Text string `json:"text"`
						} `json:"snippet"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			RelatedLocations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"relatedLocations"`
			CodeFlows []struct {
				ThreadFlows []struct {
					Locations []struct {
						Location struct {
							Message struct {
								Text string `json:"text"`
							} `json:"message"`
						} `json:"location"`
					} `json:"locations"`
				} `json:"threadFlows"`
			} `json:"codeFlows"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

func lintSARIF(t *testing.T, args ...string) sarifLog {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"lint", "--format", "sarif"}, args...)...)
	if code != cli.ExitFindings {
		t.Fatalf("lint %v: exit %d, want %d: %s", args, code, cli.ExitFindings, stderr)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("lint %v: want one result: %s", args, stdout)
	}
	return log
}

// lineOf is the 1-based line of the first line of file containing marker.
func lineOf(t *testing.T, file, marker string) (int, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, marker) {
			return i + 1, strings.TrimSpace(l)
		}
	}
	t.Fatalf("%s has no line with %q", file, marker)
	return 0, ""
}

// TestSARIFRealExport lints graphs torch 2.14's make_fx traced from real
// modules (python/tools/sarif_models.py):
//   - the finding in the cond branch lands on the Python line that wrote
//     the mutation (x.add_(1)), with the graph file as a related location,
//     the graph and node as logical location, and the provenance as a
//     codeFlow ending at that line;
//   - the same model exported after another cond (every node and subgraph
//     renumbered) has the same fingerprint, and a model whose branch
//     writes with another op has a different one.
func TestSARIFRealExport(t *testing.T) {
	repo, out := torchExports(t)
	t.Chdir(repo)
	for _, k := range []string{"HOPCTL_CONFIG", "HOPCTL_LINT_FAIL_ON", "HOPCTL_LINT_SUPPRESS"} {
		t.Setenv(k, "")
	}
	rel := func(p string) string {
		r, err := filepath.Rel(repo, p)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	a := filepath.Join(out, "a", "model.pbtxt")
	log := lintSARIF(t, "--source-root", repo, a)
	res := log.Runs[0].Results[0]
	line, src := lineOf(t, filepath.Join(repo, "python", "tools", "sarif_models.py"), "# MUTATION")
	loc := res.Locations[0]
	if res.RuleID != "hop-input-mutation" || loc.PhysicalLocation.ArtifactLocation.URI != "python/tools/sarif_models.py" ||
		loc.PhysicalLocation.Region.StartLine != line || loc.PhysicalLocation.Region.Snippet.Text != src {
		t.Errorf("primary location %+v, want python/tools/sarif_models.py line %d %q", loc.PhysicalLocation, line, src)
	}
	if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].FullyQualifiedName != "cond" {
		t.Errorf("logical location %+v, want the root graph's cond", loc.LogicalLocations)
	}
	if len(res.RelatedLocations) != 1 || res.RelatedLocations[0].PhysicalLocation.ArtifactLocation.URI != rel(a) {
		t.Errorf("related locations %+v, want the graph file %s", res.RelatedLocations, rel(a))
	}
	var steps []string
	for _, cf := range res.CodeFlows {
		for _, tf := range cf.ThreadFlows {
			for _, l := range tf.Locations {
				steps = append(steps, l.Location.Message.Text)
			}
		}
	}
	if len(steps) != 3 || !strings.HasPrefix(steps[0], "input ") || steps[1] != "HOP call cond (higher_order.cond)" || steps[2] != "node add_ (aten.add_.Tensor)" {
		t.Errorf("codeFlow %q, want input → HOP call cond → node add_", steps)
	}
	if got := log.Runs[0].OriginalURIBaseIDs["%SRCROOT%"].URI; got != "file://"+filepath.ToSlash(repo)+"/" {
		t.Errorf("originalUriBaseIds %%SRCROOT%% = %q", got)
	}

	// Fingerprints: each export linted with its own directory as the root,
	// so that the file's path is model.pbtxt in all three.
	fp := func(d string) (string, string) {
		t.Helper()
		code, stdout, stderr := run(t, "lint", "--format", "json", "--source-root", filepath.Join(out, d), filepath.Join(out, d, "model.pbtxt"))
		if code != cli.ExitFindings {
			t.Fatalf("lint %s: exit %d: %s", d, code, stderr)
		}
		var doc struct {
			Files []struct {
				Findings []struct {
					Node        string `json:"node"`
					Fingerprint string `json:"fingerprint"`
					Provenance  struct {
						Path []string `json:"path"`
					} `json:"provenance"`
				} `json:"findings"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Files) != 1 || len(doc.Files[0].Findings) != 1 {
			t.Fatalf("lint %s: want one finding: %s", d, stdout)
		}
		f := doc.Files[0].Findings[0]
		return f.Fingerprint, strings.Join(f.Provenance.Path, " → ")
	}
	fa, pa := fp("a")
	fb, pb := fp("b")
	fc, pc := fp("c")
	if pa == pb {
		t.Fatalf("the re-export is not renumbered: %s in both", pa)
	}
	if fa == "" || fa != fb {
		t.Errorf("fingerprints differ after renumbering: %s (%s) vs %s (%s)", fa, pa, fb, pb)
	}
	if fc == fa {
		t.Errorf("a different mutation (%s) has the same fingerprint as %s", pc, pa)
	}
	if got := log.Runs[0].Results[0].PartialFingerprints[lint.FingerprintKey]; got == "" {
		t.Errorf("no partialFingerprints[%q]", lint.FingerprintKey)
	}
}
