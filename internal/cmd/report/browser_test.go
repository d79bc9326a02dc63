package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/load"
)

// chromiumPath finds Debian's chromium (scripts/install-deps.sh installs
// it). Without it the browser tests are skipped, except in CI, where they
// fail.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HOPCTL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (scripts/install-deps.sh installs it)")
	}
	t.Skip("chromium is not installed (scripts/install-deps.sh installs it)")
	return ""
}

// browser starts a headless Chromium with a fresh profile and no network
// services, and returns a context for chromedp actions in one tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromeOptions(chromiumPath(t), t.TempDir())...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	return ctx
}

// writeReport writes the report of files (paths relative to the
// repository's root, as the page shows them) into a temporary directory.
func writeReport(t *testing.T, joint bool, files ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	t.Chdir("../../..")
	ios, _, _, _ := iostreams.Test()
	if err := reportRun(&Options{IO: ios, Files: files, Out: out, Joint: joint, Partition: "mincut"}); err != nil {
		t.Fatal(err)
	}
	return out
}

func open(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	abs, _ := filepath.Abs(path)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.hopctlReport && window.hopctlReport.ready)`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for %s to be ready: %v", path, err)
	}
}

// screenshot saves a PNG of the page into the test's artifact directory
// (kept with go test -artifacts) and returns it decoded.
func screenshot(t *testing.T, ctx context.Context, name string) image.Image {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// canvasStats counts, in the graph canvas's area of a screenshot, the
// pixels that differ from the background and the highlight-red ones.
func canvasStats(t *testing.T, ctx context.Context, img image.Image) (ink, red int) {
	t.Helper()
	r := evalJS[struct{ X, Y, W, H float64 }](t, ctx, `(() => { const b = document.getElementById("graph").getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; })()`)
	bg := img.At(int(r.X)+2, int(r.Y+r.H)-2)
	br, bgc, bb, _ := bg.RGBA()
	for y := int(r.Y); y < int(r.Y+r.H); y++ {
		for x := int(r.X); x < int(r.X+r.W); x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr != br || cg != bgc || cb != bb {
				ink++
			}
			if cr>>8 > 180 && cg>>8 < 70 && cb>>8 < 70 {
				red++
			}
		}
	}
	return ink, red
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// TestBrowserFindingHighlightsProvenance opens the report of a corpus HOP
// graph whose cond branch mutates an input three HOPs deep, clicks the
// finding in the findings panel, and checks that the provenance path —
// the input, each call node, each subgraph box and the writing node — is
// highlighted, in the page's state and in the pixels.
func TestBrowserFindingHighlightsProvenance(t *testing.T) {
	const file = "testdata/hops/nested3_mutation.pbtxt"
	ctx := browser(t)
	open(t, ctx, writeReport(t, false, file))

	// What must be highlighted comes from the analysis, not from here.
	lf, res, err := load.Analyze(file, passes.All()...)
	if err != nil {
		t.Fatal(err)
	}
	m := lf.Module
	var want []string
	for _, f := range res.Findings {
		if f.Graph == "" && f.Provenance != nil {
			p := f.Provenance
			want = append(want, p.Input)
			for _, item := range p.Path {
				if m.Graph(item) != nil {
					item = "box:" + item
				}
				want = append(want, item)
			}
			break
		}
	}
	if len(want) < 5 {
		t.Fatalf("the corpus graph should have a root finding with a nested provenance path, got %v", want)
	}

	before := screenshot(t, ctx, "nested3-before.png")
	ink0, red0 := canvasStats(t, ctx, before)
	if ink0 < 5000 {
		t.Fatalf("the graph canvas is (nearly) blank before the click: %d drawn pixels", ink0)
	}
	if n := evalJS[int](t, ctx, `window.hopctlReport.requests()`); n != 0 {
		t.Errorf("the page made or tried %d requests; it must load nothing", n)
	}
	if got := evalJS[[]string](t, ctx, `window.hopctlReport.highlighted()`); len(got) != 0 {
		t.Fatalf("highlighted before any click: %v", got)
	}

	// A real click on the finding's panel entry.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.finding[data-index="0"]`))); err != nil {
		t.Fatal(err)
	}
	got := evalJS[[]string](t, ctx, `window.hopctlReport.highlighted()`)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("after clicking the finding, %q is not highlighted; highlighted: %v", w, got)
		}
	}
	after := screenshot(t, ctx, "nested3-finding.png")
	ink1, red1 := canvasStats(t, ctx, after)
	if ink1 < 5000 {
		t.Fatalf("the graph canvas is (nearly) blank after the click: %d drawn pixels", ink1)
	}
	if red1 < red0+500 {
		t.Errorf("the highlighted path is not drawn: %d highlight-red pixels before the click, %d after", red0, red1)
	}

	// Hovering the writing node shows its Python source line.
	pos := evalJS[map[string]float64](t, ctx, `(() => { const p = window.hopctlReport.nodeCenter("mul_"); const b = document.getElementById("graph").getBoundingClientRect(); return p && {x: p.x + b.left, y: p.y + b.top}; })()`)
	if pos == nil {
		t.Fatal("the writing node mul_ is not drawn after clicking the finding")
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pos["x"], pos["y"])); err != nil {
		t.Fatal(err)
	}
	tip := evalJS[string](t, ctx, `document.getElementById("tooltip").style.display === "block" ? document.getElementById("tooltip").textContent : ""`)
	// The source line the writing node's stack trace names (innermost frame).
	data, err := os.ReadFile(file) // writeReport moved to the repository root
	if err != nil {
		t.Fatal(err)
	}
	srcLine := regexp.MustCompile(`File \\"(?:[^"\\]*/)?([^"/\\]+)\\", line (\d+), in \w+\\n +x\.mul_\(2\)"`).FindSubmatch(data)
	if srcLine == nil {
		t.Fatalf("%s: no stack trace ends in x.mul_(2)", file)
	}
	if src := string(srcLine[1]) + ":" + string(srcLine[2]); !strings.Contains(tip, src) || !strings.Contains(tip, "x.mul_(2)") {
		t.Errorf("hovering mul_ shows %q, want its source line (%s, x.mul_(2))", tip, src)
	}
	screenshot(t, ctx, "nested3-hover.png")

	// HOP calls are boxes that expand: after "collapse all", clicking the
	// cond box shows the boxes of its two branches, collapsed.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#collapse`))); err != nil {
		t.Fatal(err)
	}
	type box struct {
		Label    string
		Expanded bool
	}
	boxes := evalJS[[]box](t, ctx, `window.hopctlReport.boxes()`)
	if !slices.Contains(boxes, box{"cond", false}) || slices.ContainsFunc(boxes, func(b box) bool { return b.Label == "true_graph_0" }) {
		t.Fatalf("after collapse all, boxes %v, want cond collapsed and no branch box", boxes)
	}
	at := evalJS[map[string]float64](t, ctx, `(() => { const p = window.hopctlReport.boxCenter("cond"); const b = document.getElementById("graph").getBoundingClientRect(); return p && {x: p.x + b.left, y: p.y + b.top}; })()`)
	if err := chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at["x"], at["y"], chromedp.ButtonType(input.MouseButtonLeft)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at["x"], at["y"], chromedp.ButtonType(input.MouseButtonLeft))); err != nil {
		t.Fatal(err)
	}
	boxes = evalJS[[]box](t, ctx, `window.hopctlReport.boxes()`)
	for _, want := range []box{{"cond", true}, {"true_graph_0", false}, {"false_graph_0", false}} {
		if !slices.Contains(boxes, want) {
			t.Errorf("after clicking the cond box, boxes %v, want %v among them", boxes, want)
		}
	}
	screenshot(t, ctx, "nested3-cond-expanded.png")

	// Search finds nodes by op.
	names := evalJS[[]string](t, ctx, `window.hopctlReport.search("aten.mul_")`)
	if !slices.Contains(names, "mul_") {
		t.Errorf("searching for aten.mul_ found %v", names)
	}
}

