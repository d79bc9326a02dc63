package ir

import (
	"bytes"
	"strings"
	"testing"
)

// TestTextOutputLinearInDepth: a file nesting an output tuple 4,990 deep
// (34 KB in binary) encodes to text and JSON in size proportional to its
// own (it was 199 MB of .pbtxt and 449 MB of .json: indentation grew with
// the depth), and the output decodes back to the same module.
func TestTextOutputLinearInDepth(t *testing.T) {
	a := Arg{Kind: ArgNode, S: "x", Ref: NoNode}
	for range 4990 {
		a = WithElems(Arg{Kind: ArgTuple}, []Arg{a})
	}
	m := &Module{FormatMajor: FormatMajor, Graphs: []*Graph{{Nodes: []Node{
		{Name: "x", Op: OpPlaceholder, Target: "x"},
		{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{a}},
	}}}}
	bin, err := Encode(m, Binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []Encoding{Text, JSON} {
		out, err := Encode(m, enc)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 100*len(bin) {
			t.Errorf("%s: %d bytes for %d bytes of binary", enc, len(out), len(bin))
		}
		back, err := Decode(out, enc, "t")
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := Encode(back, Binary); !bytes.Equal(again, bin) {
			t.Errorf("%s: does not decode to the same module", enc)
		}
	}
}

// TestPrintableEscapesControlCharacters: names from files reach terminals
// escaped, so they cannot forge lines or send escape sequences.
func TestPrintableEscapesControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"add_1":                         "add_1",
		"été":                           "été",
		"a\nhopctl: FORGED: 0 findings": `a\nhopctl: FORGED: 0 findings`,
		"x\x1b[2J":                      `x\x1b[2J`,
		"rtl\u202eevil":                 `rtl\u202eevil`,
		"bad\xffutf8":                   `bad\xffutf8`,
		`back\slash` + "\x07":           `back\\slash\a`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	loc := At("f\n.pb", "g\x1b", "n\r")
	if s := loc.String(); strings.ContainsAny(s, "\n\r\x1b") {
		t.Errorf("Location.String() = %q", s)
	}
	g := &Graph{Nodes: []Node{
		{Name: "x\nFORGED", Op: OpPlaceholder, Target: "x\nFORGED"},
		{Name: "output", Op: OpOutput, Target: "output", Args: []Arg{{Kind: ArgNode, S: "x\nFORGED", Ref: 0}}},
	}}
	def, body := ReadableForward(g)
	for _, l := range append(body, def) {
		if strings.ContainsAny(l, "\n\x1b") {
			t.Errorf("ReadableForward line %q", l)
		}
	}
}
