// Package analyze is hopctl's analyzer framework, modelled on
// golang.org/x/tools/go/analysis: an Analyzer is data (name, doc, the
// analyzers it requires, a Run function); the driver runs analyzers over every
// graph of a module, subgraph bodies before the graphs that call them, so an
// analyzer can read the summaries ("facts") it exported for a callee when it
// analyses a call site. Analyzers never print, read files or parse flags.
package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// Severity orders findings.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	}
	return "error"
}

// ParseSeverity parses "info", "warning" or "error".
func ParseSeverity(s string) (Severity, error) {
	switch s {
	case "info":
		return Info, nil
	case "warning":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or error)", s)
}

// Finding is one diagnostic, located at a node of a graph.
type Finding struct {
	Rule     string
	Severity Severity
	Graph    string // qualified name of the graph holding Node; "" is the root
	Node     string
	Message  string
	// Provenance explains the finding; nil when there is nothing to add.
	Provenance *Provenance
	// FileWide marks a finding about the whole file rather than a graph
	// (Graph and Node are then empty): a schema table entry that does not
	// parse, subgraphs that call each other.
	FileWide bool
	// Releases says in which torch releases of a run over several
	// (--torch-version 2.6,2.14) the finding is reported; nil in a run
	// over one release (MergeReleases sets it).
	Releases *Releases
	// Fix says what breaks the finding's cause, for the findings that
	// know it (HOP input aliasing and mutation); nil otherwise.
	Fix *Fix
}

// Fix is what removes one finding, as PyTorch's own refusal suggests ("If
// you are returning a view of the input, please make sure to clone it",
// "Consider cloning the input before modifying it"): the value to copy,
// the node that makes it, and the user's source line when the node's
// stack trace records one.
type Fix struct {
	// Text says it in words: "output 0 of true_graph_0 is a view of its
	// input 0 (x), made by view: return view's .clone()".
	Text string
	// Graph and Node are the subgraph and node whose value to copy (the
	// returning node of an alias, the writing node of a mutation).
	Graph, Node string
	// Source is the innermost frame of Node's stack trace, "FILE:LINE",
	// and Code its line ("return x.view(-1)"); both "" without one.
	Source, Code string
	// Suggestion is Code with the .clone() placed, when Code is a plain
	// `return EXPR` of the value ("return x.view(-1).clone()"); "" when
	// hopctl cannot place it on the line.
	Suggestion string
}

// Provenance traces a finding back to its cause.
type Provenance struct {
	// Input is the caller-graph input involved (placeholder name) and its
	// index among the graph's inputs; InputIndex is -1 when no input is.
	Input      string
	InputIndex int
	// Views is the chain of view nodes from the input to the accessed value.
	Views []string
	// Node is the node that writes or returns the value, in the innermost
	// graph; Path is the way there from the finding's node through nested
	// subgraphs: ["cond", "true_graph_0", "add_"].
	Node string
	Path []string
	// StackTrace is Node's stack_trace, when the file has one.
	StackTrace string
}

// Chain is the provenance as hopctl prints it after "via": the input (with
// its index), the views, then the path through nested subgraphs (or the
// node), joined by arrows. Every report that shows provenance uses it.
func (p *Provenance) Chain() string {
	var chain []string
	if p.Input != "" {
		in := "input " + p.Input
		if p.InputIndex >= 0 {
			in += fmt.Sprintf(" (index %d)", p.InputIndex)
		}
		chain = append(chain, in)
	}
	chain = append(chain, p.Views...)
	if len(p.Path) > 0 {
		chain = append(chain, p.Path...)
	} else if p.Node != "" {
		chain = append(chain, p.Node)
	}
	return strings.Join(chain, " → ")
}