// TestBrowserCorpus opens one report of every shipped graph and, in each
// file, shows every finding, expands every box and searches, with no
// script error; every file draws.
func TestBrowserCorpus(t *testing.T) {
	ctx := browser(t)
	var files []string
	for _, glob := range []string{"testdata/models/*.pb", "testdata/hops/*.pbtxt"} {
		m, _ := filepath.Glob(filepath.Join("../../..", glob))
		for _, f := range m {
			rel, _ := filepath.Rel("../../..", f)
			files = append(files, rel)
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d corpus files", len(files))
	}
	open(t, ctx, writeReport(t, false, files...))
	if n := evalJS[int](t, ctx, `window.hopctlReport.numFiles()`); n != len(files) {
		t.Fatalf("the page has %d files, want %d", n, len(files))
	}
	for i, f := range files {
		res := evalJS[string](t, ctx, fmt.Sprintf(`(() => { try {
			const r = window.hopctlReport;
			r.showFile(%d);
			for (let k = 0; k < r.numFindings(); k++) r.showFinding(k);
			const v = r.expandAll();
			r.search("aten");
			return v.nodes > 0 ? "" : "nothing drawn";
		} catch (e) { return String(e && e.stack || e); } })()`, i))
		if res != "" {
			t.Errorf("%s: %s", f, res)
		}
	}
	if n := evalJS[int](t, ctx, `window.hopctlReport.requests()`); n != 0 {
		t.Errorf("the page made or tried %d requests; it must load nothing", n)
	}
}

// TestBrowserJointSavedTable opens the --joint report of a real model and
// sorts the saved-values table by bytes both ways.
func TestBrowserJointSavedTable(t *testing.T) {
	ctx := browser(t)
	open(t, ctx, writeReport(t, true, "testdata/models/mlp.pb"))
	bytesCol := `Array.from(document.querySelectorAll("#saved-table td[data-bytes]")).map(td => +td.dataset.bytes)`
	desc := evalJS[[]float64](t, ctx, bytesCol)
	if len(desc) == 0 {
		t.Fatal("no saved values listed")
	}
	if !slices.IsSortedFunc(desc, func(a, b float64) int { return int(b - a) }) {
		t.Errorf("saved values are not sorted by bytes, largest first: %v", desc)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#saved-table th[data-key="bytes"]`))); err != nil {
		t.Fatal(err)
	}
	asc := evalJS[[]float64](t, ctx, bytesCol)
	if !slices.IsSorted(asc) || len(asc) != len(desc) {
		t.Errorf("after clicking the bytes header, not sorted smallest first: %v", asc)
	}
	// The per-layer bars of saved bytes: one per source line, their bytes
	// summing to the table's (the model's mincut groups by fc1, norm, fc2
	// and the inputs), and the default partition's total beside them.
	bars := evalJS[[]string](t, ctx, `Array.from(document.querySelectorAll("#saved-by-source .src-bar")).map(d => d.title)`)
	if len(bars) < 3 || !slices.ContainsFunc(bars, func(s string) bool { return strings.HasPrefix(s, "fc1 (Linear)") }) {
		t.Errorf("saved bytes by source line: %q, want a bar per layer (fc1 (Linear), ...)", bars)
	}
	if all := evalJS[string](t, ctx, `(document.getElementById("saved-all") || {}).textContent || ""`); !strings.Contains(all, "default partition") {
		t.Errorf("no line of what the default partition saves: %q", all)
	}
	img := screenshot(t, ctx, "mlp-joint.png")
	if ink, _ := canvasStats(t, ctx, img); ink < 5000 {
		t.Fatalf("the graph canvas is (nearly) blank: %d drawn pixels", ink)
	}
	// Clicking a row focuses its node, drawn marked as saved.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#saved-table tr.clickable`))); err != nil {
		t.Fatal(err)
	}
	if saved := evalJS[int](t, ctx, `window.hopctlReport.savedDrawn()`); saved == 0 {
		t.Error("no saved value is drawn after clicking a row of the saved-values table")
	}
	screenshot(t, ctx, "mlp-joint-saved.png")
}

