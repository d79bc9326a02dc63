package report

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/lint"
)

// SARIF 2.1.0 output for `hopctl lint --format sarif`, shaped for GitHub
// code scanning and checked in tests by Microsoft's validator
// (`sarif-multitool validate --rule-kind "Sarif;Gh"`, zero errors and
// warnings) and the OASIS schema (testdata/sarif/sarif-schema-2.1.0.json):
//
//   - tool.driver.rules: every rule with id, a name that differs from it,
//     short and full descriptions, help (text and Markdown with an example)
//     and a helpUri into docs/lint-rules.md, and its default level.
//   - results: ruleId, ruleIndex, level, message, partialFingerprints
//     ("hopctl/v1": lint's fingerprint, stable when a re-export renumbers
//     nodes). The primary location is the user's Python line that made the
//     node (the innermost frame of the writing node's stack trace, else of
//     the finding node's), with the source line as snippet, when that file
//     is inside the source root; otherwise the graph file. Either way
//     the location names the graph and node as a logical location ("graph.node", just "node"
//     in the root graph), and when the primary location is Python source,
//     the graph file is a related location. In a graph file, a node's
//     location is the line that names it in the text and JSON encodings,
//     line 1 in binary files.
//   - codeFlows: the provenance, one threadFlow location per step (input,
//     views, each HOP call, the writing node), each at its own source line
//     when its node has a stack trace; at most 1,000 (both ends of longer
//     chains, and a step saying how many were left out).
//   - suppressed findings are results with suppressions (kind external,
//     justification: the suppression's reason); with a baseline every
//     result has a baselineState (unchanged when the baseline lists it,
//     new otherwise).
//   - URIs are relative to %SRCROOT%, the source root (--source-root,
//     default the git checkout's top level, else the current directory),
//     with --path-prefix in front; run.originalUriBaseIds gives %SRCROOT%'s
//     absolute file URI and, in a git checkout with a remote,
//     versionControlProvenance names the repository, commit and branch.
//     Files outside the source root get absolute file URIs.
//   - files that could not be read are error notifications of the run's
//     invocation, whose executionSuccessful is then false; suppressions
//     that matched nothing are warning configuration notifications.
//
// The types below are the subset of SARIF 2.1.0 hopctl writes, each
// property only when set. go-sarif (github.com/owenrumney/go-sarif/v3
// v3.3.1) was considered: its NewRuleResult marshals every array property
// of a result, empty (attachments, codeFlows, fixes, graphTraversals,
// graphs, locations, relatedLocations, stacks, taxa), with kind "fail" and
// rank -1, on every result, and the module brings xeipuuv/gojsonschema
// along. Both validators above check these types on every corpus log.

// SARIFSchema and SARIFVersion identify the format.
const (
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	SARIFVersion = "2.1.0"
)

// SrcRoot is the uriBaseId of every relative URI.
const SrcRoot = "%SRCROOT%"

// SARIF is a SARIF log.
type SARIF struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SARIFRun `json:"runs"`
}

// SARIFRun is one run of one tool.
type SARIFRun struct {
	Tool                     SARIFTool                   `json:"tool"`
	Invocations              []SARIFInvocation           `json:"invocations"`
	OriginalURIBaseIDs       map[string]SARIFArtifactLoc `json:"originalUriBaseIds,omitempty"`
	VersionControlProvenance []SARIFVersionControl       `json:"versionControlProvenance,omitempty"`
	Results                  []SARIFResult               `json:"results"`
	// Artifacts are the files whose program writes its inputs, each with
	// the writes in its properties (mutatedInputs); omitted when none does.
	Artifacts []SARIFArtifact `json:"artifacts,omitempty"`
}

// SARIFArtifact is one input file (SARIF 3.24), with the program facts
// hopctl reports beside findings in its property bag.
type SARIFArtifact struct {
	Location   SARIFArtifactLoc        `json:"location"`
	Properties SARIFArtifactProperties `json:"properties"`
}

