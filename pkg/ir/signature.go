package ir

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Signature is the graph signature of an exported program
// (torch.export.graph_signature.ExportGraphSignature): what each root
// placeholder is (a parameter, a buffer, a user input, …, with its
// state_dict name) and what each root output is (a user output, the new
// value of a mutated buffer or user input, a gradient, …). Inputs[i]
// describes the i-th root placeholder and Outputs[j] the j-th element of
// the root's output; Verify checks that names and counts agree.
type Signature struct {
	Inputs  []InputSpec
	Outputs []OutputSpec
}

// InputKind is torch.export's InputKind.
type InputKind uint8

// Input kinds, as torch.export.graph_signature.InputKind.
const (
	InputUnspecified InputKind = iota
	InputUserInput
	InputParameter
	InputBuffer
	InputConstantTensor
	InputCustomObj
	InputToken
)

var inputKindNames = [...]string{"UNSPECIFIED", "USER_INPUT", "PARAMETER", "BUFFER", "CONSTANT_TENSOR", "CUSTOM_OBJ", "TOKEN"}

// String is the kind's name as torch prints it (PARAMETER, BUFFER, …).
func (k InputKind) String() string {
	if int(k) < len(inputKindNames) {
		return inputKindNames[k]
	}
	return "InputKind(" + strconv.Itoa(int(k)) + ")"
}

// Noun is the kind as a message names it: "parameter", "buffer",
// "constant tensor", "custom obj", "token", "user input".
func (k InputKind) Noun() string {
	return strings.ToLower(strings.ReplaceAll(k.String(), "_", " "))
}

// Describe names a placeholder for people: its kind and state_dict key
// ("buffer bn.running_mean") when it has one, else "" .
func (s *Signature) Describe(placeholder string) string {
	if sp := s.InputByName(placeholder); sp != nil && sp.Target != "" {
		return sp.Kind.Noun() + " " + sp.Target
	}
	return ""
}

// OutputKind is torch.export's OutputKind.
type OutputKind uint8

// Output kinds, as torch.export.graph_signature.OutputKind.
const (
	OutputUnspecified OutputKind = iota
	OutputUserOutput
	OutputLossOutput
	OutputBufferMutation
	OutputParameterMutation
	OutputGradientToParameter
	OutputGradientToUserInput
	OutputUserInputMutation
	OutputToken
)

var outputKindNames = [...]string{"UNSPECIFIED", "USER_OUTPUT", "LOSS_OUTPUT", "BUFFER_MUTATION", "PARAMETER_MUTATION", "GRADIENT_TO_PARAMETER", "GRADIENT_TO_USER_INPUT", "USER_INPUT_MUTATION", "TOKEN"}

// String is the kind's name as torch prints it (USER_OUTPUT, …).
func (k OutputKind) String() string {
	if int(k) < len(outputKindNames) {
		return outputKindNames[k]
	}
	return "OutputKind(" + strconv.Itoa(int(k)) + ")"
}

// IsMutation reports whether the output is the new value of an input
// (buffer, parameter or user input) that the program writes back.
func (k OutputKind) IsMutation() bool {
	return k == OutputBufferMutation || k == OutputParameterMutation || k == OutputUserInputMutation
}

// InputSpec describes one root placeholder.
type InputSpec struct {
	Kind InputKind
	// Name is the placeholder's name.
	Name string
	// Target is the state_dict key (parameters, buffers), the constant's
	// or custom object's attribute name; "" for user inputs and tokens.
	Target string
	// Persistent is a buffer's persistence (whether it is in the
	// state_dict).
	Persistent bool
}

// OutputSpec describes one element of the root's output.
type OutputSpec struct {
	Kind OutputKind
	// Name is the output value's node name ("" for a constant output).
	Name string
	// Target is the mutated buffer's or parameter's state_dict key, the
	// mutated user input's placeholder name, or the parameter or user
	// input a gradient is for; "" otherwise.
	Target string
}

