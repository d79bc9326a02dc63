package ir

import (
	"hash/maphash"
	"math/bits"
)

// nameIndex maps each node name of a graph to the first node with that
// name, and counts the nodes whose name an earlier node has.
//
// It is an open-addressing table of node ids (linear probing, at most three
// quarters full): each slot is one word holding the high half of the name's
// hash, which also places it, and the node id plus one (zero is an empty
// slot); the name itself is read from the graph's node when the hash halves
// match. The index is one word per slot, in one allocation: a quarter of
// the memory of a Go map from the names, which matters for the
// million-node graphs hopctl reads and builds.
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
	for i := h >> 32 & mask; ; i = (i + 1) & mask {
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
	for i := h >> 32 & mask; ; i = (i + 1) & mask {
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

// grow doubles the table, moving every slot: a slot's position comes from
// the hash half it holds, so no name is read (nor hashed) again.
func (x *nameIndex) grow() {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := s >> 32 & mask
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
	x := newNameIndex(g, len(g.Nodes))
	for i := range g.Nodes {
		x.add(g.Nodes[i].Name, NodeID(i))
	}
	return x
}

// newNameIndex returns an empty index of g with room for n names.
func newNameIndex(g *Graph, n int) *nameIndex {
	return &nameIndex{g: g, seed: maphash.MakeSeed(), slots: make([]uint64, nameSlots(n))}
}
