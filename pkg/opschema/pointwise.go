package opschema

import (
	_ "embed"
	"strings"
	"sync"
)

// atenPointwise214 is every aten overload torch 2.14 tags torch.Tag.pointwise,
// one "aten::name.overload" a line after a '#' header. Regenerate it with
//
//	scripts/torch.sh 2.14 -- python3 python/tools/dump_pointwise.py pkg/opschema/aten_pointwise_2.14.txt
//
//go:embed aten_pointwise_2.14.txt
var atenPointwise214 string

var pointwiseSet = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, line := range strings.Split(atenPointwise214, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			set[line] = true
		}
	}
	return set
})

// IsPointwise reports whether torch tags the op torch.Tag.pointwise (the
// test of torch/_inductor/utils.py is_pointwise_use, which
// associative_scan's pointwise check applies). Targets are in any spelling
// ParseTarget accepts; ops outside the list, and targets that are not ops,
// are not pointwise.
func IsPointwise(target string) bool {
	n, err := ParseTarget(target)
	if err != nil {
		return false
	}
	return pointwiseSet()[n.Key()]
}
