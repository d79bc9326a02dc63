package ir

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"runtime"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// A streaming encoder for the binary encoding: it writes the IR straight to
// wire bytes, without building the generated protobuf objects, and gives
// exactly the bytes proto.MarshalOptions{Deterministic: true} gives for
// ToProto(m) (TestWireEncoderMatchesProto and FuzzWireEncoderMatchesProto
// check it): fields in field-number order, proto3 scalars left out when
// zero, oneof members and explicit-presence fields always written.

var errInvalidUTF8 = errors.New("string field contains invalid UTF-8")

// A WriteError is an error of the writer an encoding is streamed to
// (EncodeSourceTo), as opposed to one of the encoding itself.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

type wireEncoder struct {
	b   []byte
	err error
	// vals memoizes the encoding of shared values (nodeValue); memo and
	// entries back the encodings and entries it keeps.
	vals    *ValueMemo
	memo    []byte
	entries []memoEntry
	// root, when set, supplies the root graph's nodes (EncodeSource);
	// refs is set while they are written.
	root, refs NodeSource
	// w, when set, receives the output as it is made (streamRoot), e.chunk
	// bytes at a time; f is w when it is a regular file (outputFile), and
	// cut is set when the file has bytes past the encoding's end to cut
	// (streamRootAt).
	w     io.Writer
	chunk int
	f     outputFile
	cut   bool
}

// streamChunk is how much output a streaming wireEncoder collects before
// writing it (a variable for the tests).
var streamChunk = 1 << 20

// fileChunk is streamChunk for an encoder writing to a regular file
// (outputFile), which encodes a large root graph's nodes once at their
// place (unless its length guess is wrong: streamRootAt) whatever the chunk: small,
// so that the buffer stays small beside the output. A variable for the
// tests.
var fileChunk = 128 << 10

