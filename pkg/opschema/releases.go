package opschema

import (
	"fmt"
	"slices"
	"strings"
)

// VerifiedReleases are the torch releases whose rules hopctl checked
// against the real release: Debian's 2.6.0 and 2.14.1 (testdata/hops_real,
// testdata/releases) and 1.13.1 (the partitioner corpus).
var VerifiedReleases = []string{"1.13", "2.6", "2.14"}

// TableReleases returns the releases of the version table, oldest first:
// the verified releases and every bound of a row. Between two of them
// every row holds or fails alike, so they are the releases a run can tell
// apart: what --torch-version supported and a range select.
func TableReleases() []string {
	set := map[string]bool{}
	for _, v := range VerifiedReleases {
		set[v] = true
	}
	for _, d := range torchDifferences {
		for _, b := range []string{d.Torch.From, d.Torch.Until} {
			if v := NormalizeTorchVersion(b); v != "" {
				set[v] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	SortReleases(out)
	return out
}

// SortReleases sorts "major.minor" releases oldest first.
func SortReleases(vs []string) {
	slices.SortFunc(vs, func(a, b string) int {
		x, _ := parseVersion(a)
		y, _ := parseVersion(b)
		return compareVersions(x, y)
	})
}

// ParseTorchReleases reads a --torch-version / input.torch-version value:
// "" (the file's release, else the newest: nil), one release "2.6", a
// list "2.6,2.14", a range "2.6..2.14" (its bounds and the version table's
// releases between them: the releases in it hopctl tells apart), or
// "supported" (supported, when the project sets input.torch-supported,
// else the version table's releases). Lists may mix releases and ranges.
// The result is "major.minor" releases, oldest first, each once.
func ParseTorchReleases(spec, supported string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "supported":
			if strings.TrimSpace(supported) == "" {
				for _, v := range TableReleases() {
					set[v] = true
				}
				continue
			}
			if strings.Contains(supported, "supported") {
				return nil, fmt.Errorf("invalid supported releases %q (they cannot name \"supported\")", supported)
			}
			vs, err := ParseTorchReleases(supported, "")
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				set[v] = true
			}
		case strings.Contains(part, ".."):
			lo, hi, _ := strings.Cut(part, "..")
			a, okA := parseRelease(lo)
			b, okB := parseRelease(hi)
			if !okA || !okB {
				return nil, fmt.Errorf("invalid release range %q (want X.Y..X.Y, e.g. 2.6..2.14)", part)
			}
			x, _ := parseVersion(a)
			y, _ := parseVersion(b)
			if compareVersions(x, y) > 0 {
				return nil, fmt.Errorf("invalid release range %q (the first release is newer than the second)", part)
			}
			set[a], set[b] = true, true
			for _, v := range TableReleases() {
				z, _ := parseVersion(v)
				if compareVersions(x, z) <= 0 && compareVersions(z, y) <= 0 {
					set[v] = true
				}
			}
		default:
			v, ok := parseRelease(part)
			if !ok {
				return nil, fmt.Errorf("invalid release %q (want major.minor such as 2.6, a list 2.6,2.14, a range 2.6..2.14 or supported)", part)
			}
			set[v] = true
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	SortReleases(out)
	return out, nil
}

// parseRelease reads one "major.minor[.patch]" release as "major.minor".
func parseRelease(s string) (string, bool) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return NormalizeTorchVersion(s), true
}

// DifferingRows returns the version table rows that hold in some of
// releases and not in others, in table order: the rule changes a finding
// reported in only some of them can come from.
func DifferingRows(releases []string) []TorchDifference {
	var out []TorchDifference
	for _, d := range torchDifferences {
		holds, fails := false, false
		for _, v := range releases {
			if d.Torch.Holds(v) {
				holds = true
			} else {
				fails = true
			}
		}
		if holds && fails {
			out = append(out, d)
		}
	}
	return out
}

// rowsOfRule lists, per analysis rule id, the version table rows its
// checks consult (the TorchDiffers calls of pkg/analyze/passes and the HOP
// table's bounds): the rule changes that can make one of its findings
// appear in some releases only.
var rowsOfRule = map[string][]string{
	"hop-input-alias":    {DiffExportTraining26, DiffAliasInputOnly, DiffDynamoUnchecked26, DiffScanAlias26, DiffInvokeSubgraph26},
	"hop-input-mutation": {DiffExportTraining26, DiffDynamoUnchecked26, DiffInvokeSubgraph26},
	"hop-meta-mismatch":  {DiffWhileMeta26, DiffScanCarry26, DiffCondSameMetadata},
	"hop-structure": {DiffDynamoUnchecked26, DiffCondSameMetadata, DiffMapOutputs26, DiffAssocSparse26,
		DiffScanXsLength26, DiffScanZeroLength26},
	"hop-call": {DiffScanForm26},
}

// rowHOPs are the HOPs a row is about, for the rows about some only.
var rowHOPs = map[string][]string{
	DiffScanAlias26: {"scan"}, DiffScanXsLength26: {"scan"}, DiffScanZeroLength26: {"scan"}, DiffScanCarry26: {"scan"},
	DiffScanForm26: {"scan"}, DiffInvokeSubgraph26: {"invoke_subgraph"}, DiffCondSameMetadata: {"cond"},
	DiffMapOutputs26: {"map", "map_impl"}, DiffAssocSparse26: {"associative_scan"}, DiffWhileMeta26: {"while_loop"},
}

// RowsOfRule returns the version table rows rule's checks consult at a
// node of op target ("higher_order.cond", torch.cond at the Dynamo level;
// "" any).
func RowsOfRule(rule, target string) []string {
	name := target[strings.LastIndex(target, ".")+1:]
	var out []string
	for _, id := range rowsOfRule[rule] {
		if hops, ok := rowHOPs[id]; ok && target != "" && !slices.Contains(hops, name) {
			continue
		}
		out = append(out, id)
	}
	return out
}
