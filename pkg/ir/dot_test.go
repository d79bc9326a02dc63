package ir_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

func TestWriteDOTGolden(t *testing.T) {
	m := decodeText(t, condModule)
	var buf bytes.Buffer
	if err := ir.WriteDOT(&buf, m); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cond.dot", buf.Bytes())
}

func TestWriteDOTStructure(t *testing.T) {
	m := decodeText(t, condModule)
	var buf bytes.Buffer
	if err := ir.WriteDOT(&buf, m); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// One cluster per graph, labelled with its qualified name.
	for gi, g := range m.Graphs {
		want := fmt.Sprintf("subgraph cluster_%d {\n    label=%q;", gi, ir.DisplayName(g.Name))
		if !strings.Contains(out, want) {
			t.Errorf("missing cluster %d for %q:\n%s", gi, g.Name, want)
		}
	}
	// Every def-use edge, and a dashed edge from each get_attr to its graph.
	for gi, g := range m.Graphs {
		du := ir.NewDefUse(g)
		for u, ops := range du.Operands {
			for _, d := range ops {
				if e := fmt.Sprintf("  g%d_n%d -> g%d_n%d;\n", gi, d, gi, u); !strings.Contains(out, e) {
					t.Errorf("missing edge %q", e)
				}
			}
		}
	}
	for _, e := range []string{
		"g0_n4 -> g1_n0 [style=dashed, lhead=cluster_1];", // true_graph_0
		"g0_n5 -> g3_n0 [style=dashed, lhead=cluster_3];", // false_graph_0
		"g1_n2 -> g2_n0 [style=dashed, lhead=cluster_2];", // true_graph_0.body_graph_0
	} {
		if !strings.Contains(out, e) {
			t.Errorf("missing subgraph edge %q", e)
		}
	}
	// Labels are escaped.
	if !strings.Contains(out, `label="%add_ = aten.add_.Tensor(%clone, \"it's\") : f32[4, 8]"`) {
		t.Error("quote in label not escaped")
	}
	// Deterministic.
	var again bytes.Buffer
	if err := ir.WriteDOT(&again, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("WriteDOT output differs between runs")
	}
}

// TestWriteDOTGraphviz checks that Graphviz accepts the output, when it is
// installed.
func TestWriteDOTGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot not installed")
	}
	m := decodeText(t, condModule)
	var buf bytes.Buffer
	if err := ir.WriteDOT(&buf, m); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = &buf
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("dot -Tsvg: %v\n%s", err, stderr.Bytes())
	}
}

func TestWriteDOTEmptyGraph(t *testing.T) {
	m := &ir.Module{Graphs: []*ir.Graph{
		{Nodes: []ir.Node{{Name: "sub", Op: ir.OpGetAttr, Target: "sub"}}},
		{Name: "sub"},
	}}
	var buf bytes.Buffer
	if err := ir.WriteDOT(&buf, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`g1_n0 [label="(empty)", shape=plaintext];`, "g0_n0 -> g1_n0 [style=dashed, lhead=cluster_1];"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
	if err := ir.WriteDOT(&buf, &ir.Module{}); err == nil {
		t.Error("WriteDOT accepted a module without graphs")
	}
}
