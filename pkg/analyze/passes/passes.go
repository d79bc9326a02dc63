// Package passes lists hopctl's analyzers. Each lives in its own
// subpackage; All is the suite `hopctl lint` runs.
package passes

import (
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopargs"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopmeta"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopstruct"
	"github.com/hopctl/hopctl/pkg/analyze/passes/schemacheck"
	"github.com/hopctl/hopctl/pkg/analyze/passes/sigmut"
)

// All returns every analyzer, in the order they run on a graph.
func All() []*analyze.Analyzer {
	return []*analyze.Analyzer{alias.Analyzer, hopmeta.Analyzer, hopstruct.Analyzer, hopargs.Analyzer, schemacheck.Analyzer, sigmut.Analyzer}
}
