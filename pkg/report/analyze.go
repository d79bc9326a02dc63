// Package report holds hopctl's versioned machine-readable documents and
// the printers that render them (Printer; one Formats table per document).
//
// A JSON report is the encoding/json encoding of its document struct
// (AnalyzeDoc, LintDoc, MetaDiffDoc, SARIF, []RuleDoc), written by
// WriteJSON: the struct tags are the documents' keys, and a document's
// schema_version changes only when a key is removed or changes meaning.
// Everything here is deterministic: no map iteration order reaches output
// (IndexMap writes its keys in order).
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// AnalyzeSchemaVersion is the version of the `hopctl analyze --format json`
// document. It changes only when a key is removed or changes meaning.
const AnalyzeSchemaVersion = 1

// AnalyzeDoc is the `hopctl analyze --format json` document.
//
// Keys added since (same schema_version): in a run over several torch
// releases, "torch_releases" lists them and every finding has "releases"
// (FindingReleases).
type AnalyzeDoc struct {
	SchemaVersion int           `json:"schema_version"`
	TorchReleases []string      `json:"torch_releases,omitempty"`
	Files         []AnalyzeFile `json:"files"`
}

// AnalyzeFile is one analysed file.
type AnalyzeFile struct {
	Path   string         `json:"path"`
	Graphs []AnalyzeGraph `json:"graphs"`
}

// AnalyzeGraph is one graph's results. Map keys are input/output indices.
type AnalyzeGraph struct {
	Name   string   `json:"name"`
	Inputs []string `json:"inputs"`
	// InputKinds and InputTargets, for the root graph of an exported
	// program (a file with a graph signature), say what each input is:
	// its torch.export InputKind (PARAMETER, BUFFER, USER_INPUT, …) and
	// its state_dict key ("lin.weight"; "" for user inputs and tokens).
	InputKinds   []string `json:"input_kinds,omitempty"`
	InputTargets []string `json:"input_targets,omitempty"`
	NumOutputs   int      `json:"num_outputs"`
	// Outputs names each output as the program does: the node it returns
	// ("" for a constant). The alias maps' keys and values index Inputs
	// and Outputs.
	Outputs       []string `json:"outputs"`
	InpInpAlias   IndexMap `json:"inp_inp_alias"`
	InpOutAlias   IndexMap `json:"inp_out_alias"`
	OutOutAlias   IndexMap `json:"out_out_alias"`
	MutatedInputs []int    `json:"mutated_inputs"`
	// Aliases are the three alias maps' pairs with the names of what
	// their indices stand for (the maps keep PyTorch's form: indices).
	Aliases []NamedAlias `json:"aliases"`
	// DeclaredMutations, for the root graph of an exported program, are
	// the writes its graph signature declares (torch.export's
	// buffers_to_mutate, user_inputs_to_mutate: after run_decompositions
	// the graph is functional and they live only there). Their inputs are
	// in MutatedInputs too: the program writes them.
	DeclaredMutations []DeclaredMutation `json:"declared_mutations,omitempty"`
	// Mutations lists, per mutated input in input order, each write with
	// its provenance: the graph node that writes it, or the signature
	// output that declares it (sigmut.Mutations).
	Mutations []InputMutation `json:"mutations,omitempty"`
	// ViewMeta is AOTAutograd's view and mutation metadata of the graph
	// (ViewAndMutationMeta's input_info and output_info, field for field;
	// alias.ViewMeta).
	ViewMeta *ViewMetaDoc `json:"view_meta,omitempty"`
	Findings []Finding    `json:"findings"`
}

// ViewMetaDoc is alias.ViewMeta as JSON, with torch's field names.
type ViewMetaDoc struct {
	KeepInputMutations bool            `json:"keep_input_mutations"`
	StorageSharing     string          `json:"storage_sharing"`
	Inputs             []InputMetaDoc  `json:"inputs"`
	Outputs            []OutputMetaDoc `json:"outputs"`
}

// InputMetaDoc is one input's InputAliasInfo.
type InputMetaDoc struct {
	MutatesData                 bool   `json:"mutates_data"`
	MutatesMetadata             bool   `json:"mutates_metadata"`
	MutatesStorageMetadata      bool   `json:"mutates_storage_metadata"`
	MutationsHiddenFromAutograd bool   `json:"mutations_hidden_from_autograd"`
	MutationsUnderNoGrad        bool   `json:"mutations_under_no_grad_or_inference_mode"`
	RequiresGrad                bool   `json:"requires_grad"`
	KeepInputMutations          bool   `json:"keep_input_mutations"`
	MutationType                string `json:"mutation_type"`
}

