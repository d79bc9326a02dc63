package report

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonWriter appends indented JSON exactly as WriteJSON's encoding/json
// Encoder (SetIndent("", "  "), SetEscapeHTML(false)) writes it, for the
// documents written without reflection (writeAnalyzeJSON): a value per
// line, two spaces per level, `"key": value`, and an empty object or
// array written `{}` or `[]`. Building encoding/json's type encoders by
// reflection was 2–4 % of a resnet18 `analyze --format json` (README,
// Performance). TestAnalyzeJSONMatchesEncodingJSON and
// FuzzAnalyzeJSONMatchesEncodingJSON hold the two to the same bytes.
type jsonWriter struct {
	b []byte
	// out receives b whenever it passes jsonChunk bytes (between two
	// values) and at the end; err is its first error, after which nothing
	// more is written.
	out   io.Writer
	err   error
	depth int
	// empty is set after an opening bracket until the container's first
	// element: a container closed while it is set is written `{}` or `[]`.
	empty bool
}

// next starts a value inside the current container: a comma after the
// previous element, then a new line at the container's depth.
func (w *jsonWriter) next() {
	if w.depth == 0 {
		return
	}
	if len(w.b) >= jsonChunk {
		w.flush()
	}
	if !w.empty {
		w.b = append(w.b, ',')
	}
	w.empty = false
	w.newline()
}

func (w *jsonWriter) newline() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ', ' ')
	}
}

// key starts an object member.
func (w *jsonWriter) key(k string) {
	w.next()
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':', ' ')
}

func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.empty = true
}

func (w *jsonWriter) close(c byte) {
	w.depth--
	if !w.empty {
		w.newline()
	}
	w.empty = false
	w.b = append(w.b, c)
}

func (w *jsonWriter) beginObject() { w.open('{') }
func (w *jsonWriter) endObject()   { w.close('}') }
func (w *jsonWriter) beginArray()  { w.open('[') }
func (w *jsonWriter) endArray()    { w.close(']') }

func (w *jsonWriter) str(s string) { w.b = appendJSONString(w.b, s) }
func (w *jsonWriter) int(v int)    { w.b = strconv.AppendInt(w.b, int64(v), 10) }
func (w *jsonWriter) boolean(v bool) {
	w.b = strconv.AppendBool(w.b, v)
}
func (w *jsonWriter) null() { w.b = append(w.b, "null"...) }

// strings writes a []string member (null when nil, as encoding/json does).
func (w *jsonWriter) strings(k string, ss []string) {
	w.key(k)
	if ss == nil {
		w.null()
		return
	}
	w.beginArray()
	for _, s := range ss {
		w.next()
		w.str(s)
	}
	w.endArray()
}

// ints writes an []int member.
func (w *jsonWriter) ints(k string, vs []int) {
	w.key(k)
	if vs == nil {
		w.null()
		return
	}
	w.beginArray()
	for _, v := range vs {
		w.next()
		w.int(v)
	}
	w.endArray()
}

// indexMap writes an IndexMap member as IndexMap.MarshalJSON does (a nil
// map too is `{}`: the method is called on it).
func (w *jsonWriter) indexMap(k string, m IndexMap) {
	w.key(k)
	w.beginObject()
	for _, p := range m {
		w.key(strconv.Itoa(p.From))
		w.int(p.To)
	}
	w.endObject()
}

