package analyze

import (
	"slices"
	"strings"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Releases says, for a run over several torch releases (--torch-version
// 2.6,2.14), in which of them a finding is reported: each release's rules
// are applied in turn (PyTorch's HOP rules move between releases: 2.8
// began refusing cond branches that return a view of an input,
// pytorch/pytorch#158375), and a finding is one finding across them.
type Releases struct {
	// Reported are the releases whose rules report the finding, Quiet the
	// others of the run; both oldest first.
	Reported []string
	Quiet    []string
	// Rows are the version table rows (opschema.TorchDifferences) that
	// separate Reported from Quiet and that the finding's rule consults:
	// the rule change between the releases.
	Rows []string
	// Changes are the pull requests of those rows that hopctl knows
	// (TorchDifference.Change).
	Changes []string
	// Messages are the words of the reporting releases that word the
	// finding otherwise than Message (2.6's per-HOP refusals,
	// hop-messages-2.6), by release; nil when all agree.
	Messages map[string]string
}

// Summary is the releases in words: "refused by 2.14, accepted by 2.6"
// for a refusal (an error), "reported by 2.14, not by 2.6" otherwise; a
// run of consecutive table releases is written as a range
// ("accepted by 2.0–2.6").
func (r *Releases) Summary(sev Severity) string {
	yes, no := "reported by ", "not by "
	if sev == Error {
		yes, no = "refused by ", "accepted by "
	}
	var parts []string
	if len(r.Reported) > 0 {
		parts = append(parts, yes+releaseSpans(r.Reported, r.Quiet))
	}
	if len(r.Quiet) > 0 {
		parts = append(parts, no+releaseSpans(r.Quiet, r.Reported))
	}
	return strings.Join(parts, ", ")
}

// releaseSpans writes vs (sorted) as comma-separated spans "a–b" of
// releases with none of others between them.
func releaseSpans(vs, others []string) string {
	all := append(slices.Clone(vs), others...)
	opschema.SortReleases(all)
	in := map[string]bool{}
	for _, v := range vs {
		in[v] = true
	}
	var spans []string
	for i := 0; i < len(all); i++ {
		if !in[all[i]] {
			continue
		}
		j := i
		for j+1 < len(all) && in[all[j+1]] {
			j++
		}
		if j > i {
			spans = append(spans, all[i]+"–"+all[j])
		} else {
			spans = append(spans, all[i])
		}
		i = j
	}
	return strings.Join(spans, ", ")
}

// releaseKey identifies a finding across the runs of several releases:
// where it is and what it is about, not its words (2.6's refusals are
// worded per HOP, hop-messages-2.6).
type releaseKey struct {
	rule, graph, node, input, at string
	fileWide                     bool
}

func keyOf(f Finding) releaseKey {
	k := releaseKey{rule: f.Rule, graph: f.Graph, node: f.Node, fileWide: f.FileWide}
	if p := f.Provenance; p != nil {
		k.input, k.at = p.Input, p.Node
		if len(p.Path) > 0 {
			k.at = strings.Join(p.Path, "/")
		}
	}
	if k.input == "" && k.at == "" {
		k.at = f.Message
	}
	return k
}

// MergeReleases merges the findings of one run per release (runs[i] under
// releases[i], oldest first) into one list: each finding once, as the
// newest release that reports it words it, with its Releases. The result
// is in the newest run's order, then the findings only older releases
// report; callers sort it (SortFindings).
func MergeReleases(m *ir.Module, releases []string, runs [][]Finding) []Finding {
	type entry struct {
		f        Finding
		reported map[string]bool
		messages map[string]string
	}
	var order []releaseKey
	byKey := map[releaseKey]*entry{}
	for i := len(runs) - 1; i >= 0; i-- {
		seen := map[releaseKey]int{}
		for _, f := range runs[i] {
			k := keyOf(f)
			// The same key twice in one run (two findings on one node
			// and input) stays two findings.
			n := seen[k]
			seen[k]++
			kn := k
			if n > 0 {
				kn.at += "#" + strings.Repeat("'", n)
			}
			e, ok := byKey[kn]
			if !ok {
				e = &entry{f: f, reported: map[string]bool{}, messages: map[string]string{}}
				byKey[kn] = e
				order = append(order, kn)
			}
			e.reported[releases[i]] = true
			if f.Message != e.f.Message {
				e.messages[releases[i]] = f.Message
			}
		}
	}
	var lv moduleLevel
	if m != nil {
		v, _ := m.Annotation("torch.export.verifiers")
		lv = moduleLevel{dynamo: DynamoLevel(m), exportTraining: v == "TRAINING"}
	}
	out := make([]Finding, 0, len(order))
	for _, k := range order {
		e := byKey[k]
		r := &Releases{}
		for _, v := range releases {
			if e.reported[v] {
				r.Reported = append(r.Reported, v)
			} else {
				r.Quiet = append(r.Quiet, v)
			}
		}
		if len(e.messages) > 0 {
			r.Messages = e.messages
		}
		r.Rows = separatingRows(e.f.Rule, nodeTarget(m, e.f), lv, r.Reported, r.Quiet)
		for _, d := range opschema.TorchDifferences() {
			if d.Change != "" && slices.Contains(r.Rows, d.ID) {
				r.Changes = append(r.Changes, d.Change)
			}
		}
		f := e.f
		f.Releases = r
		out = append(out, f)
	}
	return out
}

// moduleLevel is what of a module decides which rows its rules consult:
// a Dynamo-level graph, torch.export's training IR.
type moduleLevel struct{ dynamo, exportTraining bool }

// nodeTarget is the op target of f's node, "" when it has none.
func nodeTarget(m *ir.Module, f Finding) string {
	if m == nil || f.FileWide {
		return ""
	}
	g := m.Graph(f.Graph)
	if g == nil {
		return ""
	}
	if id, ok := g.Lookup(f.Node); ok {
		return g.Nodes[id].Target
	}
	return ""
}

// separatingRows are the rows rule consults that hold in every release of
// one side and in none of the other's.
func separatingRows(rule, target string, lv moduleLevel, yes, no []string) []string {
	if len(yes) == 0 || len(no) == 0 {
		return nil
	}
	consulted := opschema.RowsOfRule(rule, target)
	if !lv.dynamo {
		// Dynamo's own checks are consulted on Dynamo-level graphs only.
		consulted = slices.DeleteFunc(slices.Clone(consulted), func(id string) bool { return id == opschema.DiffDynamoUnchecked26 })
	}
	if slices.Contains(consulted, opschema.DiffExportTraining26) {
		if lv.exportTraining {
			// A release that exports the training IR unchecked accepts
			// it whatever the other rows say (the alias pass returns first).
			consulted = []string{opschema.DiffExportTraining26}
		} else {
			consulted = slices.DeleteFunc(slices.Clone(consulted), func(id string) bool { return id == opschema.DiffExportTraining26 })
		}
	}
	var out []string
	for _, d := range opschema.TorchDifferences() {
		if !slices.Contains(consulted, d.ID) {
			continue
		}
		all := func(vs []string, want bool) bool {
			for _, v := range vs {
				if d.Torch.Holds(v) != want {
					return false
				}
			}
			return true
		}
		if (all(yes, true) && all(no, false)) || (all(yes, false) && all(no, true)) {
			out = append(out, d.ID)
		}
	}
	return out
}
