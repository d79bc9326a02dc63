package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hopctl/hopctl/pkg/ir"
)

// BaselineVersion is the version of the baseline file format.
const BaselineVersion = 1

// Baseline is a baseline file (`hopctl lint --write-baseline FILE`): the
// findings of a run, by fingerprint. `hopctl lint --baseline FILE` fails
// only on findings whose fingerprint it does not list.
//
//	{"version": 1, "tool": "hopctl",
//	 "findings": [{"fingerprint": "…", "rule": "hop-input-mutation",
//	   "path": "models/m.pb", "graph": "true_graph_0", "node": "add_",
//	   "message": "…"}]}
//
// Only fingerprint is read; the other keys are there for people reviewing
// the file. Entries are sorted by path, then fingerprint.
type Baseline struct {
	Version  int             `json:"version"`
	Tool     string          `json:"tool"`
	Findings []BaselineEntry `json:"findings"`
}

// BaselineEntry is one finding of a baseline.
type BaselineEntry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Path        string `json:"path"`
	Graph       string `json:"graph,omitempty"`
	Node        string `json:"node,omitempty"`
	Message     string `json:"message"`
}

// NewBaseline is the baseline of a run's unsuppressed findings, paths
// relative to root (as fingerprints take them).
func NewBaseline(results []FileResult, root string) *Baseline {
	b := &Baseline{Version: BaselineVersion, Tool: "hopctl", Findings: []BaselineEntry{}}
	for _, r := range results {
		for i, f := range r.Findings {
			if i >= len(r.Details) {
				break
			}
			b.Findings = append(b.Findings, BaselineEntry{Fingerprint: r.Details[i].Fingerprint, Rule: f.Rule,
				Path: RelPath(root, r.Path), Graph: f.Graph, Node: f.Node, Message: f.Message})
		}
	}
	sort.SliceStable(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		return x.Fingerprint < y.Fingerprint
	})
	return b
}

// Encode is the baseline as indented JSON.
func (b *Baseline) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(b)
	return buf.Bytes(), err
}

// Set is the set of fingerprints the baseline lists.
func (b *Baseline) Set() map[string]bool {
	s := make(map[string]bool, len(b.Findings))
	for _, f := range b.Findings {
		s[f.Fingerprint] = true
	}
	return s
}

// ReadBaseline reads a baseline file, refusing other versions and entries
// without a fingerprint.
func ReadBaseline(p string) (*Baseline, error) {
	data, err := ir.ReadFileLimited(p) // bounded: the baseline may be /dev/zero
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ir.Printable(p), ir.WithoutPath(err))
	}
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%s: not a hopctl baseline file: %w", p, err)
	}
	if b.Version != BaselineVersion || b.Tool != "hopctl" {
		return nil, fmt.Errorf("%s: baseline version %d of tool %q, want version %d of hopctl", p, b.Version, b.Tool, BaselineVersion)
	}
	for i, f := range b.Findings {
		if f.Fingerprint == "" {
			return nil, fmt.Errorf("%s: findings[%d] has no fingerprint", p, i)
		}
	}
	return &b, nil
}
