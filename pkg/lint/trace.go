package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
)

// Detail is what lint resolves of a finding in its module, for outputs that
// point at code (SARIF, GitHub annotations) and for baselines: the op target
// of the finding's node, its provenance as steps (each with the node's own
// stack trace) and a fingerprint.
type Detail struct {
	// Target is the op target of the finding's node ("higher_order.cond"),
	// "" for file-wide findings or nodes that are not found.
	Target string
	// StackTrace is the finding node's own stack trace, "" when none.
	StackTrace string
	// Steps is the provenance in order: the input, the views, every HOP
	// call and subgraph on the way, and the node that writes or returns
	// the value. Empty when the finding has no provenance.
	Steps []Step
	// Fingerprint identifies the finding across re-exports of the same
	// model; see Fingerprint.
	Fingerprint string
}

// Step kinds.
const (
	StepInput = "input" // a placeholder of the finding's graph
	StepView  = "view"  // a view of it
	StepCall  = "call"  // a HOP call, entering Graph's subgraph
	StepNode  = "node"  // the node that writes or returns the value
)

// Step is one node of a finding's provenance.
type Step struct {
	Kind   string
	Graph  string // qualified name of the graph holding Node
	Node   string
	Target string // the node's op target, "" when the node is not found
	// StackTrace is the node's recorded stack_trace, "" when none.
	StackTrace string
	// Note is text of a path element that is no node ("operands 0 and 1
	// share a storage"); Node is then "".
	Note string
}

// detail resolves finding f of a module whose graphs graph looks up.
// graph looks a graph up by qualified name (ir.Module.GraphLookup).
func detail(graph func(string) *ir.Graph, f analyze.Finding) Detail {
	var d Detail
	if f.FileWide {
		return d
	}
	g := graph(f.Graph)
	if g != nil {
		if id, ok := g.Lookup(f.Node); ok {
			d.Target = g.Nodes[id].Target
			if mt := g.Nodes[id].Meta; mt != nil {
				d.StackTrace = mt.StackTrace
			}
		}
	}
	p := f.Provenance
	if p == nil || g == nil {
		return d
	}
	step := func(kind string, g *ir.Graph, gname, node string) Step {
		s := Step{Kind: kind, Graph: gname, Node: node}
		if g == nil {
			return s
		}
		if id, ok := g.Lookup(node); ok {
			n := &g.Nodes[id]
			s.Target = n.Target
			if n.Meta != nil {
				s.StackTrace = n.Meta.StackTrace
			}
		}
		return s
	}
	if p.Input != "" {
		d.Steps = append(d.Steps, step(StepInput, g, f.Graph, p.Input))
	}
	for _, v := range p.Views {
		d.Steps = append(d.Steps, step(StepView, g, f.Graph, v))
	}
	// Path alternates node, subgraph, node, subgraph, ..., node: each node
	// but the last is a HOP call whose next element names the subgraph the
	// path enters.
	cur, curName := g, f.Graph
	path := p.Path
	if len(path) == 0 && p.Node != "" {
		path = []string{p.Node}
	}
	for i := 0; i < len(path); i++ {
		name := path[i]
		if cur == nil || !has(cur, name) {
			d.Steps = append(d.Steps, Step{Kind: StepNode, Graph: curName, Note: name})
			continue
		}
		if i+1 < len(path) {
			if sub := graph(path[i+1]); sub != nil {
				d.Steps = append(d.Steps, step(StepCall, cur, curName, name))
				cur, curName = sub, path[i+1]
				i++
				continue
			}
		}
		d.Steps = append(d.Steps, step(StepNode, cur, curName, name))
	}
	return d
}

func has(g *ir.Graph, name string) bool {
	_, ok := g.Lookup(name)
	return ok
}

// FingerprintKey is the key of hopctl's fingerprint in SARIF's
// partialFingerprints; the suffix is its version, changed when the
// fingerprint's recipe changes.
const FingerprintKey = "hopctl/v1"

// numberSuffix is the numbering FX adds to make names unique: add_1,
// true_graph_0, arg0_1.
var numberSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_[0-9]+\b`) })

// digits are the numbers in messages (node names, sizes of the same
// numbering).
var digits = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+`) })

// Unnumbered removes FX's numbering from a name: "add_1" → "add",
// "true_graph_0.while_loop_body_graph_0" → "true_graph.while_loop_body_graph".
func Unnumbered(name string) string { return numberSuffix().ReplaceAllString(name, "") }

// fingerprintText is the text hashed into a finding's fingerprint: what
// stays the same when the same model is exported again and FX numbers its
// nodes differently (an op added earlier turns add into add_1 everywhere
// after it). It holds the rule, the file (relative to the lint root), the
// graph's name and the node's op target without numbering, and the
// provenance as input index, view targets and the path's op targets and
// subgraph names, again without numbering. Node names, line numbers and
// stack traces are left out: they move with every edit. Findings without
// provenance add their message with digits replaced.
func fingerprintText(rel string, f analyze.Finding, d Detail) string {
	parts := []string{f.Rule, rel, Unnumbered(f.Graph), d.Target}
	if p := f.Provenance; p != nil {
		parts = append(parts, "input="+strconv.Itoa(p.InputIndex))
		for _, s := range d.Steps {
			switch {
			case s.Note != "":
				parts = append(parts, digits().ReplaceAllString(s.Note, "#"))
			case s.Kind == StepInput:
			case s.Target != "":
				parts = append(parts, s.Kind+"="+s.Target+"@"+Unnumbered(s.Graph))
			default:
				parts = append(parts, s.Kind+"="+Unnumbered(s.Node)+"@"+Unnumbered(s.Graph))
			}
		}
	} else {
		parts = append(parts, digits().ReplaceAllString(f.Message, "#"))
	}
	return strings.Join(parts, "\x00")
}

// fingerprints sets the Fingerprint of every detail: the first 16 bytes of
// the SHA-256 of fingerprintText in hex, followed by ":N" for the N-th
// (N ≥ 2) finding of a file with the same text, counted in the findings'
// sorted order (graph order, then node order, which a renumbering keeps).
func fingerprints(rel string, fs []analyze.Finding, ds []Detail) {
	seen := map[string]int{}
	for i := range fs {
		sum := sha256.Sum256([]byte(fingerprintText(rel, fs[i], ds[i])))
		fp := hex.EncodeToString(sum[:16])
		seen[fp]++
		if n := seen[fp]; n > 1 {
			fp += ":" + strconv.Itoa(n)
		}
		ds[i].Fingerprint = fp
	}
}
