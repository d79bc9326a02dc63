package pt2

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hopctl/hopctl/pkg/ir"
)

// schemaItem is one definition of torch.export's serialization schema:
// a struct's fields, a union's variants or an enum's members, in
// schema.yaml's order, and how this package treats it.
type schemaItem struct {
	name, kind string
	members    []string
	// goType is the Go type that decodes a struct (nil for unions and
	// enums, and for structs this package does not read).
	goType any
	// skipped says why a struct is not read ("" when it is).
	skipped string
}

// schema820 is every struct, union and enum of schema 8.20, written from
// torch 2.14.1's torch/_export/serde/schema.yaml. Each member is read (a
// field of the Go struct, a variant the union decoder dispatches, an enum
// value the converter maps) or refused explicitly (the enum's UNKNOWN);
// the structs of an archive's payloads are not read, for the reason given.
var schema820 = []schemaItem{
	{name: "AOTInductorModelPickleData", kind: "struct", members: []string{"library_basename", "input_names", "output_names", "floating_point_input_dtype", "floating_point_output_dtype", "aot_inductor_model_is_cpu"},
		skipped: "AOTInductor artefacts (data/aotinductor/) are compiled code, not a program"},
	{name: "Argument", kind: "union", members: []string{"as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats", "as_string", "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type", "as_memory_format", "as_layout", "as_device", "as_bool", "as_bools", "as_sym_bool", "as_sym_bools", "as_graph", "as_optional_tensors", "as_custom_obj", "as_operator", "as_sym_float", "as_sym_floats", "as_optional_tensor", "as_complex", "as_nested_tensors", "as_int_lists", "as_string_to_argument", "as_float_lists"}},
	{name: "ArgumentKind", kind: "enum", members: []string{"UNKNOWN", "POSITIONAL", "KEYWORD"}},
	{name: "BufferMutationSpec", kind: "struct", members: []string{"arg", "buffer_name"}, goType: bufferMutationSpec{}},
	{name: "ComplexValue", kind: "struct", members: []string{"real", "imag"}, goType: complexValue{}},
	{name: "ConstantValue", kind: "union", members: []string{"as_none", "as_int", "as_float", "as_string", "as_bool"}},
	{name: "CustomObjArgument", kind: "struct", members: []string{"name", "class_fqn"}, goType: customObjArgument{}},
	{name: "Device", kind: "struct", members: []string{"type", "index"}, goType: device{}},
	{name: "ExportedProgram", kind: "struct", members: []string{"graph_module", "opset_version", "range_constraints", "schema_version", "verifiers", "torch_version", "guards_code"}, goType: exportedProgram{}},
	{name: "ExternKernelNode", kind: "struct", members: []string{"name", "node"}, skipped: "AOTInductor extern kernel descriptions, not part of a program"},
	{name: "ExternKernelNodes", kind: "struct", members: []string{"nodes"}, skipped: "AOTInductor extern kernel descriptions, not part of a program"},
	{name: "GradientToParameterSpec", kind: "struct", members: []string{"arg", "parameter_name"}, goType: gradientToParameterSpec{}},
	{name: "GradientToUserInputSpec", kind: "struct", members: []string{"arg", "user_input_name"}, goType: gradientToUserInputSpec{}},
	{name: "Graph", kind: "struct", members: []string{"inputs", "outputs", "nodes", "tensor_values", "sym_int_values", "sym_bool_values", "is_single_tensor_return", "custom_obj_values", "sym_float_values"}, goType: graph{}},
	{name: "GraphArgument", kind: "struct", members: []string{"name", "graph"}, goType: graphArgument{}},
	{name: "GraphModule", kind: "struct", members: []string{"graph", "signature", "module_call_graph", "metadata", "treespec_namedtuple_fields"}, goType: graphModule{}},
	{name: "GraphSignature", kind: "struct", members: []string{"input_specs", "output_specs"}, goType: graphSignature{}},
	{name: "InputSpec", kind: "union", members: []string{"user_input", "parameter", "buffer", "tensor_constant", "custom_obj", "token", "constant_input"}},
	{name: "InputToBufferSpec", kind: "struct", members: []string{"arg", "buffer_name", "persistent"}, goType: inputToBufferSpec{}},
	{name: "InputToConstantInputSpec", kind: "struct", members: []string{"name", "value"}, goType: inputToConstantInputSpec{}},
	{name: "InputToCustomObjSpec", kind: "struct", members: []string{"arg", "custom_obj_name"}, goType: inputToCustomObjSpec{}},
	{name: "InputToParameterSpec", kind: "struct", members: []string{"arg", "parameter_name"}, goType: inputToParameterSpec{}},
	{name: "InputToTensorConstantSpec", kind: "struct", members: []string{"arg", "tensor_constant_name"}, goType: inputToTensorConstantSpec{}},
	{name: "InputTokenSpec", kind: "struct", members: []string{"arg"}, goType: tokenSpec{}},
	{name: "Layout", kind: "enum", members: []string{"Unknown", "SparseCoo", "SparseCsr", "SparseCsc", "SparseBsr", "SparseBsc", "_mkldnn", "Strided"}},
	{name: "LossOutputSpec", kind: "struct", members: []string{"arg"}, goType: lossOutputSpec{}},
	{name: "MemoryFormat", kind: "enum", members: []string{"Unknown", "ContiguousFormat", "ChannelsLast", "ChannelsLast3d", "PreserveFormat"}},
	{name: "ModuleCallEntry", kind: "struct", members: []string{"fqn", "signature"}, goType: moduleCallEntry{}},
	{name: "ModuleCallSignature", kind: "struct", members: []string{"inputs", "outputs", "in_spec", "out_spec", "forward_arg_names"}, goType: moduleCallSignature{}},
	{name: "NamedArgument", kind: "struct", members: []string{"name", "arg", "kind"}, goType: namedArgument{}},
	{name: "NamedTupleDef", kind: "struct", members: []string{"field_names"}, goType: namedTupleDef{}},
	{name: "Node", kind: "struct", members: []string{"target", "inputs", "outputs", "metadata", "is_hop_single_tensor_return", "name"}, goType: node{}},
	{name: "OptionalTensorArgument", kind: "union", members: []string{"as_tensor", "as_none"}},
	{name: "OutputSpec", kind: "union", members: []string{"user_output", "loss_output", "buffer_mutation", "gradient_to_parameter", "gradient_to_user_input", "user_input_mutation", "token", "parameter_mutation"}},
	{name: "OutputTokenSpec", kind: "struct", members: []string{"arg"}, goType: tokenSpec{}},
	{name: "ParameterMutationSpec", kind: "struct", members: []string{"arg", "parameter_name"}, goType: parameterMutationSpec{}},
	{name: "PayloadConfig", kind: "struct", members: []string{"config"}, skipped: "weights and constants are never read (the program JSON carries every tensor's metadata)"},
	{name: "PayloadMeta", kind: "struct", members: []string{"path_name", "is_param", "use_pickle", "tensor_meta"}, skipped: "weights and constants are never read"},
	{name: "RangeConstraint", kind: "struct", members: []string{"min_val", "max_val"}, goType: rangeConstraint{}},
	{name: "ScalarType", kind: "enum", members: []string{"UNKNOWN", "BYTE", "CHAR", "SHORT", "INT", "LONG", "HALF", "FLOAT", "DOUBLE", "COMPLEXHALF", "COMPLEXFLOAT", "COMPLEXDOUBLE", "BOOL", "BFLOAT16", "UINT16", "FLOAT8E4M3FN", "FLOAT8E5M2", "FLOAT8E4M3FNUZ", "FLOAT8E5M2FNUZ", "FLOAT8E8M0FNU", "UINT32", "UINT64"}},
	{name: "SchemaVersion", kind: "struct", members: []string{"major", "minor"}, goType: schemaVersion{}},
	{name: "SymBool", kind: "union", members: []string{"as_expr", "as_bool"}},
	{name: "SymBoolArgument", kind: "union", members: []string{"as_name", "as_bool"}},
	{name: "SymExpr", kind: "struct", members: []string{"expr_str", "hint"}, goType: symExpr{}},
	{name: "SymExprHint", kind: "union", members: []string{"as_int", "as_bool", "as_float"}},
	{name: "SymFloat", kind: "union", members: []string{"as_expr", "as_float"}},
	{name: "SymFloatArgument", kind: "union", members: []string{"as_name", "as_float"}},
	{name: "SymInt", kind: "union", members: []string{"as_expr", "as_int"}},
	{name: "SymIntArgument", kind: "union", members: []string{"as_name", "as_int"}},
	{name: "TensorArgument", kind: "struct", members: []string{"name"}, goType: tensorArgument{}},
	{name: "TensorMeta", kind: "struct", members: []string{"dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"}, goType: tensorMeta{}},
	{name: "TokenArgument", kind: "struct", members: []string{"name"}, goType: tensorArgument{}},
	{name: "UserInputMutationSpec", kind: "struct", members: []string{"arg", "user_input_name"}, goType: userInputMutationSpec{}},
	{name: "UserInputSpec", kind: "struct", members: []string{"arg"}, goType: userInputSpec{}},
	{name: "UserOutputSpec", kind: "struct", members: []string{"arg"}, goType: userOutputSpec{}},
}

