package ir

import (
	"fmt"
	"slices"
	"testing"

	pb "github.com/hopctl/hopctl/proto/hopctlpb"
	"google.golang.org/protobuf/proto"
)

// TestWireParallelMatchesProto decodes graphs large enough for the binary
// decoder's workers (parallelNodes and up), which resolve the references
// to nearby nodes while they decode (resolveWindow, finishGraph), and
// compares the result with protobuf-go's decoding and FromProto, which
// resolve them afterwards, one node at a time: the same error, or the same node
// each reference resolves to, the same first node of each name, the same
// duplicate count and the same Verify result. The graphs mix references
// to the node before, to nodes further back than the window and across the
// workers' ranges, forward and dangling references, references inside lists
// and keyword arguments; variants repeat names, leave a dict entry without a
// value, and send the root graph in two parts that protobuf merges.
func TestWireParallelMatchesProto(t *testing.T) {

	const n = parallelNodes + 2000
	ref := func(name string) *pb.Arg { return &pb.Arg{Kind: &pb.Arg_Node{Node: name}} }
	nodes := func(n, from int, dup func(i int) string) []*pb.Node {
		var out []*pb.Node
		for i := from; i < from+n; i++ {
			name := fmt.Sprintf("v%d", i)
			if dup != nil {
				if d := dup(i); d != "" {
					name = d
				}
			}
			node := &pb.Node{Name: name, Op: pb.OpKind_CALL_FUNCTION, Target: "aten.add.Tensor"}
			switch {
			case i == 0:
				node.Op, node.Target = pb.OpKind_PLACEHOLDER, name
			case i%97 == 0: // far back: the first node, and one a worker's range away
				node.Args = []*pb.Arg{ref("v0"), ref(fmt.Sprintf("v%d", max(0, i-n/2)))}
			case i%89 == 0: // forward and dangling
				node.Args = []*pb.Arg{ref(fmt.Sprintf("v%d", i+3)), ref("nowhere")}
			case i%7 == 0: // inside a list and a keyword argument
				node.Args = []*pb.Arg{{Kind: &pb.Arg_List{List: &pb.ArgList{Items: []*pb.Arg{ref(fmt.Sprintf("v%d", i-1)), ref(fmt.Sprintf("v%d", i-5)), ref(fmt.Sprintf("v%d", i-30))}}}}}
				node.Kwargs = []*pb.Kwarg{{Name: "other", Value: ref(fmt.Sprintf("v%d", i-2))}}
			default:
				node.Args = []*pb.Arg{ref(fmt.Sprintf("v%d", i-1)), ref(fmt.Sprintf("v%d", max(0, i-9)))}
			}
			out = append(out, node)
		}
		return out
	}
	file := func(nodes []*pb.Node) []byte {
		b, err := proto.Marshal(&pb.File{FormatVersion: &pb.FormatVersion{Major: 1}, Graph: &pb.Graph{Nodes: nodes}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unique := file(nodes(n, 0, nil))
	dups := file(nodes(n, 0, func(i int) string {
		switch i {
		case n - 1, n / 2, n/2 + 3:
			return "v5" // a late duplicate of an early name
		case 10:
			return fmt.Sprintf("v%d", n-10) // an early one of a late name
		}
		return ""
	}))
	withUnset := nodes(n, 0, nil)
	withUnset[n-100].Args = append(withUnset[n-100].Args, &pb.Arg{Kind: &pb.Arg_Dict{Dict: &pb.ArgDict{Entries: []*pb.Kwarg{{Name: "k", Value: &pb.Arg{}}}}}})
	merged := append(file(nodes(n, 0, nil)), file(nodes(n, n, nil))...)
	mergedDup := append(file(nodes(n, 0, nil)), file(nodes(n, 0, nil))...)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"unique", unique}, {"duplicates", dups}, {"unset dict entry", file(withUnset)}, {"merged", merged}, {"merged duplicates", mergedDup}} {
		t.Run(tc.name, func(t *testing.T) {
			// Decoded from a copy cleared afterwards: no string of the
			// module may lie in its input (refsInInput).
			in := slices.Clone(tc.data)
			fast, ferr := decodeBinary(in, "big.pb", false)
			clear(in)
			pf := &pb.File{}
			if err := proto.Unmarshal(tc.data, pf); err != nil {
				t.Fatal(err)
			}
			slow, serr := FromProto(pf, "big.pb")
			if fmt.Sprint(ferr) != fmt.Sprint(serr) {
				t.Fatalf("streaming decoder err=%v, FromProto err=%v", ferr, serr)
			}
			if ferr != nil {
				if tc.name != "unset dict entry" {
					t.Fatal(ferr)
				}
				return
			}
			fg, sg := fast.Graphs[0], slow.Graphs[0]
			if len(fg.Nodes) != len(sg.Nodes) || len(fg.Nodes) < parallelNodes {
				t.Fatalf("%d and %d nodes", len(fg.Nodes), len(sg.Nodes))
			}
			refs := func(g *Graph) []*Arg {
				var out []*Arg
				for i := range g.Nodes {
					g.Nodes[i].WalkRefs(func(a *Arg) { out = append(out, a) })
				}
				return out
			}
			fr, sr := refs(fg), refs(sg)
			resolved := 0
			for i := range sr {
				if fr[i].Ref != sr[i].Ref || fr[i].S != sr[i].S {
					t.Fatalf("reference %d is to %q, resolved to %d; FromProto's to %q, %d", i, fr[i].S, fr[i].Ref, sr[i].S, sr[i].Ref)
				}
				if sr[i].Ref != NoNode {
					resolved++
				}
			}
			if resolved == 0 || resolved == len(sr) {
				t.Fatalf("%d of %d references resolved: the graph no longer has both kinds", resolved, len(sr))
			}
			if fx, sx := fg.names(), sg.names(); fx.dups != sx.dups || fx.used != sx.used {
				t.Errorf("index: %d dups, %d used; FromProto's %d, %d", fx.dups, fx.used, sx.dups, sx.used)
			}
			for i := range sg.Nodes {
				f, fok := fg.Lookup(sg.Nodes[i].Name)
				s, sok := sg.Lookup(sg.Nodes[i].Name)
				if f != s || fok != sok {
					t.Fatalf("Lookup(%q) = %d, %v; FromProto's %d, %v", sg.Nodes[i].Name, f, fok, s, sok)
				}
			}
			if fe, se := fmt.Sprint(Verify(fast, "big.pb")), fmt.Sprint(Verify(slow, "big.pb")); fe != se {
				t.Errorf("Verify:\n%s\nFromProto's:\n%s", fe, se)
			}
		})
	}
}
