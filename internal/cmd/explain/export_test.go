package explain

import (
	"maps"
	"slices"
)

// MirroredRules are the rule ids mirrors has an entry for.
func MirroredRules() []string { return slices.Sorted(maps.Keys(mirrors)) }