// OutputMetaDoc is one output's OutputAliasInfo; base_idx is null for None.
type OutputMetaDoc struct {
	OutputType   string `json:"output_type"`
	BaseIdx      *int   `json:"base_idx"`
	RequiresGrad bool   `json:"requires_grad"`
}

func newViewMetaDoc(vm *alias.ViewMeta, declared []int) *ViewMetaDoc {
	d := &ViewMetaDoc{KeepInputMutations: vm.KeepInputMutations, StorageSharing: vm.StorageSharing,
		Inputs: make([]InputMetaDoc, len(vm.Inputs)), Outputs: make([]OutputMetaDoc, len(vm.Outputs))}
	for i, im := range vm.Inputs {
		if slices.Contains(declared, i) && !im.MutatesData {
			// A write the signature declares (the graph is functional).
			im.MutatesData = true
			im.Recompute()
		}
		d.Inputs[i] = InputMetaDoc{im.MutatesData, im.MutatesMetadata, im.MutatesStorageMetadata, im.MutationsHiddenFromAutograd,
			im.MutationsUnderNoGrad, im.RequiresGrad, im.KeepInputMutations, im.MutationType}
	}
	for j, om := range vm.Outputs {
		d.Outputs[j] = OutputMetaDoc{OutputType: om.OutputType, RequiresGrad: om.RequiresGrad}
		if om.BaseIdx >= 0 {
			b := om.BaseIdx
			d.Outputs[j].BaseIdx = &b
		}
	}
	return d
}

// InputMutation is one write to input Input (placeholder Name): by the
// graph node Node (Path: the way there through nested HOP bodies), or
// declared by the graph signature's output SignatureOutput, of kind Kind.
type InputMutation struct {
	Input           int      `json:"input"`
	Name            string   `json:"name"`
	Node            string   `json:"node,omitempty"`
	Path            []string `json:"path,omitempty"`
	SignatureOutput *int     `json:"signature_output,omitempty"`
	Kind            string   `json:"kind,omitempty"`
}

// Provenance is the write's source as the text report prints it
// (sigmut.Mutation.Provenance).
func (m InputMutation) Provenance() string {
	mu := sigmut.Mutation{Node: m.Node, Path: m.Path, Output: -1, Kind: m.Kind}
	if m.SignatureOutput != nil {
		mu.Output = *m.SignatureOutput
	}
	return mu.Provenance()
}

// DeclaredMutation is a write a graph signature declares: input Input
// (its placeholder Name) gets the value of graph output Output, of kind
// Kind (BUFFER_MUTATION, PARAMETER_MUTATION, USER_INPUT_MUTATION).
type DeclaredMutation struct {
	Input  int    `json:"input"`
	Name   string `json:"name"`
	Output int    `json:"output"`
	Kind   string `json:"kind"`
}

// Finding is a finding as JSON.
type Finding struct {
	Rule       string      `json:"rule"`
	Severity   string      `json:"severity"`
	Graph      string      `json:"graph"`
	Node       string      `json:"node"`
	Message    string      `json:"message"`
	Provenance *Provenance `json:"provenance,omitempty"`
	// Help is the rule's fix (analyze.Rule.Fix), as text output prints it
	// under the finding.
	Help string `json:"help,omitempty"`
	// FileWide marks a finding about the whole file (graph and node are
	// then empty), such as a schema table entry that does not parse.
	FileWide bool `json:"file_wide,omitempty"`
	// Lint only: the finding's fingerprint (lint.Fingerprint), whether a
	// --baseline lists it (it then does not fail the run), and the
	// suppression that hid it.
	Fingerprint string           `json:"fingerprint,omitempty"`
	InBaseline  bool             `json:"in_baseline,omitempty"`
	Suppression *SuppressionInfo `json:"suppression,omitempty"`
	// Releases, in a run over several torch releases (--torch-version
	// 2.6,2.14), says in which the finding is reported.
	Releases *FindingReleases `json:"releases,omitempty"`
	// Fix, on HOP alias and mutation findings, says what breaks the
	// cause (analyze.Fix).
	Fix *FindingFix `json:"fix,omitempty"`
}