// InputByName returns the spec of the placeholder named name, or nil.
// MutatedInput returns the placeholder of the input that mutation output
// sp writes back (torch.export's buffers_to_mutate, parameters_to_mutate
// and user_inputs_to_mutate: a buffer or parameter by its state_dict key,
// a user input by its name), "" when sp is no mutation or names no input.
func (s *Signature) MutatedInput(sp OutputSpec) string {
	var want InputKind
	switch sp.Kind {
	case OutputBufferMutation:
		want = InputBuffer
	case OutputParameterMutation:
		want = InputParameter
	case OutputUserInputMutation:
		want = InputUserInput
	default:
		return ""
	}
	for _, in := range s.Inputs {
		if in.Kind == want && ((want == InputUserInput && in.Name == sp.Target) || (want != InputUserInput && in.Target == sp.Target)) {
			return in.Name
		}
	}
	return ""
}

func (s *Signature) InputByName(name string) *InputSpec {
	if s == nil {
		return nil
	}
	for i := range s.Inputs {
		if s.Inputs[i].Name == name {
			return &s.Inputs[i]
		}
	}
	return nil
}

// StateName is how a placeholder is known to the user: its state_dict key
// (lin.weight) for parameters, buffers and constants, else its name.
func (s *Signature) StateName(placeholder string) string {
	if sp := s.InputByName(placeholder); sp != nil && sp.Target != "" {
		return sp.Target
	}
	return placeholder
}

// verifySignature checks that the signature describes the root graph:
// one input spec per placeholder with its name, one output spec per
// output element with its name, known kinds, targets where torch needs
// them, and mutation targets that name inputs of the right kind.
func (v *verifier) signature(m *Module) {
	s := m.Signature
	if s == nil || len(m.Graphs) == 0 || m.Graphs[0] == nil {
		return
	}
	g := m.Graphs[0]
	loc := InGraph(v.file, "")
	var phs []string
	for i := range g.Nodes {
		if g.Nodes[i].Op == OpPlaceholder {
			phs = append(phs, g.Nodes[i].Name)
		}
	}
	if len(s.Inputs) != len(phs) {
		v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature lists %d inputs but the graph has %d placeholders", len(s.Inputs), len(phs)))
	}
	byName := map[string]*InputSpec{}
	for i := range s.Inputs {
		sp := &s.Inputs[i]
		if sp.Kind == InputUnspecified || int(sp.Kind) >= len(inputKindNames) {
			v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature input %d (%s) has no valid kind", i, sp.Name))
		}
		if i < len(phs) && sp.Name != phs[i] {
			v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature input %d is %q but placeholder %d is %q", i, sp.Name, i, phs[i]))
		}
		switch sp.Kind {
		case InputParameter, InputBuffer, InputConstantTensor, InputCustomObj:
			if sp.Target == "" {
				v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature input %d (%s) is a %s without a target name", i, sp.Name, sp.Kind))
			}
		}
		byName[sp.Name] = sp
	}
	var outs []string
	hasOut := false
	if id := g.OutputNode(); id != NoNode {
		hasOut = true
		n := &g.Nodes[id]
		if len(n.Args) == 1 && (n.Args[0].Kind == ArgTuple || n.Args[0].Kind == ArgList) {
			for _, a := range n.Args[0].Elems() {
				outs = append(outs, argLabel(&a))
			}
		} else {
			for _, a := range n.Args {
				outs = append(outs, argLabel(&a))
			}
		}
	}
	if hasOut && len(s.Outputs) != len(outs) {
		v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature lists %d outputs but the graph returns %d values", len(s.Outputs), len(outs)))
	}
	for j := range s.Outputs {
		sp := &s.Outputs[j]
		if sp.Kind == OutputUnspecified || int(sp.Kind) >= len(outputKindNames) {
			v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature output %d (%s) has no valid kind", j, sp.Name))
		}
		if j < len(outs) && sp.Name != "" && sp.Name != outs[j] {
			v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature output %d is %q but the graph returns %q there", j, sp.Name, outs[j]))
		}
		var want []InputKind
		switch sp.Kind {
		case OutputBufferMutation:
			want = []InputKind{InputBuffer}
		case OutputParameterMutation, OutputGradientToParameter:
			want = []InputKind{InputParameter}
		case OutputUserInputMutation, OutputGradientToUserInput:
			want = []InputKind{InputUserInput}
		}
		if want == nil {
			continue
		}
		found := false
		for _, in := range s.Inputs {
			if in.Kind != want[0] {
				continue
			}
			if (want[0] == InputUserInput && in.Name == sp.Target) || (want[0] != InputUserInput && in.Target == sp.Target) {
				found = true
				break
			}
		}
		if !found {
			v.add(ProblemMalformed, loc, fmt.Sprintf("graph signature output %d (%s, %s) names %q, which is no %s input", j, sp.Name, sp.Kind, sp.Target, want[0]))
		}
	}
}

