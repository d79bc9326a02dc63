package opschema

import "strings"

// IsPythonScalarTarget reports whether a call_function target is Python
// scalar arithmetic (_operator.sub, builtins.min, math.ceil): what
// torch.export and make_fx record for SymInt/SymBool computations such as
// sym_size(x, 0) - 1 or u0 >= 0. Such a call has no ATen schema, touches
// no tensor and mutates nothing. _operator.getitem is a target of this
// kind too but indexes tuples of tensors; callers treat it first.
func IsPythonScalarTarget(target string) bool {
	for _, p := range []string{"_operator.", "operator.", "builtins.", "math."} {
		if strings.HasPrefix(target, p) {
			return true
		}
	}
	return false
}

// tensorOperators maps the Python operators Dynamo records for tensor
// arithmetic (it writes `a + b` as operator.add and `a += b` as
// operator.iadd, torch/_dynamo/variables/builtin.py) to the ATen op the
// Tensor dunder dispatches to (torch/_tensor.py, and the methods
// torch/csrc/autograd/python_variable_methods.cpp binds: __add__ is add,
// __truediv__ div, __floordiv__ floor_divide, __mod__ remainder,
// __invert__ bitwise_not, __pos__ positive; the in-place forms are the
// trailing-underscore ops, and the bitwise ones ATen's __iand__ …).
// operator.imatmul has no entry: Tensor defines no __imatmul__.
var tensorOperators = map[string]string{
	"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
	"mod": "remainder", "pow": "pow", "matmul": "matmul",
	"neg": "neg", "pos": "positive", "abs": "abs", "invert": "bitwise_not",
	"and_": "__and__", "or_": "__or__", "xor": "__xor__", "lshift": "__lshift__", "rshift": "__rshift__",
	"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
	"iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_", "ifloordiv": "floor_divide_",
	"imod": "remainder_", "ipow": "pow_",
	"iand": "__iand__", "ior": "__ior__", "ixor": "__ixor__", "ilshift": "__ilshift__", "irshift": "__irshift__",
}

// TensorOperator returns the ATen op (without overload: "aten.add_") that
// Python operator target (_operator.iadd) runs when its first operand is a
// tensor. ok is false for a target that is not a Python operator with a
// tensor method.
func TensorOperator(target string) (op string, ok bool) {
	name, found := strings.CutPrefix(target, "_operator.")
	if !found {
		if name, found = strings.CutPrefix(target, "operator."); !found {
			return "", false
		}
	}
	aten, ok := tensorOperators[name]
	if !ok {
		return "", false
	}
	return "aten." + aten, true
}

// IsSetitem reports whether target is Python's operator.setitem, which
// Dynamo records for t[i] = v.
func IsSetitem(target string) bool {
	return target == "_operator.setitem" || target == "operator.setitem"
}
