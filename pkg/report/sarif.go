package report

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/lint"
)

// SARIF 2.1.0 output for `hopctl lint --format sarif`, in the subset GitHub
// code scanning reads: one run whose tool.driver lists every rule (id,
// shortDescription, fullDescription, defaultConfiguration.level) and whose
// results carry ruleId, ruleIndex, level, message.text and a location: the
// file as physicalLocation.artifactLocation.uri (relative paths as given,
// with forward slashes, against %SRCROOT%; absolute paths as file:// URIs)
// with region startLine 1 (graph files have no useful lines), and the graph
// and node as a logicalLocation whose fullyQualifiedName is "graph.node"
// (just "node" in the root graph). Files that could not be read appear as
// error notifications of the run's invocation, whose executionSuccessful is
// then false.

// SARIFSchema and SARIFVersion identify the format.
const (
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	SARIFVersion = "2.1.0"
)

// SARIF is a SARIF log.
type SARIF struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SARIFRun `json:"runs"`
}

// SARIFRun is one run of one tool.
type SARIFRun struct {
	Tool        SARIFTool         `json:"tool"`
	Invocations []SARIFInvocation `json:"invocations"`
	Results     []SARIFResult     `json:"results"`
}

// SARIFTool names the tool.
type SARIFTool struct {
	Driver SARIFDriver `json:"driver"`
}

// SARIFDriver is the tool component that ran.
type SARIFDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []SARIFRule `json:"rules"`
}

// SARIFRule is a reportingDescriptor.
type SARIFRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     SARIFText          `json:"shortDescription"`
	FullDescription      SARIFText          `json:"fullDescription"`
	DefaultConfiguration SARIFConfiguration `json:"defaultConfiguration"`
	Properties           *SARIFRuleProps    `json:"properties,omitempty"`
}

// SARIFRuleProps are a rule's property bag.
type SARIFRuleProps struct {
	Tags []string `json:"tags,omitempty"`
}

// SARIFConfiguration is a reportingConfiguration.
type SARIFConfiguration struct {
	Level string `json:"level"`
}

// SARIFText is a message or multiformatMessageString.
type SARIFText struct {
	Text string `json:"text"`
}

// SARIFResult is one finding.
type SARIFResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   SARIFText       `json:"message"`
	Locations []SARIFLocation `json:"locations"`
}

// SARIFLocation is a location.
type SARIFLocation struct {
	PhysicalLocation SARIFPhysicalLocation  `json:"physicalLocation"`
	LogicalLocations []SARIFLogicalLocation `json:"logicalLocations,omitempty"`
}

// SARIFPhysicalLocation is a file and region.
type SARIFPhysicalLocation struct {
	ArtifactLocation SARIFArtifactLocation `json:"artifactLocation"`
	Region           SARIFRegion           `json:"region"`
}

// SARIFArtifactLocation is a file URI.
type SARIFArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// SARIFRegion is a region of a file.
type SARIFRegion struct {
	StartLine int `json:"startLine"`
}

// SARIFLogicalLocation names a graph or node.
type SARIFLogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// SARIFInvocation is the run's invocation.
type SARIFInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []SARIFNotification `json:"toolExecutionNotifications"`
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

// NewSARIF builds the SARIF log of a lint run.
func NewSARIF(doc *LintDoc, rules []lint.Rule, version string) *SARIF {
	drv := SARIFDriver{Name: "hopctl", Version: version, InformationURI: "https://github.com/hopctl/hopctl", Rules: []SARIFRule{}}
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
		drv.Rules = append(drv.Rules, SARIFRule{
			ID: r.ID, Name: ruleName(r.ID),
			ShortDescription:     SARIFText{Text: r.Short},
			FullDescription:      SARIFText{Text: r.Doc},
			DefaultConfiguration: SARIFConfiguration{Level: SARIFLevel(r.Severity)},
			Properties:           &SARIFRuleProps{Tags: []string{r.Category}},
		})
	}
	run := SARIFRun{Tool: SARIFTool{Driver: drv}, Results: []SARIFResult{},
		Invocations: []SARIFInvocation{{ExecutionSuccessful: true, ToolExecutionNotifications: []SARIFNotification{}}}}
	for _, f := range doc.Files {
		phys := SARIFPhysicalLocation{ArtifactLocation: artifact(f.Path), Region: SARIFRegion{StartLine: 1}}
		if f.Status == StatusUnreadable {
			run.Invocations[0].ExecutionSuccessful = false
			run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications, SARIFNotification{
				Level: "error", Message: SARIFText{Text: f.Error}, Locations: []SARIFLocation{{PhysicalLocation: phys}}})
			continue
		}
		for _, fd := range f.Findings {
			loc := SARIFLocation{PhysicalLocation: phys}
			if !fd.FileWide {
				loc.LogicalLocations = logical(fd.Graph, fd.Node)
			}
			sev, _ := analyze.ParseSeverity(fd.Severity)
			idx, ok := index[fd.Rule]
			if !ok {
				idx = -1
			}
			run.Results = append(run.Results, SARIFResult{RuleID: fd.Rule, RuleIndex: idx, Level: SARIFLevel(sev),
				Message: SARIFText{Text: fd.Message}, Locations: []SARIFLocation{loc}})
		}
	}
	return &SARIF{Schema: SARIFSchema, Version: SARIFVersion, Runs: []SARIFRun{run}}
}

// ruleName is the rule id in PascalCase, as SARIF's optional name.
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func artifact(p string) SARIFArtifactLocation {
	if filepath.IsAbs(p) {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		return SARIFArtifactLocation{URI: u.String()}
	}
	u := url.URL{Path: strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./")}
	return SARIFArtifactLocation{URI: u.String(), URIBaseID: "%SRCROOT%"}
}

// logical names the graph and, when there is one, the node.
func logical(graph, node string) []SARIFLogicalLocation {
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