// Rule documents one kind of finding: its stable id, default severity and
// what it checks. Each analyzer lists the rules of the findings it reports
// (Analyzer.Rules); hopctl lint's rule table is assembled from them.
type Rule struct {
	ID string
	// Name is the rule's name for people, in PascalCase (SARIF's
	// reportingDescriptor.name, which must differ from the id).
	Name     string
	Severity Severity
	// Category groups rules in listings: "hop", "schema", "structure".
	Category string
	Short    string // one line
	Doc      string // a paragraph
	// Example is a small example in Markdown of what triggers the rule.
	Example string
	// Fix says how to fix a finding, in one sentence starting lower case.
	// It is written once, here: text output prints it under every finding
	// ("help: ..."), hopctl explain under "Fix", docs/lint-rules.md and
	// SARIF's rule help after the example.
	Fix string
	// Invalid marks rules whose findings mean the file is invalid input
	// (exit 3): structure defects, a schema table that does not parse,
	// calls that do not fit their schemas or subgraphs. Every command
	// refuses such files (package validate); lint reports why, rule by
	// rule.
	Invalid bool
}

// RuleDocsURL is the page that documents every rule, one section each
// (docs/lint-rules.md, generated from lint's rule table).
const RuleDocsURL = "https://github.com/hopctl/hopctl/blob/main/docs/lint-rules.md"

// HelpURI is the link to the rule's section of RuleDocsURL.
func (r Rule) HelpURI() string { return RuleDocsURL + "#" + r.ID }

// Help is the rule's help in Markdown: what it checks, the example, then
// the fix.
func (r Rule) Help() string {
	return r.Doc + "\n\n" + r.Example + "\nFix: " + r.Fix
}

// Analyzer describes one analysis.
type Analyzer struct {
	Name string
	Doc  string
	// Rules are the rules of the findings the analyzer reports.
	Rules    []Rule
	Requires []*Analyzer
	// Run analyses pass.Graph and returns its result, which later analyzers of
	// the same graph read from Pass.ResultOf and callers read through
	// Pass.Callee.
	Run func(*Pass) (any, error)
}

// Pass is what an analyzer sees of one graph.
type Pass struct {
	Analyzer *Analyzer
	File     string
	Module   *ir.Module
	Graph    *ir.Graph
	Schemas  *opschema.Registry
	// ResultOf holds the results of the required analyzers on this graph.
	ResultOf map[*Analyzer]any
	// Callee returns this analyzer's result for an already analysed graph
	// (a subgraph called from this one), or nil.
	Callee func(qualname string) any
	report func(Finding)
	graphs map[string]*ir.Graph
	level  func() bool                 // DynamoLevel of Module, once per Run
	grad   func() map[*ir.Graph][]bool // gradRegions of Module, once per Run
	opts   Options
	shared map[*Analyzer]any // Shared's values, one per analyzer per Run
}

// Shared returns the value this pass's analyzer keeps for the whole run,
// made by mk on the analyzer's first graph: state the graphs of one module
// share, such as what a call target's schema says (keyed by target with
// an ir.TargetMemo). A run analyses its graphs one at a time, so the value
// is never used concurrently.
func (p *Pass) Shared(mk func() any) any {
	if v, ok := p.shared[p.Analyzer]; ok {
		return v
	}
	v := mk()
	if p.shared != nil {
		p.shared[p.Analyzer] = v
	}
	return v
}

// Subgraph returns the module's graph with the given qualified name, or
// nil, from an index built once per Run (Module.Graph scans the list).
func (p *Pass) Subgraph(qualname string) *ir.Graph { return p.graphs[qualname] }

// DecodeHOP decodes a HOP call node of this pass's graph by the
// registry's convention table (hop.Decode), with subgraphs found through
// the run's index.
func (p *Pass) DecodeHOP(id ir.NodeID) (*hop.Call, error) {
	return hop.Decode(p.Schemas, p.Subgraph, p.Graph, id)
}

// TorchVersion is the torch release whose HOP rules the checks follow
// ("major.minor", "" for the newest): the run's Options.TorchVersion
// (--torch-version, HOPCTL_INPUT_TORCH_VERSION, input.torch-version), else
// the version the file records (the bridge records torch.__version__, .pt2
// archives theirs), else the newest. See opschema.TorchDifferences. A
// hand-written file (producer "hand-written") records the version it
// imitates, not one that traced it: it follows the newest rules unless
// the environment says otherwise.
func (p *Pass) TorchVersion() string {
	if v := p.opts.TorchVersion; v != "" {
		return opschema.NormalizeTorchVersion(v)
	}
	if p.Module != nil && p.Module.Producer != "hand-written" {
		return opschema.NormalizeTorchVersion(p.Module.TorchVersion)
	}
	return ""
}