// FindingFix is analyze.Fix as JSON.
type FindingFix struct {
	Text       string `json:"text"`
	Graph      string `json:"graph,omitempty"`
	Node       string `json:"node,omitempty"`
	Source     string `json:"source,omitempty"`
	Code       string `json:"code,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// FindingReleases is analyze.Releases as JSON: the releases of the run
// that report the finding and those that do not (oldest first), the
// version table rows that separate them (opschema.TorchDifferences, ids
// as the README's table names them), and the same in words ("refused by
// 2.14, accepted by 2.6").
type FindingReleases struct {
	Reported    []string `json:"reported"`
	NotReported []string `json:"not_reported"`
	Rows        []string `json:"rows,omitempty"`
	Changes     []string `json:"changes,omitempty"`
	Summary     string   `json:"summary"`
	// Messages: the words of reporting releases that word it otherwise
	// than message, by release.
	Messages map[string]string `json:"messages,omitempty"`
}

// releasesLine is the lines text outputs print under a finding of a run
// over several releases: "torch: refused by 2.14, accepted by 2.6
// (version table: dynamo-unchecked-2.6)"; "" for other runs.
func releasesLine(r *FindingReleases) string {
	if r == nil {
		return ""
	}
	line := "torch: " + r.Summary
	if len(r.Rows) > 0 {
		line += " (version table: " + strings.Join(r.Rows, ", ")
		if len(r.Changes) > 0 {
			line += "; " + strings.Join(r.Changes, ", ")
		}
		line += ")"
	}
	vs := make([]string, 0, len(r.Messages))
	for v := range r.Messages {
		vs = append(vs, v)
	}
	opschema.SortReleases(vs)
	for _, v := range vs {
		line += "\ntorch " + v + " words it: " + ir.Printable(strings.SplitN(r.Messages[v], "\n", 2)[0])
	}
	return line
}

// SuppressionInfo is the suppression that hid a finding: its index in
// lint.suppress and its reason.
type SuppressionInfo struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

// Provenance is analyze.Provenance as JSON.
type Provenance struct {
	Input      string   `json:"input,omitempty"`
	InputIndex int      `json:"input_index"`
	Views      []string `json:"views,omitempty"`
	Node       string   `json:"node,omitempty"`
	Path       []string `json:"path,omitempty"`
	StackTrace string   `json:"stack_trace,omitempty"`
}

// NamedAlias is one pair of an alias map, named: Map is "inp_inp_alias",
// "inp_out_alias" or "out_out_alias"; From and To its key and value, with
// the input's or output's name beside each.
type NamedAlias struct {
	Map      string `json:"map"`
	From     int    `json:"from"`
	FromName string `json:"from_name"`
	To       int    `json:"to"`
	ToName   string `json:"to_name"`
}

func namedAliases(g *AnalyzeGraph) []NamedAlias {
	out := []NamedAlias{}
	at := func(names []string, i int) string {
		if i >= 0 && i < len(names) {
			return names[i]
		}
		return ""
	}
	// An input is named by its state_dict key where it has one
	// (bn.running_mean), else by its placeholder.
	ins := slices.Clone(g.Inputs)
	if len(g.InputTargets) == len(ins) {
		for i, t := range g.InputTargets {
			if t != "" {
				ins[i] = t
			}
		}
	}
	for _, m := range []struct {
		name     string
		pairs    IndexMap
		from, to []string
	}{{"inp_inp_alias", g.InpInpAlias, ins, ins}, {"inp_out_alias", g.InpOutAlias, ins, g.Outputs}, {"out_out_alias", g.OutOutAlias, g.Outputs, g.Outputs}} {
		for _, p := range m.pairs {
			out = append(out, NamedAlias{m.name, p.From, at(m.from, p.From), p.To, at(m.to, p.To)})
		}
	}
	return out
}

// IndexMap is an int→int map that marshals as a JSON object with string
// keys in ascending numeric order.
type IndexMap []alias.Pair

// MarshalJSON implements json.Marshaler.
func (m IndexMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":%d`, p.From, p.To)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *IndexMap) UnmarshalJSON(data []byte) error {
	var raw map[string]int
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = (*m)[:0]
	for k, v := range raw {
		i, err := strconv.Atoi(k)
		if err != nil {
			return fmt.Errorf("index map key %q is not an int", k)
		}
		*m = append(*m, alias.Pair{From: i, To: v})
	}
	sortPairs(*m)
	return nil
}

