package jointgraph

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/hopctl/hopctl/pkg/ir"
)

// names allocates node names the way torch.fx's _Namespace.create_name
// does, so that a graph loaded into torch keeps the names hopctl wrote:
// illegal characters become '_', a name that is taken, a Python keyword or
// builtin, or one of FX's own globals gets the next free "_N" suffix.
//
// Taken names are kept per base name: "mm" and "mm_1", "mm_2", ... are
// one entry, a flag and a bitset of suffixes, so handing out a name costs
// one map lookup of a short key. Names whose suffix is not in canonical
// form ("x_01"), or is very large, are kept as strings.
type names struct {
	bases map[string]*nameBase
	other map[string]bool
	// lazy are graphs whose node names are taken; they are added when the
	// first fresh name is needed (often none is).
	lazy []lazyNames
	buf  []byte
	// text holds the bytes of the names fresh and numbered make, many to
	// a chunk (chunks start small and double to nameChunk, as argument
	// chunks do): one allocation per chunk, not one per node. A chunk's
	// bytes are never written again once a name is cut from them.
	text []byte
}

const nameChunk = 16 << 10

// keep returns b's bytes as a string cut from n.text.
func (n *names) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(n.text)+len(b) > cap(n.text) {
		n.text = make([]byte, 0, max(min(2*cap(n.text), nameChunk), 64, len(b)))
	}
	off := len(n.text)
	n.text = append(n.text, b...)
	return unsafe.String(&n.text[off], len(b))
}

type nameBase struct {
	bare bool     // the base itself is taken
	next int      // last suffix handed out, to skip ahead
	bits []uint64 // taken canonical suffixes below maxSuffixBit
}

const maxSuffixBit = 1 << 22

type lazyNames struct {
	g                *ir.Graph
	skipPlaceholders bool
}

func newNames() *names {
	return &names{bases: map[string]*nameBase{}, other: map[string]bool{}}
}

// reserveGraph marks the names of g's nodes (but its placeholders' when
// skipPlaceholders) as taken. g's node names must not change until the
// next fresh.
func (n *names) reserveGraph(g *ir.Graph, skipPlaceholders bool) {
	n.lazy = append(n.lazy, lazyNames{g, skipPlaceholders})
}

// materialize takes the names of the graphs reserveGraph passed.
func (n *names) materialize() {
	lazy := n.lazy
	n.lazy = nil
	n.reserveAll(lazy)
}

func (n *names) reserveAll(lazy []lazyNames) {
	for _, l := range lazy {
		for i := range l.g.Nodes {
			if !l.skipPlaceholders || l.g.Nodes[i].Op != ir.OpPlaceholder {
				n.reserve(l.g.Nodes[i].Name)
			}
		}
	}
}

func (n *names) entry(base string) *nameBase {
	e := n.bases[base]
	if e == nil {
		e = &nameBase{}
		n.bases[base] = e
	}
	return e
}

// parseName splits a name into its base and suffix (-1: none, see
// splitSuffix) and says whether the suffix is written canonically (as
// strconv.Itoa writes it) and small enough for the bitset.
func parseName(s string) (base string, num int, canonical bool) {
	base, num = splitSuffix(s)
	if num < 0 {
		return base, num, false
	}
	suf := s[len(base)+1:]
	canonical = suf[0] != '+' && suf[0] != '-' && (suf[0] != '0' || len(suf) == 1) && num < maxSuffixBit
	return base, num, canonical
}

func (e *nameBase) has(num int) bool {
	w := num >> 6
	return w < len(e.bits) && e.bits[w]&(1<<(num&63)) != 0
}

func (e *nameBase) set(num int) {
	w := num >> 6
	if w >= len(e.bits) {
		e.bits = append(e.bits, make([]uint64, w+1-len(e.bits)+len(e.bits)/2)...)
	}
	e.bits[w] |= 1 << (num & 63)
}

// taken reports whether name s (parsed) is taken.
func (n *names) taken(s, base string, num int, canonical bool) bool {
	switch {
	case num < 0:
		e := n.bases[s]
		return e != nil && e.bare
	case canonical:
		e := n.bases[base]
		return e != nil && e.has(num)
	}
	return n.other[s]
}

