package viz

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes"
	"github.com/hopctl/hopctl/pkg/ir"
	hopload "github.com/hopctl/hopctl/pkg/load"
)

// checkPageData checks the data inlined in the page parses back as JSON
// and cannot end its <script> element or open a comment: names from the
// file are in it.
func checkPageData(t *testing.T, page string) {
	t.Helper()
	const open = `<script type="application/json" id="hopctl-data">`
	_, rest, ok := strings.Cut(page, open)
	data, _, ok2 := strings.Cut(rest, "</script>")
	if !ok || !ok2 {
		t.Fatal("the page has no data element")
	}
	if !json.Valid([]byte(data)) {
		t.Fatalf("the page's data is not JSON: %.200q", data)
	}
	for _, bad := range []string{"<!--", "</", "<script", "\u2028", "\u2029"} {
		if strings.Contains(strings.ToLower(data), bad) {
			t.Fatalf("the page's data holds %q", bad)
		}
	}
}

// FuzzViews runs every view on every valid module the fuzzer makes from
// the shipped graphs: the report's model (whose box tree must stay sound
// and bounded), its page, and Model Explorer's graph and overlay (whose
// overlay must name only nodes of the graph). No panic, and the same bytes
// twice.
func FuzzViews(f *testing.F) {
	for _, glob := range []string{"../../testdata/models/*.pb", "../../testdata/hops/*.pbtxt", "../../testdata/lint/*.pbtxt"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			m, err := ir.LoadFile(p)
			if err != nil {
				continue
			}
			if data, err := ir.Encode(m, ir.Binary); err == nil && len(data) < 1<<16 {
				f.Add(data)
			}
		}
	}
	// Names that would end the data's <script>, open a comment or end a
	// JavaScript line.
	hostile := `format_version {major: 1 minor: 0}
graph {
  nodes {name: "x</script><script>alert(1)</script>" op: PLACEHOLDER target: "x"}
  nodes {name: "y<!--\u2028\u2029" op: CALL_FUNCTION target: "aten.relu_.default" args {node: "x</script><script>alert(1)</script>"}}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "y<!--\u2028\u2029"}}}}
}`
	if m, err := ir.Decode([]byte(hostile), ir.Text, "hostile.pbtxt"); err != nil {
		f.Fatal(err)
	} else if data, err := ir.Encode(m, ir.Binary); err != nil {
		f.Fatal(err)
	} else {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.pb"
		m, err := ir.Decode(data, ir.Binary, file)
		if err != nil {
			return
		}
		lf, err := hopload.Module(m, file, hopload.Strict)
		if err != nil {
			return
		}
		res, err := analyze.Run(m, file, lf.Registry, passes.All()...)
		if err != nil {
			return
		}
		var outs [2][]byte
		for i := range outs {
			fm := Build(file, m, res, Options{})
			checkTree(t, &fm)
			var b bytes.Buffer
			if err := WriteHTML(&b, &Doc{Version: DocVersion, Files: []File{fm}}); err != nil {
				t.Fatal(err)
			}
			checkPageData(t, b.String())
			me := ModelExplorer(&fm, m)
			ids := map[string]bool{}
			for _, n := range me.Graphs[0].Nodes {
				ids[n.ID] = true
			}
			for id := range ModelExplorerOverlay(&fm, m)[me.Graphs[0].ID].Results {
				if !ids[id] {
					t.Fatalf("overlay names %s, not a node of the graph", id)
				}
			}
			if err := json.NewEncoder(&b).Encode(me); err != nil {
				t.Fatal(err)
			}
			outs[i] = b.Bytes()
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatal("two runs on one module differ")
		}
	})
}