// SARIFArtifactProperties is an artifact's property bag.
type SARIFArtifactProperties struct {
	MutatedInputs []SARIFMutation `json:"mutatedInputs"`
}

// SARIFMutation is one write the program makes to an input, with its
// provenance as the text report words it (sigmut.Mutation.Provenance):
// a node, or "declared by the graph signature, output N (KIND)".
type SARIFMutation struct {
	Input      int    `json:"input"`
	Name       string `json:"name"`
	Provenance string `json:"provenance"`
}

// SARIFTool names the tool.
type SARIFTool struct {
	Driver SARIFDriver `json:"driver"`
}

// SARIFDriver is the tool component that ran.
type SARIFDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	SemanticVer    string      `json:"semanticVersion,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []SARIFRule `json:"rules"`
}

// SARIFRule is a reportingDescriptor.
type SARIFRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     SARIFText          `json:"shortDescription"`
	FullDescription      SARIFText          `json:"fullDescription"`
	Help                 SARIFText          `json:"help"`
	HelpURI              string             `json:"helpUri"`
	DefaultConfiguration SARIFConfiguration `json:"defaultConfiguration"`
	Properties           *SARIFRuleProps    `json:"properties,omitempty"`
}

// SARIFRuleProps are a rule's property bag.
type SARIFRuleProps struct {
	Tags      []string `json:"tags,omitempty"`
	Precision string   `json:"precision,omitempty"`
	// ProblemSeverity is GitHub's problem.severity.
	ProblemSeverity string `json:"problem.severity,omitempty"`
}

// SARIFConfiguration is a reportingConfiguration.
type SARIFConfiguration struct {
	Level string `json:"level"`
}

// SARIFText is a message or multiformatMessageString.
type SARIFText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// SARIFResult is one finding.
type SARIFResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             SARIFText          `json:"message"`
	Locations           []SARIFLocation    `json:"locations"`
	RelatedLocations    []SARIFLocation    `json:"relatedLocations,omitempty"`
	CodeFlows           []SARIFCodeFlow    `json:"codeFlows,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints,omitempty"`
	Suppressions        []SARIFSuppression `json:"suppressions,omitempty"`
	BaselineState       string             `json:"baselineState,omitempty"`
	// Properties carry hopctl's own facts: in a run over several torch
	// releases, the releases that report the result (torchReleases).
	Properties *SARIFResultProperties `json:"properties,omitempty"`
}

// SARIFResultProperties is a result's property bag.
type SARIFResultProperties struct {
	TorchReleases *FindingReleases `json:"torchReleases,omitempty"`
}

// SARIFLocation is a location.
type SARIFLocation struct {
	ID               *int                   `json:"id,omitempty"`
	PhysicalLocation *SARIFPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []SARIFLogicalLocation `json:"logicalLocations,omitempty"`
	Message          *SARIFText             `json:"message,omitempty"`
}

// SARIFPhysicalLocation is a file and region.
type SARIFPhysicalLocation struct {
	ArtifactLocation SARIFArtifactLoc `json:"artifactLocation"`
	Region           *SARIFRegion     `json:"region,omitempty"`
}

// SARIFArtifactLoc is a file URI.
type SARIFArtifactLoc struct {
	URI       string `json:"uri,omitempty"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// SARIFRegion is a region of a file.
type SARIFRegion struct {
	StartLine int        `json:"startLine"`
	Snippet   *SARIFText `json:"snippet,omitempty"`
}

// SARIFLogicalLocation names a graph or node.
type SARIFLogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// SARIFCodeFlow is a codeFlow with one threadFlow.
type SARIFCodeFlow struct {
	Message     *SARIFText        `json:"message,omitempty"`
	ThreadFlows []SARIFThreadFlow `json:"threadFlows"`
}

// SARIFThreadFlow is a threadFlow.
type SARIFThreadFlow struct {
	Locations []SARIFThreadFlowLocation `json:"locations"`
}

// SARIFThreadFlowLocation is one step of a threadFlow.
type SARIFThreadFlowLocation struct {
	Location     SARIFLocation `json:"location"`
	NestingLevel int           `json:"nestingLevel"`
}