// An outputFile is a writer the binary encoder can write out of order: a
// regular file (*os.File), whose offset it moves and whose earlier bytes
// it writes last (streamRootAt).
type outputFile interface {
	io.Writer
	io.WriterAt
	io.Seeker
	syscall.Conn
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// asOutputFile returns w as an outputFile when it is a regular file not
// open for appending (writesInPlace); any other writer is written in order.
func asOutputFile(w io.Writer) outputFile {
	f, ok := w.(outputFile)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || !writesInPlace(f) {
		return nil
	}
	return f
}

// streamRoot writes the root graph (field 4) of a streamed encoding: the
// output so far, the graph's length prefix, then its nodes, written to
// e.w whenever e.chunk bytes have collected. The length prefix comes
// first. A graph whose nodes take less than e.chunk bytes is encoded once,
// straight after the prefix's place (begin, end), as encodeBinary does.
// A larger one is written to a file at its place (streamRootAt), or else
// encoded twice: past e.chunk bytes the nodes encoded so far are dropped,
// the remaining ones are encoded into a scratch buffer that stays in
// cache, to sum their sizes, and then all of them for good, the output
// never holding much more than e.chunk bytes. Nothing is written when the
// nodes have an error (but to a file: streamRootAt).
func (e *wireEncoder) streamRoot(root NodeSource) {
	e.refs = sourceRefs(e.root)
	defer func() { e.refs = nil }()
	head := len(e.b)
	s := e.begin(4)
	n, k := root.Len(), 0
	for ; k < n && len(e.b)-s <= e.chunk; k++ {
		e.node(root.Node(k))
	}
	if k == n {
		e.end(s)
		return
	}
	if e.f != nil {
		e.streamRootAt(root, head, s, k)
		return
	}
	total := len(e.b) - s
	out := e.b[:head]
	e.b = make([]byte, 0, 4096)
	for ; k < n; k++ {
		e.b = e.b[:0]
		e.node(root.Node(k))
		total += len(e.b)
	}
	e.b = out
	if e.err != nil {
		return
	}
	e.b = protowire.AppendTag(e.b, 4, protowire.BytesType)
	e.b = protowire.AppendVarint(e.b, uint64(total))
	e.rootNodes(root, 0, nil)
}

// rootNodes encodes root's nodes from k on, writing the output whenever
// e.chunk bytes have collected; last, when set, is the last node's
// encoding, written instead of encoding it again (sampledSize).
func (e *wireEncoder) rootNodes(root NodeSource, k int, last []byte) {
	n := root.Len()
	if last != nil {
		n--
	}
	for ; k < n; k++ {
		e.node(root.Node(k))
		if len(e.b) >= e.chunk {
			e.flush()
		}
	}
	if last != nil {
		e.flush()
		e.write(last)
	}
}

// rootSamples is how many of a large root graph's nodes sampledSize
// encodes to estimate the size of all.
const rootSamples = 512

// sampledSize estimates the encoded size of root's nodes from k on: the
// last one (the output, often the largest node: it lists every output
// value) encoded, the others from the sizes of up to rootSamples of them
// spread over the whole range (sampleAt), all encoded past the end of e.b
// (into the room its pieces leave; a node larger than that room grows a
// buffer of its own). The first nodes alone would mislead: a joint graph
// starts with its inputs, smaller than the backward's nodes. It returns
// the last node's encoding too, which rootNodes writes instead of
// encoding the (large) node again.
func (e *wireEncoder) sampledSize(root NodeSource, k int) (total uint64, last []byte) {
	out := e.b
	e.b = e.b[len(e.b):]
	size := func(i int) uint64 {
		e.b = e.b[:0]
		e.node(root.Node(i))
		return uint64(len(e.b))
	}
	n := root.Len()
	if m := n - 1 - k; m > 0 {
		s := min(rootSamples, m)
		var sum uint64
		for j := range s {
			sum += size(sampleAt(j, s, k, m))
		}
		total = sum * uint64(m) / uint64(s)
	}
	// The last node's buffer sized from its arguments, not grown by append
	// a quarter at a time: an output node of a large graph lists every
	// output value, and its buffer grown step by step held several copies.
	if hint := lastNodeBytes * argCount(root.Node(n-1)); hint > cap(e.b) {
		e.b = make([]byte, 0, hint)
	}
	total += size(n - 1)
	last = e.b
	if unsafe.SliceData(last) == unsafe.SliceData(out[len(out):]) {
		// In the room of e.b, which the nodes will take: a copy.
		last = append([]byte(nil), last...)
	}
	e.b = out
	return total, last
}

// lastNodeBytes is about the encoded size of an argument of a graph's
// output node: a reference in a list, its name of some ten bytes.
const lastNodeBytes = 16

// argCount is the number of n's arguments and of their elements.
func argCount(n *Node) int {
	c := len(n.Args) + len(n.Kwargs)
	for i := range n.Args {
		c += len(n.Args[i].Elems())
	}
	return c
}

// sampleAt is the j-th of the s nodes sampledSize reads among the m nodes
// from k on: one in each of s equal runs, at a place a hash of j picks (a
// fixed stride can fall in step with a graph's repeating layers).
func sampleAt(j, s, k, m int) int {
	lo, hi := k+j*m/s, k+(j+1)*m/s
	return lo + int((uint64(j+1)*0x9E3779B97F4A7C15>>32)%uint64(hi-lo))
}

// streamRootAt is streamRoot's large graph written to a file in one pass:
// the nodes go to the file from where they belong, after the output before
// the root graph (e.b[:head], not yet written), the graph's tag and its
// length prefix, whose size is guessed from the size of the first k nodes
// (e.b[s:]) and a sample of the others (sampledSize); that output and the
// prefix are written last, at the file's offset on entry. A wrong guess (a
// total across a varint size from the estimate: 2 MiB, 256 MiB) writes
// the nodes again at the right place, and the file is cut where the
// encoding ends.
// A node with an error leaves what was written before it in the file.
func (e *wireEncoder) streamRootAt(root NodeSource, head, s, k int) {
	if e.err != nil {
		return
	}
	base, err := e.f.Seek(0, io.SeekCurrent)
	if err != nil {
		e.err = &WriteError{Err: err}
		return
	}
	pre := append([]byte(nil), e.b[:head]...)
	e.b = append(e.b[:0], e.b[s:]...)
	size, last := e.sampledSize(root, k)
	guess := protowire.SizeVarint(uint64(len(e.b)) + size)
	if e.err != nil { // a sampled node's error: the graph is not encoded
		return
	}
	nodes := base + int64(head+1+guess) // the tag of field 4 is one byte
	if _, err := e.f.Seek(nodes, io.SeekStart); err != nil {
		e.err = &WriteError{Err: err}
		return
	}
	e.rootNodes(root, k, last)
	e.flush()
	end, err := e.f.Seek(0, io.SeekCurrent)
	if err != nil && e.err == nil {
		e.err = &WriteError{Err: err}
	}
	if e.err != nil {
		return
	}
	total := uint64(end - nodes)
	if size := protowire.SizeVarint(total); size != guess {
		nodes = base + int64(head+1+size)
		if _, err := e.f.Seek(nodes, io.SeekStart); err != nil {
			e.err = &WriteError{Err: err}
			return
		}
		e.rootNodes(root, 0, last)
		e.flush()
		e.cut = true
	}
	pre = protowire.AppendTag(pre, 4, protowire.BytesType)
	pre = protowire.AppendVarint(pre, total)
	if _, err := e.f.WriteAt(pre, base); err != nil && e.err == nil {
		e.err = &WriteError{Err: err}
	}
}

// sourceRefs is what the encoder asks for the names of a source's
// references (wireEncoder.refs): nil, the references' own names, for a
// graph's own nodes (GraphNodes), whose Ref gives them at the cost of a
// call per reference, and for a source that says its references keep
// their names (OwnNames: a partition's graphs when CSE merged nothing,
// whose references the joint command checks through Ref as they are
// encoded).
func sourceRefs(root NodeSource) NodeSource {
	if _, own := root.(graphNodes); own {
		return nil
	}
	if o, ok := root.(OwnNames); ok && o.OwnNames() {
		return nil
	}
	return root
}

// flush writes the output collected so far to e.w.
func (e *wireEncoder) flush() {
	e.write(e.b)
	e.b = e.b[:0]
}

// write writes p to e.w, unless the encoding has failed.
func (e *wireEncoder) write(p []byte) {
	if e.err == nil && len(p) > 0 {
		if _, err := e.w.Write(p); err != nil {
			e.err = &WriteError{Err: err}
		}
	}
}

// A ValueMemo memoizes the binary encodings of node values, by the
// value's address: decoders and builders share one immutable Value between
// the nodes with equal metadata, so most values are encoded once and then
// copied. One memo can serve the concurrent encodings of several modules
// whose nodes share values (EncodeSourceToMemo: the joint command's joint
// graph and the forward and backward graphs made of its nodes, which
// otherwise each encoded the same values again). The values must not
// change while the memo is in use.
//
// It is a two-way set-associative cache by the value's address (a map's
// hashing and growth cost more than the encodings it saves): a value
// whose set two others took is encoded again, which gives the same bytes.
// Each slot holds an immutable entry, stored and loaded atomically, so
// encodings may share the memo without locks.
type ValueMemo struct {
	slots []atomic.Pointer[memoEntry]
	shift uint // 64 - log2(len(slots))
}

// NewValueMemo returns an empty memo for encodings of about n nodes in
// all: graphs of repeated layers have a few distinct values per hundred
// nodes, so a slot per sixteen nodes, between 2^minValBits and
// 2^maxValBits. Too few slots lose values to each other and keep copies
// of the values evicted and met again.
func NewValueMemo(n int) *ValueMemo {
	bits := minValBits
	for bits < maxValBits && 1<<bits < n/16 {
		bits++
	}
	return &ValueMemo{slots: make([]atomic.Pointer[memoEntry], 1<<bits), shift: 64 - uint(bits)}
}

// The memo's size, in slots: 32 KiB to 2 MiB.
const (
	minValBits = 12
	maxValBits = 18
)

// A memoEntry is a value and its encoding (field 6 of a node, tag and
// length included).
type memoEntry struct {
	v   *Value
	enc []byte
}

// encodedSize estimates the binary size of m, to size the output buffer
// once: about 160 bytes per node in exported and built graphs besides the
// strings of their metadata (stack traces, module stacks: most of an
// exported model's bytes), which are counted. A buffer that has to grow
// is copied at every step.
func encodedSize(m *Module) int {
	n := 1 << 12
	for _, g := range m.Graphs {
		n += 160 * len(g.Nodes)
		for i := range g.Nodes {
			if mt := g.Nodes[i].Meta; mt != nil {
				n += metaSize(mt)
			}
		}
	}
	for i := range m.Attributes {
		n += 64 + len(m.Attributes[i].Data)
	}
	for _, s := range m.Schemas {
		n += 8 + len(s.Name) + len(s.Schema)
	}
	// An eighth more: pages of the buffer never written are never touched.
	return n + n/8
}

// metaSize is the bytes of the strings of a node's metadata.
func metaSize(mt *Meta) int {
	n := len(mt.StackTrace) + len(mt.FwdSource)
	for _, e := range mt.NNModuleStack {
		n += 8 + len(e.Key) + len(e.Path) + len(e.Type)
	}
	for _, e := range mt.SourceFnStack {
		n += 8 + len(e.Key) + len(e.Path) + len(e.Type)
	}
	for _, a := range mt.Extra {
		n += 8 + len(a.Key) + len(a.Value)
	}
	return n
}

// encodeBinary encodes m in the binary encoding.
func encodeBinary(m *Module) ([]byte, error) {
	e := &wireEncoder{b: make([]byte, 0, encodedSize(m)), vals: NewValueMemo(0)}
	e.file(m)
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

// begin starts a length-delimited field and returns the position of its
// body; end closes it. One byte is reserved for the length, and the body is
// moved when its length needs more.
func (e *wireEncoder) begin(num protowire.Number) int {
	if num >= 16 {
		e.longTag(num, protowire.BytesType)
		e.b = append(e.b, 0)
	} else {
		e.b = append(e.b, byte(num)<<3|byte(protowire.BytesType), 0)
	}
	return len(e.b)
}

// tag appends a field's tag: one byte for the field numbers below 16 that
// nearly every field has (protowire.AppendTag's bytes, without its calls),
// inlined where it is written.
func (e *wireEncoder) tag(num protowire.Number, typ protowire.Type) {
	if num >= 16 {
		e.longTag(num, typ)
		return
	}
	e.b = append(e.b, byte(num)<<3|byte(typ))
}

// longTag is tag for a field number of 16 or more.
func (e *wireEncoder) longTag(num protowire.Number, typ protowire.Type) {
	e.b = protowire.AppendTag(e.b, num, typ)
}

// uvarint appends v as a varint: one byte below 128 (protowire.AppendVarint's
// bytes).
func (e *wireEncoder) uvarint(v uint64) {
	if v < 0x80 {
		e.b = append(e.b, byte(v))
		return
	}
	e.b = protowire.AppendVarint(e.b, v)
}

// validUTF8 is utf8.ValidString with a check of the ASCII strings that
// names, targets and tensor metadata nearly always are, short enough that
// the library call's set-up is most of its cost: eight bytes a load, the
// last eight (or the first and last four of a shorter string) in loads
// that may overlap those before them, which checks no byte less.
func validUTF8(s string) bool {
	const hi8, hi4 = 0x8080808080808080, 0x80808080
	n := len(s)
	switch {
	case n >= 8:
		for t := s; len(t) > 8; t = t[8:] {
			if le64(t)&hi8 != 0 {
				return utf8.ValidString(s)
			}
		}
		if le64(s[n-8:])&hi8 != 0 {
			return utf8.ValidString(s)
		}
	case n >= 4:
		if (le32(s)|le32(s[n-4:]))&hi4 != 0 {
			return utf8.ValidString(s)
		}
	default:
		for i := 0; i < n; i++ {
			if s[i] >= utf8.RuneSelf {
				return utf8.ValidString(s)
			}
		}
	}
	return true
}

// unalignedWords is set where a word may be loaded from and stored to
// any address (copyWords).
const unalignedWords = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// copyWords copies s, at least eight bytes, to d (which has room for
// them) and reports whether every byte is ASCII: eight bytes a load and a
// store, the last eight in a word that may overlap the one before, which
// copies and checks no byte less and reads none past s.
func copyWords(d unsafe.Pointer, s string) bool {
	p, n := unsafe.Pointer(unsafe.StringData(s)), uintptr(len(s))
	w := *(*uint64)(unsafe.Add(p, n-8))
	*(*uint64)(unsafe.Add(d, n-8)) = w
	for i := uintptr(0); i < n-8; i += 8 {
		x := *(*uint64)(unsafe.Add(p, i))
		w |= x
		*(*uint64)(unsafe.Add(d, i)) = x
	}
	return w&0x8080808080808080 == 0
}

// copyWords4 is copyWords for a string of four to seven bytes: the first
// and the last four.
func copyWords4(d unsafe.Pointer, s string) bool {
	p, n := unsafe.Pointer(unsafe.StringData(s)), uintptr(len(s))
	w0, w1 := *(*uint32)(p), *(*uint32)(unsafe.Add(p, n-4))
	*(*uint32)(d), *(*uint32)(unsafe.Add(d, n-4)) = w0, w1
	return (w0|w1)&0x80808080 == 0
}

// le64 is s's first eight bytes as one little-endian word (one load: the
// compiler merges the byte loads).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 is s's first four bytes as one little-endian word.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func (e *wireEncoder) end(start int) {
	n := len(e.b) - start
	if n >= 0x80 {
		e.endLong(start, n)
		return
	}
	e.b[start-1] = byte(n)
}

// endLong is end for a body of n bytes, 128 or more, so that end itself
// stays short enough to inline.
func (e *wireEncoder) endLong(start, n int) {
	if n < 1<<14 {
		// Two bytes, a node's length nearly always: the body moves by
		// one, without SizeVarint's and AppendVarint's general forms.
		e.b = append(e.b, 0)
		copy(e.b[start+1:], e.b[start:start+n])
		e.b[start-1], e.b[start] = byte(n)|0x80, byte(n>>7)
		return
	}
	size := protowire.SizeVarint(uint64(n))
	e.b = append(e.b, make([]byte, size-1)...)
	copy(e.b[start-1+size:], e.b[start:start+n])
	protowire.AppendVarint(e.b[:start-1], uint64(n))
}

func (e *wireEncoder) str(num protowire.Number, s string) {
	if s == "" {
		return
	}
	e.strAlways(num, s)
}

// strAlways writes a string even when empty (oneof members, optional fields).
func (e *wireEncoder) strAlways(num protowire.Number, s string) {
	if k, n := len(e.b), len(s); unalignedWords && num < 16 && n >= 4 && n < 0x80 && cap(e.b)-k >= 2+n {
		// Names, targets and references, nearly every string of a
		// graph: tag, length and bytes written at once, the bytes copied
		// and checked as ASCII (validUTF8) in the same words, without
		// memmove's and validUTF8's calls.
		e.b = e.b[:k+2+n]
		d := unsafe.Pointer(unsafe.SliceData(e.b[k:]))
		*(*[2]byte)(d) = [2]byte{byte(num)<<3 | byte(protowire.BytesType), byte(n)}
		e.shortStr(unsafe.Add(d, 2), s)
		return
	}
	if !validUTF8(s) && e.err == nil {
		e.err = errInvalidUTF8
	}
	if num < 16 && len(s) < 0x80 {
		e.b = append(e.b, byte(num)<<3|byte(protowire.BytesType), byte(len(s)))
	} else {
		e.tag(num, protowire.BytesType)
		e.uvarint(uint64(len(s)))
	}
	e.b = append(e.b, s...)
}

// shortStr copies s, four to 127 bytes, to d (which has room for them)
// and fails the encoding if s is not valid UTF-8, as validUTF8 would.
func (e *wireEncoder) shortStr(d unsafe.Pointer, s string) {
	ascii := false
	if len(s) >= 8 {
		ascii = copyWords(d, s)
	} else {
		ascii = copyWords4(d, s)
	}
	if !ascii && !utf8.ValidString(s) && e.err == nil {
		e.err = errInvalidUTF8
	}
}

// argField writes a as field num (below 16) of the message that holds it:
// a node's argument (4) or a list's element (1). A reference whose name
// has 4 to 125 bytes and an int from 0 to 127, most of a graph's
// arguments, are written whole, their field's tag and length and the Arg
// message's at once (begin, strAlways or varintAlways and end in one,
// the bytes copied as strAlways copies them).
func (e *wireEncoder) argField(num protowire.Number, a *Arg) {
	k := len(e.b)
	switch a.Kind {
	case ArgNode:
		name := a.S
		if e.refs != nil {
			_, name = e.refs.Ref(a)
		}
		if n := len(name); unalignedWords && n >= 4 && n <= 0x7f-2 && cap(e.b)-k >= 4+n {
			e.b = e.b[:k+4+n]
			d := unsafe.Pointer(unsafe.SliceData(e.b[k:]))
			*(*[4]byte)(d) = [4]byte{byte(num)<<3 | byte(protowire.BytesType), byte(2 + n),
				1<<3 | byte(protowire.BytesType), byte(n)}
			e.shortStr(unsafe.Add(d, 4), name)
			return
		}
		s := e.begin(num)
		e.strAlways(1, name)
		e.end(s)
		return
	case ArgInt:
		if v := uint64(a.Int()); v < 0x80 {
			e.b = append(e.b, byte(num)<<3|byte(protowire.BytesType), 2, 2<<3|byte(protowire.VarintType), byte(v))
			return
		}
	}
	s := e.begin(num)
	e.arg(a)
	e.end(s)
}

func (e *wireEncoder) varint(num protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	e.varintAlways(num, v)
}

func (e *wireEncoder) varintAlways(num protowire.Number, v uint64) {
	if num < 16 && v < 0x80 {
		e.b = append(e.b, byte(num)<<3|byte(protowire.VarintType), byte(v))
		return
	}
	e.tag(num, protowire.VarintType)
	e.uvarint(v)
}

func (e *wireEncoder) boolean(num protowire.Number, v bool) {
	if v {
		e.varintAlways(num, 1)
	}
}

func (e *wireEncoder) double(num protowire.Number, v float64) {
	if v == 0 && !math.Signbit(v) {
		return
	}
	e.doubleAlways(num, v)
}

func (e *wireEncoder) doubleAlways(num protowire.Number, v float64) {
	e.tag(num, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, math.Float64bits(v))
}

func (e *wireEncoder) empty(num protowire.Number) {
	e.tag(num, protowire.BytesType)
	e.b = append(e.b, 0)
}

func (e *wireEncoder) file(m *Module) {
	major, minor := m.FormatMajor, m.FormatMinor
	if major == 0 {
		major, minor = FormatMajor, FormatMinor
	}
	s := e.begin(1)
	e.varint(1, uint64(major))
	e.varint(2, uint64(minor))
	e.end(s)
	e.str(2, m.Producer)
	e.str(3, m.TorchVersion)
	for i, g := range m.Graphs {
		if i == 0 {
			root := e.root
			if root == nil {
				root = graphNodes{g}
			}
			if e.w != nil {
				e.streamRoot(root)
				continue
			}
			s := e.begin(4)
			e.refs = sourceRefs(e.root)
			for k := range root.Len() {
				e.node(root.Node(k))
			}
			e.refs = nil
			e.end(s)
			continue
		}
		s := e.begin(5)
		e.str(1, g.Name)
		gs := e.begin(2)
		e.graph(g)
		e.end(gs)
		e.end(s)
	}
	for i := range m.Attributes {
		a := &m.Attributes[i]
		s := e.begin(6)
		e.str(1, a.Name)
		if a.Const == nil { // a constant has no tensor metadata
			ms := e.begin(2)
			e.tensor(&a.Meta)
			e.end(ms)
		}
		if len(a.Data) > 0 {
			e.b = protowire.AppendTag(e.b, 3, protowire.BytesType)
			e.b = protowire.AppendBytes(e.b, a.Data)
		}
		if a.Const != nil {
			cs := e.begin(4)
			e.arg(a.Const)
			e.end(cs)
		}
		e.end(s)
	}
	for _, sc := range m.Schemas {
		e.pair(7, sc.Name, sc.Schema)
	}
	for _, a := range m.Annotations {
		e.pair(8, a.Key, a.Value)
	}
	if m.HasGradEnabled {
		v := uint64(0)
		if m.GradEnabled {
			v = 1
		}
		e.varintAlways(9, v)
	}
	for _, c := range m.HOPClasses {
		s := e.begin(10)
		e.str(1, c.Target)
		for _, cl := range c.Classes {
			e.strAlways(2, cl)
		}
		e.end(s)
	}
	if m.HasInferenceMode {
		v := uint64(0)
		if m.InferenceMode {
			v = 1
		}
		e.varintAlways(11, v)
	}
	if sig := m.Signature; sig != nil {
		s := e.begin(20)
		for _, in := range sig.Inputs {
			is := e.begin(1)
			e.varint(1, uint64(in.Kind))
			e.str(2, in.Name)
			e.str(3, in.Target)
			e.boolean(4, in.Persistent)
			e.end(is)
		}
		for _, out := range sig.Outputs {
			os := e.begin(2)
			e.varint(1, uint64(out.Kind))
			e.str(2, out.Name)
			e.str(3, out.Target)
			e.end(os)
		}
		e.end(s)
	}
}

func (e *wireEncoder) pair(num protowire.Number, one, two string) {
	s := e.begin(num)
	e.str(1, one)
	e.str(2, two)
	e.end(s)
}

func (e *wireEncoder) graph(g *Graph) {
	for i := range g.Nodes {
		e.node(&g.Nodes[i])
	}
}

func (e *wireEncoder) node(n *Node) {
	s := e.head(n)
	for j := range n.Args {
		e.argField(4, &n.Args[j])
	}
	for j := range n.Kwargs {
		e.kwarg(5, &n.Kwargs[j].Name, &n.Kwargs[j].Value)
	}
	if n.Val != nil {
		e.nodeValue(n.Val)
	}
	if n.Meta != nil {
		ms := e.begin(7)
		e.meta(n.Meta)
		e.end(ms)
	}
	e.end(s)
}

// head begins a node (field 1 of a graph) and writes its name, op and
// target, and returns the position of its body (begin). A name and a
// target of 4 to 127 bytes and an op below 128, every node's nearly, are
// written at once, the strings copied as strAlways copies them.
func (e *wireEncoder) head(n *Node) int {
	k, a, b := len(e.b), len(n.Name), len(n.Target)
	if unalignedWords && a >= 4 && a < 0x80 && b >= 4 && b < 0x80 && n.Op > 0 && n.Op < 0x80 && cap(e.b)-k >= 8+a+b {
		e.b = e.b[:k+8+a+b]
		d := unsafe.Pointer(unsafe.SliceData(e.b[k:]))
		*(*[4]byte)(d) = [4]byte{1<<3 | byte(protowire.BytesType), 0, 1<<3 | byte(protowire.BytesType), byte(a)}
		e.shortStr(unsafe.Add(d, 4), n.Name)
		*(*[4]byte)(unsafe.Add(d, 4+a)) = [4]byte{2<<3 | byte(protowire.VarintType), byte(n.Op), 3<<3 | byte(protowire.BytesType), byte(b)}
		e.shortStr(unsafe.Add(d, 8+a), n.Target)
		return k + 2
	}
	s := e.begin(1)
	e.str(1, n.Name)
	e.varint(2, uint64(n.Op))
	e.str(3, n.Target)
	return s
}

// nodeValue writes a node's val field (6), reusing the bytes of a value
// already encoded, here or by another encoding sharing e.vals.
func (e *wireEncoder) nodeValue(v *Value) {
	// Fibonacci hashing of the address: its high bits pick the set, its
	// lowest the slot replaced when neither is free.
	h := (uint64(uintptr(unsafe.Pointer(v))) * 0x9E3779B97F4A7C15) >> e.vals.shift
	set := e.vals.slots[h&^1:][:2]
	m0, m1 := set[0].Load(), set[1].Load()
	switch {
	case m0 != nil && m0.v == v:
		e.b = append(e.b, m0.enc...)
		return
	case m1 != nil && m1.v == v:
		e.b = append(e.b, m1.enc...)
		return
	}
	slot := &set[h&1]
	if m0 == nil || m1 == nil {
		slot = &set[0]
		if m0 != nil {
			slot = &set[1]
		}
	}
	start := len(e.b)
	vs := e.begin(6)
	e.value(v)
	e.end(vs)
	if e.err != nil {
		// Not kept: another encoding sharing the memo must meet the
		// value's error itself.
		return
	}
	// Keep a copy (an enclosing message may still move these bytes), in
	// pieces of memory never reused while the memo may point to them.
	n := len(e.b) - start
	if len(e.memo)+n > cap(e.memo) {
		e.memo = make([]byte, 0, max(1<<16, n))
	}
	k := len(e.memo)
	e.memo = append(e.memo, e.b[start:]...)
	if len(e.entries) == cap(e.entries) {
		e.entries = make([]memoEntry, 0, 256)
	}
	e.entries = append(e.entries, memoEntry{v: v, enc: e.memo[k:len(e.memo):len(e.memo)]})
	slot.Store(&e.entries[len(e.entries)-1])
}

func (e *wireEncoder) kwarg(num protowire.Number, name *string, value *Arg) {
	s := e.begin(num)
	e.str(1, *name)
	vs := e.begin(2)
	e.arg(value)
	e.end(vs)
	e.end(s)
}

func (e *wireEncoder) arg(a *Arg) {
	switch a.Kind {
	case ArgNode:
		if e.refs != nil {
			_, name := e.refs.Ref(a)
			e.strAlways(1, name)
			break
		}
		e.strAlways(1, a.S)
	case ArgInt:
		e.varintAlways(2, uint64(a.Int()))
	case ArgFloat:
		e.doubleAlways(3, a.Float())
	case ArgBool:
		b := uint64(0)
		if a.B {
			b = 1
		}
		e.varintAlways(4, b)
	case ArgStr:
		e.strAlways(5, a.S)
	case ArgList, ArgTuple:
		num := protowire.Number(7)
		if a.Kind == ArgTuple {
			num = 8
		}
		s := e.begin(num)
		for i := range a.Elems() {
			e.argField(1, &a.Elems()[i])
		}
		e.end(s)
	case ArgDtype:
		e.strAlways(9, a.S)
	case ArgDevice:
		e.strAlways(10, a.S)
	case ArgLayout:
		e.strAlways(11, a.S)
	case ArgMemoryFormat:
		e.strAlways(12, a.S)
	case ArgSym:
		s := e.begin(13)
		e.sym(a.Sym())
		e.end(s)
	case ArgOp:
		e.strAlways(14, a.S)
	case ArgDict:
		s := e.begin(15)
		for i := range a.Elems() {
			e.kwarg(1, &a.Keys()[i], &a.Elems()[i])
		}
		e.end(s)
	case ArgComplex:
		s := e.begin(16)
		e.double(1, a.Float())
		e.double(2, a.Imag())
		e.end(s)
	case ArgSlice:
		s := e.begin(17)
		for i := 0; i < 3; i++ {
			ps := e.begin(protowire.Number(i + 1))
			if i < len(a.Elems()) {
				e.arg(&a.Elems()[i])
			} else {
				e.empty(6)
			}
			e.end(ps)
		}
		e.end(s)
	case ArgEllipsis:
		e.empty(18)
	case ArgConstant:
		s := e.begin(19)
		e.str(1, a.S)
		for i := range a.Elems() {
			e.kwarg(2, &a.Keys()[i], &a.Elems()[i])
		}
		e.end(s)
	default:
		e.empty(6)
	}
}

func (e *wireEncoder) sym(s *SymExpr) {
	if s == nil {
		return
	}
	e.varint(1, uint64(s.Kind))
	e.str(2, s.Expr)
	if s.HasHint {
		e.strAlways(3, s.Hint)
	}
}

func (e *wireEncoder) dim(num protowire.Number, d Dim) {
	s := e.begin(num)
	if d.Expr != "" {
		e.strAlways(2, d.Expr)
	} else {
		e.varintAlways(1, uint64(d.Val))
	}
	e.end(s)
}

func (e *wireEncoder) tensor(t *TensorMeta) {
	for _, d := range t.Shape {
		e.dim(1, d)
	}
	for _, d := range t.Stride {
		e.dim(2, d)
	}
	e.dim(3, t.StorageOffset)
	e.str(4, t.Dtype)
	e.str(5, t.Device)
	e.boolean(6, t.RequiresGrad)
	e.str(7, t.MemoryFormat)
	e.boolean(8, t.IsQuantized)
	if q := t.QParams; q != nil {
		s := e.begin(9)
		e.str(1, q.QScheme)
		e.double(2, q.Scale)
		e.varint(3, uint64(q.ZeroPoint))
		if len(q.Scales) > 0 {
			ps := e.begin(4)
			for _, v := range q.Scales {
				e.b = protowire.AppendFixed64(e.b, math.Float64bits(v))
			}
			e.end(ps)
		}
		if len(q.ZeroPoints) > 0 {
			ps := e.begin(5)
			for _, v := range q.ZeroPoints {
				e.b = protowire.AppendVarint(e.b, uint64(v))
			}
			e.end(ps)
		}
		e.varint(6, uint64(q.Axis))
		e.end(s)
	}
	if t.HasStorageID {
		e.varintAlways(10, uint64(t.StorageID))
	}
	e.str(11, t.Layout)
}

func (e *wireEncoder) value(v *Value) {
	switch v.Kind {
	case ValTensor:
		s := e.begin(1)
		if t := v.Tensor; t != nil {
			e.tensor(t)
		} else {
			e.tensor(&TensorMeta{})
		}
		e.end(s)
	case ValSym:
		s := e.begin(2)
		e.sym(v.Sym)
		e.end(s)
	case ValList, ValTuple:
		num := protowire.Number(3)
		if v.Kind == ValTuple {
			num = 4
		}
		s := e.begin(num)
		for i := range v.Elems {
			is := e.begin(1)
			e.value(&v.Elems[i])
			e.end(is)
		}
		e.end(s)
	case ValNone:
		e.empty(5)
	case ValInt:
		e.varintAlways(6, uint64(v.I))
	case ValFloat:
		e.doubleAlways(7, v.F)
	case ValBool:
		b := uint64(0)
		if v.B {
			b = 1
		}
		e.varintAlways(8, b)
	case ValOpaque:
		e.strAlways(9, v.S)
	}
}

func (e *wireEncoder) stack(num protowire.Number, es []ModuleStackEntry) {
	for _, x := range es {
		s := e.begin(num)
		e.str(1, x.Key)
		e.str(2, x.Path)
		e.str(3, x.Type)
		e.end(s)
	}
}

func (e *wireEncoder) meta(m *Meta) {
	e.str(1, m.StackTrace)
	e.stack(2, m.NNModuleStack)
	e.stack(3, m.SourceFnStack)
	if m.HasSeqNr {
		e.varintAlways(4, uint64(m.SeqNr))
	}
	e.str(5, m.FwdSource)
	for _, a := range m.Extra {
		e.pair(6, a.Key, a.Value)
	}
}
