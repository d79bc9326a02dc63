package opschema

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hopctl/hopctl/pkg/ir"
)

// HOP is one row of the higher-order operator (HOP) convention table: the
// one place hopctl records how a HOP is called and what PyTorch requires of
// it. Every consumer reads the row — schema checking (Schema, FreeKwargs),
// the generic call decoder of package hop (Subgraphs, Op), the alias
// analysis (Restrictions, Outputs), the metadata check (MetaChecks), the
// operand type check (ArgTypeChecks), validation and the joint builder —
// so a new HOP is one row plus the rules no table can hold (its derivative
// in package jointgraph). Every argument is named by its name in Schema;
// TestHOPTableBindsToSchemas checks every name against the schema.
//
// A HOP call is an FX call_function node whose target is
// torch.ops.higher_order.<Name> (spelled "higher_order.<Name>"); its
// subgraphs are get_attr nodes naming GraphModule submodules. HOP calls
// pass their arguments positionally, as make_fx and Dynamo record them. The
// conventions are those of torch/_higher_order_ops/<hop>.py; the rules those
// of torch/_higher_order_ops/utils.py (_check_alias_and_mutation,
// check_meta_consistency, validate_subgraph_args_types).
type HOP struct {
	// Name is the HOP's name; its target is "higher_order." + Name.
	Name string
	// Doc says in a line what the HOP does.
	Doc string
	// Schema is the calling convention in the schema language, with the
	// argument names torch's gen_schema uses where it has one. Subgraphs
	// and operators are typed Any (as in gen_schema); a trailing `...`
	// takes the HOP's variadic operands. Alias annotations are absent on
	// purpose: a HOP's aliasing and mutation come from its subgraphs.
	Schema string
	// Subgraphs are the subgraphs a call runs, in the order the analyses
	// visit them.
	Subgraphs []Subgraph
	// Op names the argument holding an operator (an OpOverload or a HOP)
	// the HOP applies to its other arguments, or is "". with_effects and
	// auto_functionalized have one.
	Op string
	// AppliesOp is set when the HOP runs Op on the arguments after it with
	// the op's own aliasing and writes (with_effects: the result is
	// (new_token, *op_results)); unset for a HOP with an Op, the HOP is
	// functional: its outputs are fresh and it writes nothing
	// (auto_functionalized).
	AppliesOp bool
	// Opaque is set when the row names the subgraph arguments but records
	// no operand convention: calls are not decoded, and the alias analysis
	// reports the HOP as an op it does not know (flex_attention_backward).
	Opaque bool
	// FreeKwargs is set when the node may carry keyword arguments beyond
	// the schema's (the op's own arguments for auto_functionalized,
	// checkpoint options for tag_activation_checkpoint, scheme= for
	// invoke_quant).
	FreeKwargs bool
	// MetaChecks are the check_meta_consistency calls PyTorch makes at a
	// call site of the HOP.
	MetaChecks []MetaCheck
	// ArgTypeChecks are the validate_subgraph_args_types calls (and
	// equivalent operand checks) PyTorch makes at a call site.
	ArgTypeChecks []ArgTypeCheck
	// OlderForms are calling conventions older torch releases write, with
	// the same argument names for everything the row reads (torch 2.6's
	// scan also passes dim and reverse; its invoke_subgraph passes its
	// operands as one tuple). A call follows the first older form whose
	// arguments it fits, argument for argument (hop.Fits: as many, and of
	// the kinds the form's int, bool, str and list arguments say), else
	// Schema ([HOP.OlderRows], hop.Lookup).
	OlderForms []CallForm

	schema *Schema // Schema, parsed
	// implied is the Implied of the older form this row reads (OlderRows).
	implied map[string]string
}

// CallForm is an older calling convention of a HOP.
type CallForm struct {
	// Schema is the convention, in the schema language. Where the current
	// form spreads a list into variadic arguments and this form passes the
	// list itself (torch 2.6's invoke_subgraph(subgraph, identifier,
	// operands), a tuple; current torch's invoke_subgraph(subgraph,
	// identifier, *operands)), the list argument has the variadic group's
	// name without its "*": the row reading this form reads the group
	// "*operands" as the list "operands" (olderRow).
	Schema string
	// Torch are the releases that write calls in this form.
	Torch TorchVersions
	// Implied are the form's arguments the current form has no place for,
	// with the one value (a Python literal) the current form implies:
	// torch 2.6's scan over dim 0, not reversed. A consumer that reads
	// such a call as the current form refuses other values
	// (hop.CheckImplied).
	Implied map[string]string
	row     *HOP // the row with Schema in place of the HOP's
}

// Implied returns the Implied arguments of the older form h reads
// (OlderRows); nil for a HOP's own row.
func (h *HOP) Implied() map[string]string { return h.implied }

// OlderRows returns the rows that read calls in h's older forms
// (OlderForms), in order: h with the form's schema, its variadic operand
// groups read from the form's list argument of that name. Which form a
// call follows is decided by its arguments (hop.Lookup).
func (h *HOP) OlderRows() []*HOP {
	var out []*HOP
	for i := range h.OlderForms {
		if r := h.OlderForms[i].row; r != nil && r.schema != nil {
			out = append(out, r)
		}
	}
	return out
}

// buildForms parses the older forms of h and makes their rows.
func buildForms(h *HOP) error {
	var errs []error
	for i := range h.OlderForms {
		f := &h.OlderForms[i]
		fs, err := Parse(f.Schema)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: older form: %w", h.Name, err))
			continue
		}
		r := olderRow(h, f, fs)
		f.row = &r
	}
	return errors.Join(errs...)
}

