package viz

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"io"
	"strings"
)

// The page's assets, embedded at build time. dagre.min.js is the browser
// bundle of @dagrejs/dagre (MIT, with @dagrejs/graphlib; licences beside
// it), copied from npm by web/vendor.js; see web/package.json.
var (
	//go:embed assets/report.html
	pageHTML string
	//go:embed assets/report.css
	pageCSS string
	//go:embed assets/report.js
	pageJS string
	//go:embed assets/dagre.min.js
	dagreJS string
)

// WriteHTML writes doc as one self-contained HTML page: styles, scripts and
// data inline, no request to any network or file (its Content-Security-
// Policy forbids them), so it works opened from file:// offline.
func WriteHTML(w io.Writer, doc *Doc) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	// Escaping <, > and & keeps "</script>" out of the data.
	enc.SetEscapeHTML(true)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	before, rest, _ := strings.Cut(pageHTML, "{{DATA}}")
	r := strings.NewReplacer("{{TITLE}}", htmlEscape(doc.Title), "{{CSS}}", pageCSS, "{{DAGRE}}", scriptSafe(dagreJS), "{{JS}}", scriptSafe(pageJS))
	if _, err := io.WriteString(w, r.Replace(before)); err != nil {
		return err
	}
	if _, err := w.Write(bytes.TrimRight(data.Bytes(), "\n")); err != nil {
		return err
	}
	_, err := io.WriteString(w, r.Replace(rest))
	return err
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// scriptSafe keeps a script's text from closing its <script> element.
func scriptSafe(js string) string { return strings.ReplaceAll(js, "</script", `<\/script`) }
