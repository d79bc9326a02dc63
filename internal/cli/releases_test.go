package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/opschema"
	"github.com/hopctl/hopctl/pkg/report"
)

// releaseVerdicts reads testdata/releases/verdicts.json, which
// python/tools/make_releases.py writes in the torch 2.6 and 2.14 chroots:
// per program, per release, "ok" or the refusal. It returns, per program,
// the releases that refused it.
func releaseVerdicts(t *testing.T) (dir string, refused map[string][]string, releases []string) {
	t.Helper()
	dir = testdata(t, "releases")
	data, err := os.ReadFile(filepath.Join(dir, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Programs map[string]map[string]json.RawMessage `json:"programs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	refused = map[string][]string{}
	seen := map[string]bool{}
	for name, byRelease := range doc.Programs {
		refused[name] = []string{}
		for v, verdict := range byRelease {
			seen[v] = true
			if string(verdict) != `"ok"` {
				refused[name] = append(refused[name], v)
			}
		}
		sort.Strings(refused[name])
	}
	for v := range seen {
		releases = append(releases, v)
	}
	sort.Strings(releases)
	if len(doc.Programs) == 0 || len(releases) < 2 {
		t.Fatalf("verdicts.json: %d programs, releases %v", len(doc.Programs), releases)
	}
	return dir, refused, releases
}

// TestReleasesAgainstTorch: one `hopctl lint --torch-version 2.6,2.14` run
// over the programs of testdata/releases reports each as refused by
// exactly the releases that refused it in the chroots, and accepted by the
// others: the transformers shape (a cond branch returning a view of its
// operand, pytorch/pytorch#158375) is accepted by 2.6's export and refused
// by 2.14's, its .clone()d near miss accepted by both.
func TestReleasesAgainstTorch(t *testing.T) {
	dir, refused, releases := releaseVerdicts(t)
	sandbox(t)
	var files []string
	for name := range refused {
		files = append(files, filepath.Join(dir, name+".pt2"))
	}
	sort.Strings(files)
	spec := strings.Join(releases, ",")
	code, out, errOut := run(t, append([]string{"lint", "--torch-version", spec, "--format", "json"}, files...)...)
	if code > 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc report.LintDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !slices.Equal(doc.TorchReleases, []string{"2.6", "2.14"}) {
		t.Errorf("torch_releases %v", doc.TorchReleases)
	}
	for _, f := range doc.Files {
		name := strings.TrimSuffix(filepath.Base(f.Path), ".pt2")
		got := []string{}
		for _, fd := range f.Findings {
			if fd.Releases == nil {
				t.Errorf("%s: finding %s has no releases", name, fd.Rule)
				continue
			}
			if fd.Rule != "hop-input-alias" && fd.Rule != "hop-input-mutation" {
				t.Errorf("%s: finding %s: %s", name, fd.Rule, fd.Message)
			}
			for _, v := range fd.Releases.Reported {
				if !slices.Contains(got, v) {
					got = append(got, v)
				}
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, refused[name]) {
			t.Errorf("%s: hopctl refuses it under %v, torch refused it in %v", name, got, refused[name])
		}
	}
	if len(doc.Files) != len(refused) {
		t.Errorf("%d files in the report, %d programs", len(doc.Files), len(refused))
	}

	// The trigger's finding names the .clone() that its near miss (the
	// program with it, accepted by every release) places.
	for _, f := range doc.Files {
		if !strings.HasSuffix(f.Path, "cond_view.pt2") {
			continue
		}
		if len(f.Findings) != 1 || f.Findings[0].Fix == nil {
			t.Fatalf("cond_view: findings %+v", f.Findings)
		}
		fix := f.Findings[0].Fix
		if fix.Graph != "true_graph_0" || fix.Node != "view" || !strings.HasSuffix(fix.Source, "python/tools/make_releases.py:43") ||
			fix.Code != "return x.view(-1)" || fix.Suggestion != "return x.view(-1).clone()" || !strings.Contains(fix.Text, "input 0 (x)") {
			t.Errorf("cond_view: fix %+v", fix)
		}
	}

	// The text, SARIF and GitHub forms of the transformers shape, and
	// each release alone as before.
	trigger := filepath.Join(dir, "cond_view.pt2")
	_, text, _ := run(t, "lint", "--torch-version", "2.6..2.14", trigger)
	if !strings.Contains(text, "torch: refused by 2.14, accepted by 2.6 (version table: export-training-unchecked-2.6; pytorch/pytorch#146658 in 2.8)") {
		t.Errorf("text:\n%s", text)
	}
	_, sarif, _ := run(t, "lint", "--torch-version", spec, "--format", "sarif", trigger)
	if !strings.Contains(sarif, `"torchReleases"`) || !strings.Contains(sarif, `"not_reported": [`) {
		t.Errorf("sarif:\n%s", sarif)
	}
	_, gh, _ := run(t, "lint", "--torch-version", spec, "--format", "github", trigger)
	if !strings.Contains(gh, "torch: refused by 2.14, accepted by 2.6") {
		t.Errorf("github:\n%s", gh)
	}
	// analyze: the same finding, with its releases, in its document.
	_, aj, _ := run(t, "analyze", "--torch-version", spec, "--format", "json", trigger)
	var adoc report.AnalyzeDoc
	if err := json.Unmarshal([]byte(aj), &adoc); err != nil {
		t.Fatalf("analyze: %v:\n%s", err, aj)
	}
	var afs []report.Finding
	for _, g := range adoc.Files[0].Graphs {
		afs = append(afs, g.Findings...)
	}
	if !slices.Equal(adoc.TorchReleases, []string{"2.6", "2.14"}) || len(afs) != 1 || afs[0].Releases == nil ||
		afs[0].Releases.Summary != "refused by 2.14, accepted by 2.6" {
		t.Errorf("analyze:\n%s", aj)
	}
	for _, v := range releases {
		code, text, _ := run(t, "lint", "--torch-version", v, trigger)
		if want := slices.Contains(refused["cond_view"], v); (code == 1) != want || strings.Contains(text, "torch: ") {
			t.Errorf("--torch-version %s: exit %d (refused by torch: %v):\n%s", v, code, want, text)
		}
	}
}

// TestFailOnSupported: --fail-on supported fails on the errors a release
// of input.torch-supported reports, and only on them; --torch-version
// takes the supported releases as "supported"; a command that follows one
// release refuses several (exit 2), as do bad release lists.
func TestFailOnSupported(t *testing.T) {
	dir, _, _ := releaseVerdicts(t)
	trigger := filepath.Join(dir, "cond_view.pt2")
	sandbox(t)
	conf := func(supported string) string {
		p := filepath.Join(t.TempDir(), "hopctl.yaml")
		if err := os.WriteFile(p, []byte("version: 1\ninput:\n  torch-supported: \""+supported+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		supported string
		args      []string
		code      int
		want      string
	}{
		// Only 2.14 refuses the program: a project supporting 2.6 alone passes.
		{"2.6", []string{"--fail-on", "supported"}, 0, "0 findings"},
		{"2.6..2.14", []string{"--fail-on", "supported"}, 1, "refused by 2.14, accepted by 2.6"},
		{"2.14", []string{"--fail-on", "supported"}, 1, "cond_true might be aliasing"},
		// A wider run still reports the 2.14 finding; 2.6 alone is supported.
		{"2.6", []string{"--fail-on", "supported", "--torch-version", "2.6,2.14"}, 0, "refused by 2.14, accepted by 2.6"},
		{"2.6,2.14", []string{"--torch-version", "supported"}, 1, "refused by 2.14, accepted by 2.6"},
		// One release the project does not support: reported, not failing.
		{"2.6", []string{"--fail-on", "supported", "--torch-version", "2.14"}, 0, "cond_true might be aliasing"},
		{"2.6", []string{"--torch-version", "2.6..2.14", "--fail-on", "error"}, 1, "refused by 2.14"},
		{"2.6", []string{"--torch-version", "2.x"}, 2, "invalid release"},
		{"2.6", []string{"--torch-version", "2.14..2.6"}, 2, "newer"},
		{"supported", nil, 2, "torch-supported"},
	} {
		args := append([]string{"lint", "--config", conf(tc.supported)}, tc.args...)
		code, out, errOut := run(t, append(args, trigger)...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("supported %q %v: exit %d, want %d and %q:\n%s%s", tc.supported, tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
	if code, _, errOut := run(t, "joint", "--torch-version", "2.6,2.14", "-o", "-", trigger); code != 2 || !strings.Contains(errOut, "one torch release") {
		t.Errorf("joint with two releases: exit %d: %s", code, errOut)
	}
}

// TestVersionTableRows: every version table row that a lint rule consults
// has a trigger and a near miss here, and one `--torch-version 2.6,2.14`
// run over them reports the trigger in the releases the row says, citing
// the row (or, for a row that changes only the words, in both releases with
// 2.6's words), and nothing on the near miss. The triggers are real traces
// whose single-release verdicts the corpus tests check against torch
// (pkg/analyze/passes/alias TestRealHOPCorpus*, TestRealHOPCorpusTorch26*,
// TestRealHOPCorpusDynamoGradMode; TestReleasesAgainstTorch above).
func TestVersionTableRows(t *testing.T) {
	real := testdata(t, "hops_real")
	sandbox(t)
	cases := []struct {
		row, trigger, nearMiss string
		reported               []string // the releases that report the trigger
		words26                string   // a row of words only: 2.6's, in messages
	}{
		{"alias-input-output-only", "cond_out_out_alias.pb", "cond_no_alias_clone.pb", []string{"2.14"}, ""},
		{"hop-messages-2.6", "cond_mutate.pb", "cond_mutate_clone.pb", []string{"2.6", "2.14"}, "One of torch.cond branch might be modifying the input!"},
		{"cond-same-metadata", "cond_size.pb", "cond_clean.pb", []string{"2.6"}, ""},
		{"map-outputs-2.6", "map_out_int.pb", "map_out_none.pb", []string{"2.6", "2.14"}, "Expect outputs of map only contains tensors or None."},
		{"scan-xs-length-2.6", "scan_xs_len.pb", "scan_xs_len_ok.pb", []string{"2.14"}, ""},
		{"scan-zero-length-2.6", "scan_zero_len.pb", "scan_clean.pb", []string{"2.6"}, ""},
		{"scan-carry-2.6", "scan_count.pb", "scan_count_ok.pb", []string{"2.14"}, ""},
		{"scan-alias-2.6", "scan_alias.pb", "scan_clean.pb", []string{"2.14"}, ""},
		{"while-meta-2.6", "while_count.pb", "while_clean.pb", []string{"2.14"}, ""},
		{"dynamo-unchecked-2.6", "dynamo/cond_mutate_grad.pb", "dynamo/cond_clean_grad.pb", []string{"2.14"}, ""},
		{"export-training-unchecked-2.6", "../releases/cond_view.pt2", "../releases/cond_view_clone.pt2", []string{"2.14"}, ""},
	}
	// The rows lint's rules consult that have no trigger yet: 2.6 traces
	// no sparse associative_scan (assoc-sparse-2.6), and the other two
	// change how a call is read (scan-form-2.6: both forms are read
	// whatever the release) or backwards (invoke-subgraph-grad-2.6), not a
	// verdict.
	untested := []string{"assoc-sparse-2.6", "scan-form-2.6", "invoke-subgraph-grad-2.6"}
	for _, rule := range []string{"hop-input-alias", "hop-input-mutation", "hop-meta-mismatch", "hop-structure", "hop-call"} {
		for _, row := range opschema.RowsOfRule(rule, "") {
			if !slices.Contains(untested, row) && !slices.ContainsFunc(cases, func(c struct {
				row, trigger, nearMiss string
				reported               []string
				words26                string
			}) bool {
				return c.row == row
			}) {
				t.Errorf("version table row %s (rule %s) has no trigger and near miss", row, rule)
			}
		}
	}
	for _, c := range cases {
		trigger, near := filepath.Join(real, c.trigger), filepath.Join(real, c.nearMiss)
		code, out, errOut := run(t, "lint", "--torch-version", "2.6,2.14", "--format", "json", trigger, near)
		if code > 1 {
			t.Fatalf("%s: exit %d: %s", c.row, code, errOut)
		}
		var doc report.LintDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v", c.row, err)
		}
		found := false
		for _, fd := range doc.Files[0].Findings {
			r := fd.Releases
			if r == nil || !slices.Equal(r.Reported, c.reported) {
				continue
			}
			if c.words26 != "" {
				found = found || strings.HasPrefix(r.Messages["2.6"], c.words26)
			} else {
				found = found || slices.Contains(r.Rows, c.row)
			}
		}
		if !found {
			t.Errorf("%s: trigger %s: no finding reported by %v citing the row:\n%s", c.row, c.trigger, c.reported, out)
		}
		if n := len(doc.Files[1].Findings); n != 0 {
			t.Errorf("%s: near miss %s: %d findings:\n%s", c.row, c.nearMiss, n, out)
		}
	}
}
