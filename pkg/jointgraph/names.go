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
	// hint is how many more names are expected (map sizing).
	hint int
	// pending, while not nil, takes the names of the graphs
	// reserveGraphAsync passed to another goroutine: until it is waited
	// for, that goroutine owns bases, other and bmemo.
	pending *background
	buf     []byte
	slab    []byte // backs the names fresh made (str)
	// memo holds the entries of recent candidates that fresh takes as
	// they are (clean, no numeric suffix, legal): the builders ask for a
	// few dozen op names a million times, and sanitizing, parsing and
	// looking each up was 5 % of Build's instructions at 100k nodes
	// (docs/performance-log.md, Eighth pass).
	memo addrMemo[*nameBase]
	// bmemo holds recently used entries of bases by their base's
	// contents (entry): reserving a graph's names looks a base up per
	// node, and a map lookup hashes the whole base.
	bmemo [64]baseMemo
	// opMemo holds recent call targets' base names (freshOp).
	opMemo addrMemo[string]
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

// expect says that about extra more names will be taken.
func (n *names) expect(extra int) { n.hint += extra }

// asyncNames is the smallest graph whose names reserveGraphAsync takes on
// another goroutine.
var asyncNames = 1 << 14 // a variable for the tests

// reserveGraphAsync is reserveGraph, the names of a large graph taken on
// another goroutine from now on, while the caller does other work: the
// first fresh or reserve waits for them. Taking the names of the input
// graph and of the functional graph, a reservation each, was about 8 %
// of Build's instructions at 100k nodes; functionalize's checks and the
// joint's requires-grad analysis run meanwhile (docs/performance-log.md,
// Eighth pass). The result does not depend on the timing: the same names
// are taken either way.
func (n *names) reserveGraphAsync(g *ir.Graph, skipPlaceholders bool) {
	n.reserveGraph(g, skipPlaceholders)
	if len(g.Nodes) < asyncNames || n.pending != nil {
		return
	}
	lazy := n.lazy
	n.lazy = nil
	n.pending = goBackground(func() { n.reserveAll(lazy) })
}

// materialize takes the names of the graphs reserveGraph passed.
func (n *names) materialize() {
	n.wait()
	lazy := n.lazy
	n.lazy = nil
	n.reserveAll(lazy)
}

// wait waits for reserveGraphAsync's goroutine.
func (n *names) wait() {
	p := n.pending
	n.pending = nil
	p.wait()
}

func (n *names) reserveAll(lazy []lazyNames) {
	for _, l := range lazy {
		for i := range l.g.Nodes {
			if !l.skipPlaceholders || l.g.Nodes[i].Op != ir.OpPlaceholder {
				n.reserveName(l.g.Nodes[i].Name)
			}
		}
	}
}

func (n *names) entry(base string) *nameBase {
	slot := &n.bmemo[bmemoSlot(base)]
	if slot.e != nil && slot.base == base {
		return slot.e
	}
	e := n.bases[base]
	if e == nil {
		e = &nameBase{}
		n.bases[base] = e
	}
	*slot = baseMemo{base, e}
	return e
}

// baseMemo is an entry of bases and its base name (bmemo).
type baseMemo struct {
	base string
	e    *nameBase
}

// bmemoSlot is base's slot in names.bmemo, from its length and first and
// last bytes (a graph's names have a few dozen bases).
func bmemoSlot(base string) int {
	if base == "" {
		return 0
	}
	return (len(base)*7 + int(base[0])*3 + int(base[len(base)-1])) & (len(names{}.bmemo) - 1)
}

// parseName splits a name into its base and suffix (-1: none, see
// splitSuffix) and says whether the suffix is written canonically (as
// strconv.Itoa writes it) and small enough for the bitset.
func parseName(s string) (base string, num int, canonical bool) {
	// Most names are a base, '_' and a short canonical number ("view_12"):
	// read the digits from the end once (the general case below scans for
	// '_' and then parses). With the base memo (entry), reserving a graph's
	// names this way took 3 % fewer of Build's instructions at 100k nodes
	// (docs/performance-log.md, Eighth pass).
	j := len(s) - 1
	for j >= 0 && s[j] >= '0' && s[j] <= '9' {
		j--
	}
	if digits := len(s) - 1 - j; j > 0 && s[j] == '_' && digits >= 1 && digits <= 7 && (s[j+1] != '0' || digits == 1) {
		v := 0
		for k := j + 1; k < len(s); k++ {
			v = v*10 + int(s[k]-'0')
		}
		if v < maxSuffixBit {
			return s[:j], v, true
		}
	}
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
	n.wait()
	n.reserveName(name)
}