// BenchmarkReportInteractive measures how long a report of a 100,000-node
// graph (hopctl synth --hops) takes to become interactive in headless
// Chromium: from navigation start to the page's ready flag (data parsed,
// boxes built, first layout drawn, handlers attached), and then how long
// expanding a box by a mouse click takes to re-lay out. scripts/bench.sh
// report runs it; it asserts nothing about time.
func BenchmarkReportInteractive(b *testing.B) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("chromium is not installed")
	}
	b.Setenv("HOPCTL_CHROMIUM", path)
	dir := b.TempDir()
	pb := filepath.Join(dir, "synth.pb")
	if out, err := exec.Command("go", "run", "../../../cmd/hopctl", "synth", "-n", "100000", "--hops", "-o", pb).CombinedOutput(); err != nil {
		b.Fatalf("synth: %v\n%s", err, out)
	}
	html := filepath.Join(dir, "report.html")
	ios, _, _, _ := iostreams.Test()
	if err := reportRun(&Options{IO: ios, Files: []string{pb}, Out: html, Partition: "mincut"}); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(html)
	b.Logf("report of 100k nodes: %.1f MB", float64(st.Size())/1e6)
	var ready, expand []float64
	b.ResetTimer()
	for range b.N {
		ctx, cancel := benchBrowser(b)
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+html)); err != nil {
			b.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.hopctlReport && window.hopctlReport.ready)`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			b.Fatal(err)
		}
		r, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.hopctlReport.readyAt`))
		if err != nil {
			b.Fatal(err)
		}
		ready = append(ready, r)
		// Click the first collapsed box drawn.
		pos, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(() => { const p = window.hopctlReport.firstCollapsedBox(); const b = document.getElementById("graph").getBoundingClientRect(); return p && {x: p.x + b.left, y: p.y + b.top}; })()`))
		if err != nil || pos == nil {
			b.Fatalf("no collapsed box to click: %v", err)
		}
		if err := chromedp.Do(ctx,
			chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, pos["x"], pos["y"], chromedp.ButtonType(input.MouseButtonLeft)),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, pos["x"], pos["y"], chromedp.ButtonType(input.MouseButtonLeft))); err != nil {
			b.Fatal(err)
		}
		e, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.hopctlReport.lastLayoutMs`))
		if err != nil {
			b.Fatal(err)
		}
		expand = append(expand, e)
		cancel()
	}
	b.StopTimer()
	slices.Sort(ready)
	slices.Sort(expand)
	b.ReportMetric(ready[len(ready)/2], "ready-ms-median")
	b.ReportMetric(ready[0], "ready-ms-min")
	b.ReportMetric(ready[len(ready)-1], "ready-ms-max")
	b.ReportMetric(expand[len(expand)/2], "expand-ms-median")
	b.ReportMetric(expand[len(expand)-1], "expand-ms-max")
}

