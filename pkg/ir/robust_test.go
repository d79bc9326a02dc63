package ir

import (
	"errors"
	"strings"
	"testing"
)

func TestVerifyShapes(t *testing.T) {
	for _, tc := range []struct{ shape, want string }{
		{"[{value: 4}, {value: -1}]", "node x: value[1]: tensor shape [4, -1] has a negative size -1"},
		{"[{value: 4294967296}, {value: 4294967296}]", "node x: value[1]: the element count of tensor shape [4294967296, 4294967296] overflows int64"},
		{"[{value: 4294967296}, {value: 4294967296}, {value: 0}]", ""},     // empty
		{"[{value: 4294967296}, {expr: \"s0\"}, {value: 4294967295}]", ""}, // symbolic sizes are not judged
	} {
		src := pbtxtModule(`nodes { name: "x" op: PLACEHOLDER target: "x" val { tuple { items { int: 1 } items { tensor { shape: `+tc.shape+` } } } } }
nodes { name: "output" op: OUTPUT target: "output" args { node: "x" } }`, "")
		err := Verify(decodeText(t, src), "t.pbtxt")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.shape, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want %q", tc.shape, err, tc.want)
		}
	}
}

func TestVerifyNestingLimit(t *testing.T) {
	m := &Module{FormatMajor: 1}
	name := ""
	for depth := 0; depth <= MaxNesting+2; depth++ {
		m.Graphs = append(m.Graphs, &Graph{Name: name, Nodes: []Node{{Name: "output", Op: OpOutput, Target: "output"}}})
		name = strings.TrimPrefix(name+".g", ".")
	}
	err := Verify(m, "deep.pb")
	var ve *VerifyError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 {
		t.Fatalf("err = %v, want one problem", err)
	}
	msg := ve.Problems[0].String()
	if !strings.Contains(msg, "subgraphs nest more than 1000 levels deep (this one is 1001 levels deep; 2 graphs are too deep)") ||
		!strings.Contains(msg, "(2001 bytes)") || len(msg) > 400 {
		t.Errorf("problem = %q", msg)
	}
	m.Graphs = m.Graphs[:MaxNesting+1]
	if err := Verify(m, "deep.pb"); err != nil {
		t.Errorf("%d levels: %v", MaxNesting, err)
	}
}

func TestAbbrev(t *testing.T) {
	if got := Abbrev("true_graph_0"); got != "true_graph_0" {
		t.Errorf("Abbrev changed a short name: %q", got)
	}
	long := strings.Repeat("é", 500) // 1000 bytes, 2 per rune
	got := Abbrev(long)
	if !strings.Contains(got, "…(1000 bytes)…") || len(got) > maxNameInMessage+40 || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("Abbrev = %q", got)
	}
}

// TestBinaryErrorsNameTheNode checks that a decoding error inside a node
// names the graph and node, and a truncation says so.
func TestBinaryErrorsNameTheNode(t *testing.T) {
	m := decodeText(t, `format_version { major: 1 }
graph { nodes { name: "x" op: PLACEHOLDER target: "x" } nodes { name: "output" op: OUTPUT target: "output" args { node: "x" } } }
submodules { qualified_name: "sub" graph { nodes { name: "y" op: PLACEHOLDER target: "y" } nodes { name: "zzzz" op: OUTPUT target: "output" args { node: "y" } } } }`)
	data, err := Encode(m, Binary)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "zzzz")
	bad := append([]byte(nil), data...)
	bad[i+1] = 0xff // invalid UTF-8 in the name field... of node #1 of graph sub
	_, err = Decode(bad, Binary, "b.pb")
	if err == nil || !strings.Contains(err.Error(), "b.pb: graph sub: node #1: cannot decode as binary hopctl graph: string field contains invalid UTF-8") {
		t.Errorf("err = %v", err)
	}
	bad = append([]byte(nil), data...)
	bad[i+5] = 0xff // the op field's tag: an invalid wire type after the name
	_, err = Decode(bad, Binary, "b.pb")
	if err == nil || !strings.Contains(err.Error(), "graph sub: node zzzz: ") || !strings.Contains(err.Error(), "at byte ") {
		t.Errorf("err = %v", err)
	}
	_, err = Decode(data[:len(data)-2], Binary, "b.pb")
	if err == nil || !strings.Contains(err.Error(), "(the file is truncated or corrupt)") {
		t.Errorf("err = %v", err)
	}
}