// SARIFSuppression is a suppression of a result.
type SARIFSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification,omitempty"`
}

// SARIFVersionControl is a versionControlDetails.
type SARIFVersionControl struct {
	RepositoryURI string            `json:"repositoryUri"`
	RevisionID    string            `json:"revisionId,omitempty"`
	Branch        string            `json:"branch,omitempty"`
	MappedTo      *SARIFArtifactLoc `json:"mappedTo,omitempty"`
}

// SARIFInvocation is the run's invocation.
type SARIFInvocation struct {
	ExecutionSuccessful            bool                `json:"executionSuccessful"`
	ToolExecutionNotifications     []SARIFNotification `json:"toolExecutionNotifications"`
	ToolConfigurationNotifications []SARIFNotification `json:"toolConfigurationNotifications,omitempty"`
}

// SARIFNotification reports a problem running the tool on a file.
type SARIFNotification struct {
	Level     string          `json:"level"`
	Message   SARIFText       `json:"message"`
	Locations []SARIFLocation `json:"locations,omitempty"`
}

// SARIFLevel maps a severity to a SARIF level: error, warning, note.
func SARIFLevel(s analyze.Severity) string {
	switch s {
	case analyze.Error:
		return "error"
	case analyze.Warning:
		return "warning"
	}
	return "note"
}

// SARIFOptions say where the run happened.
type SARIFOptions struct {
	// SourceRoot is the directory URIs are relative to ("" means the
	// current directory).
	SourceRoot string
	// PathPrefix is put in front of every relative URI ("sub/dir/").
	PathPrefix string
	// VCS describes the git checkout, nil outside one.
	VCS *VCS
}

// VCS is a git checkout: its remote, commit and branch.
type VCS struct {
	RepositoryURI string // absolute URI; versionControlProvenance is omitted when ""
	Revision      string
	Branch        string
}

// NewSARIF builds the SARIF log of a lint run.
func NewSARIF(doc *LintDoc, rules []lint.Rule, version string) *SARIF {
	return NewSARIFWith(doc, rules, version, SARIFOptions{})
}