// Options are the choices of one analysis run.
type Options struct {
	// TorchVersion makes the run follow the HOP rules of torch release
	// TorchVersion ("2.6"); "" is the default: the file's recorded
	// version, else the newest ([Pass.TorchVersion]).
	TorchVersion string
	// GradMode is the grad mode (GradModes: "enabled", "disabled",
	// "inference") a module that records none was traced under
	// (--grad-mode); "" is the default: grad enabled. A file's own
	// record wins (ModuleGradMode).
	GradMode string
	// Releases are the torch releases of a run over several
	// (--torch-version 2.6,2.14, ParseTorchReleases), oldest first; nil
	// for one. RunWith applies TorchVersion only: lint and `hopctl analyze`
	// run once per release (ForRelease) and merge (MergeReleases).
	Releases []string
}

// ForRelease returns the options of the run of release v.
func (o Options) ForRelease(v string) Options {
	o.TorchVersion, o.Releases = v, nil
	return o
}

// Report records a finding located in this pass's graph.
func (p *Pass) Report(f Finding) {
	f.Graph = p.Graph.Name
	p.report(f)
}

// Result is everything the analyzers produced for a module.
type Result struct {
	// Order is the order graphs were analysed in: callees first.
	Order []string
	// Results[analyzer][graph] is the analyzer's result on that graph.
	Results  map[*Analyzer]map[string]any
	Findings []Finding
}

// CallOrder returns the module's graphs ordered so that every subgraph comes
// before the graphs that reference it (through get_attr or call_module),
// ties broken by file order: gonum's stabilised topological sort of the
// call graph (topo.SortStabilized, IDs ascending).
//
// The call graph has no cycle: a target is qualified under its graph's
// name (Qualify), so a callee's name is longer than its caller's, except
// that the graphs named "" (the root, and an invalid module's unnamed
// subgraphs) reach the last of them by the target "", which reaches
// itself. The error is kept for callers that check for one.
func CallOrder(m *ir.Module) ([]*ir.Graph, error) {
	index := make(map[string]int64, len(m.Graphs))
	g := simple.NewDirectedGraph()
	for i, gr := range m.Graphs {
		index[gr.Name] = int64(i) // the last of a name
		g.AddNode(simple.Node(i))
	}
	for i, gr := range m.Graphs {
		for j := range gr.Nodes {
			n := &gr.Nodes[j]
			if n.Op != ir.OpGetAttr && n.Op != ir.OpCallModule {
				continue
			}
			callee, ok := index[ir.Qualify(gr, n.Target)]
			if !ok || callee == int64(i) {
				continue
			}
			g.SetEdge(simple.Edge{F: simple.Node(callee), T: simple.Node(i)})
		}
	}
	sorted, err := topo.SortStabilized(g, func(ns []graph.Node) {
		slices.SortFunc(ns, func(a, b graph.Node) int { return cmp.Compare(a.ID(), b.ID()) })
	})
	if err != nil {
		return nil, fmt.Errorf("subgraphs call each other in a cycle: %w", err)
	}
	out := make([]*ir.Graph, len(sorted))
	for i, n := range sorted {
		out[i] = m.Graphs[n.ID()]
	}
	return out, nil
}

// Run runs the analyzers (and what they require) over every graph of m.
// Findings are sorted by graph order in the file, then node order, then rule.
func Run(m *ir.Module, file string, reg *opschema.Registry, analyzers ...*Analyzer) (*Result, error) {
	return RunWith(m, file, reg, Options{}, analyzers...)
}