// unionVariants is what each union's decoder dispatches on.
var unionVariants = map[string][]string{
	"Argument":               argumentVariants,
	"ConstantValue":          constantValueVariants,
	"InputSpec":              inputSpecVariants,
	"OutputSpec":             outputSpecVariants,
	"OptionalTensorArgument": optionalTensorVariants,
	"SymBool":                symValueVariants["SymBool"],
	"SymBoolArgument":        symArgumentVariants["SymBoolArgument"],
	"SymExprHint":            symValueVariants["SymExprHint"],
	"SymFloat":               symValueVariants["SymFloat"],
	"SymFloatArgument":       symArgumentVariants["SymFloatArgument"],
	"SymInt":                 symValueVariants["SymInt"],
	"SymIntArgument":         symArgumentVariants["SymIntArgument"],
}

// unionDecoders decode one union object with the package's decoders.
var unionDecoders = map[string]func([]byte) error{
	"Argument":               func(b []byte) error { return json.Unmarshal(b, new(argument)) },
	"ConstantValue":          func(b []byte) error { return json.Unmarshal(b, new(constantValue)) },
	"InputSpec":              func(b []byte) error { return json.Unmarshal(b, new(inputSpec)) },
	"OutputSpec":             func(b []byte) error { return json.Unmarshal(b, new(outputSpec)) },
	"OptionalTensorArgument": func(b []byte) error { return json.Unmarshal(b, new(optionalTensorArgument)) },
	"SymBool":                func(b []byte) error { return json.Unmarshal(b, new(symValue)) },
	"SymBoolArgument":        func(b []byte) error { return json.Unmarshal(b, new(symArgument)) },
	"SymExprHint":            func(b []byte) error { return json.Unmarshal(b, new(symValue)) },
	"SymFloat":               func(b []byte) error { return json.Unmarshal(b, new(symValue)) },
	"SymFloatArgument":       func(b []byte) error { return json.Unmarshal(b, new(symArgument)) },
	"SymInt":                 func(b []byte) error { return json.Unmarshal(b, new(symValue)) },
	"SymIntArgument":         func(b []byte) error { return json.Unmarshal(b, new(symArgument)) },
}

