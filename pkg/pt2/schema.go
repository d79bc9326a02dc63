package pt2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// The Go form of torch.export's serialization schema
// (torch/_export/serde/schema.yaml, schema 8.20 as torch 2.14.1 writes
// it). Structs decode field by field; unknown keys are ignored, as
// torch's own decoder has done since 8.x (forward compatibility within a
// major version). Unions are one-key objects ({"as_tensor": {...}});
// an unknown variant is an error naming it, as in torch.
//
// Each struct lists every field of the newest schema this package reads;
// completeness_test.go checks that list against schema.yaml.

// exportedProgram is ExportedProgram.
type exportedProgram struct {
	GraphModule      *graphModule               `json:"graph_module"`
	OpsetVersion     map[string]int64           `json:"opset_version"`
	RangeConstraints map[string]rangeConstraint `json:"range_constraints"`
	SchemaVersion    *schemaVersion             `json:"schema_version"`
	Verifiers        []string                   `json:"verifiers"`
	TorchVersion     *string                    `json:"torch_version"`
	GuardsCode       []string                   `json:"guards_code"`
}

type schemaVersion struct {
	Major *int64 `json:"major"`
	Minor *int64 `json:"minor"`
}

type rangeConstraint struct {
	MinVal *pyInt `json:"min_val"`
	MaxVal *pyInt `json:"max_val"`
}

type graphModule struct {
	Graph                    *graph                   `json:"graph"`
	Signature                *graphSignature          `json:"signature"`
	ModuleCallGraph          []moduleCallEntry        `json:"module_call_graph"`
	Metadata                 map[string]string        `json:"metadata"`
	TreespecNamedtupleFields map[string]namedTupleDef `json:"treespec_namedtuple_fields"`
}

type namedTupleDef struct {
	FieldNames []string `json:"field_names"`
}

type moduleCallEntry struct {
	FQN       string               `json:"fqn"`
	Signature *moduleCallSignature `json:"signature"`
}

type moduleCallSignature struct {
	Inputs          []argument `json:"inputs"`
	Outputs         []argument `json:"outputs"`
	InSpec          string     `json:"in_spec"`
	OutSpec         string     `json:"out_spec"`
	ForwardArgNames []string   `json:"forward_arg_names"`
}

type graph struct {
	Inputs               []argument                   `json:"inputs"`
	Outputs              []argument                   `json:"outputs"`
	Nodes                []node                       `json:"nodes"`
	TensorValues         map[string]tensorMeta        `json:"tensor_values"`
	SymIntValues         map[string]symInt            `json:"sym_int_values"`
	SymBoolValues        map[string]symBool           `json:"sym_bool_values"`
	IsSingleTensorReturn bool                         `json:"is_single_tensor_return"`
	CustomObjValues      map[string]customObjArgument `json:"custom_obj_values"`
	SymFloatValues       map[string]symFloat          `json:"sym_float_values"`
}

type node struct {
	Target                  string            `json:"target"`
	Inputs                  []namedArgument   `json:"inputs"`
	Outputs                 []argument        `json:"outputs"`
	Metadata                map[string]string `json:"metadata"`
	IsHopSingleTensorReturn *bool             `json:"is_hop_single_tensor_return"`
	Name                    *string           `json:"name"`
}

// Argument kinds (ArgumentKind).
const (
	kindUnknown    = 0
	kindPositional = 1
	kindKeyword    = 2
)

type namedArgument struct {
	Name string   `json:"name"`
	Arg  argument `json:"arg"`
	Kind *enumInt `json:"kind"`
}

type tensorMeta struct {
	Dtype         enumInt  `json:"dtype"`
	Sizes         []symInt `json:"sizes"`
	RequiresGrad  bool     `json:"requires_grad"`
	Device        device   `json:"device"`
	Strides       []symInt `json:"strides"`
	StorageOffset symInt   `json:"storage_offset"`
	Layout        enumInt  `json:"layout"`
}

type device struct {
	Type  string `json:"type"`
	Index *pyInt `json:"index"`
}

type symExpr struct {
	ExprStr string       `json:"expr_str"`
	Hint    *symExprHint `json:"hint"`
}

type tensorArgument struct {
	Name string `json:"name"`
}

type customObjArgument struct {
	Name     string `json:"name"`
	ClassFQN string `json:"class_fqn"`
}

type graphArgument struct {
	Name  string `json:"name"`
	Graph *graph `json:"graph"`
}