// olderRow is the row reading calls in older form f of h (schema fs): h
// with f's schema, and every "*name" operand group and argument type
// check naming the list argument name where fs has one.
func olderRow(h *HOP, f *CallForm, fs *Schema) HOP {
	r := *h
	r.Schema, r.schema, r.OlderForms, r.implied = f.Schema, fs, nil, f.Implied
	listed := func(a string) string {
		if strings.HasPrefix(a, "*") && fs.Argument(a[1:]) >= 0 {
			return a[1:]
		}
		return a
	}
	r.Subgraphs = slices.Clone(h.Subgraphs)
	for i := range r.Subgraphs {
		ops := slices.Clone(r.Subgraphs[i].Operands)
		for k := range ops {
			ops[k].Arg = listed(ops[k].Arg)
		}
		r.Subgraphs[i].Operands = ops
	}
	r.ArgTypeChecks = slices.Clone(h.ArgTypeChecks)
	for i := range r.ArgTypeChecks {
		args := slices.Clone(r.ArgTypeChecks[i].Args)
		for k := range args {
			args[k] = listed(args[k])
		}
		r.ArgTypeChecks[i].Args = args
	}
	return r
}

// Subgraph is one subgraph a HOP call runs.
type Subgraph struct {
	// Arg is the argument holding the subgraph.
	Arg string
	// Last is set when Arg is a tuple whose last element is the subgraph
	// (flex_attention's block_mask ends with the mask_mod graph).
	Last bool
	// Role is the subgraph's name where it is not Arg (mask_mod); see
	// [Subgraph.RoleName].
	Role string
	// Optional is set when a call may lack the subgraph (a block_mask
	// without a mask_mod); a missing required subgraph makes the call
	// malformed.
	Optional bool
	// Name is PyTorch's name for the subgraph in its alias and mutation
	// messages: "cond_true", "body_fn", "scan".
	Name string
	// Operands are the groups of values fed to the subgraph's
	// placeholders, in placeholder order.
	Operands []Operands
	// Outputs says which HOP outputs this subgraph's outputs become; nil
	// when they are none (while_loop's cond_fn, flex_attention's mods).
	Outputs *Outputs
	// Restrictions are what PyTorch rejects in the subgraph.
	Restrictions []Restriction
}

// RoleName returns Role, or Arg when Role is empty.
func (s *Subgraph) RoleName() string {
	if s.Role != "" {
		return s.Role
	}
	return s.Arg
}

// Operands is one group of values a HOP call feeds to consecutive
// placeholders of a subgraph.
type Operands struct {
	// Arg is the list argument whose elements are the values, or
	// "*name" for the call's variadic arguments (the schema's `...`,
	// named as PyTorch's Python signature names them: "*operands"), or ""
	// when the HOP makes Made values itself.
	Arg string
	// Made is the number of placeholders the HOP fills with values it
	// makes itself (flex_attention's score and indices) when Arg is "".
	Made int
	// Sliced is set when each placeholder receives a slice of the value
	// (scan and map xs): writes to it still write the value's storage, but
	// two slices are not aliases.
	Sliced bool
	// Optional is set when a call may omit Arg (the group is then empty);
	// otherwise a missing argument makes the call malformed.
	Optional bool
	// Lenient is set when an Arg that is not a list or tuple gives an empty
	// group instead of making the call malformed (flex_attention's buffers,
	// which the schema check judges).
	Lenient bool
}

// Outputs maps a HOP's outputs to a subgraph's outputs.
type Outputs struct {
	// Count names the list argument whose element count is the number of
	// HOP outputs the subgraph's outputs produce (while_loop's
	// carried_inputs, scan's init); "" means every output of the call (the
	// length of its recorded value).
	Count string
	// Fresh is set when those outputs are new tensors (stacked, cloned)
	// rather than the subgraph's outputs passed through: HOP output j is
	// subgraph output j.
	Fresh bool
	// RestFresh is set when the call's outputs past Count's are fresh
	// tensors (scan's stacked ys).
	RestFresh bool
}

// RestrictionKind is what a restriction forbids.
type RestrictionKind int

// Restriction kinds.
const (
	ForbidMutation RestrictionKind = iota + 1 // "<name> might be modifying the input!"
	ForbidAlias                               // "<name> might be aliasing the input or the output!"
)

// Restriction is one thing PyTorch rejects in a subgraph
// (_check_alias_and_mutation and its variants).
type Restriction struct {
	Kind RestrictionKind
	// Message replaces PyTorch's usual wording where it words this check
	// differently ("Mutations detected in score_mod").
	Message string
	// Torch is the torch releases the restriction holds for.
	Torch TorchVersions
	// NoGrad is what torch.compile makes of the restriction at the Dynamo
	// level (a graph with torch-level targets, see analyze.DynamoLevel)
	// when grad is disabled (no_grad, inference_mode): torch 2.14's Dynamo
	// sets supports_input_mutation (cond also supports_aliasing) to
	// `not torch.is_grad_enabled()` for cond, while_loop, scan and map
	// (torch/_dynamo/variables/higher_order_ops.py). Nil: as with grad
	// enabled, Dynamo refuses it in its words (DynamoMutationMessage,
	// DynamoAliasMessage).
	NoGrad *NoGradRule
	// DynamoAccepts names a row of the version table (TorchDifferences)
	// whose releases accept, at the Dynamo level and in every grad mode,
	// what this restriction forbids at the make_fx level; "" for none.
	DynamoAccepts string
	// DynamoOnly is set when only Dynamo makes the check, on a Dynamo-level
	// graph under a release whose Dynamo checks HOP subgraphs (2.14): a
	// BaseHOP's make_fx-level tracing assumes its subgraph neither writes
	// nor aliases its operands ("In the PT2 stack, this is Dynamo's
	// responsibility to figure out", torch/_higher_order_ops/base_hop.py)
	// and functionalizes writes (auto_functionalized_v2), so make_fx and
	// AOT-level graphs are not refused.
	DynamoOnly bool
}