func sortPairs(ps []alias.Pair) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].From < ps[j-1].From; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// NewFinding converts an analysis finding.
func NewFinding(f analyze.Finding) Finding {
	out := Finding{Rule: f.Rule, Severity: f.Severity.String(), Graph: f.Graph, Node: f.Node, Message: f.Message, FileWide: f.FileWide,
		Help: ruleFix(f.Rule)}
	if p := f.Provenance; p != nil {
		out.Provenance = &Provenance{Input: p.Input, InputIndex: p.InputIndex, Views: p.Views, Node: p.Node, Path: p.Path, StackTrace: p.StackTrace}
	}
	if x := f.Fix; x != nil {
		out.Fix = &FindingFix{Text: x.Text, Graph: x.Graph, Node: x.Node, Source: x.Source, Code: x.Code, Suggestion: x.Suggestion}
	}
	if r := f.Releases; r != nil {
		out.Releases = &FindingReleases{Reported: nonNil(r.Reported), NotReported: nonNil(r.Quiet), Rows: r.Rows, Changes: r.Changes, Summary: r.Summary(f.Severity),
			Messages: r.Messages}
	}
	return out
}

// NewAnalyzeFile builds the document entry of one analysed module, graphs in
// file order, each with the findings located in it.
func NewAnalyzeFile(path string, m *ir.Module, res *analyze.Result) AnalyzeFile {
	af := AnalyzeFile{Path: path, Graphs: []AnalyzeGraph{}}
	sums := res.Results[alias.Analyzer]
	// Findings grouped by graph once (a scan of every finding per graph
	// cost subgraphs × findings).
	byGraph := map[string][]Finding{}
	for _, f := range res.Findings {
		byGraph[f.Graph] = append(byGraph[f.Graph], NewFinding(f))
	}
	for _, g := range m.Graphs {
		s, _ := sums[g.Name].(*alias.Summary)
		ag := NewAnalyzeGraph(m, g, s)
		if fs := byGraph[g.Name]; len(fs) > 0 {
			ag.Findings = fs
			delete(byGraph, g.Name) // (a duplicate graph name, which Verify refuses, gets them once)
		}
		af.Graphs = append(af.Graphs, ag)
	}
	return af
}

// NewAnalyzeGraph builds the document entry of graph g of m from its alias
// summary s (nil: the graph was not analysed), without findings.
func NewAnalyzeGraph(m *ir.Module, g *ir.Graph, s *alias.Summary) AnalyzeGraph {
	ag := AnalyzeGraph{Name: g.Name, Inputs: []string{}, Outputs: []string{}, InpInpAlias: IndexMap{}, InpOutAlias: IndexMap{}, OutOutAlias: IndexMap{}, MutatedInputs: []int{}, Findings: []Finding{}}
	if s != nil {
		ag.Inputs = append(ag.Inputs, s.Inputs...)
		ag.NumOutputs = s.NumOutputs
		leaves, _ := g.Outputs()
		for _, l := range leaves {
			name := ""
			if l.Kind == ir.ArgNode {
				name = l.S
			}
			ag.Outputs = append(ag.Outputs, name)
		}
		ag.InpInpAlias = append(ag.InpInpAlias, s.InpInpAlias...)
		ag.InpOutAlias = append(ag.InpOutAlias, s.InpOutAlias...)
		ag.OutOutAlias = append(ag.OutOutAlias, s.OutOutAlias...)
		ag.MutatedInputs = append(ag.MutatedInputs, s.MutatedInputs...)
		if sig := m.Signature; sig != nil && g.Name == "" {
			for _, in := range s.Inputs {
				kind, target := "", ""
				if sp := sig.InputByName(in); sp != nil {
					kind, target = sp.Kind.String(), sp.Target
				}
				ag.InputKinds = append(ag.InputKinds, kind)
				ag.InputTargets = append(ag.InputTargets, target)
			}
		}
		ag.addMutations(sigmut.Mutations(m, s))
		if s.View != nil {
			var declared []int
			for _, dm := range ag.DeclaredMutations {
				declared = append(declared, dm.Input)
			}
			ag.ViewMeta = newViewMetaDoc(s.View, declared)
		}
	}
	ag.Aliases = namedAliases(&ag)
	return ag
}