// argLabel is an output element's name: the node it references, or "" for
// a constant.
func argLabel(a *Arg) string {
	if a.Kind == ArgNode {
		return a.S
	}
	return ""
}

// String is the signature as torch prints an ExportGraphSignature
// (torch/export/graph_signature.py, __str__): a leading newline, "# inputs"
// with one "name: KIND target='…' persistent=…" line per input, a blank
// line, "# outputs" likewise.
func (s *Signature) String() string {
	var b strings.Builder
	b.WriteString("\n# inputs\n")
	for i, in := range s.Inputs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(in.Name + ": " + in.Kind.String())
		if in.Target != "" {
			b.WriteString(" target='" + in.Target + "'")
		}
		if in.Kind == InputBuffer {
			b.WriteString(" persistent=" + PyBool(in.Persistent))
		}
	}
	b.WriteString("\n\n# outputs\n")
	for j, out := range s.Outputs {
		if j > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(out.Name + ": " + out.Kind.String())
		if out.Target != "" {
			b.WriteString(" target='" + out.Target + "'")
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// PrintExportedProgram prints a module with a signature as torch prints an
// ExportedProgram (torch/export/exported_program.py, __str__): the
// print_readable() form of the graph module indented under
// "ExportedProgram:", then the graph signature, then the range
// constraints (the annotation torch.export.range_constraints, "{}" when
// absent). A module without a signature prints as PrintReadable.
func PrintExportedProgram(w io.Writer, m *Module) error {
	if m.Signature == nil {
		return PrintReadable(w, m)
	}
	// The GraphModule is streamed through the indentation, not built.
	out := bufio.NewWriterSize(w, printBuffer)
	out.WriteString("ExportedProgram:\n    ")
	if err := printReadable(indentWriter{out}, m, "GraphModule", torchAtLeast(m.TorchVersion, 2, 6)); err != nil {
		return err
	}
	rc, ok := m.Annotation("torch.export.range_constraints")
	if !ok {
		rc = "{}"
	}
	indent := func(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
	out.WriteString("\nGraph signature:" + indent(m.Signature.String()) + "\nRange constraints: " + rc + "\n")
	return out.Flush()
}

// indentWriter writes what it is given with four spaces after every
// newline.
type indentWriter struct{ w io.Writer }

func (iw indentWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			m, err := iw.w.Write(p)
			return n + m, err
		}
		if _, err := iw.w.Write(p[:i]); err != nil {
			return n, err
		}
		if _, err := io.WriteString(iw.w, "\n    "); err != nil {
			return n, err
		}
		n += i + 1
		p = p[i+1:]
	}
	return n, nil
}

// torchAtLeast reports whether a torch version string ("2.14.1+debian")
// is at least major.minor.
func torchAtLeast(v string, major, minor int) bool {
	a, rest, _ := strings.Cut(v, ".")
	b, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(strings.TrimRightFunc(b, func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