// TestSchemaCompleteness: every member of schema 8.20 is read or refused
// explicitly, none silently dropped.
func TestSchemaCompleteness(t *testing.T) {
	enums := map[string]func(name string) (string, error){
		"ScalarType": func(n string) (string, error) {
			return enumName(enumInt{Name: n}, "dtype", scalarTypeNames, scalarTypes)
		},
		"Layout": func(n string) (string, error) { return enumName(enumInt{Name: n}, "layout", layoutNames, layouts) },
		"MemoryFormat": func(n string) (string, error) {
			return enumName(enumInt{Name: n}, "memory_format", memoryFormatNames, memoryFormats)
		},
		"ArgumentKind": func(n string) (string, error) {
			v, ok := argumentKindNames[n]
			if !ok || v == kindUnknown {
				return "", os.ErrInvalid
			}
			return n, nil
		},
	}
	for _, it := range schema820 {
		switch it.kind {
		case "struct":
			if it.skipped != "" {
				continue
			}
			var tags []string
			rt := reflect.TypeOf(it.goType)
			for i := range rt.NumField() {
				tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
				tags = append(tags, tag)
			}
			if !slices.Equal(tags, it.members) {
				t.Errorf("struct %s: Go type %s decodes %v, the schema has %v", it.name, rt.Name(), tags, it.members)
			}
		case "union":
			got := unionVariants[it.name]
			if !slices.Equal(got, it.members) {
				t.Errorf("union %s: decoder dispatches %v, the schema has %v", it.name, got, it.members)
			}
			// The decoder itself knows every variant, and only those.
			dec := unionDecoders[it.name]
			for _, m := range append(slices.Clone(it.members), "as_no_such_variant") {
				err := dec([]byte(`{"` + m + `": null}`))
				unknown := err != nil && strings.Contains(err.Error(), "unknown") && strings.Contains(err.Error(), "variant")
				if unknown != (m == "as_no_such_variant") {
					t.Errorf("union %s: decoding variant %s: %v", it.name, m, err)
				}
			}
		case "enum":
			mapOf := enums[it.name]
			if mapOf == nil {
				t.Errorf("enum %s: not mapped", it.name)
				continue
			}
			for _, m := range it.members {
				_, err := mapOf(m)
				refused := strings.EqualFold(m, "unknown")
				if refused != (err != nil) {
					t.Errorf("enum %s.%s: refused %v (err %v); only UNKNOWN is refused", it.name, m, err != nil, err)
				}
			}
		}
	}
}

