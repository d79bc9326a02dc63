package pt2

import (
	"fmt"

	"github.com/hopctl/hopctl/pkg/ir"
)

// signatureOf maps GraphSignature onto ir.Signature, as torch's
// deserialize_signature does: a constant_input becomes a user input (the
// in-memory program calls it USER_INPUT with a ConstantArgument), every
// other variant its own kind.
func signatureOf(sig *graphSignature, g *graph) (*ir.Signature, error) {
	s := &ir.Signature{Inputs: make([]ir.InputSpec, len(sig.InputSpecs)), Outputs: make([]ir.OutputSpec, len(sig.OutputSpecs))}
	for i := range sig.InputSpecs {
		sp := &sig.InputSpecs[i]
		var out ir.InputSpec
		switch sp.Tag {
		case "user_input":
			out = ir.InputSpec{Kind: ir.InputUserInput, Name: argName(&sp.UserInput.Arg)}
			if out.Name == "" && i < len(g.Inputs) {
				// A literal user input: the placeholder is named after
				// the spec (see literalInputName).
				out.Name = "arg" + fmt.Sprint(i)
			}
		case "parameter":
			out = ir.InputSpec{Kind: ir.InputParameter, Name: sp.Parameter.Arg.Name, Target: sp.Parameter.ParameterName}
		case "buffer":
			out = ir.InputSpec{Kind: ir.InputBuffer, Name: sp.Buffer.Arg.Name, Target: sp.Buffer.BufferName, Persistent: sp.Buffer.Persistent}
		case "tensor_constant":
			out = ir.InputSpec{Kind: ir.InputConstantTensor, Name: sp.TensorConstant.Arg.Name, Target: sp.TensorConstant.TensorConstantName}
		case "custom_obj":
			out = ir.InputSpec{Kind: ir.InputCustomObj, Name: sp.CustomObj.Arg.Name, Target: sp.CustomObj.CustomObjName}
		case "token":
			out = ir.InputSpec{Kind: ir.InputToken, Name: sp.Token.Arg.Name}
		case "constant_input":
			out = ir.InputSpec{Kind: ir.InputUserInput, Name: sp.ConstantInput.Name}
		default:
			return nil, fmt.Errorf("input spec %d has no variant", i)
		}
		s.Inputs[i] = out
	}
	for j := range sig.OutputSpecs {
		sp := &sig.OutputSpecs[j]
		var out ir.OutputSpec
		switch sp.Tag {
		case "user_output":
			out = ir.OutputSpec{Kind: ir.OutputUserOutput, Name: argName(&sp.UserOutput.Arg)}
		case "loss_output":
			out = ir.OutputSpec{Kind: ir.OutputLossOutput, Name: sp.LossOutput.Arg.Name}
		case "buffer_mutation":
			out = ir.OutputSpec{Kind: ir.OutputBufferMutation, Name: sp.BufferMutation.Arg.Name, Target: sp.BufferMutation.BufferName}
		case "parameter_mutation":
			out = ir.OutputSpec{Kind: ir.OutputParameterMutation, Name: sp.ParameterMutation.Arg.Name, Target: sp.ParameterMutation.ParameterName}
		case "gradient_to_parameter":
			out = ir.OutputSpec{Kind: ir.OutputGradientToParameter, Name: sp.GradientToParameter.Arg.Name, Target: sp.GradientToParameter.ParameterName}
		case "gradient_to_user_input":
			out = ir.OutputSpec{Kind: ir.OutputGradientToUserInput, Name: sp.GradientToUserInput.Arg.Name, Target: sp.GradientToUserInput.UserInputName}
		case "user_input_mutation":
			out = ir.OutputSpec{Kind: ir.OutputUserInputMutation, Name: sp.UserInputMutation.Arg.Name, Target: sp.UserInputMutation.UserInputName}
		case "token":
			out = ir.OutputSpec{Kind: ir.OutputToken, Name: sp.Token.Arg.Name}
		default:
			return nil, fmt.Errorf("output spec %d has no variant", j)
		}
		s.Outputs[j] = out
	}
	return s, nil
}
