// Command unmarshal is the floor under `hopctl analyze` in `make bench`:
// it reads a binary hopctl file and decodes it with protobuf-go's
// proto.Unmarshal into the generated messages, and does nothing else.
// The ratio of analyze to it says what hopctl's own decoder and analysis
// cost beside the library decoder every protobuf user has.
package main

import (
	"fmt"
	"os"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/proto"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: unmarshal FILE.pb")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var f pb.File
	if err := proto.Unmarshal(b, &f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(f.GetGraph().GetNodes()), "nodes")
}
