package viz

import "sort"

func sortSlice[T any](s []T, less func(i, j int) bool) { sort.SliceStable(s, less) }

// unionFind is a disjoint-set forest over 0..n-1.
type unionFind struct{ parent, sz []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), sz: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.sz[i] = i, 1
	}
	return u
}

func (u *unionFind) n() int { return len(u.parent) }

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	if a < 0 || b < 0 || a >= len(u.parent) || b >= len(u.parent) {
		return
	}
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.sz[a] < u.sz[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.sz[a] += u.sz[b]
}

func (u *unionFind) size(x int) int { return u.sz[u.find(x)] }