// NewSARIFWith builds the SARIF log of a lint run run as o says.
func NewSARIFWith(doc *LintDoc, rules []lint.Rule, version string, o SARIFOptions) *SARIF {
	b := newSarifBuilder(o)
	drv := SARIFDriver{Name: "hopctl", Version: version, InformationURI: "https://github.com/hopctl/hopctl", Rules: []SARIFRule{}}
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
		drv.Rules = append(drv.Rules, SARIFRule{
			ID: r.ID, Name: r.Name,
			ShortDescription:     SARIFText{Text: r.Short},
			FullDescription:      SARIFText{Text: r.Doc},
			Help:                 SARIFText{Text: r.Help(), Markdown: r.Help()},
			HelpURI:              r.HelpURI(),
			DefaultConfiguration: SARIFConfiguration{Level: SARIFLevel(r.Severity)},
			Properties:           &SARIFRuleProps{Tags: []string{r.Category}, Precision: "very-high", ProblemSeverity: problemSeverity(r.Severity)},
		})
	}
	run := SARIFRun{Tool: SARIFTool{Driver: drv}, Results: []SARIFResult{},
		Invocations: []SARIFInvocation{{ExecutionSuccessful: true, ToolExecutionNotifications: []SARIFNotification{}}}}
	if b.rootURI != "" {
		run.OriginalURIBaseIDs = map[string]SARIFArtifactLoc{SrcRoot: {URI: b.rootURI}}
	}
	if v := o.VCS; v != nil && v.RepositoryURI != "" {
		run.VersionControlProvenance = []SARIFVersionControl{{RepositoryURI: v.RepositoryURI, RevisionID: v.Revision, Branch: v.Branch,
			MappedTo: &SARIFArtifactLoc{URIBaseID: SrcRoot}}}
	}
	for _, u := range doc.UnmatchedSuppressions {
		n := SARIFNotification{Level: "warning", Message: SARIFText{Text: u.Describe() + " matched no finding."}}
		if u.File != "" {
			n.Locations = []SARIFLocation{{PhysicalLocation: &SARIFPhysicalLocation{ArtifactLocation: b.artifact(u.File)}}}
		}
		run.Invocations[0].ToolConfigurationNotifications = append(run.Invocations[0].ToolConfigurationNotifications, n)
	}
	for _, f := range doc.Files {
		if f.Status == StatusUnreadable {
			run.Invocations[0].ExecutionSuccessful = false
			run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications, SARIFNotification{
				Level: "error", Message: SARIFText{Text: f.Error},
				Locations: []SARIFLocation{{PhysicalLocation: &SARIFPhysicalLocation{ArtifactLocation: b.artifact(f.Path)}}}})
			continue
		}
		if f.Status == StatusSkipped {
			run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications, SARIFNotification{
				Level: "note", Message: SARIFText{Text: "skipped: " + f.Reason},
				Locations: []SARIFLocation{{PhysicalLocation: &SARIFPhysicalLocation{ArtifactLocation: b.artifact(f.Path)}}}})
			continue
		}
		emit := func(fd Finding, d lint.Detail) {
			idx, ok := index[fd.Rule]
			if !ok {
				idx = -1
			}
			res := b.result(f.Path, fd, d)
			res.RuleIndex = idx
			if doc.baseline {
				res.BaselineState = "new"
				if fd.InBaseline {
					res.BaselineState = "unchanged"
				}
			}
			run.Results = append(run.Results, res)
		}
		for i, fd := range f.Findings {
			emit(fd, detailAt(f.details, i))
		}
		if len(f.mutations) > 0 {
			a := SARIFArtifact{Location: b.artifact(f.Path)}
			for _, mu := range f.mutations {
				a.Properties.MutatedInputs = append(a.Properties.MutatedInputs,
					SARIFMutation{Input: mu.Input, Name: ir.PrintableLines(mu.Name), Provenance: ir.PrintableLines(mu.Provenance())})
			}
			run.Artifacts = append(run.Artifacts, a)
		}
		for i, fd := range f.SuppressedFindings {
			emit(fd, detailAt(f.suppressedDetails, i))
		}
	}
	return &SARIF{Schema: SARIFSchema, Version: SARIFVersion, Runs: []SARIFRun{run}}
}

func detailAt(ds []lint.Detail, i int) lint.Detail {
	if i < len(ds) {
		return ds[i]
	}
	return lint.Detail{}
}

// problemSeverity is GitHub's problem.severity for a rule.
func problemSeverity(s analyze.Severity) string {
	if l := SARIFLevel(s); l != "note" {
		return l
	}
	return "recommendation"
}

type sarifBuilder struct {
	o SARIFOptions
	// root is the absolute source root; rootURI its file URI with a
	// trailing slash.
	root, rootURI string
	// exists caches whether a source file is there.
	exists map[string]bool
	// lines caches the node lines of text graph files.
	lines map[string]map[nodeKey]int
}

type nodeKey struct{ graph, node string }

func newSarifBuilder(o SARIFOptions) *sarifBuilder {
	b := &sarifBuilder{o: o, exists: map[string]bool{}, lines: map[string]map[nodeKey]int{}}
	root := o.SourceRoot
	if root == "" {
		root = "."
	}
	if abs, err := filepath.Abs(root); err == nil {
		b.root = abs
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		b.rootURI = u.String()
	}
	return b
}

// rel returns p relative to the source root, with forward slashes, and
// whether it is inside it.
func (b *sarifBuilder) rel(p string) (string, bool) {
	if b.root == "" {
		return "", false
	}
	return lint.RelTo(b.root, p)
}