func (n *names) reserveName(name string) {
	base, num, canonical := parseName(name)
	n.take(name, base, num, canonical)
}

// fresh returns a free name based on candidate.
func (n *names) fresh(candidate string) string {
	if n.lazy != nil || n.pending != nil {
		n.materialize()
	}
	num := 0
	base := candidate
	e, ok := n.memo.get(candidate)
	if !ok || !e.bare {
		c := sanitize(candidate)
		var canonical bool
		base, num, canonical = parseName(c)
		if num < 0 {
			e = n.entry(c)
			legal := !illegalName(c)
			if c == candidate && legal {
				n.memo.put(candidate, e)
			}
			if !e.bare && legal {
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
	}
	if e.next > num {
		num = e.next
	}
	for {
		num++
		if num < maxSuffixBit {
			if e.has(num) {
				continue
			}
			e.set(num)
		} else {
			n.buf = appendDec(append(append(n.buf[:0], base...), '_'), num)
			if n.other[string(n.buf)] {
				continue
			}
			n.other[string(n.buf)] = true
		}
		e.next = num
		n.buf = appendDec(append(append(n.buf[:0], base...), '_'), num)
		return n.str(n.buf)
	}
}

// freshOp returns a free name for a call to target: opBaseName(target)
// made unique. The base names of recent targets are memoized by the
// target's address (opMemo).
func (n *names) freshOp(target string) string {
	base, ok := n.opMemo.get(target)
	if !ok {
		base = opBaseName(target)
		n.opMemo.put(target, base)
	}
	return n.fresh(base)
}

// numbered returns prefix followed by k ("primals_" and 3: "primals_3"),
// cut from the slab.
func (n *names) numbered(prefix string, k int) string {
	n.buf = appendDec(append(n.buf[:0], prefix...), k)
	return n.str(n.buf)
}

// appendDec appends the decimal digits of v ≥ 0 to b: strconv.AppendInt's
// result without its general path, which was 2 % of Build's instructions
// at 100k nodes (a fresh name per emitted node; docs/performance-log.md,
// Ninth pass).
func appendDec(b []byte, v int) []byte {
	var d [20]byte
	i := len(d)
	for v >= 10 {
		q := v / 10
		i--
		d[i] = byte('0' + v - 10*q)
		v = q
	}
	i--
	d[i] = byte('0' + v)
	return append(b, d[i:]...)
}

// nameSlab is the largest chunk fresh names are cut from. Chunks start
// small and double, so the many tiny builders of a file with thousands of
// HOP subgraphs do not each hold a 4 KiB chunk (8,000 conds requiring
// grad: 620 MiB of live heap with fixed-size chunks).
const nameSlab = 4096

// str returns b as a string cut from the names' slab: one allocation per
// few hundred names instead of one per name. The slab is append-only, so
// the strings it backs never change.
func (n *names) str(b []byte) string {
	if len(b) == 0 || len(b) > nameSlab/8 {
		return string(b)
	}
	if len(n.slab)+len(b) > cap(n.slab) {
		n.slab = make([]byte, 0, min(max(2*cap(n.slab), 64, len(b)), nameSlab))
	}
	start := len(n.slab)
	n.slab = append(n.slab, b...)
	return unsafe.String(&n.slab[start], len(b))
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
	v, ok := atoi(s[i+1:])
	if !ok || v < 0 {
		return s, -1
	}
	return s[:i], v
}

// atoi is strconv.Atoi's result and success, without the error value
// (which allocates): an optional sign, then decimal digits.
func atoi(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		if v > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return int(-int64(v)), true // -1<<63 fits
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int(v), true
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

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }
