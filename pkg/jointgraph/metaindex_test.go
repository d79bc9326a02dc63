package jointgraph

import (
	"math/rand/v2"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// metaIndex finds what a map keyed by the same keys finds: keys differing
// in any one word (strings, ranks, offset, a size or a stride) are apart.
func TestMetaIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	key := func() metaKey {
		k := metaKey{strs: int32(r.IntN(3)), rank: int8(r.IntN(maxInternRank + 1)), offset: int64(r.IntN(2))}
		k.strideRank = k.rank
		if r.IntN(4) == 0 {
			k.strideRank = -1
		}
		for i := range int(k.rank) {
			k.shape[i] = int64(r.IntN(3)) << r.IntN(8)
			if k.strideRank >= 0 {
				k.stride[i] = int64(r.IntN(3))
			}
		}
		return k
	}
	var x metaIndex
	want := map[metaKey]*ir.Value{}
	for range 20000 {
		k := key()
		got := x.get(&k)
		if got != want[k] {
			t.Fatalf("key %+v: got %p, want %p", k, got, want[k])
		}
		if got == nil && len(want) < 3000 {
			v := &ir.Value{}
			x.put(&k, v)
			want[k] = v
		}
	}
	if len(want) < 1000 {
		t.Fatalf("only %d distinct keys: the test does not probe collisions", len(want))
	}
}

// Keys differing in one word are not the same; equal keys are.
func TestMetaKeySame(t *testing.T) {
	base := metaKey{strs: 1, rank: 6, strideRank: 6, offset: 2,
		shape: [maxInternRank]int64{1, 2, 3, 4, 5, 6}, stride: [maxInternRank]int64{7, 8, 9, 10, 11, 12}}
	c := base
	if !base.same(&c) || base.hash() != c.hash() {
		t.Fatal("equal keys differ")
	}
	mutate := []func(k *metaKey){
		func(k *metaKey) { k.strs++ }, func(k *metaKey) { k.rank-- }, func(k *metaKey) { k.strideRank = -1 },
		func(k *metaKey) { k.offset++ },
	}
	for i := range maxInternRank {
		mutate = append(mutate, func(k *metaKey) { k.shape[i]++ }, func(k *metaKey) { k.stride[i]++ })
	}
	for i, f := range mutate {
		o := base
		f(&o)
		if base.same(&o) || o.same(&base) {
			t.Errorf("mutation %d: keys %+v and %+v are the same", i, base, o)
		}
	}
}