func (n *names) take(s, base string, num int, canonical bool) {
	switch {
	case num < 0:
		n.entry(s).bare = true
	case canonical:
		n.entry(base).set(num)
	default:
		n.other[s] = true
	}
}

// reserve marks name as taken without checking it.
func (n *names) reserve(name string) {
	base, num, canonical := parseName(name)
	n.take(name, base, num, canonical)
}

// fresh returns a free name based on candidate.
func (n *names) fresh(candidate string) string {
	if n.lazy != nil {
		n.materialize()
	}
	c := sanitize(candidate)
	base, num, canonical := parseName(c)
	var e *nameBase
	if num < 0 {
		e = n.entry(c)
		if !e.bare && !illegalName(c) {
			e.bare = true
			return c
		}
		num = 0
	} else if !n.taken(c, base, num, canonical) {
		n.take(c, base, num, canonical)
		return c
	} else {
		e = n.entry(base)
	}
	if e.next > num {
		num = e.next
	}
	for {
		num++
		n.buf = strconv.AppendInt(append(append(n.buf[:0], base...), '_'), int64(num), 10)
		if num < maxSuffixBit {
			if e.has(num) {
				continue
			}
			e.set(num)
		} else {
			if n.other[string(n.buf)] {
				continue
			}
			n.other[string(n.buf)] = true
		}
		e.next = num
		return n.keep(n.buf)
	}
}

// freshOp returns a free name for a call to target: opBaseName(target)
// made unique.
func (n *names) freshOp(target string) string { return n.fresh(opBaseName(target)) }

// numbered returns prefix followed by k ("primals_" and 3: "primals_3").
func (n *names) numbered(prefix string, k int) string {
	n.buf = strconv.AppendInt(append(n.buf[:0], prefix...), int64(k), 10)
	return n.keep(n.buf)
}

func sanitize(s string) string {
	if cleanName(s) {
		return s
	}
	var b strings.Builder
	prevBad := false
	for _, r := range s {
		ok := r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if ok {
			b.WriteRune(r)
			prevBad = false
		} else if !prevBad {
			b.WriteByte('_')
			prevBad = true
		}
	}
	out := b.String()
	if out == "" {
		return "_"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// cleanName reports whether sanitize leaves s as it is.
func cleanName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// splitSuffix splits "name_12" into ("name", 12); num is -1 without suffix.
func splitSuffix(s string) (string, int) {
	i := strings.LastIndexByte(s, '_')
	if i <= 0 || i == len(s)-1 {
		return s, -1
	}
	// Most names without a number end in a word ("native_layer_norm"):
	// those are told apart here, as Atoi would refuse them, without the
	// error value it allocates.
	if !signedDigits(s[i+1:]) {
		return s, -1
	}
	v, err := strconv.Atoi(s[i+1:])
	if err != nil || v < 0 {
		return s, -1
	}
	return s[:i], v
}

// signedDigits reports whether s is an optional sign and one or more
// decimal digits: the syntax strconv.Atoi accepts.
func signedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// opBaseName is the name make_fx gives a call to target: the operator's
// name without namespace and overload ("aten.sum.dim_IntList" → "sum").
func opBaseName(target string) string {
	if target == "_operator.getitem" {
		return "getitem"
	}
	last := strings.LastIndexByte(target, '.')
	if last < 0 {
		return target
	}
	if prev := strings.LastIndexByte(target[:last], '.'); prev >= 0 {
		return target[prev+1 : last]
	}
	return target[last+1:]
}

func illegalName(s string) bool { return pythonReserved()[s] }

// pythonReserved holds Python 3 keywords, the public builtins and the
// globals torch.fx adds to generated code (inf, nan, torch, device, ...).
var pythonReserved = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`False None True and as assert async await break class
continue def del elif else except finally for from global if import in is lambda nonlocal
not or pass raise return try while with yield
abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod
compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter
float format frozenset getattr globals hasattr hash help hex id input int isinstance
issubclass iter len license list locals map max memoryview min next object oct open ord pow
print property quit range repr reversed round set setattr slice sorted staticmethod str sum
super tuple type vars zip Ellipsis NotImplemented
inf nan NoneType torch device fx_pytree pytree`) {
		m[w] = true
	}
	return m
})
