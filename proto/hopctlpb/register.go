package hopctlpb

import "sync"

// Register builds this package's message and enum descriptors and adds
// them to protobuf-go's global registry, once; it is safe to call from
// any goroutine and cheap after the first call.
//
// protoc-gen-go's code does this in a package initialiser, in every run of
// every hopctl command: 0.15–0.25 ms of start-up (GODEBUG=inittrace=1),
// although hopctl's own encoders and its binary decoder read and write the
// wire format without the generated messages. `make proto` deletes that
// initialiser from graph.pb.go (TestRegistrationIsLazy fails if it is
// back), so code that hands these messages to protobuf-go (proto.Marshal,
// protojson, prototext, ProtoReflect, String) must call Register first;
// pkg/ir does, before it decodes a JSON or text file and in ToProto.
// Reading and setting the structs' fields needs no registration.
func Register() { registerOnce.Do(file_hopctl_v1_graph_proto_init) }

var registerOnce sync.Once