// NoGradRule is how torch.compile treats a restriction at the Dynamo
// level when grad is disabled (torch 2.14).
type NoGradRule struct {
	// Allows are the operand groups (Operands.Arg) the subgraph may write:
	// Dynamo records the writes (mutated_arg_indices) and AOTAutograd
	// functionalizes the call.
	Allows []string
	// Message is the refusal of what remains, where Dynamo words it
	// itself ("torch.scan: combine_fn mutates init or xs"); "" when Dynamo
	// lets it through and AOTAutograd's functionalization refuses it with
	// the make_fx-level message.
	Message string
}

// Dynamo's refusals (torch 2.14's check_aliasing_and_input_mutation,
// torch/_dynamo/variables/higher_order_ops.py; the graph-break type that
// heads its message).
const (
	DynamoMutationMessage = "Encountered input mutation during higher order op tracing"
	DynamoAliasMessage    = "Encountered aliasing during higher order op tracing"
)

// MetaCheck is one check_meta_consistency call: the values of the lhs
// argument against the outputs of a subgraph.
type MetaCheck struct {
	// LHS and RHS are PyTorch's names of the two lists in its message.
	LHS, RHS string
	// Arg is the list argument whose elements' values are the lhs.
	Arg string
	// FirstSlice is set when the lhs is each element's first slice along
	// dim 0 (torch.select_copy(x, 0, 0)), as associative_scan's init is.
	FirstSlice bool
	// Subgraph is the role ([Subgraph.RoleName]) of the subgraph whose
	// outputs (pytree leaves) are the rhs.
	Subgraph string
	// Carries is set when the rhs is the first len(lhs) outputs only
	// (scan's carry); otherwise every output.
	Carries bool
	// Requires names an argument that must be present and a list for the
	// check to apply (associative_scan's newer form has
	// additional_inputs), or is "".
	Requires string
	// Lists is set when PyTorch compares lists it builds itself, printed
	// as lists, rather than the call's tuple and the subgraph's output
	// tuple.
	Lists bool
	// IncludeContiguity is check_meta_consistency's include_contiguity.
	IncludeContiguity bool
	// LengthMessage, when set, replaces the length mismatch message: PyTorch
	// asserts the count first. It is a format taking the two counts.
	LengthMessage string
	// Torch is the torch releases that make the check.
	Torch TorchVersions
	// DynamoLHS and DynamoRHS are the names Dynamo gives the two lists
	// when it makes the same check on a Dynamo-level graph
	// (check_meta_consistency_vt, torch/_dynamo/variables/higher_order_ops.py);
	// "" where they are LHS and RHS. DynamoSwap is set when Dynamo passes
	// them the other way round (while_loop: body_fn_output first).
	DynamoLHS, DynamoRHS string
	DynamoSwap           bool
	// Carry26 is set for torch 2.6's while_loop form of the check
	// (check_outputs_carry_consistency): pairs zipped, so different counts
	// pass; requires_grad and memory_format compared too; one line per
	// differing pair, its fields joined by ",", under "Expected <LHS> and
	// <RHS> return tensors with same metadata but found:".
	Carry26 bool
	// Init26 is set for torch 2.6's scan form of the check (trace_scan):
	// pairs zipped, so different counts pass; device, dtype and shape
	// compared; the first differing pair raises "Expected metadata of the
	// combine_fn result <the carry's TensorMetadata> to be the same as the
	// metadata of init with <the init>".
	Init26 bool
}

// ArgTypeCheck is one validate_subgraph_args_types call: the elements of
// its arguments, concatenated, may only be Tensor, int or SymInt.
type ArgTypeCheck struct {
	// Args are the list arguments checked together, or one "*name" for the
	// variadic arguments. The check does not apply when one is missing or
	// not a list.
	Args []string
	// Opaque also allows Generator and script objects (invoke_subgraph).
	Opaque bool
	// Message, when set, is PyTorch's own wording of the check, a format
	// taking the operands' list; otherwise validate_subgraph_args_types'
	// message.
	Message string
	// Torch is the torch releases that make the check.
	Torch TorchVersions
}

// TorchVersions is the range of torch releases a rule holds for: From
// (inclusive) to Until (exclusive), each "major.minor". An empty bound is
// open; the zero value holds for every release.
type TorchVersions struct {
	From, Until string
}

// Holds reports whether the range includes release version ("2.6",
// "2.6.0"); "" stands for the newest release, which every range without
// an upper bound includes.
func (v TorchVersions) Holds(version string) bool {
	if version == "" {
		return v.Until == ""
	}
	x, ok := parseVersion(version)
	if !ok {
		return v.Until == ""
	}
	if lo, ok := parseVersion(v.From); ok && compareVersions(x, lo) < 0 {
		return false
	}
	if hi, ok := parseVersion(v.Until); ok && compareVersions(x, hi) >= 0 {
		return false
	}
	return true
}