// artifact is the artifact location of a file: relative to %SRCROOT%, with
// the path prefix, when inside the source root; else an absolute file URI.
func (b *sarifBuilder) artifact(p string) SARIFArtifactLoc {
	if r, ok := b.rel(p); ok {
		u := url.URL{Path: path.Join(b.o.PathPrefix, r)}
		return SARIFArtifactLoc{URI: u.String(), URIBaseID: SrcRoot}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return SARIFArtifactLoc{URI: u.String()}
}

// graphFile is the physical location of node in graph of a graph file: in
// the text and JSON encodings the line that names the node (nodeLines),
// else line 1 (a binary file has no lines).
func (b *sarifBuilder) graphFile(p, graph, node string) *SARIFPhysicalLocation {
	line := 1
	if node != "" {
		idx, ok := b.lines[p]
		if !ok {
			idx = nodeLines(p)
			b.lines[p] = idx
		}
		if l, ok := idx[nodeKey{graph, node}]; ok {
			line = l
		}
	}
	return &SARIFPhysicalLocation{ArtifactLocation: b.artifact(p), Region: &SARIFRegion{StartLine: line}}
}

var (
	// qualifiedNameRE and nodeNameRE find a submodule's qualified name and
	// a node's name in the text (qualified_name: "g", name: "n") and JSON
	// ("qualifiedName": "g", "name": "n") encodings. Compiled on first
	// use, as every table no command needs at start.
	qualifiedNameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:qualified_name:|"qualifiedName"\s*:)\s*"([^"\\]*)"`)
	})
	nodeNameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s{,])(?:name:|"name"\s*:)\s*"([^"\\]*)"`)
	})
)

// nodeLines indexes a text or JSON graph file: the first line naming each
// node, by graph (a node belongs to the graph of the last qualified name
// above it, the root before any). Nil for other files, which keep line 1.
func nodeLines(p string) map[nodeKey]int {
	if enc := ir.EncodingForPath(p); enc != ir.Text && enc != ir.JSON {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	idx := map[nodeKey]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	graph := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := qualifiedNameRE().FindStringSubmatch(line); m != nil {
			graph = m[1]
			continue
		}
		for _, m := range nodeNameRE().FindAllStringSubmatch(line, -1) {
			k := nodeKey{graph, m[1]}
			if _, seen := idx[k]; !seen {
				idx[k] = n
			}
		}
	}
	return idx
}

// source is the physical location of a stack trace's innermost frame whose
// file is inside the source root and exists; nil when there is none. A
// relative file name is taken relative to the source root.
func (b *sarifBuilder) source(stackTrace string) *SARIFPhysicalLocation {
	if stackTrace == "" || b.root == "" {
		return nil
	}
	frames := lint.Frames(stackTrace)
	for i := len(frames) - 1; i >= 0; i-- {
		fr := frames[i]
		p := fr.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(b.root, p)
		}
		r, ok := b.rel(p)
		if !ok {
			continue
		}
		ex, seen := b.exists[p]
		if !seen {
			st, err := os.Stat(p)
			ex = err == nil && st.Mode().IsRegular()
			b.exists[p] = ex
		}
		if !ex {
			continue
		}
		u := url.URL{Path: path.Join(b.o.PathPrefix, r)}
		reg := &SARIFRegion{StartLine: fr.Line}
		if fr.Source != "" {
			reg.Snippet = &SARIFText{Text: fr.Source}
		}
		return &SARIFPhysicalLocation{ArtifactLocation: SARIFArtifactLoc{URI: u.String(), URIBaseID: SrcRoot}, Region: reg}
	}
	return nil
}

