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
