// Package load opens graph files: the one way every hopctl command reads
// its input. Open decodes a file (ir.LoadFile: hopctl's three encodings
// and the formats registered with it), verifies its structure (ir.Verify),
// builds its schema registry (the file's schema table over the built-in
// ATen table and the HOP convention table) and checks its calls against
// their schemas and subgraphs (package validate).
//
// In Strict mode — every command but lint — a file that fails any of these
// is refused with an ir.InputError naming file, graph and node (exit 3),
// so every command accepts and refuses the same files by construction. In
// Lenient mode — lint, which reports why a file is invalid rule by rule —
// the defects come back as Problems beside the module, as long as the file
// decodes.
package load

import (
	"errors"
	"fmt"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/validate"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// Mode says what Open does with a file that decodes but is invalid.
type Mode int

// The modes.
const (
	// Strict refuses an invalid file: Open returns an ir.InputError.
	Strict Mode = iota
	// Lenient returns an invalid file's defects as File.Problems. A file
	// that fails ir.Verify gets only its structure problems (nothing else
	// can be judged on it, and Registry is nil); otherwise the problems
	// are its schema table's (ir.ProblemSchema). Calls that do not fit
	// their schemas are not checked: lint's analyzers report them.
	Lenient
)

// File is an opened graph file.
type File struct {
	Path   string
	Module *ir.Module
	// Registry resolves the module's call targets: its own schema table,
	// then the built-in tables. Nil only for a Lenient file that failed
	// ir.Verify.
	Registry *opschema.Registry
	// Problems are a Lenient file's defects, in the order found; always
	// empty in Strict mode.
	Problems []ir.Problem
	// Verified is false for a Lenient file that failed ir.Verify.
	Verified bool
}

// Invalid reports whether the file has defects (Lenient mode).
func (f *File) Invalid() bool { return len(f.Problems) > 0 }

// Open reads, decodes and checks the graph file at path.
func Open(path string, mode Mode) (*File, error) {
	m, err := ir.LoadFile(path)
	if err != nil {
		return nil, err
	}
	return Module(m, path, mode)
}

// Module is Open for a module already decoded from the file at path.
func Module(m *ir.Module, path string, mode Mode) (*File, error) {
	f, err := open(m, path, mode)
	if err != nil || mode == Lenient {
		return f, err
	}
	if err := validate.Check(m, path, f.Registry); err != nil {
		return nil, err
	}
	return f, nil
}

// open verifies the module and builds its registry, without checking its
// calls.
func open(m *ir.Module, path string, mode Mode) (*File, error) {
	f := &File{Path: path, Module: m}
	if err := ir.Verify(m, path); err != nil {
		var ve *ir.VerifyError
		if mode == Strict || !errors.As(err, &ve) {
			return nil, err
		}
		f.Problems = ve.Problems
		return f, nil
	}
	f.Verified = true
	reg, err := opschema.NewRegistryForModule(m)
	f.Registry = reg // usable either way: the entries that parse
	if err != nil {
		if mode == Strict {
			return nil, schemaTableError(path, err)
		}
		f.Problems = append(f.Problems, schemaProblems(path, err)...)
	}
	return f, nil
}

func schemaTableError(path string, err error) error {
	return &ir.DecodeError{Loc: ir.Location{File: path}, Err: fmt.Errorf("schema table: %w", err)}
}

// Registry builds the schema registry of a module read from the file at
// path: its schema table first, then the built-in ATen table of the torch
// version the module records (opschema.BuiltinTableFor) and the HOP
// convention table. A table entry that does not parse is an input error
// naming the file and the entry.
func Registry(m *ir.Module, path string) (*opschema.Registry, error) {
	reg, err := opschema.NewRegistryForModule(m)
	if err != nil {
		return nil, schemaTableError(path, err)
	}
	return reg, nil
}

// schemaProblems turns NewRegistry's joined errors into one problem each.
func schemaProblems(path string, err error) []ir.Problem {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]ir.Problem, len(errs))
	for i, e := range errs {
		out[i] = ir.Problem{Loc: ir.Location{File: path}, Msg: e.Error(), Kind: ir.ProblemSchema}
	}
	return out
}

// Analyze opens path in Strict mode and runs analyzers on the module. It
// is Open followed by analyze.Run: when the checks refuse the file,
// Analyze returns their error as Open does, and the analyzers, which are
// only required to handle valid input, do not run. On a file the checks
// accept, a panic or an error of an analyzer is a bug: an
// *ir.InternalError.
func Analyze(path string, analyzers ...*analyze.Analyzer) (*File, *analyze.Result, error) {
	return AnalyzeWith(path, analyze.Options{}, analyzers...)
}

// AnalyzeWith is Analyze with the analysis run's options (analyze.RunWith).
func AnalyzeWith(path string, opts analyze.Options, analyzers ...*analyze.Analyzer) (*File, *analyze.Result, error) {
	m, err := ir.LoadFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := Module(m, path, Strict)
	if err != nil {
		return nil, nil, err
	}
	res, runErr := analyze.RunWith(m, path, f.Registry, opts, analyzers...)
	var bug *ir.InternalError
	switch {
	case errors.As(runErr, &bug):
		return nil, nil, bug
	case runErr != nil:
		// The checks define what is invalid: an analyzer that cannot
		// finish on a file they accept is a bug, not a refusal. So Analyze
		// refuses exactly the files Open refuses.
		return nil, nil, &ir.InternalError{Phase: "analyze", Loc: ir.Location{File: path}, Err: runErr}
	}
	return f, res, nil
}
