// Package explain implements `hopctl explain RULE`, the rule help that
// `ruff rule X` gives: what a rule checks, the PyTorch check it mirrors, a
// program that triggers it and the fix. The text is the lint rule table's
// (pkg/lint, the source docs/lint-rules.md is generated from); only the
// PyTorch side is kept here, in mirrors.
package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/lint"
)

// Options are the inputs of `hopctl explain`.
type Options struct {
	IO   *iostreams.IOStreams
	Rule string
}

// NewCmdExplain returns the explain command; runF replaces explainRun in
// tests.
func NewCmdExplain(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	var ids []string
	for _, r := range lint.Rules() {
		ids = append(ids, r.ID)
	}
	cmd := &cobra.Command{
		Use:   "explain RULE",
		Short: "Explain a lint rule: what it checks, the PyTorch check it mirrors, a trigger and its fix",
		Long: `Explain a rule of 'hopctl lint': what it checks, the PyTorch check it
mirrors, a program that triggers it and how to fix it. Every finding ends
with its rule id; 'hopctl lint --list-rules' lists them all.`,
		Example: `  hopctl explain hop-input-mutation
  hopctl lint --list-rules`,
		Args:      cmdutil.ExactArgs(1, "RULE"),
		ValidArgs: ids,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Rule = args[0]
			if _, ok := lint.LookupRule(opts.Rule); !ok {
				msg := fmt.Sprintf("explain: unknown rule %q", opts.Rule)
				if s := closest(opts.Rule, ids); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return cmdutil.FlagErrorf("%s; 'hopctl lint --list-rules' lists the rules", msg)
			}
			if runF != nil {
				return runF(opts)
			}
			return explainRun(opts)
		},
	}
	cmdutil.DisableConfig(cmd)
	return cmd
}

func explainRun(opts *Options) error {
	r, _ := lint.LookupRule(opts.Rule)
	return Write(opts.IO.Out, r)
}

// Write prints r's explanation, in Markdown as the rule table holds it.
func Write(w io.Writer, r lint.Rule) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s): %s\n\nSeverity %s, category %s", r.ID, r.Name, r.Short, r.Severity, r.Category)
	if r.Invalid {
		b.WriteString("; a finding makes the file invalid input (exit 3)")
	}
	fmt.Fprintf(&b, ".\n\n%s\n\n## PyTorch\n\n%s\n\n", r.Doc, mirrors[r.ID])
	fmt.Fprintf(&b, "## Trigger\n\n%s\n\n## Fix\n\n%s\n\nMore: %s\n", strings.TrimSpace(r.Example), sentence(r.Fix), r.HelpURI())
	_, err := io.WriteString(w, b.String())
	return err
}

// sentence is a rule's fix as a sentence of its own: the table's fixes
// start lower case, as they follow "help: " and "Fix: ".
func sentence(fix string) string {
	if fix == "" {
		return fix
	}
	return strings.ToUpper(fix[:1]) + fix[1:]
}

// closest returns the rule id nearest to typed in edit distance, if it is
// near enough to be a typo (at most a third of the id), else "".
func closest(typed string, ids []string) string {
	best, bestD := "", -1
	for _, id := range ids {
		if d := cmdutil.EditDistance(strings.ToLower(typed), id); bestD < 0 || d < bestD {
			best, bestD = id, d
		}
	}
	if bestD < 0 || bestD > max(2, len(best)/3) {
		return ""
	}
	return best
}