func benchBrowser(b *testing.B) (context.Context, context.CancelFunc) {
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromeOptions(os.Getenv("HOPCTL_CHROMIUM"), b.TempDir())...)
	ctx, cancelB := chromedp.NewContext(actx)
	return ctx, func() { cancelB(); cancelA() }
}

// chromeOptions start Chromium headless with a fresh profile and none of
// its network services (no update, sync or background requests).
func chromeOptions(execPath, userDataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1400, 900),
	}
}

// TestBrowserOpensFitted opens reports of a HOP program and of real models
// at a normal window size and checks the first view, as a user sees it
// before touching anything: every node and box drawn is inside the canvas,
// and labels are at least 9 CSS pixels tall (at 100 % zoom) — or, for a
// graph too large to fit legibly, labels are readable and the drawing
// starts at the canvas's top-left. A screenshot of each is kept.
func TestBrowserOpensFitted(t *testing.T) {
	ctx := browser(t)
	const minLabelPx = 9
	cases := []struct {
		file string
		fits bool // the whole root drawing fits at a legible scale
	}{
		{"testdata/hops/nested3_mutation.pbtxt", true},
		{"testdata/hops/cond_returns_input.pbtxt", true},
		{"testdata/models/mlp.pb", true},
		{"testdata/models/resnet18.pb", false},
	}
	var files []string
	for _, c := range cases {
		files = append(files, c.file)
	}
	open(t, ctx, writeReport(t, false, files...))
	for i, c := range cases {
		evalJS[any](t, ctx, fmt.Sprintf(`hopctlReport.showFile(%d)`, i))
		type rect struct{ X, Y, W, H float64 }
		v := evalJS[struct {
			Width, Height, LabelPx float64
			Nodes, Boxes           []rect
		}](t, ctx, `hopctlReport.view()`)
		if v.LabelPx < minLabelPx {
			t.Errorf("%s: labels are %.1f px tall on opening, want ≥ %d", c.file, v.LabelPx, minLabelPx)
		}
		all := append(v.Nodes, v.Boxes...)
		if len(all) == 0 {
			t.Fatalf("%s: nothing drawn", c.file)
		}
		inside := 0
		for _, r := range all {
			if r.X >= 0 && r.Y >= 0 && r.X+r.W <= v.Width && r.Y+r.H <= v.Height {
				inside++
			}
		}
		if c.fits && inside != len(all) {
			t.Errorf("%s: %d of %d nodes and boxes are inside the %.0f×%.0f canvas on opening", c.file, inside, len(all), v.Width, v.Height)
		}
		if !c.fits && inside == 0 {
			t.Errorf("%s: no node is inside the canvas on opening", c.file)
		}
		img := screenshot(t, ctx, filepath.Base(c.file)+".png")
		if ink, _ := canvasStats(t, ctx, img); ink == 0 {
			t.Errorf("%s: the canvas is blank", c.file)
		}
		t.Logf("%s: labels %.1f px, %d of %d inside %.0f×%.0f", c.file, v.LabelPx, inside, len(all), v.Width, v.Height)
	}
}

// TestBrowserShowsAOTKinds: the maps panel of inplace_views.pb lists each
// input and output whose AOTAutograd kind is not plain, in the words of
// hopctl analyze's "aot" lines (one source: report.ViewMetaKinds).
func TestBrowserShowsAOTKinds(t *testing.T) {
	ctx := browser(t)
	open(t, ctx, writeReport(t, false, "testdata/models/inplace_views.pb"))
	text := evalJS[string](t, ctx, `document.getElementById("maps").innerText`)
	for _, want := range []string{"AOTAutograd kinds", "input 2 (buf)", "MUTATED_OUT_GRAPH (mutates data)", "output 1 (unsqueeze)", "alias_of_input of input 1 (y)", "alias_of_intermediate base_idx=0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the maps panel lacks %q:\n%s", want, text)
		}
	}
}