// RunWith is Run with the run's options.
func RunWith(m *ir.Module, file string, reg *opschema.Registry, opts Options, analyzers ...*Analyzer) (*Result, error) {
	order, err := CallOrder(m)
	if err != nil {
		return nil, err
	}
	all := expand(analyzers)
	res := &Result{Results: make(map[*Analyzer]map[string]any, len(all))}
	graphs := make(map[string]*ir.Graph, len(m.Graphs))
	for _, g := range m.Graphs {
		if _, dup := graphs[g.Name]; !dup {
			graphs[g.Name] = g // the first, as Module.Graph finds it
		}
	}
	for _, a := range all {
		res.Results[a] = make(map[string]any, len(m.Graphs))
	}
	level := sync.OnceValue(func() bool { return DynamoLevel(m) })
	grad := sync.OnceValue(func() map[*ir.Graph][]bool { return gradRegions(m, graphs, opts) })
	breakers := sync.OnceValue(func() []string { return lineBreakers(m) })
	shared := map[*Analyzer]any{}
	for _, g := range order {
		res.Order = append(res.Order, g.Name)
		local := make(map[*Analyzer]any, len(all))
		for _, a := range all {
			results := res.Results[a]
			pass := &Pass{
				Analyzer: a, File: file, Module: m, Graph: g, Schemas: reg, graphs: graphs, level: level, grad: grad, opts: opts, shared: shared,
				ResultOf: local,
				Callee:   func(q string) any { return results[q] },
				report: func(f Finding) {
					f.Message = quoteFileStrings(f.Message, breakers())
					res.Findings = append(res.Findings, f)
				},
			}
			r, err := runAnalyzer(a, pass)
			if err != nil {
				return nil, err
			}
			local[a] = r
			results[g.Name] = r
		}
	}
	SortFindings(m, res.Findings)
	return res, nil
}

// runAnalyzer runs one analyzer on one graph. An error it returns names the
// graph and the analyzer; a panic is a bug of the analyzer, returned as an
// *ir.InternalError with the analyzer as its phase and the graph.
func runAnalyzer(a *Analyzer, pass *Pass) (r any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, ir.Panicked("analyzer "+a.Name, ir.InGraph(pass.File, pass.Graph.Name), p)
		}
	}()
	r, err = a.Run(pass)
	if err != nil {
		// The graph, not the file: callers wrap the error in the file's
		// DecodeError (a message once named the file twice).
		return nil, fmt.Errorf("graph %s: analyzer %s: %w", ir.Abbrev(ir.DisplayName(pass.Graph.Name)), a.Name, err)
	}
	return r, nil
}

// SortFindings orders findings by graph file order, node order, rule and
// message, so output never depends on analysis order.
func SortFindings(m *ir.Module, fs []Finding) {
	// Each finding's position is computed once (the comparisons used to
	// look the graph and node up again: findings × log × graphs).
	gi := make(map[string]int, len(m.Graphs))
	for i, g := range m.Graphs {
		if _, dup := gi[g.Name]; !dup {
			gi[g.Name] = i
		}
	}
	graph := m.GraphLookup()
	type key struct{ g, n int }
	keys := make([]key, len(fs))
	for i := range fs {
		f := &fs[i]
		k := key{g: gi[f.Graph], n: -1}
		if g := graph(f.Graph); g != nil {
			if id, ok := g.Lookup(f.Node); ok {
				k.n = int(id)
			}
		}
		keys[i] = k
	}
	idx := make([]int, len(fs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := &fs[idx[a]], &fs[idx[b]]
		kx, ky := keys[idx[a]], keys[idx[b]]
		if kx.g != ky.g {
			return kx.g < ky.g
		}
		if kx.n != ky.n {
			return kx.n < ky.n
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		return x.Message < y.Message
	})
	sorted := make([]Finding, len(fs))
	for i, j := range idx {
		sorted[i] = fs[j]
	}
	copy(fs, sorted)
}

// expand returns the analyzers and their requirements, requirements first.
func expand(as []*Analyzer) []*Analyzer {
	var out []*Analyzer
	seen := map[*Analyzer]bool{}
	var visit func(a *Analyzer)
	visit = func(a *Analyzer) {
		if seen[a] {
			return
		}
		seen[a] = true
		for _, r := range a.Requires {
			visit(r)
		}
		out = append(out, a)
	}
	for _, a := range as {
		visit(a)
	}
	return out
}