// addMutations records the program's writes with their provenance; the
// inputs the signature declares written are added to the mutated inputs,
// kept sorted.
func (ag *AnalyzeGraph) addMutations(ms []sigmut.Mutation) {
	for _, mu := range ms {
		im := InputMutation{Input: mu.Input, Name: mu.Name, Node: mu.Node, Path: mu.Path}
		if mu.Declared() {
			out := mu.Output
			im.SignatureOutput, im.Kind = &out, mu.Kind
			ag.DeclaredMutations = append(ag.DeclaredMutations, DeclaredMutation{Input: mu.Input, Name: mu.Name, Output: mu.Output, Kind: mu.Kind})
			if !slices.Contains(ag.MutatedInputs, mu.Input) {
				ag.MutatedInputs = append(ag.MutatedInputs, mu.Input)
			}
		}
		ag.Mutations = append(ag.Mutations, im)
	}
	if len(ag.DeclaredMutations) > 0 {
		slices.Sort(ag.MutatedInputs)
	}
}

// WriteJSON writes v by encoding/json, indented two spaces a level and
// followed by a newline, with "<", ">" and "&" as they are (the documents
// are read by programs, not embedded in HTML). encoding/json escapes C0
// control characters but writes C1 controls (U+0080–U+009F: U+009B is a
// terminal's CSI) and bidirectional overrides (U+202E) raw, which a
// terminal showing the document interprets; they are written as \u
// escapes, which decode to the same strings.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeRunes(b.Bytes(), "\\u%04x"))
	return err
}

