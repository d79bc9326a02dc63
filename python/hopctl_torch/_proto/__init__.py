"""Generated protobuf code for the hopctl interchange format (see proto/hopctl/v1/graph.proto)."""
