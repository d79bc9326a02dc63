package print

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdPrint(t *testing.T) {
	tests := []struct {
		args    string
		want    Options
		wantErr string
	}{
		{args: "m.pb", want: Options{File: "m.pb", Format: "fx"}},
		{args: "m.pb --format dot --graph true_graph_0.body", want: Options{File: "m.pb", Format: "dot", Graph: "true_graph_0.body"}},
		{args: "--format=json m.json", want: Options{File: "m.json", Format: "json"}},
		{args: "", wantErr: "print: missing FILE"},
		{args: "a.pb b.pb", wantErr: "too many arguments"},
		{args: "m.pb --format svg", wantErr: `invalid value "svg" for --format (want fx, dot or json)`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *Options
			cmd := NewCmdPrint(&cmdutil.Factory{IOStreams: ios}, func(o *Options) error { got = o; return nil })
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			_, err := cmd.ExecuteC()
			if tt.wantErr != "" {
				var fe *cmdutil.FlagError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a FlagError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.IO = ios
			if *got != tt.want {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestSubmodule(t *testing.T) {
	graph := func(name string) *ir.Graph { return &ir.Graph{Name: name} }
	m := &ir.Module{
		Producer:   "p",
		Graphs:     []*ir.Graph{graph(""), graph("a"), graph("a.b"), graph("ab"), graph("a.b.c")},
		Attributes: []ir.Attribute{{Name: "a.w"}, {Name: "aw"}, {Name: "w"}},
		Schemas:    []ir.SchemaText{{Name: "aten::sin"}},
	}
	sub, err := Submodule(m, "a")
	if err != nil {
		t.Fatal(err)
	}
	var names, attrs []string
	for _, g := range sub.Graphs {
		names = append(names, g.Name)
	}
	for _, a := range sub.Attributes {
		attrs = append(attrs, a.Name)
	}
	if want := []string{"", "b", "b.c"}; !cmp.Equal(names, want) {
		t.Errorf("graphs = %q, want %q", names, want)
	}
	if want := []string{"w"}; !cmp.Equal(attrs, want) {
		t.Errorf("attributes = %q, want %q", attrs, want)
	}
	if sub.Producer != "p" || len(sub.Schemas) != 1 {
		t.Errorf("module fields not kept: %+v", sub)
	}
	if m.Graphs[1].Name != "a" || m.Attributes[0].Name != "a.w" {
		t.Error("Submodule modified its input")
	}
	for _, root := range []string{"", "<root>"} {
		if got, err := Submodule(m, root); err != nil || got != m {
			t.Errorf("Submodule(%q) = %v, %v; want the module itself", root, got, err)
		}
	}
	_, err = Submodule(m, "nope")
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `no graph "nope" (the file has <root>, a, a.b, ab, a.b.c)`) {
		t.Errorf("Submodule(nope) = %v", err)
	}
}