type complexValue struct {
	Real pyFloat `json:"real"`
	Imag pyFloat `json:"imag"`
}

type graphSignature struct {
	InputSpecs  []inputSpec  `json:"input_specs"`
	OutputSpecs []outputSpec `json:"output_specs"`
}

// Input spec payloads.
type userInputSpec struct {
	Arg argument `json:"arg"`
}
type inputToParameterSpec struct {
	Arg           tensorArgument `json:"arg"`
	ParameterName string         `json:"parameter_name"`
}
type inputToBufferSpec struct {
	Arg        tensorArgument `json:"arg"`
	BufferName string         `json:"buffer_name"`
	Persistent bool           `json:"persistent"`
}
type inputToTensorConstantSpec struct {
	Arg                tensorArgument `json:"arg"`
	TensorConstantName string         `json:"tensor_constant_name"`
}
type inputToCustomObjSpec struct {
	Arg           customObjArgument `json:"arg"`
	CustomObjName string            `json:"custom_obj_name"`
}
type tokenSpec struct {
	Arg tensorArgument `json:"arg"`
}
type inputToConstantInputSpec struct {
	Name  string        `json:"name"`
	Value constantValue `json:"value"`
}

// Output spec payloads.
type userOutputSpec struct {
	Arg argument `json:"arg"`
}
type lossOutputSpec struct {
	Arg tensorArgument `json:"arg"`
}
type bufferMutationSpec struct {
	Arg        tensorArgument `json:"arg"`
	BufferName string         `json:"buffer_name"`
}
type parameterMutationSpec struct {
	Arg           tensorArgument `json:"arg"`
	ParameterName string         `json:"parameter_name"`
}
type gradientToParameterSpec struct {
	Arg           tensorArgument `json:"arg"`
	ParameterName string         `json:"parameter_name"`
}
type gradientToUserInputSpec struct {
	Arg           tensorArgument `json:"arg"`
	UserInputName string         `json:"user_input_name"`
}
type userInputMutationSpec struct {
	Arg           tensorArgument `json:"arg"`
	UserInputName string         `json:"user_input_name"`
}

// ---- unions ----

// union is the decoded form of a one-key object: its tag and payload.
type union struct {
	Tag string
	Raw json.RawMessage
}

func decodeUnion(data []byte, what string) (union, error) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return union{}, fmt.Errorf("%s is null", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return union{}, fmt.Errorf("%s: %w", what, err)
	}
	if len(m) != 1 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sortStrings(keys)
		return union{}, fmt.Errorf("%s must have exactly one key, has %d %q", what, len(m), keys)
	}
	for k, v := range m {
		return union{Tag: k, Raw: v}, nil
	}
	panic("unreachable")
}

func unknownVariant(what, tag string) error {
	return fmt.Errorf("unknown %s variant %q (written by a newer torch? this hopctl reads schema up to %d.%d)", what, tag, newestMajor, newestMinor)
}

// argument is Argument: Tag names the variant; the payload sits in the
// field whose union tag is the variant's name. The fields are in the
// schema's order.
type argument struct {
	Tag             string
	None            bool                     `union:"as_none"`
	Tensor          tensorArgument           `union:"as_tensor"`
	Tensors         []tensorArgument         `union:"as_tensors"`
	Int             int64                    `union:"as_int"`
	Ints            []int64                  `union:"as_ints"`
	Float           pyFloat                  `union:"as_float"`
	Floats          []pyFloat                `union:"as_floats"`
	String          string                   `union:"as_string"`
	Strings         []string                 `union:"as_strings"`
	SymInt          symArgument              `union:"as_sym_int"`
	SymInts         []symArgument            `union:"as_sym_ints"`
	ScalarType      enumInt                  `union:"as_scalar_type"`
	MemoryFormat    enumInt                  `union:"as_memory_format"`
	Layout          enumInt                  `union:"as_layout"`
	Device          device                   `union:"as_device"`
	Bool            bool                     `union:"as_bool"`
	Bools           []bool                   `union:"as_bools"`
	SymBool         symArgument              `union:"as_sym_bool"`
	SymBools        []symArgument            `union:"as_sym_bools"`
	Graph           graphArgument            `union:"as_graph"`
	OptionalTensors []optionalTensorArgument `union:"as_optional_tensors"`
	CustomObj       customObjArgument        `union:"as_custom_obj"`
	Operator        string                   `union:"as_operator"`
	SymFloat        symArgument              `union:"as_sym_float"`
	SymFloats       []symArgument            `union:"as_sym_floats"`
	OptionalTensor  optionalTensorArgument   `union:"as_optional_tensor"`
	Complex         complexValue             `union:"as_complex"`
	NestedTensors   [][]tensorArgument       `union:"as_nested_tensors"`
	IntLists        [][]int64                `union:"as_int_lists"`
	StringToArg     map[string]argument      `union:"as_string_to_argument"`
	FloatLists      [][]pyFloat              `union:"as_float_lists"`
}