// parseVersion parses "major.minor[.patch...]" into its first two numbers.
func parseVersion(s string) ([2]int, bool) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	var v [2]int
	for i := range v {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return [2]int{}, false
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// Target returns the HOP's target spelling, "higher_order.<Name>".
func (h *HOP) Target() string { return HOPTarget(h.Name) }

// HOPTarget returns the target spelling of the HOP named name,
// "higher_order.<name>".
func HOPTarget(name string) string { return HigherOrderNamespace + "." + name }

// HOPName returns the HOP name of a target in hopctl's canonical spelling
// ("higher_order.cond" → "cond"), and false for targets of other ops.
func HOPName(target string) (string, bool) {
	name, ok := strings.CutPrefix(target, HigherOrderNamespace+".")
	return name, ok && name != ""
}

// IsHOPTarget reports whether a call_function target names a higher-order
// operator.
func IsHOPTarget(target string) bool {
	_, ok := HOPName(target)
	return ok
}

// ParsedSchema returns Schema parsed, or nil if it does not parse (a bug the
// package tests rule out).
func (h *HOP) ParsedSchema() *Schema {
	hopsOnce.Do(parseHOPs)
	return h.schema
}

// ArgIndex returns the position of the argument named name in the HOP's
// schema, or -1. For "*name" it returns the position of the variadic
// arguments (the number of named arguments) when the schema ends in `...`.
func (h *HOP) ArgIndex(name string) int {
	s := h.ParsedSchema()
	if s == nil || name == "" {
		return -1
	}
	if strings.HasPrefix(name, "*") {
		if !s.IsVararg {
			return -1
		}
		return len(s.Arguments)
	}
	return s.Argument(name)
}

// IsSubgraphArg reports whether positional argument i holds a subgraph (or,
// for Last, a tuple ending in one).
func (h *HOP) IsSubgraphArg(i int) bool {
	return slices.ContainsFunc(h.Subgraphs, func(s Subgraph) bool { return h.ArgIndex(s.Arg) == i })
}

// Subgraph returns the subgraph whose role ([Subgraph.RoleName]) is role.
func (h *HOP) Subgraph(role string) (*Subgraph, bool) {
	for i := range h.Subgraphs {
		if h.Subgraphs[i].RoleName() == role {
			return &h.Subgraphs[i], true
		}
	}
	return nil, false
}

// Shorthands for the table.
var (
	forbidBoth  = []Restriction{{Kind: ForbidMutation}, {Kind: ForbidAlias}}
	forbidAlias = []Restriction{{Kind: ForbidAlias}}
	// cond: with grad disabled Dynamo lets a branch write and alias its
	// operands; AOTAutograd functionalizes the writes and refuses the
	// aliasing (make_fx's words). torch 2.6 accepts the writes.
	condRestrictions = []Restriction{
		{Kind: ForbidMutation, NoGrad: &NoGradRule{Allows: []string{"operands"}}, DynamoAccepts: DiffDynamoUnchecked26},
		{Kind: ForbidAlias, NoGrad: &NoGradRule{}},
	}
	passThrough    = &Outputs{}
	freshOutputs   = &Outputs{Fresh: true}
	whileOperands  = []Operands{{Arg: "carried_inputs"}, {Arg: "additional_inputs"}}
	whileArgChecks = []ArgTypeCheck{{Args: []string{"carried_inputs"}}, {Args: []string{"additional_inputs"}}}
	whileMeta      = []MetaCheck{
		{LHS: "carried_inputs", RHS: "body_output", Arg: "carried_inputs", Subgraph: "body_fn", Torch: TorchVersions{From: rowTorch(DiffWhileMeta26).Until},
			DynamoLHS: "body_fn_output", DynamoRHS: "carried_inputs", DynamoSwap: true},
		{LHS: "carried_inputs", RHS: "body outputs", Arg: "carried_inputs", Subgraph: "body_fn", Torch: rowTorch(DiffWhileMeta26),
			Carry26: true},
	}
)

// whileLoop is the row of while_loop and of while_loop_stack_output, which
// differ in their name and in whether the final carries pass through.
func whileLoop(name, doc string, stacked bool) *HOP {
	// Dynamo relaxes while_loop's rule for grad-disabled programs, not
	// while_loop_stack_output's (its variable keeps supports_input_mutation
	// False); torch 2.6 accepts writes in either.
	r := []Restriction{{Kind: ForbidMutation, DynamoAccepts: DiffDynamoUnchecked26}, {Kind: ForbidAlias}}
	if !stacked {
		r[0].NoGrad = &NoGradRule{Allows: []string{"additional_inputs"}}
	}
	return &HOP{
		Name:   name,
		Doc:    doc,
		Schema: "higher_order::" + name + "(Any cond_fn, Any body_fn, Any carried_inputs, Any additional_inputs, *, str mutated_arg_indices=\"\") -> ...",
		Subgraphs: []Subgraph{
			{Arg: "cond_fn", Name: "cond_fn", Operands: whileOperands, Restrictions: r},
			{Arg: "body_fn", Name: "body_fn", Operands: whileOperands, Restrictions: r,
				Outputs: &Outputs{Count: "carried_inputs", Fresh: stacked}},
		},
		MetaChecks:    whileMeta,
		ArgTypeChecks: whileArgChecks,
	}
}

// BaseHOPClass is the qualified name of PyTorch's base class of the HOPs
// that call one subgraph on their operands, BaseHOP
// (torch/_higher_order_ops/base_hop.py, torch 2.7 on), as the bridge
// records a HOP's classes (File.hop_classes).
const BaseHOPClass = "torch._higher_order_ops.base_hop.BaseHOP"

// baseHOPRestrictions are a BaseHOP's: Dynamo's BaseHOPVariable traces the
// subgraph with supports_input_mutation = supports_aliasing = False in
// every grad mode (torch/_dynamo/variables/higher_order_ops.py); the
// make_fx level checks neither (DynamoOnly).
var baseHOPRestrictions = []Restriction{{Kind: ForbidMutation, DynamoOnly: true}, {Kind: ForbidAlias, DynamoOnly: true}}

// baseHOP is the row of a HOP derived from BaseHOP:
// name(subgraph, *operands, **kwargs) runs subgraph(*operands) and returns
// its outputs; the keyword arguments are configuration, not passed to the
// subgraph (base_hop.py's BaseHOP.__call__).
func baseHOP(name, doc string) *HOP {
	return &HOP{
		Name: name, Doc: doc, Schema: "higher_order::" + name + "(Any subgraph, ...) -> ...", FreeKwargs: true,
		Subgraphs: []Subgraph{{Arg: "subgraph", Name: name, Operands: []Operands{{Arg: "*operands"}},
			Outputs: passThrough, Restrictions: baseHOPRestrictions}},
	}
}

// DerivedHOP returns the row of a HOP the table does not know from the
// classes its file records for it (ir.HOPClass): a HOP derived from
// BaseHOP follows BaseHOP's convention and rules. It returns false for
// other classes and for a target that names no HOP.
func DerivedHOP(target string, classes []string) (*HOP, bool) {
	name, ok := HOPName(target)
	if !ok || !slices.Contains(classes, BaseHOPClass) {
		return nil, false
	}
	return baseHOP(name, "A HOP the file records as derived from BaseHOP: calls subgraph(*operands); keyword arguments are configuration."), true
}

// wrapper is the row of a HOP that calls one subgraph on its variadic
// arguments and returns its outputs, with no restrictions.
func wrapper(name, doc, schema, arg string, restrictions []Restriction, freeKwargs bool) *HOP {
	return &HOP{
		Name: name, Doc: doc, Schema: schema, FreeKwargs: freeKwargs,
		Subgraphs: []Subgraph{{Arg: arg, Name: name, Operands: []Operands{{Arg: "*args"}},
			Outputs: passThrough, Restrictions: restrictions}},
	}
}

// hopRows returns the HOP convention table, sorted by name. It is built at
// the table's first use (parseHOPs), not by the package's initialiser: its
// rows' allocations and string concatenations and the writes to the
// package's data were 1.4 % of the processor samples of a resnet18
// `analyze`, which has no HOP (perf record -g over 300 runs).
//
// map_impl, scan and while_loop(_stack_output) take torch 2.14's keyword
// mutated_arg_indices, a comma-separated string of the flat operand indices
// the body writes (torch/_higher_order_ops/{map,scan,while_loop}.py), which
// make_fx records when a body mutates an operand; the alias analysis sees
// those writes through the subgraph itself.
func hopRows() []*HOP {
	return []*HOP{
		{
			Name:   "associative_scan",
			Doc:    "Inclusive scan of xs along dim 0 with an associative combine_fn(*lhs, *rhs, *additional_inputs).",
			Schema: "higher_order::associative_scan(Any combine_fn, Any xs, Any additional_inputs) -> ...",
			Subgraphs: []Subgraph{{
				Arg: "combine_fn", Name: "associative_scan",
				Operands: []Operands{
					{Arg: "xs", Sliced: true}, {Arg: "xs", Sliced: true},
					{Arg: "additional_inputs", Optional: true},
				},
				Outputs: freshOutputs, Restrictions: forbidBoth,
			}},
			MetaChecks: []MetaCheck{{LHS: "init", RHS: "carry", Arg: "xs", FirstSlice: true, Subgraph: "combine_fn",
				Requires: "additional_inputs", Lists: true, DynamoLHS: "initial_xs", DynamoRHS: "combine_fn_output",
				LengthMessage: "expected combine_fn to return %d results but got %d"}},
			// The newer (combine_fn, xs, additional_inputs) form.
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"additional_inputs"}}},
		},
		{
			Name:       "auto_functionalized",
			Doc:        "Functional form of a mutable op: returns (*op_outputs, *new_values_of_mutated_args); the op's arguments are keyword arguments.",
			Schema:     "higher_order::auto_functionalized(Any _mutable_op, ...) -> ...",
			Op:         "_mutable_op",
			FreeKwargs: true,
		},
		{
			Name:       "auto_functionalized_v2",
			Doc:        "Functional form of a mutable op or HOP over deduplicated bases (_all_bases); returns (*op_outputs, *new_bases).",
			Schema:     "higher_order::auto_functionalized_v2(Any _mutable_op, ...) -> ...",
			Op:         "_mutable_op",
			FreeKwargs: true,
		},
		{
			Name:   "cond",
			Doc:    "Runs true_fn(*operands) if pred else false_fn(*operands); branches must not mutate or alias their inputs.",
			Schema: "higher_order::cond(Any pred, Any true_fn, Any false_fn, Any operands) -> ...",
			Subgraphs: []Subgraph{
				{Arg: "true_fn", Name: "cond_true", Operands: []Operands{{Arg: "operands"}}, Outputs: passThrough, Restrictions: condRestrictions},
				{Arg: "false_fn", Name: "cond_false", Operands: []Operands{{Arg: "operands"}}, Outputs: passThrough, Restrictions: condRestrictions},
			},
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"operands"}}},
		},
		{
			Name:   "flex_attention",
			Doc:    "Attention with a score_mod subgraph and a block mask whose last element is the mask_mod subgraph; returns (out, logsumexp[, max_scores]).",
			Schema: "higher_order::flex_attention(Tensor query, Tensor key, Tensor value, Any score_mod, Any block_mask, Any scale, Any kernel_options, Any[] score_mod_other_buffers=[], Any[] mask_mod_other_buffers=[]) -> ...",
			Subgraphs: []Subgraph{
				// score_mod(score, b, h, m, n, *buffers).
				{Arg: "score_mod", Name: "score_mod",
					Operands: []Operands{{Made: 5}, {Arg: "score_mod_other_buffers", Optional: true, Lenient: true}},
					// PyTorch checks score_mod for mutation only.
					Restrictions: []Restriction{{Kind: ForbidMutation, Message: "Mutations detected in score_mod"}}},
				// mask_mod(b, h, m, n, *buffers); checking it is hopctl's addition.
				{Arg: "block_mask", Last: true, Role: "mask_mod", Optional: true, Name: "mask_mod",
					Operands:     []Operands{{Made: 4}, {Arg: "mask_mod_other_buffers", Optional: true, Lenient: true}},
					Restrictions: []Restriction{{Kind: ForbidMutation, Message: "Mutations detected in mask_mod"}}},
			},
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"score_mod_other_buffers", "mask_mod_other_buffers"}}},
		},
		{
			Name:   "flex_attention_backward",
			Doc:    "Backward of flex_attention; returns (grad_query, grad_key, grad_value, grads of score_mod buffers).",
			Schema: "higher_order::flex_attention_backward(Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, Tensor? grad_out, Tensor? grad_logsumexp, Any fw_graph, Any joint_graph, Any block_mask, Any scale, Any kernel_options, Any[] score_mod_other_buffers=[], Any[] mask_mod_other_buffers=[]) -> ...",
			Subgraphs: []Subgraph{
				{Arg: "fw_graph", Name: "fw_graph"},
				{Arg: "joint_graph", Name: "joint_graph"},
				{Arg: "block_mask", Last: true, Role: "mask_mod", Name: "mask_mod"},
			},
			Opaque: true,
		},
		// foreach_map, invoke_quant and invoke_quant_packed are BaseHOPs
		// (torch/_higher_order_ops/base_hop.py, foreach_map.py, _invoke_quant.py).
		baseHOP("foreach_map", "Applies subgraph(*operands) elementwise over lists of tensors (a BaseHOP); keyword arguments pass through."),
		baseHOP("invoke_quant", "Calls subgraph(*operands) as a unit for quantization (a BaseHOP); scheme= is a keyword argument."),
		baseHOP("invoke_quant_packed", "Packed form of invoke_quant (a BaseHOP): subgraph(*operands) with scheme= and quant_options= keyword arguments."),
		{
			Name:   "invoke_subgraph",
			Doc:    "Calls subgraph(*operands); identifier names the (reusable) region. Input mutation is allowed, aliasing is not.",
			Schema: "higher_order::invoke_subgraph(Any subgraph, str? identifier, ...) -> ...",
			Subgraphs: []Subgraph{{Arg: "subgraph", Name: "invoke_subgraph", Operands: []Operands{{Arg: "*operands"}},
				Outputs: passThrough, Restrictions: forbidAlias}},
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"*operands"}, Opaque: true,
				Message: "invoke_subgraph operands must be a list of tensors/ints/SymInts/Generator, got %s"}},
			// torch 2.6 passes the operands as one tuple (its autograd's
			// calls too: ___forward_/___backward_<identifier>).
			OlderForms: []CallForm{{Schema: "higher_order::invoke_subgraph(Any subgraph, str? identifier, Any[] operands) -> ...",
				Torch: rowTorch(DiffInvokeSubgraph26)}},
		},
		{
			Name:   "map_impl",
			Doc:    "Maps f over dim 0 of xs, with pos_args passed whole to every call; stacks the outputs.",
			Schema: "higher_order::map_impl(Any f, Any xs, Any pos_args, *, str mutated_arg_indices=\"\") -> ...",
			Subgraphs: []Subgraph{{Arg: "f", Name: "map",
				Operands: []Operands{{Arg: "xs", Sliced: true}, {Arg: "pos_args"}},
				Outputs:  freshOutputs, Restrictions: []Restriction{
					{Kind: ForbidMutation, NoGrad: &NoGradRule{Allows: []string{"xs"}, Message: "torch.map: f mutates pos_args"}},
					{Kind: ForbidAlias}}}},
		},
		{
			Name:   "scan",
			Doc:    "Scans combine_fn(*carry, *xs[i], *additional_inputs) -> (*next_carry, *y) over dim 0; returns (*final_carry, *stacked_ys).",
			Schema: "higher_order::scan(Any combine_fn, Any init, Any xs, Any additional_inputs, *, str mutated_arg_indices=\"\") -> ...",
			Subgraphs: []Subgraph{{Arg: "combine_fn", Name: "scan",
				Operands: []Operands{{Arg: "init"}, {Arg: "xs", Sliced: true}, {Arg: "additional_inputs"}},
				Outputs:  &Outputs{Count: "init", RestFresh: true}, Restrictions: []Restriction{
					{Kind: ForbidMutation, NoGrad: &NoGradRule{Allows: []string{"additional_inputs"}, Message: "torch.scan: combine_fn mutates init or xs"}},
					{Kind: ForbidAlias, Torch: TorchVersions{From: rowTorch(DiffScanAlias26).Until}}}}},
			MetaChecks: []MetaCheck{{LHS: "init", RHS: "carry", Arg: "init", Subgraph: "combine_fn", Carries: true, Lists: true,
				Torch: TorchVersions{From: rowTorch(DiffScanCarry26).Until}},
				{LHS: "init", RHS: "combine_fn result", Arg: "init", Subgraph: "combine_fn", Carries: true, Lists: true,
					Torch: rowTorch(DiffScanCarry26), Init26: true}},
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"additional_inputs"}}},
			// torch 2.6 slices xs along dim (the HOP gets the user's dim, not
			// 0) and scans backwards when reverse is set.
			OlderForms: []CallForm{{Schema: "higher_order::scan(Any combine_fn, Any init, Any xs, int dim, bool reverse, Any additional_inputs) -> ...",
				Torch: rowTorch(DiffScanForm26), Implied: map[string]string{"dim": "0", "reverse": "False"}}},
		},
		wrapper("tag_activation_checkpoint", "Calls gmod(*args) under activation checkpointing; checkpoint options are keyword arguments.",
			"higher_order::tag_activation_checkpoint(Any gmod, ...) -> ...", "gmod", nil, true),
		whileLoop("while_loop", "while cond_fn(*carried, *additional): carried = body_fn(*carried, *additional); returns the final carries.", false),
		whileLoop("while_loop_stack_output", "while_loop that returns every iteration's carries stacked along a new dim 0 (used by while_loop's backward).", true),
		{
			Name:      "with_effects",
			Doc:       "Runs the side-effecting op(*args, **kwargs) ordered by an effect token; returns (new_token, *op_results).",
			Schema:    "higher_order::with_effects(Tensor token, Any op, ...) -> ...",
			Op:        "op",
			AppliesOp: true,
			// The op's keyword arguments pass through.
			FreeKwargs: true,
		},
		wrapper("wrap_with_autocast", "Calls wrapped_func(*args) under torch.autocast(device_type, dtype, enabled, cache_enabled); export inserts it.",
			"higher_order::wrap_with_autocast(str device_type, ScalarType? dtype, bool enabled, bool? cache_enabled, Any wrapped_func, ...) -> ...",
			"wrapped_func", nil, false),
		wrapper("wrap_with_set_grad_enabled", "Calls wrapped_func(*args) with grad mode set to enable_grad; export inserts it.",
			"higher_order::wrap_with_set_grad_enabled(bool enable_grad, Any wrapped_func, ...) -> ...", "wrapped_func", nil, false),
	}
}

