package ir

import (
	"hash/maphash"
	"math"
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
// hash, which also places it, and the node id plus one (zero is an empty
// slot); the name itself is read from the graph's node when the hash halves
// match. A million-node
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
	// shared collects the counts of goroutines inserting at once (insert).
	shared struct{ used, dups atomic.Int64 }
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
	n := len(g.Nodes)
	x := newNameIndex(g, n)
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
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var c nameCounts
			var hs [nameBatch]uint64
			mask := uint64(len(x.slots) - 1)
			for lo, hi := w*n/workers, (w+1)*n/workers; lo < hi; lo += nameBatch {
				k := min(nameBatch, hi-lo)
				// The names of a batch hashed and the first slot of each
				// read before any is inserted: the reads, independent of
				// each other, wait for memory together, where an insert's
				// compare-and-swap (a locked instruction: no later read
				// passes it) waited alone. A million names on two
				// goroutines, the least of 10 alternating runs, five
				// times under load: 144–207 ms → 106–153 ms
				// (docs/performance-log.md, Eighth pass).
				for j := range k {
					h := maphash.String(x.seed, g.Nodes[lo+j].Name)
					hs[j] = h
					c.touched ^= atomic.LoadUint64(&x.slots[h>>32&mask])
				}
				for j := range k {
					x.insert(g.Nodes[lo+j].Name, hs[j], NodeID(lo+j), &c)
				}
			}
			x.addCounts(c)
		})
	}
	wg.Wait()
	x.finish()
	return x
}

// newNameIndex returns an empty index of g with room for n names.
func newNameIndex(g *Graph, n int) *nameIndex {
	return &nameIndex{g: g, seed: maphash.MakeSeed(), slots: make([]uint64, nameSlots(n))}
}

// nameCounts are one goroutine's counts of slots used and duplicates met
// while it inserts (insert), added to the index's once it is done.
type nameCounts struct {
	used, dups int
	touched    uint64 // the slots read ahead (buildNameIndex), kept so that the reads are made
}

// nameBatch is how many names buildNameIndex's goroutines hash and look
// up ahead of inserting them.
const nameBatch = 16

// insert records node id's name, whose hash is h, in x, as add does, but safely while other
// goroutines insert too (without growing: x has room for every name):
// slots are claimed by compare-and-swap. A name met twice counts one
// duplicate whichever goroutine meets it second; the slot keeps the smaller
// id, replaced if a later node got there first. Node id must be written
// before it is inserted: other goroutines read its name once its slot is
// visible. The counts go to c; addCounts and finish make them x's.
func (x *nameIndex) insert(name string, h uint64, id NodeID, c *nameCounts) {
	mask := uint64(len(x.slots) - 1)
	mine := nameSlot(h, id)
	for i := h >> 32 & mask; ; {
		p := &x.slots[i]
		s := atomic.LoadUint64(p)
		if s == 0 {
			if atomic.CompareAndSwapUint64(p, 0, mine) {
				c.used++
				return
			}
			continue // another goroutine took it: look again
		}
		if x.sameName(s, h, name) {
			if slotID(s) > id && !atomic.CompareAndSwapUint64(p, s, mine) {
				continue // the slot changed under us: look again
			}
			c.dups++
			return
		}
		i = (i + 1) & mask
	}
}

// addCounts adds one goroutine's counts (insert) to the index's.
func (x *nameIndex) addCounts(c nameCounts) {
	x.shared.used.Add(int64(c.used))
	x.shared.dups.Add(int64(c.dups))
}

// finish makes the counts of concurrent inserts the index's, once every
// inserting goroutine is done.
func (x *nameIndex) finish() {
	x.used, x.dups = int(x.shared.used.Load()), int(x.shared.dups.Load())
}

// distinctNames reports whether no two of g's nodes share a name, without
// building g's name index (Verify, for a large graph hopctl built: its
// index was never needed before, and is not after). It hashes every name
// into one of some thousands of buckets, in one pass, then compares each
// bucket's several hundred hashes in a table that stays in cache, where the
// index's inserts each missed the cache on a table of 32 MB: 2.25M names
// (as many as the 1M-node synth graph's joint has), on one core under
// load, their memory fresh, 420–556 ms → 97–181 ms, and 33.5 → 23.1 MB
// (docs/performance-log.md, Ninth pass). False when two names hash
// alike (two equal names, or two whose 64-bit hashes collide: about once
// in 10^7 such graphs) or a bucket gets more hashes than it has room for
// (six standard deviations over its share: under once in 10^6 graphs),
// which the index then decides.
func distinctNames(g *Graph) bool {
	n := len(g.Nodes)
	b := bits.Len(uint(n / distinctBucket))
	shift := uint(64 - b) // the bucket: a hash's top b bits (none when b is 0)
	share := n >> b
	room := share + 6*int(math.Sqrt(float64(share))) + 16
	hs := make([]uint64, room<<b)
	fill := make([]int, 1<<b)
	seed := maphash.MakeSeed()
	for i := range g.Nodes {
		h := maphash.String(seed, g.Nodes[i].Name)
		k := int(h >> shift)
		if fill[k] == room {
			return false
		}
		hs[k*room+fill[k]] = h
		fill[k]++
	}
	// Each bucket's hashes go into a table of at least twice as many
	// slots, cleared for the next.
	table := make([]uint64, 1<<bits.Len(uint(2*room)))
	for k, f := range fill {
		t := table[:1<<bits.Len(uint(2*f))]
		clear(t)
		mask := uint64(len(t) - 1)
		zero := false
		for _, h := range hs[k*room : k*room+f] {
			if h == 0 { // the table's empty slot
				if zero {
					return false
				}
				zero = true
				continue
			}
			i := h & mask
			for t[i] != 0 {
				if t[i] == h {
					return false
				}
				i = (i + 1) & mask
			}
			t[i] = h
		}
	}
	return true
}

// distinctBucket is about how many names distinctNames compares in one
// table: 8 KiB of hashes, a table of 16–32 KiB, in the first-level cache;
// a few thousand buckets filled at once, their last lines in the second.
const distinctBucket = 1024