// argumentVariants lists Argument's variants in schema order;
// argumentField is the index of each one's field in argument.
var argumentVariants, argumentField = unionFields(reflect.TypeFor[argument]())

func unionFields(t reflect.Type) (tags []string, field map[string]int) {
	field = map[string]int{}
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("union"); tag != "" {
			tags = append(tags, tag)
			field[tag] = i
		}
	}
	return tags, field
}

// payload returns the field that holds a's variant.
func (a *argument) payload() (reflect.Value, bool) {
	i, ok := argumentField[a.Tag]
	if !ok {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(a).Elem().Field(i), true
}

func (a *argument) UnmarshalJSON(data []byte) error {
	if err := decodeVariant(data, "Argument", a, argumentField); err != nil {
		return err
	}
	if a.Tag == "as_graph" && a.Graph.Graph == nil {
		return fmt.Errorf("Argument as_graph %q has no graph", a.Graph.Name)
	}
	return nil
}

// decodeVariant decodes the union object data into *dst, a union struct
// whose first field, Tag, gets the variant's name and whose field
// field[tag] (the one of union tag tag) its payload; as_none's payload is
// only checked (decodeNone).
func decodeVariant[T any](data []byte, what string, dst *T, field map[string]int) error {
	u, err := decodeUnion(data, what)
	if err != nil {
		return err
	}
	var zero T
	*dst = zero
	v := reflect.ValueOf(dst).Elem()
	v.Field(0).SetString(u.Tag)
	i, ok := field[u.Tag]
	switch {
	case !ok:
		return unknownVariant(what, u.Tag)
	case u.Tag == "as_none":
		return decodeNone(u.Raw)
	}
	if err := json.Unmarshal(u.Raw, v.Field(i).Addr().Interface()); err != nil {
		return fmt.Errorf("%s %s: %w", what, u.Tag, err)
	}
	return nil
}

// decodeNone accepts as_none's payload in every schema: true (8.2+) or
// an empty tuple [] (8.1 and older).
func decodeNone(raw json.RawMessage) error {
	switch string(bytes.TrimSpace(raw)) {
	case "true", "[]", "false", "null":
		return nil
	}
	return fmt.Errorf("as_none must be true or [], got %.40s", raw)
}

// optionalTensorArgument is OptionalTensorArgument.
type optionalTensorArgument struct {
	Tag    string
	Tensor tensorArgument `union:"as_tensor"`
	None   bool           `union:"as_none"`
}

var optionalTensorVariants, optionalTensorField = unionFields(reflect.TypeFor[optionalTensorArgument]())

func (o *optionalTensorArgument) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "OptionalTensorArgument", o, optionalTensorField)
}

// symArgument is SymIntArgument, SymFloatArgument and SymBoolArgument:
// as_name or a literal (as_int, as_float, as_bool).
type symArgument struct {
	Tag   string
	Name  string  `union:"as_name"`
	Int   int64   `union:"as_int"`
	Float pyFloat `union:"as_float"`
	Bool  bool    `union:"as_bool"`
}

var symArgumentVariants = map[string][]string{
	"SymIntArgument":   {"as_name", "as_int"},
	"SymFloatArgument": {"as_name", "as_float"},
	"SymBoolArgument":  {"as_name", "as_bool"},
}

var _, symArgumentField = unionFields(reflect.TypeFor[symArgument]())

func (s *symArgument) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "Sym*Argument", s, symArgumentField)
}

// symValue is SymInt, SymFloat, SymBool and SymExprHint: an expression or
// a literal.
type symValue struct {
	Tag   string
	Expr  symExpr `union:"as_expr"`
	Int   int64   `union:"as_int"`
	Float pyFloat `union:"as_float"`
	Bool  bool    `union:"as_bool"`
}

type (
	symInt      = symValue
	symFloat    = symValue
	symBool     = symValue
	symExprHint = symValue
)