var (
	hopsOnce sync.Once
	hops     []*HOP // hopRows, set by parseHOPs
	hopErrs  []error
)

// parseHOPs builds the table and parses every HOP's schema once; failures
// are kept for the tests.
func parseHOPs() {
	hops = hopRows()
	for _, h := range hops {
		s, err := Parse(h.Schema)
		if err != nil {
			hopErrs = append(hopErrs, err)
			continue
		}
		h.schema = s
		if err := buildForms(h); err != nil {
			hopErrs = append(hopErrs, err)
		}
	}
}

// HOPs returns the HOP convention table, sorted by name. The rows are
// shared: treat them as read-only.
func HOPs() []*HOP {
	hopsOnce.Do(parseHOPs)
	return slices.Clone(hops)
}

// LookupHOP returns the row of the HOP with the given name ("cond").
func LookupHOP(name string) (*HOP, bool) {
	hopsOnce.Do(parseHOPs)
	return findHOP(hops, name)
}

func findHOP(hs []*HOP, name string) (*HOP, bool) {
	i, ok := slices.BinarySearchFunc(hs, name, func(h *HOP, n string) int { return strings.Compare(h.Name, n) })
	if !ok {
		return nil, false
	}
	return hs[i], true
}

// CheckHOP checks a row against its own schema: the schema parses and names
// the HOP, and every argument the row names is one of the schema's (a
// "*name" needs a schema ending in `...`), subgraph arguments are typed Any,
// and the rules refer to subgraphs the row has. It is what a new row must
// pass (TestHOPTableBindsToSchemas runs it on the table).
func CheckHOP(h *HOP) error {
	s, err := Parse(h.Schema)
	if err != nil {
		return fmt.Errorf("%s: schema: %w", h.Name, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{h.Name}, args...)...))
	}
	if s.Namespace != HigherOrderNamespace || s.Name != h.Name || s.Overload != "" {
		bad("schema names %s", s.OpName())
	}
	if s.IsMutable() || len(s.ReturnAliases()) > 0 {
		bad("HOP schemas carry no alias annotations")
	}
	arg := func(what, name string, list bool) {
		switch {
		case strings.HasPrefix(name, "*"):
			if !s.IsVararg || !list {
				bad("%s %q: the schema has no variadic arguments (or they cannot be used here)", what, name)
			}
		case s.Argument(name) < 0:
			bad("%s %q is not an argument of %s", what, name, s.String())
		}
	}
	if h.Opaque && (h.Op != "" || len(h.MetaChecks)+len(h.ArgTypeChecks) > 0) {
		bad("an opaque HOP has no op argument and no rules")
	}
	if h.Op != "" {
		arg("op", h.Op, false)
	} else if h.AppliesOp {
		bad("AppliesOp without an Op argument")
	}
	roles := map[string]bool{}
	for _, sg := range h.Subgraphs {
		arg("subgraph", sg.Arg, false)
		if i := s.Argument(sg.Arg); i >= 0 && s.Arguments[i].Type.Kind != KindAny {
			bad("subgraph argument %s typed %s, want Any", sg.Arg, s.Arguments[i].Type)
		}
		if roles[sg.RoleName()] {
			bad("two subgraphs named %s", sg.RoleName())
		}
		roles[sg.RoleName()] = true
		if sg.Name == "" {
			bad("subgraph %s has no name for messages", sg.RoleName())
		}
		for _, op := range sg.Operands {
			switch {
			case op.Arg == "" && op.Made <= 0:
				bad("subgraph %s: an operand group with neither an argument nor made values", sg.RoleName())
			case op.Arg != "" && op.Made != 0:
				bad("subgraph %s: operand group %s with made values", sg.RoleName(), op.Arg)
			case op.Arg != "":
				arg("operand group", op.Arg, true)
			}
		}
		if sg.Outputs != nil && sg.Outputs.Count != "" {
			arg("output count", sg.Outputs.Count, false)
		}
		for _, r := range sg.Restrictions {
			if r.Kind != ForbidMutation && r.Kind != ForbidAlias {
				bad("subgraph %s: restriction of unknown kind %d", sg.RoleName(), r.Kind)
			}
			if r.NoGrad != nil {
				for _, a := range r.NoGrad.Allows {
					if !slices.ContainsFunc(sg.Operands, func(o Operands) bool { return o.Arg == a }) {
						bad("subgraph %s: no-grad rule allows writes to %q, not an operand group of the subgraph", sg.RoleName(), a)
					}
				}
			}
			if r.DynamoAccepts != "" && !slices.ContainsFunc(torchDifferences, func(d TorchDifference) bool { return d.ID == r.DynamoAccepts }) {
				bad("subgraph %s: DynamoAccepts names no version table row: %q", sg.RoleName(), r.DynamoAccepts)
			}
		}
	}
	for _, mc := range h.MetaChecks {
		arg("meta check", mc.Arg, false)
		if mc.Requires != "" {
			arg("meta check requirement", mc.Requires, false)
		}
		if !roles[mc.Subgraph] {
			bad("meta check %s vs %s: no subgraph %q", mc.LHS, mc.RHS, mc.Subgraph)
		}
		if mc.LHS == "" || mc.RHS == "" {
			bad("meta check without names")
		}
	}
	for _, ac := range h.ArgTypeChecks {
		if len(ac.Args) == 0 {
			bad("argument type check of no arguments")
		}
		for _, a := range ac.Args {
			arg("argument type check", a, true)
			if strings.HasPrefix(a, "*") && len(ac.Args) > 1 {
				bad("argument type check: %s must be alone", a)
			}
		}
	}
	for i := range h.OlderForms {
		f := &h.OlderForms[i]
		fs, err := Parse(f.Schema)
		if err != nil {
			errs = append(errs, fmt.Errorf("older form %s: %w", f.Schema, err))
			continue
		}
		r := olderRow(h, f, fs)
		r.implied = nil
		if err := CheckHOP(&r); err != nil {
			errs = append(errs, fmt.Errorf("older form %s: %w", f.Schema, err))
			continue
		}
		for name := range f.Implied {
			if fs.Argument(name) < 0 || s.Argument(name) >= 0 {
				bad("older form %s: implied argument %s is not one only the older form has", f.Schema, name)
			}
		}
	}
	return errors.Join(errs...)
}

