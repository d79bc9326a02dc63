package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/ir"
)

// MetaDiffSchemaVersion is the version of the `hopctl meta-diff --format
// json` document.
const MetaDiffSchemaVersion = 1

// MetaDiffDoc is the `hopctl meta-diff --format json` document:
//
//	{"schema_version": 1, "equal": false,
//	 "lhs": {"file": "a.pb", "graph": "", "side": "outputs", "name": "a.pb", "count": 2},
//	 "rhs": {...}, "include_contiguity": true, "check_grad": false,
//	 "length_mismatch": false,
//	 "pairs": [{"index": 1, "fields": [{"field": "shape", "lhs": "torch.Size([2, 3])", "rhs": "torch.Size([3, 2])"}],
//	            "device": false, "lhs": "FakeTensor(..., size=(2, 3))", "rhs": "FakeTensor(..., size=(3, 2))"}],
//	 "unknown": [], "message": "Expected a.pb and b.pb to have same metadata but found:\n..."}
//
// fields lists every differing field ("shape", "dtype", "requires_grad",
// "stride", "memory_format", "is_quantized", "qparams", or "type" for a
// pair that is not two tensors nor two ints); "device" is separate. unknown
// lists the pairs not compared because a value is not recorded. message is
// PyTorch's check_meta_consistency message ("" when equal).
type MetaDiffDoc struct {
	SchemaVersion     int            `json:"schema_version"`
	Equal             bool           `json:"equal"`
	LHS               MetaDiffSide   `json:"lhs"`
	RHS               MetaDiffSide   `json:"rhs"`
	IncludeContiguity bool           `json:"include_contiguity"`
	CheckGrad         bool           `json:"check_grad"`
	LengthMismatch    bool           `json:"length_mismatch"`
	Pairs             []MetaDiffPair `json:"pairs"`
	Unknown           []int          `json:"unknown"`
	Message           string         `json:"message"`
}

// MetaDiffSide describes one side of the comparison.
type MetaDiffSide struct {
	File  string `json:"file"`
	Graph string `json:"graph"`
	Side  string `json:"side"` // "inputs" or "outputs"
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// MetaDiffPair is one differing pair.
type MetaDiffPair struct {
	Index  int             `json:"index"`
	Fields []MetaDiffField `json:"fields"`
	Device bool            `json:"device"`
	LHS    string          `json:"lhs"`
	RHS    string          `json:"rhs"`
}

// MetaDiffField is one differing field.
type MetaDiffField struct {
	Field string `json:"field"`
	LHS   string `json:"lhs"`
	RHS   string `json:"rhs"`
}

// NewMetaDiffDoc builds the document of a comparison.
func NewMetaDiffDoc(lhs, rhs MetaDiffSide, opts metadiff.Options, r *metadiff.Result) *MetaDiffDoc {
	lhs.Count, rhs.Count = len(r.LHS.Values), len(r.RHS.Values)
	doc := &MetaDiffDoc{SchemaVersion: MetaDiffSchemaVersion, Equal: r.Equal(), LHS: lhs, RHS: rhs,
		IncludeContiguity: opts.IncludeContiguity, CheckGrad: opts.CheckGrad, LengthMismatch: r.LengthMismatch,
		Pairs: []MetaDiffPair{}, Unknown: append([]int{}, r.Unknown...), Message: r.Message()}
	for _, p := range r.Pairs {
		mp := MetaDiffPair{Index: p.Index, Fields: []MetaDiffField{}, Device: p.Device, LHS: p.LHS, RHS: p.RHS}
		for _, f := range p.Fields {
			mp.Fields = append(mp.Fields, MetaDiffField{Field: f.Field, LHS: f.LHS, RHS: f.RHS})
		}
		doc.Pairs = append(doc.Pairs, mp)
	}
	return doc
}

// WriteMetaDiffText renders a comparison for people: what was compared,
// then PyTorch's message, or a line saying the two sides agree.
func WriteMetaDiffText(w io.Writer, doc *MetaDiffDoc) error {
	var b strings.Builder
	side := func(s MetaDiffSide) string {
		return fmt.Sprintf("%s of %s: graph %s (%d)", s.Side, s.File, ir.Abbrev(ir.DisplayName(s.Graph)), s.Count)
	}
	fmt.Fprintf(&b, "lhs: %s\nrhs: %s\n", side(doc.LHS), side(doc.RHS))
	if doc.Equal {
		b.WriteString("same metadata")
	} else {
		b.WriteString(doc.Message)
	}
	b.WriteByte('\n')
	if len(doc.Unknown) > 0 {
		parts := make([]string, len(doc.Unknown))
		for i, u := range doc.Unknown {
			parts[i] = fmt.Sprint(u)
		}
		fmt.Fprintf(&b, "not compared (no recorded value): pair %s\n", strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