var symValueVariants = map[string][]string{
	"SymInt":      {"as_expr", "as_int"},
	"SymFloat":    {"as_expr", "as_float"},
	"SymBool":     {"as_expr", "as_bool"},
	"SymExprHint": {"as_int", "as_bool", "as_float"},
}

var _, symValueField = unionFields(reflect.TypeFor[symValue]())

func (s *symValue) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "SymInt/SymFloat/SymBool", s, symValueField)
}

// constantValue is ConstantValue.
type constantValue struct {
	Tag    string
	None   bool    `union:"as_none"`
	Int    int64   `union:"as_int"`
	Float  pyFloat `union:"as_float"`
	String string  `union:"as_string"`
	Bool   bool    `union:"as_bool"`
}

var constantValueVariants, constantValueField = unionFields(reflect.TypeFor[constantValue]())

func (c *constantValue) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "ConstantValue", c, constantValueField)
}

// inputSpec is InputSpec.
type inputSpec struct {
	Tag            string
	UserInput      userInputSpec             `union:"user_input"`
	Parameter      inputToParameterSpec      `union:"parameter"`
	Buffer         inputToBufferSpec         `union:"buffer"`
	TensorConstant inputToTensorConstantSpec `union:"tensor_constant"`
	CustomObj      inputToCustomObjSpec      `union:"custom_obj"`
	Token          tokenSpec                 `union:"token"`
	ConstantInput  inputToConstantInputSpec  `union:"constant_input"`
}

var inputSpecVariants, inputSpecField = unionFields(reflect.TypeFor[inputSpec]())

func (s *inputSpec) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "InputSpec", s, inputSpecField)
}

// outputSpec is OutputSpec.
type outputSpec struct {
	Tag                 string
	UserOutput          userOutputSpec          `union:"user_output"`
	LossOutput          lossOutputSpec          `union:"loss_output"`
	BufferMutation      bufferMutationSpec      `union:"buffer_mutation"`
	GradientToParameter gradientToParameterSpec `union:"gradient_to_parameter"`
	GradientToUserInput gradientToUserInputSpec `union:"gradient_to_user_input"`
	UserInputMutation   userInputMutationSpec   `union:"user_input_mutation"`
	Token               tokenSpec               `union:"token"`
	ParameterMutation   parameterMutationSpec   `union:"parameter_mutation"`
}

var outputSpecVariants, outputSpecField = unionFields(reflect.TypeFor[outputSpec]())

func (s *outputSpec) UnmarshalJSON(data []byte) error {
	return decodeVariant(data, "OutputSpec", s, outputSpecField)
}

// ---- scalars ----

// pyFloat is a float as Python's json writes it: a number, or (2.14)
// the strings "Infinity", "-Infinity", "NaN"; the bare tokens 2.6 wrote
// are quoted by quoteNonFinite before decoding.
type pyFloat float64

func (f *pyFloat) UnmarshalJSON(data []byte) error {
	s := string(bytes.TrimSpace(data))
	switch s {
	case `"Infinity"`, `"inf"`:
		*f = pyFloat(math.Inf(1))
		return nil
	case `"-Infinity"`, `"-inf"`:
		*f = pyFloat(math.Inf(-1))
		return nil
	case `"NaN"`, `"nan"`:
		*f = pyFloat(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a float: %.40s", s)
	}
	*f = pyFloat(v)
	return nil
}

// pyInt is an int that may be written as an integral float (1.0).
type pyInt int64

func (i *pyInt) UnmarshalJSON(data []byte) error {
	s := string(bytes.TrimSpace(data))
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*i = pyInt(v)
		return nil
	}
	return fmt.Errorf("not an int: %.40s", s)
}

// enumInt is an IntEnum member: a JSON integer, or (leniently) its name.
// Names are resolved against the enum's table by the converter.
type enumInt struct {
	Val  int64
	Name string // set when written as a string
}

func (e *enumInt) UnmarshalJSON(data []byte) error {
	s := bytes.TrimSpace(data)
	if len(s) > 0 && s[0] == '"' {
		return json.Unmarshal(s, &e.Name)
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return fmt.Errorf("enum value must be an int or a name, got %.40s", s)
	}
	e.Val = v
	return nil
}

// ---- version ----

// Versions this package reads: major 8, every minor up to newestMinor
// known; a newer minor is read (minors only add fields with defaults).
const (
	newestMajor = 8
	newestMinor = 20
)

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

var errNotProgram = errors.New("not an ExportedProgram")
