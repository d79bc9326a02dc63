package hopctlpb

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestRegistrationIsLazy checks that nothing registers the file's
// descriptors before Register is called (the generated initialiser that did
// is removed by `make proto`), and that Register makes the messages usable
// by protobuf-go.
func TestRegistrationIsLazy(t *testing.T) {
	if File_hopctl_v1_graph_proto != nil {
		t.Fatal("graph.proto is registered at start: graph.pb.go has its init() again (regenerate with `make proto`)")
	}
	if _, err := protoregistry.GlobalFiles.FindFileByPath("hopctl/v1/graph.proto"); err == nil {
		t.Fatal("graph.proto is in the global registry before Register")
	}
	Register()
	Register() // a second call does nothing
	if _, err := protoregistry.GlobalFiles.FindFileByPath("hopctl/v1/graph.proto"); err != nil {
		t.Fatalf("after Register: %v", err)
	}
	in := &File{Producer: "p", FormatVersion: &FormatVersion{Major: 1, Minor: 1}}
	b, err := proto.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := &File{}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("round trip: %v, want %v", out, in)
	}
}