func (b *sarifBuilder) result(file string, fd Finding, d lint.Detail) SARIFResult {
	sev, _ := analyze.ParseSeverity(fd.Severity)
	res := SARIFResult{RuleID: fd.Rule, Level: SARIFLevel(sev), Message: SARIFText{Text: fd.Message}}
	if fd.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{lint.FingerprintKey: fd.Fingerprint}
	}
	var logical []SARIFLogicalLocation
	if !fd.FileWide {
		logical = logicalLocations(fd.Graph, fd.Node)
	}
	var src *SARIFPhysicalLocation
	if p := fd.Provenance; p != nil {
		src = b.source(p.StackTrace)
	}
	if src == nil {
		src = b.source(d.StackTrace)
	}
	if src != nil {
		res.Locations = []SARIFLocation{{PhysicalLocation: src, LogicalLocations: logical}}
		id := 1
		res.RelatedLocations = []SARIFLocation{{ID: &id, PhysicalLocation: b.graphFile(file, fd.Graph, fd.Node), LogicalLocations: logical,
			Message: &SARIFText{Text: "the graph file"}}}
	} else {
		res.Locations = []SARIFLocation{{PhysicalLocation: b.graphFile(file, fd.Graph, fd.Node), LogicalLocations: logical}}
	}
	if len(d.Steps) > 0 {
		var locs []SARIFThreadFlowLocation
		level := 0
		for _, s := range d.Steps {
			loc := SARIFLocation{PhysicalLocation: b.source(s.StackTrace), Message: &SARIFText{Text: stepText(s)}}
			if loc.PhysicalLocation == nil {
				loc.PhysicalLocation = b.graphFile(file, s.Graph, s.Node)
			}
			if s.Node != "" {
				loc.LogicalLocations = logicalLocations(s.Graph, s.Node)
			}
			locs = append(locs, SARIFThreadFlowLocation{Location: loc, NestingLevel: level})
			if s.Kind == lint.StepCall {
				level++
			}
		}
		if len(locs) > maxFlowSteps {
			// GitHub keeps the first 1,000 locations of a thread flow: keep
			// both ends, which name the input and the writing node.
			omitted := len(locs) - maxFlowSteps + 1
			gap := SARIFThreadFlowLocation{Location: SARIFLocation{PhysicalLocation: b.graphFile(file, "", ""),
				Message: &SARIFText{Text: fmt.Sprintf("… %d steps omitted …", omitted)}}, NestingLevel: locs[maxFlowSteps/2].NestingLevel}
			locs = append(append(locs[:maxFlowSteps/2:maxFlowSteps/2], gap), locs[len(locs)-(maxFlowSteps-maxFlowSteps/2-1):]...)
		}
		res.CodeFlows = []SARIFCodeFlow{{ThreadFlows: []SARIFThreadFlow{{Locations: locs}}}}
	}
	if fd.Releases != nil {
		res.Properties = &SARIFResultProperties{TorchReleases: fd.Releases}
		// Code scanning shows the message, not the property bag.
		res.Message.Text += "\n" + releasesLine(fd.Releases)
	}
	if s := fd.Suppression; s != nil {
		res.Suppressions = []SARIFSuppression{{Kind: "external", Status: "accepted", Justification: s.Reason}}
	}
	return res
}

// maxFlowSteps bounds a codeFlow's locations: GitHub code scanning reads
// at most 1,000 locations of a thread flow (a chain of 100,000 written
// views is a valid graph).
const maxFlowSteps = 1000

// stepText describes one provenance step, escaped (ir.PrintableLines):
// its names and target come from the file.
func stepText(s lint.Step) string { return ir.PrintableLines(stepTextRaw(s)) }

func stepTextRaw(s lint.Step) string {
	op := ""
	if s.Target != "" {
		op = " (" + s.Target + ")"
	}
	switch {
	case s.Note != "":
		return s.Note
	case s.Kind == lint.StepInput:
		return "input " + s.Node
	case s.Kind == lint.StepView:
		return "view " + s.Node + op
	case s.Kind == lint.StepCall:
		return fmt.Sprintf("HOP call %s%s", s.Node, op)
	}
	return "node " + s.Node + op
}

// logicalLocations names the graph and, when there is one, the node.
func logicalLocations(graph, node string) []SARIFLogicalLocation {
	gname := graph
	if gname == "" {
		gname = "<root>"
	}
	if node == "" {
		return []SARIFLogicalLocation{{Name: gname, FullyQualifiedName: gname, Kind: "module"}}
	}
	fq := node
	if graph != "" {
		fq = graph + "." + node
	}
	return []SARIFLogicalLocation{{Name: node, FullyQualifiedName: fq, Kind: "function"}}
}
