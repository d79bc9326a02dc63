package jointgraph

import (
	"math/bits"

	"github.com/hopctl/hopctl/pkg/ir"
)

// metaIndex maps metaKeys to interned values: an open-addressing table
// whose hash and comparison read only the words a key uses (its rank's
// sizes and strides). A Go map hashed and compared all 112 bytes of every
// key, ~330 instructions a lookup, ~4 % of Build's instructions at 100k
// nodes (docs/performance-log.md, Ninth pass). Which value a key finds
// depends only on the keys stored, not on the hash.
type metaIndex struct {
	// slots hold 1 + an index into entries (0: empty); their number is a
	// power of two, at least twice the entries'.
	slots   []int32
	shift   uint // 64 - log2(len(slots)): a slot is a hash's high bits
	entries []metaEntry
}

type metaEntry struct {
	k metaKey
	v *ir.Value
}

// hash mixes k's words, unrolled (the words past a key's ranks are zero).
func (k *metaKey) hash() uint64 {
	const m = 0x9e3779b97f4a7c15
	x, y := &k.shape, &k.stride
	h := uint64(uint32(k.strs)) | uint64(uint8(k.rank))<<32 | uint64(uint8(k.strideRank))<<40
	h += uint64(k.offset)*0xff51afd7ed558ccd + uint64(x[0])*0xc4ceb9fe1a85ec53 + uint64(x[1])*0x87c37b91114253d5 +
		uint64(x[2])*0x4cf5ad432745937f + uint64(x[3])*0x52dce729da3ed8f5 + uint64(x[4])*0x94d049bb133111eb +
		uint64(x[5])*0xbf58476d1ce4e5b9 + uint64(y[0])*0x2545f4914f6cdd1d + uint64(y[1])*0x9fb21c651e98df25 +
		uint64(y[2])*0xd6e8feb86659fd93 + uint64(y[3])*0xa0761d6478bd642f + uint64(y[4])*0xe7037ed1a0b428db +
		uint64(y[5])*0x8ebc6af09c88c6e3
	return h * m // its high bits are mixed best: metaIndex reads those
}

// same reports whether k and o are equal keys.
func (k *metaKey) same(o *metaKey) bool {
	x, y := &k.shape, &o.shape
	v, w := &k.stride, &o.stride
	return k.strs == o.strs && k.rank == o.rank && k.strideRank == o.strideRank &&
		(k.offset^o.offset)|(x[0]^y[0])|(x[1]^y[1])|(x[2]^y[2])|(x[3]^y[3])|(x[4]^y[4])|(x[5]^y[5])|
			(v[0]^w[0])|(v[1]^w[1])|(v[2]^w[2])|(v[3]^w[3])|(v[4]^w[4])|(v[5]^w[5]) == 0
}

// get returns the value stored under k, or nil.
func (x *metaIndex) get(k *metaKey) *ir.Value {
	if len(x.slots) == 0 {
		return nil
	}
	mask := uint64(len(x.slots) - 1)
	for i := k.hash() >> x.shift; ; i = (i + 1) & mask {
		e := x.slots[i]
		if e == 0 {
			return nil
		}
		if en := &x.entries[e-1]; en.k.same(k) {
			return en.v
		}
	}
}

// put stores v under k, which is not stored yet.
func (x *metaIndex) put(k *metaKey, v *ir.Value) {
	x.entries = append(x.entries, metaEntry{*k, v})
	if 2*len(x.entries) > len(x.slots) {
		x.slots = make([]int32, max(2*len(x.slots), 16))
		x.shift = uint(64 - bits.TrailingZeros(uint(len(x.slots))))
		for i := range x.entries {
			x.insert(int32(i))
		}
		return
	}
	x.insert(int32(len(x.entries) - 1))
}

// insert puts entry e in the first free slot of its probe sequence.
func (x *metaIndex) insert(e int32) {
	mask := uint64(len(x.slots) - 1)
	i := x.entries[e].k.hash() >> x.shift
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = e + 1
}
