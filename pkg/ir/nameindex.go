package ir

import (
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// nameIndex maps each node name of a graph to the first node with that
// name, and counts the nodes whose name an earlier node has.
//
// It is an open-addressing table of node ids (linear probing, at most three
// quarters full): each slot is one word holding the high half of the name's
// hash and the node id plus one (zero is an empty slot), and the name itself
// is read from the graph's node when the hash halves match. A million-node
// graph's index is 16 MB in one allocation, a quarter of what a Go map of
// the names took, and building it touches one slot per node instead of a
// map's groups of keys: on a million-node graph the map's inserts, missing
// the cache on fresh memory, took a third of a second. A large graph is
// indexed on all cores at once, slots claimed by compare-and-swap.
type nameIndex struct {
	g     *Graph
	seed  maphash.Seed
	slots []uint64
	used  int // slots in use
	dups  int
}

// nameSlot packs a hash and a node id into a slot.
func nameSlot(h uint64, id NodeID) uint64 {
	return h&^(1<<32-1) | uint64(uint32(id)+1)
}

// slotID is the node id held by a used slot.
func slotID(s uint64) NodeID { return NodeID(uint32(s) - 1) }

// sameName reports whether slot s (in use) holds name, whose hash is h.
func (x *nameIndex) sameName(s, h uint64, name string) bool {
	if (s^h)>>32 != 0 {
		return false
	}
	id := int(slotID(s))
	return id < len(x.g.Nodes) && x.g.Nodes[id].Name == name
}

func (x *nameIndex) get(name string) (NodeID, bool) {
	h := maphash.String(x.seed, name)
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if x.sameName(s, h, name) {
			return slotID(s), true
		}
	}
}

// add records that node id (the graph's last) is named name and reports
// whether an earlier node already had the name (which keeps it).
func (x *nameIndex) add(name string, id NodeID) (dup bool) {
	if 4*(x.used+1) > 3*len(x.slots) {
		x.grow()
	}
	h := maphash.String(x.seed, name)
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			x.slots[i] = nameSlot(h, id)
			x.used++
			return false
		}
		if x.sameName(s, h, name) {
			x.dups++
			return true
		}
	}
}

// grow doubles the table, moving every slot.
func (x *nameIndex) grow() {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		id := slotID(s)
		i := maphash.String(x.seed, x.g.Nodes[id].Name) & mask
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// nameSlots is the table size for n names: a power of two at least 4/3 n.
func nameSlots(n int) int {
	return max(8, 1<<bits.Len(uint(n+n/3)))
}

// buildNameIndex indexes the nodes of g.
func buildNameIndex(g *Graph) *nameIndex {
	n := len(g.Nodes)
	x := &nameIndex{g: g, seed: maphash.MakeSeed(), slots: make([]uint64, nameSlots(n))}
	workers := 1
	if n >= parallelNodes {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	if workers == 1 {
		for i := range g.Nodes {
			x.add(g.Nodes[i].Name, NodeID(i))
		}
		return x
	}
	// Each worker inserts a contiguous range of nodes. A name met twice
	// counts one duplicate whichever worker meets it second; the slot keeps
	// the smaller id, replaced by compare-and-swap if a later node got
	// there first.
	var used, dups atomic.Int64
	mask := uint64(len(x.slots) - 1)
	fill := func(lo, hi int) {
		u, d := 0, 0
		for id := lo; id < hi; id++ {
			name := g.Nodes[id].Name
			h := maphash.String(x.seed, name)
			mine := nameSlot(h, NodeID(id))
			for i := h & mask; ; {
				p := &x.slots[i]
				s := atomic.LoadUint64(p)
				if s == 0 {
					if atomic.CompareAndSwapUint64(p, 0, mine) {
						u++
						break
					}
					continue // another worker took it: look again
				}
				if x.sameName(s, h, name) {
					d++
					if slotID(s) > NodeID(id) && !atomic.CompareAndSwapUint64(p, s, mine) {
						d-- // the slot changed under us: look again
						continue
					}
					break
				}
				i = (i + 1) & mask
			}
		}
		used.Add(int64(u))
		dups.Add(int64(d))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fill(w*n/workers, (w+1)*n/workers) })
	}
	wg.Wait()
	x.used, x.dups = int(used.Load()), int(dups.Load())
	return x
}