// WithHOPs returns a registry that resolves the given HOP rows beside r's
// layers, ahead of the built-in table (a row for a built-in HOP replaces
// it). Each row must pass CheckHOP. It is how a HOP is added without
// touching the built-in table, as the tests do; r is not changed.
func (r *Registry) WithHOPs(rows ...*HOP) (*Registry, error) {
	out := &Registry{}
	if r != nil {
		out.builtin, out.file, out.names = r.builtin, r.file, r.names
		out.hops = slices.Clone(r.hops)
	}
	for _, h := range rows {
		if err := CheckHOP(h); err != nil {
			return nil, err
		}
		row := *h
		row.schema, _ = Parse(h.Schema)
		row.OlderForms = slices.Clone(h.OlderForms)
		_ = buildForms(&row) // CheckHOP parsed them
		out.hops = slices.DeleteFunc(out.hops, func(o *HOP) bool { return o.Name == h.Name })
		out.hops = append(out.hops, &row)
	}
	slices.SortFunc(out.hops, func(a, b *HOP) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// WithHOPClasses returns a registry that also knows the HOPs a file
// records (ir.Module.HOPClasses) as derived from a base class whose rules
// the table holds (DerivedHOP), where neither r nor the built-in table
// knows them; r itself when there are none. A record whose target makes
// no valid row is left out: the HOP stays unknown.
func (r *Registry) WithHOPClasses(classes []ir.HOPClass) *Registry {
	var rows []*HOP
	for _, c := range classes {
		if _, known := r.HOP(c.Target); known {
			continue
		}
		h, ok := DerivedHOP(c.Target, c.Classes)
		if !ok || CheckHOP(h) != nil || slices.ContainsFunc(rows, func(o *HOP) bool { return o.Name == h.Name }) {
			continue
		}
		rows = append(rows, h)
	}
	if len(rows) == 0 {
		return r
	}
	out, err := r.WithHOPs(rows...)
	if err != nil {
		return r // CheckHOP passed every row
	}
	return out
}