// TestSchemaListMatchesTorch checks schema820 against the schema.yaml of
// the installed torch 2.14 (the chroot of scripts/chroot.sh), when there
// is one: same definitions, kinds and members, in order.
func TestSchemaListMatchesTorch(t *testing.T) {
	const path = "/var/cache/hopctl/chroots/2.14/usr/lib/python3/dist-packages/torch/_export/serde/schema.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no torch 2.14 schema.yaml: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	var got []schemaItem
	for i := 0; i+1 < len(top.Content); i += 2 {
		name, body := top.Content[i].Value, top.Content[i+1]
		if name == "SCHEMA_VERSION" {
			if v := body.Content[0].Value + "." + body.Content[1].Value; v != "8.20" {
				t.Errorf("torch 2.14's SCHEMA_VERSION is %s; schema820 describes 8.20", v)
			}
			continue
		}
		if body.Kind != yaml.MappingNode {
			continue
		}
		it := schemaItem{name: name}
		for j := 0; j+1 < len(body.Content); j += 2 {
			switch body.Content[j].Value {
			case "kind":
				it.kind = body.Content[j+1].Value
			case "fields":
				fs := body.Content[j+1]
				for k := 0; k+1 < len(fs.Content); k += 2 {
					it.members = append(it.members, fs.Content[k].Value)
				}
			}
		}
		got = append(got, it)
	}
	if len(got) != len(schema820) {
		t.Errorf("schema.yaml has %d definitions, schema820 %d", len(got), len(schema820))
	}
	for i := range min(len(got), len(schema820)) {
		g, w := got[i], schema820[i]
		if g.name != w.name || g.kind != w.kind || !slices.Equal(g.members, w.members) {
			t.Errorf("definition %d: schema.yaml %s %s %v, schema820 %s %s %v", i, g.name, g.kind, g.members, w.name, w.kind, w.members)
		}
	}
}

// TestEveryArgumentVariant reads testdata/pt2/hand/every_argument.json, a
// hand-written program (torch writes no program with all of them) that
// passes every Argument variant at least once, and checks what each
// becomes in the IR.
func TestEveryArgumentVariant(t *testing.T) {
	const path = "../../testdata/pt2/hand/every_argument.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		GraphModule struct {
			Graph struct {
				Nodes []struct {
					Inputs []struct {
						Arg map[string]json.RawMessage
					}
				}
			}
		} `json:"graph_module"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, n := range raw.GraphModule.Graph.Nodes {
		for _, in := range n.Inputs {
			for k := range in.Arg {
				used[k] = true
			}
		}
	}
	for _, v := range argumentVariants {
		if !used[v] {
			t.Errorf("the hand-written program does not use Argument variant %s", v)
		}
	}
	m, err := Decode(data, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m, path); err != nil {
		t.Fatal(err)
	}
	g := m.Root()
	id, ok := g.Lookup("every")
	if !ok {
		t.Fatal("no node every")
	}
	want := map[string]string{
		"as_none": "None", "as_tensor": "%x", "as_tensors": "[%x, %x]", "as_int": "3", "as_ints": "[1, 2]",
		"as_float": "1.5", "as_floats": "[0.5, inf, -inf]", "as_string": "'s'", "as_strings": "['a', 'b']",
		"as_sym_int": "%s", "as_sym_ints": "[2, %s]", "as_scalar_type": "torch.float32", "as_memory_format": "torch.channels_last",
		"as_layout": "torch.strided", "as_device": "cuda:1", "as_bool": "True", "as_bools": "[True, False]",
		"as_sym_bool": "True", "as_sym_bools": "[False]", "as_optional_tensors": "[%x, None]", "as_custom_obj": "%obj",
		"as_operator": "aten.add.Tensor", "as_sym_float": "2.5", "as_sym_floats": "[1.0, %f]", "as_optional_tensor": "%x",
		"as_complex": "(1-2j)", "as_nested_tensors": "[[%x], []]", "as_int_lists": "[[1, 2], [3]]",
		"as_string_to_argument": "{'j': %x, 'k': 1}", "as_float_lists": "[[1.0], [2.0, nan]]",
	}
	line := ir.FormatNode(g, id)
	for k, v := range want {
		if !strings.Contains(line, k+"="+v) {
			t.Errorf("%s: want %s=%s in %s", path, k, v, line)
		}
	}
	if len(want) != len(argumentVariants)-1 { // as_graph is the cond's
		t.Errorf("the table checks %d variants of %d", len(want), len(argumentVariants)-1)
	}
	if m.Graph("true_graph_0") == nil || m.Graph("false_graph_0") == nil {
		t.Error("as_graph did not become submodules")
	}
}