// WriteAnalyzeText renders the document for people.
func WriteAnalyzeText(w io.Writer, doc *AnalyzeDoc) error {
	var b strings.Builder
	for fi, f := range doc.Files {
		if fi > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n", ir.Printable(f.Path))
		nfind := 0
		for _, g := range f.Graphs {
			fmt.Fprintf(&b, "  graph %s (%d inputs, %d outputs)\n", ir.Abbrev(ir.DisplayName(g.Name)), len(g.Inputs), g.NumOutputs)
			fmt.Fprintf(&b, "    mutated_inputs: %s\n", indexList(g.MutatedInputs, stateNames(g)))
			for _, mu := range g.Mutations {
				l := indexList([]int{mu.Input}, stateNames(g))
				fmt.Fprintf(&b, "      %s: %s\n", l[1:len(l)-1], mu.Provenance())
			}
			fmt.Fprintf(&b, "    inp_inp_alias: %s  inp_out_alias: %s  out_out_alias: %s\n",
				pairs(g.InpInpAlias, g.Inputs, g.Inputs), pairs(g.InpOutAlias, g.Inputs, g.Outputs), pairs(g.OutOutAlias, g.Outputs, g.Outputs))
			writeViewMetaText(&b, g)
			nfind += len(g.Findings)
		}
		if nfind == 0 {
			b.WriteString("  no findings\n")
			continue
		}
		fmt.Fprintf(&b, "  findings (%d):\n", nfind)
		for _, g := range f.Graphs {
			for _, fd := range g.Findings {
				writeFindingText(&b, f.Path, fd)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFindingText(b *strings.Builder, path string, f Finding) {
	fmt.Fprintf(b, "    %s: %s: graph %s: node %s: %s [%s]\n", f.Severity, ir.Printable(path), ir.Abbrev(ir.DisplayName(f.Graph)), ir.Abbrev(f.Node), printableLines(f.Message), ir.Printable(f.Rule))
	writeProvenanceText(b, "      ", f.Provenance)
	if l := releasesLine(f.Releases); l != "" {
		fmt.Fprintf(b, "      %s\n", strings.ReplaceAll(l, "\n", "\n      "))
	}
	writeHelpText(b, "      ", f)
}

// writeProvenanceText renders a finding's provenance under it, each line
// indented: "via" and the chain input → views → path, then the stack
// trace, each line prefixed "| ". analyze and lint print it alike.
func nonNil(vs []string) []string {
	if vs == nil {
		return []string{}
	}
	return vs
}

func writeProvenanceText(b *strings.Builder, indent string, p *Provenance) {
	if p == nil {
		return
	}
	ap := analyze.Provenance{Input: p.Input, InputIndex: p.InputIndex, Views: p.Views, Node: p.Node, Path: p.Path}
	if chain := ap.Chain(); chain != "" {
		fmt.Fprintf(b, "%svia %s\n", indent, ir.Printable(chain))
	}
	if p.StackTrace != "" {
		for _, line := range strings.Split(strings.TrimRight(p.StackTrace, "\n"), "\n") {
			fmt.Fprintf(b, "%s| %s\n", indent, ir.Printable(line))
		}
	}
}

// printableLines is ir.PrintableLines: each line escaped, none can start
// a workflow command.
func printableLines(msg string) string { return ir.PrintableLines(msg) }

// stateNames names a graph's inputs for people: a parameter, buffer or
// constant of an exported program by its kind and state_dict key
// ("buffer bn.running_mean"), anything else by its placeholder.
func stateNames(g AnalyzeGraph) []string {
	if len(g.InputTargets) != len(g.Inputs) {
		return g.Inputs
	}
	out := make([]string, len(g.Inputs))
	for i, name := range g.Inputs {
		out[i] = name
		if t := g.InputTargets[i]; t != "" {
			out[i] = inputKind(g.InputKinds[i]).Noun() + " " + t
		}
	}
	return out
}

// inputKind parses an InputKind's name ("BUFFER").
func inputKind(name string) ir.InputKind {
	for k := ir.InputUserInput; k <= ir.InputToken; k++ {
		if k.String() == name {
			return k
		}
	}
	return ir.InputUnspecified
}

func indexList(xs []int, names []string) string {
	if len(xs) == 0 {
		return "[]"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
		if x >= 0 && x < len(names) {
			parts[i] += " (" + names[x] + ")"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pairs prints an alias map with each index named as the program names it
// ("1 (y): 1 (unsqueeze)"), the indices being what PyTorch's
// check_input_alias_and_mutation returns.
func pairs(m IndexMap, from, to []string) string {
	parts := make([]string, len(m))
	for i, p := range m {
		parts[i] = named(p.From, from) + ": " + named(p.To, to)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func named(i int, names []string) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return fmt.Sprintf("%d (%s)", i, ir.Printable(names[i]))
	}
	return strconv.Itoa(i)
}

// writeViewMetaText prints AOTAutograd's kinds: one line per input that is
// mutated and per output that is not a fresh (non_alias, base None) tensor.
func writeViewMetaText(b *strings.Builder, g AnalyzeGraph) {
	for _, k := range ViewMetaKinds(g) {
		fmt.Fprintf(b, "    aot %s %s: %s\n", k.Side, k.Value, k.Kind)
	}
	if vm := g.ViewMeta; vm != nil && vm.StorageSharing == "unknown" && len(vm.Inputs) > 1 {
		b.WriteString("    aot storage sharing between inputs: unknown (nothing in the file records it)\n")
	}
}

// ViewMetaKind is one input or output whose AOTAutograd kind is not the
// plain one, as the text report and the HTML report show it: Side "input"
// or "output", Value the index and name ("2 (buf)"), Kind the kind and its
// detail ("MUTATED_OUT_GRAPH (mutates data)", "alias_of_input of input 1
// (y)").
type ViewMetaKind struct {
	Side  string `json:"side"`
	Value string `json:"value"`
	Kind  string `json:"kind"`
}

// ViewMetaKinds lists g's mutated inputs and its outputs that are not fresh
// (non_alias with no base), in AOTAutograd's terms.
func ViewMetaKinds(g AnalyzeGraph) []ViewMetaKind {
	vm := g.ViewMeta
	if vm == nil {
		return nil
	}
	var out []ViewMetaKind
	names := stateNames(g)
	for i, in := range vm.Inputs {
		if in.MutationType == "NOT_MUTATED" {
			continue
		}
		var what []string
		for _, f := range []struct {
			on   bool
			name string
		}{{in.MutatesData, "data"}, {in.MutatesMetadata, "metadata"}, {in.MutatesStorageMetadata, "storage (set_)"}, {in.MutationsUnderNoGrad, "under no_grad"}} {
			if f.on {
				what = append(what, f.name)
			}
		}
		out = append(out, ViewMetaKind{"input", named(i, names), fmt.Sprintf("%s (mutates %s)", in.MutationType, strings.Join(what, ", "))})
	}
	for j, o := range vm.Outputs {
		if o.OutputType == alias.OutNonAlias && o.BaseIdx == nil {
			continue
		}
		// base_idx indexes the inputs for an alias of an input, the
		// outputs for an intermediate base that is a user output, and
		// AOTAutograd's list of intermediate bases otherwise.
		base := ""
		if k := o.BaseIdx; k != nil {
			switch o.OutputType {
			case alias.OutAliasOfInput, alias.OutIsInput:
				base = " of input " + named(*k, names)
			case alias.OutAliasOfIntermediateBaseOut:
				base = " of output " + named(*k, g.Outputs)
			default:
				base = fmt.Sprintf(" base_idx=%d", *k)
			}
		}
		out = append(out, ViewMetaKind{"output", named(j, g.Outputs), o.OutputType + base})
	}
	return out
}