// mirrors says, for every rule id of the table, which check of PyTorch the
// rule makes statically: where torch raises (or would need to) when it
// traces, exports or runs the same program. Paths are in the torch source
// tree.
var mirrors = map[string]string{
	"hop-input-mutation": "torch/_higher_order_ops/utils.py, _check_alias_and_mutation (torch 2.14, on " +
		"check_input_alias_and_mutation's result; _has_potential_branch_input_mutation in 2.6), which a HOP calls when it " +
		"traces or functionalizes a subgraph: \"<name> might be modifying the input!\".",
	"hop-input-alias": "torch/_higher_order_ops/utils.py, _check_alias_and_mutation (torch 2.14; " +
		"_has_potential_branch_input_alias in 2.6): \"<name> might be aliasing the input or the output!\".",
	"hop-meta-mismatch": "torch/_higher_order_ops/utils.py, check_meta_consistency (torch 2.14; 2.6's while_loop has " +
		"check_outputs_carry_consistency), which while_loop (carried inputs vs body_fn's outputs), scan (init vs carry) and " +
		"associative_scan (first xs slices vs combine_fn's outputs) call when they trace.",
	"hop-structure": "The HOPs' own tracing checks: cond's trace_cond and _merge_output (torch/_higher_order_ops/cond.py), " +
		"while_loop's _validate_cond_output (while_loop.py), map() (map.py), scan's and associative_scan's _validate_input " +
		"(scan.py, associative_scan.py) and is_pointwise_use (torch/_inductor/utils.py) for a pointwise combine_fn.",
	"hop-arg-type": "torch/_higher_order_ops/utils.py, validate_subgraph_args_types: a HOP's lifted operands may only be " +
		"Tensor, int or SymInt.",
	"hop-call": "Calling a HOP's subgraph with its operands, as the HOP does when it runs or traces (an FX GraphModule called " +
		"with the wrong number of arguments raises TypeError), and the HOPs' input checks (e.g. _validate_input in " +
		"torch/_higher_order_ops/cond.py).",
	"signature-mutation": "torch.export's verifier (torch/_export/verifier.py): in the ATen dialect every op must be functional " +
		"(SpecViolationError \"operator '<op>' is not functional\"), and _verify_exported_program_signature checks the " +
		"mutation output specs against the graph's outputs.",
	"unknown-op": "The alias annotations of the op's registered schema (OpOverload._schema, from TORCH_LIBRARY or " +
		"torch.library.define), which functionalization and check_input_alias_and_mutation trust; hopctl reads the same " +
		"schema from the file's table or its built-in ATen table.",
	"schema-arity": "Binding a call of an OpOverload to its schema (createStackForSchema, torch/csrc/jit/python/pybind_utils.cpp): " +
		"\"<op>() takes N positional argument(s) but M were given\", \"Unknown keyword argument\", " +
		"\"<op>() is missing value for argument '<name>'\".",
	"schema-arg-type": "Binding a call of an OpOverload to its schema (createStackForSchema, " +
		"torch/csrc/jit/python/pybind_utils.cpp): \"Expected a value of type '<type>' for argument '<name>' but instead found type '<type>'\".",
	"bad-schema": "torch._C.parse_schema (torch/csrc/jit/frontend/function_schema_parser.cpp), which parses every schema " +
		"torch registers; hopctl's table holds str(op._schema), which it must parse back.",
	"use-before-def": "torch.fx.Graph.lint (torch/fx/graph.py): \"Argument '<arg>' of Node '<node>' was used before it has " +
		"been defined! Please check that Nodes in the graph are topologically ordered\".",
	"dangling-ref": "torch.fx.Graph.lint (torch/fx/graph.py): \"Argument '<arg>' of Node '<node>' does not belong to this " +
		"Graph, but was used as an argument!\".",
	"duplicate-name": "torch.fx.Graph.lint (torch/fx/graph.py): \"Node redefined name <name>!\"; FX names are unique in a " +
		"graph, as are a module's attribute names.",
	"missing-output": "torch.fx.Graph.output_node (torch/fx/graph.py): \"Expected output node, got op=<op>\"; without an " +
		"output node the GraphModule's forward returns None.",
	"extra-output": "torch.fx.Graph.output_node (torch/fx/graph.py), which takes the last node as the output: nodes after " +
		"it, or a second output node, are code FX never runs.",
	"cycle": "torch.fx.Graph.lint's topological-order check (torch/fx/graph.py): a node that uses itself, or a cycle, is " +
		"used before it has been defined; subgraphs calling each other would recurse forever.",
	"missing-attr": "torch.fx.Graph.lint with an owning module (torch/fx/graph.py): \"Node <node> target <target> references " +
		"nonexistent attribute <atom> of <qualname>\".",
	"malformed-node": "torch.fx.Graph.lint (torch/fx/graph.py): \"Node <node> had unknown opcode <op>!\"; an FX node has a " +
		"name and one of the six opcodes.",
	"impossible-shape": "Creating the tensor the value records (torch.empty, or its fake tensor): \"Trying to create tensor " +
		"with negative dimension <d>\" (check_size_nonnegative, aten/src/ATen/EmptyTensor.cpp), or an element count that " +
		"overflows int64.",
}