const jsonHex = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping off: '"', '\\' and control characters escaped (\b \f \n
// \r \t, else \u00XX), each byte of invalid UTF-8 replaced by \ufffd, and
// U+2028 and U+2029 escaped; all else as is. (pkg/ir's protojson
// counterpart differs: its strings are valid UTF-8 and protojson leaves
// U+2028 alone.)
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, '\\')
			switch c {
			case '"', '\\':
				b = append(b, c)
			case '\b':
				b = append(b, 'b')
			case '\f':
				b = append(b, 'f')
			case '\n':
				b = append(b, 'n')
			case '\r':
				b = append(b, 'r')
			case '\t':
				b = append(b, 't')
			default:
				b = append(b, 'u', '0', '0', jsonHex[c>>4], jsonHex[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&15])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonChunk is how much of a document jsonWriter holds before it writes
// it out. A 1M-node graph's document is 6.3 MB (its inputs' names): built
// whole, its buffer grew by doubling through 32 MB of fresh memory, 8,000
// page faults on the command's last, single-core, step
// (docs/performance-log.md); in chunks it reuses one buffer.
const jsonChunk = 32 << 10

// flush writes out what the writer holds.
func (w *jsonWriter) flush() {
	if w.err == nil {
		_, w.err = w.out.Write(w.b)
	}
	w.b = w.b[:0]
}

// writeAnalyzeJSON writes doc as WriteJSON would (followed by a newline).
func writeAnalyzeJSON(w io.Writer, doc *AnalyzeDoc) error {
	jw := &jsonWriter{b: make([]byte, 0, jsonChunk+4096), out: w}
	jw.analyzeDoc(doc)
	jw.b = append(jw.b, '\n')
	jw.flush()
	return jw.err
}

func (w *jsonWriter) analyzeDoc(doc *AnalyzeDoc) {
	w.beginObject()
	w.key("schema_version")
	w.int(doc.SchemaVersion)
	w.key("files")
	if doc.Files == nil {
		w.null()
	} else {
		w.beginArray()
		for i := range doc.Files {
			w.next()
			w.analyzeFile(&doc.Files[i])
		}
		w.endArray()
	}
	w.endObject()
}

func (w *jsonWriter) analyzeFile(f *AnalyzeFile) {
	w.beginObject()
	w.key("path")
	w.str(f.Path)
	w.key("graphs")
	if f.Graphs == nil {
		w.null()
	} else {
		w.beginArray()
		for i := range f.Graphs {
			w.next()
			w.analyzeGraph(&f.Graphs[i])
		}
		w.endArray()
	}
	w.endObject()
}

func (w *jsonWriter) analyzeGraph(g *AnalyzeGraph) {
	w.beginObject()
	w.key("name")
	w.str(g.Name)
	w.strings("inputs", g.Inputs)
	if len(g.InputKinds) > 0 {
		w.strings("input_kinds", g.InputKinds)
	}
	if len(g.InputTargets) > 0 {
		w.strings("input_targets", g.InputTargets)
	}
	w.key("num_outputs")
	w.int(g.NumOutputs)
	w.indexMap("inp_inp_alias", g.InpInpAlias)
	w.indexMap("inp_out_alias", g.InpOutAlias)
	w.indexMap("out_out_alias", g.OutOutAlias)
	w.ints("mutated_inputs", g.MutatedInputs)
	w.key("findings")
	if g.Findings == nil {
		w.null()
	} else {
		w.beginArray()
		for i := range g.Findings {
			w.next()
			w.finding(&g.Findings[i])
		}
		w.endArray()
	}
	w.endObject()
}

func (w *jsonWriter) finding(f *Finding) {
	w.beginObject()
	w.key("rule")
	w.str(f.Rule)
	w.key("severity")
	w.str(f.Severity)
	w.key("graph")
	w.str(f.Graph)
	w.key("node")
	w.str(f.Node)
	w.key("message")
	w.str(f.Message)
	if p := f.Provenance; p != nil {
		w.key("provenance")
		w.beginObject()
		if p.Input != "" {
			w.key("input")
			w.str(p.Input)
		}
		w.key("input_index")
		w.int(p.InputIndex)
		if len(p.Views) > 0 {
			w.strings("views", p.Views)
		}
		if p.Node != "" {
			w.key("node")
			w.str(p.Node)
		}
		if len(p.Path) > 0 {
			w.strings("path", p.Path)
		}
		if p.StackTrace != "" {
			w.key("stack_trace")
			w.str(p.StackTrace)
		}
		w.endObject()
	}
	if f.FileWide {
		w.key("file_wide")
		w.boolean(true)
	}
	if f.Fingerprint != "" {
		w.key("fingerprint")
		w.str(f.Fingerprint)
	}
	if f.InBaseline {
		w.key("in_baseline")
		w.boolean(true)
	}
	if s := f.Suppression; s != nil {
		w.key("suppression")
		w.beginObject()
		w.key("index")
		w.int(s.Index)
		w.key("reason")
		w.str(s.Reason)
		w.endObject()
	}
	w.endObject()
}
