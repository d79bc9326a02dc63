package ir

import (
	"hash/maphash"
	"runtime"
	"sync"
)

// nameIndex maps each node name of a graph to the first node with that
// name, and counts the nodes whose name an earlier node has. A large graph
// splits it into shards by a hash of the name, one per core, built at the
// same time: on a million-node graph a single map took a third of a second
// of sequential inserts.
type nameIndex struct {
	seed   maphash.Seed
	shards []map[string]NodeID
	dups   int
}

func (x *nameIndex) shard(name string) map[string]NodeID {
	if len(x.shards) == 1 {
		return x.shards[0]
	}
	return x.shards[maphash.String(x.seed, name)%uint64(len(x.shards))]
}

func (x *nameIndex) get(name string) (NodeID, bool) {
	id, ok := x.shard(name)[name]
	return id, ok
}

// add records that node id is named name and reports whether an earlier
// node already had the name (which keeps it).
func (x *nameIndex) add(name string, id NodeID) (dup bool) {
	s := x.shard(name)
	if _, dup := s[name]; dup {
		x.dups++
		return true
	}
	s[name] = id
	return false
}

// buildNameIndex indexes the nodes of g.
func buildNameIndex(g *Graph) *nameIndex {
	x := &nameIndex{seed: maphash.MakeSeed()}
	shards := 1
	if len(g.Nodes) >= parallelNodes {
		shards = min(runtime.GOMAXPROCS(0), 4)
	}
	x.shards = make([]map[string]NodeID, shards)
	dups := make([]int, shards)
	// Worker w keeps the names that hash to w. It stores them last node
	// first, overwriting, so each name ends up with its first node: one
	// map operation per node instead of a look-up and an insert.
	fill := func(w int) {
		s := make(map[string]NodeID, len(g.Nodes)/shards+len(g.Nodes)/64)
		kept := 0
		for i := len(g.Nodes) - 1; i >= 0; i-- {
			name := g.Nodes[i].Name
			if shards > 1 && maphash.String(x.seed, name)%uint64(shards) != uint64(w) {
				continue
			}
			s[name] = NodeID(i)
			kept++
		}
		x.shards[w] = s
		dups[w] = kept - len(s)
	}
	if shards == 1 {
		fill(0)
	} else {
		var wg sync.WaitGroup
		for w := range shards {
			wg.Go(func() { fill(w) })
		}
		wg.Wait()
	}
	for _, d := range dups {
		x.dups += d
	}
	return x
}
