package ir

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// A streaming decoder for the binary encoding: it reads the wire format
// straight into the IR, without building the generated protobuf objects
// first, so that the memory a large graph takes is the module's alone. It follows protobuf-go's semantics exactly (last scalar wins,
// repeated singular messages merge, fields with an unexpected wire type
// are unknown and skipped, proto3 strings must be valid UTF-8, nesting is
// limited), and FuzzWireMatchesProto checks it against proto.Unmarshal +
// FromProto.

// maxWireDepth is protobuf-go's default recursion limit.
const maxWireDepth = 10000

var errWireDepth = fmt.Errorf("nested too deeply (more than %d levels of messages)", maxWireDepth)

// wireGraphError and wireNodeError locate a decoding error in a graph and
// in one of its nodes, so the message names them.
type wireGraphError struct {
	name string
	err  error
}

func (e *wireGraphError) Error() string { return e.err.Error() }
func (e *wireGraphError) Unwrap() error { return e.err }

type wireNodeError struct {
	index int
	name  string
	err   error
}

func (e *wireNodeError) Error() string { return e.err.Error() }
func (e *wireNodeError) Unwrap() error { return e.err }

// locate turns a decoding error into a DecodeError naming the graph and
// node it happened in, when it happened inside one.
func locate(file string, err error) *DecodeError {
	loc := Location{File: file}
	var ge *wireGraphError
	if errors.As(err, &ge) {
		loc.Graph, loc.HasGraph = ge.name, true
	}
	var ne *wireNodeError
	if errors.As(err, &ne) {
		loc.Node = "#" + strconv.Itoa(ne.index)
		if ne.name != "" {
			loc.Node = ne.name
		}
	}
	msg := fmt.Errorf("cannot decode as binary hopctl graph: %w", err)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = fmt.Errorf("%w (the file is truncated or corrupt)", msg)
	}
	return &DecodeError{Loc: loc, Err: msg}
}

type wireDecoder struct {
	// end is cap() of the input: a field's offset in the input is
	// end - cap(rest), as every slice the decoder reads is a subslice.
	end int
	// alias makes strings share memory with the input instead of copying;
	// only for inputs nobody modifies afterwards (LoadFile's own buffer).
	alias bool
	// region is the file mapping the input lies in (nil when it is on the
	// heap): worker goroutines guard their reads of it (guardFaults).
	region []byte
	depth  int
	// hasVersion, hasGraph record presence of File fields.
	hasVersion, hasGraph bool
	// vals hash-conses node values by their encoded bytes: graphs repeat
	// the same few tensor metadata many times, and sharing them saves most
	// of the decoding time and memory. Values are immutable in the IR.
	vals map[string]*Value
	// slab backs the argument slices of many nodes: one allocation for
	// thousands of arguments instead of one per node.
	slab []Arg
	// strs backs the strings copied out of the input (when not aliasing)
	// the same way: names and targets are short and there are millions.
	strs []byte
	// scratch collects a node's arguments while it decodes.
	scratch []Arg
	// targets interns node targets (target).
	targets map[string]string
	// unset records that an argument may have been left without a value
	// (a dict or constant entry's: the decoder refuses the others at once),
	// so finishGraph must look for one.
	unset bool
	// pending lists, per graph decoded on all cores, the references its
	// workers did not resolve while decoding (resolveWindow), one list per
	// worker; finishGraph resolves them.
	pending map[*Graph][][]*Arg
	// unresolved collects a worker's references for pending.
	unresolved []*Arg
	// refsInInput leaves the node names of references in the input while
	// a worker decodes a node, when strings are copied out of it (not
	// alias): resolveWindow then points each at the name of the node it
	// refers to, or copies it. At 1M nodes, 0.9M names were copied into
	// fresh memory that the nodes' own names duplicate.
	refsInInput bool
}

// strChunk is the size of the blocks strings are copied into.
const strChunk = 32 << 10

// copyStr returns a copy of b that does not share memory with the input.
func (d *wireDecoder) copyStr(b []byte) string {
	if len(b) > strChunk/8 {
		return string(b)
	}
	if len(d.strs)+len(b) > cap(d.strs) {
		d.strs = make([]byte, 0, strChunk)
	}
	start := len(d.strs)
	d.strs = append(d.strs, b...)
	return unsafe.String(&d.strs[start], len(b))
}

// allocArgs returns an empty slice with room for n arguments.
func (d *wireDecoder) allocArgs(n int) []Arg {
	if n == 0 {
		return nil
	}
	if n > 256 {
		return make([]Arg, 0, n)
	}
	if len(d.slab)+n > cap(d.slab) {
		d.slab = make([]Arg, 0, 4096)
	}
	start := len(d.slab)
	d.slab = d.slab[:start+n]
	return d.slab[start : start : start+n]
}

// countBytesFields counts the length-delimited fields num of message b (a
// malformed message counts what precedes the problem; decoding reports it).
func countBytesFields(b []byte, num protowire.Number) int {
	count := 0
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			break
		}
		if f.num == num && f.typ == protowire.BytesType {
			count++
		}
		b = b[n:]
	}
	return count
}

// decodeBinary decodes a binary-encoded file into the IR.
func decodeBinary(data []byte, file string, alias bool) (*Module, error) {
	return decodeBinaryIn(data, file, alias, nil)
}

// decodeBinaryIn is decodeBinary; region, when not nil, is the mapping of
// the file data lies in, which the decoding goroutines guard against
// faults (the file truncated meanwhile: errTruncatedWhileRead).
func decodeBinaryIn(data []byte, file string, alias bool, region []byte) (*Module, error) {
	d := &wireDecoder{end: cap(data), alias: alias, region: region, vals: map[string]*Value{}}
	m := &Module{}
	root := &Graph{}
	subs := []*Graph{}
	if err := d.file(data, m, root, &subs); err != nil {
		return nil, locate(file, err)
	}
	if !d.hasVersion || m.FormatMajor == 0 {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("missing format_version: not a hopctl graph file")}
	}
	if m.FormatMajor > FormatMajor {
		return nil, &DecodeError{Loc: Location{File: file}, Err: fmt.Errorf("format version %d.%d is newer than this hopctl reads (%d.x); upgrade hopctl", m.FormatMajor, m.FormatMinor, FormatMajor)}
	}
	if !d.hasGraph {
		return nil, &DecodeError{Loc: Location{File: file}, Err: errors.New("missing root graph")}
	}
	m.Graphs = append(make([]*Graph, 0, 1+len(subs)), root)
	m.Graphs = append(m.Graphs, subs...)
	for _, g := range m.Graphs {
		pending, windowed := d.pending[g]
		if err := finishGraph(g, file, d.unset, windowed, pending); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// finishGraph indexes names, resolves references and reports arguments that
// have no value, as FromProto does. When the graph was decoded on all cores
// (windowed), its workers indexed it and resolved the references they could
// (resolveWindow); pending are the others. When no node name repeats and
// no argument can be unset, those are all there is left to do.
func finishGraph(g *Graph, file string, unset, windowed bool, pending [][]*Arg) error {
	g.Reindex()
	if names := g.names(); windowed && !unset && names.dups == 0 {
		for _, list := range pending {
			for _, a := range list {
				if id, ok := names.get(a.S); ok {
					a.Ref = id
				}
			}
		}
		return nil
	}
	// Resolve references on all cores: the index is only read now.
	workers := 1
	if len(g.Nodes) >= parallelNodes {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	chunk := (len(g.Nodes) + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(g.Nodes))
		wg.Go(func() { errs[w] = resolveRange(g, file, lo, hi) })
	}
	wg.Wait()
	return firstError(errs)
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func resolveRange(g *Graph, file string, lo, hi int) error {
	names := g.names()
	unique := names.dups == 0
	for i := lo; i < hi; i++ {
		n := &g.Nodes[i]
		for j := range n.Args {
			if bad := unsetArg(&n.Args[j]); bad {
				return &DecodeError{Loc: At(file, g.Name, n.Name), Err: fmt.Errorf("argument %d: argument has no value set", j)}
			}
		}
		for j := range n.Kwargs {
			if bad := unsetArg(&n.Kwargs[j].Value); bad {
				return &DecodeError{Loc: At(file, g.Name, n.Name), Err: fmt.Errorf("keyword argument %q: argument has no value set", n.Kwargs[j].Name)}
			}
		}
		n.WalkRefs(func(a *Arg) {
			if unique {
				if a.Ref != NoNode {
					return // resolved while decoding (resolveWindow)
				}
				// Most references name one of the last few nodes: compare
				// names there before hashing into the index. With no
				// duplicate names, a match is the node the index holds.
				for j := i - 1; j >= max(0, i-refWindow); j-- {
					if g.Nodes[j].Name == a.S {
						a.Ref = NodeID(j)
						return
					}
				}
			}
			if id, ok := names.get(a.S); ok {
				a.Ref = id
			} else {
				a.Ref = NoNode
			}
		})
	}
	return nil
}

// refWindow is how many preceding nodes resolveRange compares a reference
// with before it looks the name up: in FX graphs from make_fx and the
// synthetic ones most arguments were made a few nodes earlier (parameters,
// placeholders at the top of the graph, are the exception).
const refWindow = 8

// argUnset marks an Arg whose oneof was never set while decoding.
const argUnset ArgKind = 255

// bigNodeBytes is the encoded node size from which the decoder counts a
// node's arguments before decoding them (see nodeFields).
const bigNodeBytes = 64 << 10

// errArgUnset is the error of an argument (or list element) message with
// no value: the decoder refuses it as soon as it is decoded.
var errArgUnset = errors.New("argument has no value set")

func unsetArg(a *Arg) bool {
	// Iterative: argument trees can be deep.
	stack := []*Arg{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Kind == argUnset {
			return true
		}
		for i := range x.Elems() {
			stack = append(stack, &x.Elems()[i])
		}
	}
	return false
}

// field reads one field header and returns its number, type and value
// bytes (for BytesType) or scalar (for varint/fixed types).
type wireField struct {
	num  protowire.Number
	typ  protowire.Type
	v    uint64
	body []byte
}

func nextField(b []byte) (wireField, int, error) {
	// Fast path: a one-byte tag and a one-byte length or varint, which is
	// nearly every field of a graph. The general path, nextFieldSlow,
	// agrees (TestNextFieldFastPaths).
	if len(b) >= 2 && b[0] < 0x80 && b[0] >= 8 && b[1] < 0x80 {
		num, typ := protowire.Number(b[0]>>3), protowire.Type(b[0]&7)
		switch typ {
		case protowire.BytesType:
			if l := int(b[1]); 2+l <= len(b) {
				return wireField{num: num, typ: typ, body: b[2:][:l]}, 2 + l, nil
			}
		case protowire.VarintType:
			return wireField{num: num, typ: typ, v: uint64(b[1])}, 2, nil
		}
	}
	// And a one-byte tag with a two-byte length: a node message (128 bytes
	// to 16 KiB), read twice per node (counted, then decoded), without the
	// general path's three calls into protowire.
	if len(b) >= 3 && b[0] < 0x80 && b[0] >= 8 && b[0]&7 == byte(protowire.BytesType) && b[1] >= 0x80 && b[2] < 0x80 {
		if l := int(b[1]&0x7f) | int(b[2])<<7; 3+l <= len(b) {
			return wireField{num: protowire.Number(b[0] >> 3), typ: protowire.BytesType, body: b[3:][:l]}, 3 + l, nil
		}
	}
	return nextFieldSlow(b)
}

// nextFieldSlow is nextField's general path, for any field.
func nextFieldSlow(b []byte) (wireField, int, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return wireField{}, 0, protowire.ParseError(n)
	}
	f := wireField{num: num, typ: typ}
	rest := b[n:]
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(rest)
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(rest)
	case protowire.Fixed32Type:
		var v32 uint32
		v32, m = protowire.ConsumeFixed32(rest)
		f.v = uint64(v32)
	case protowire.BytesType:
		f.body, m = protowire.ConsumeBytes(rest)
	default:
		m = protowire.ConsumeFieldValue(num, typ, rest)
	}
	if m < 0 {
		return wireField{}, 0, protowire.ParseError(m)
	}
	return f, n + m, nil
}

// each calls fn for every field of message b.
func (d *wireDecoder) each(b []byte, fn func(f wireField) error) error {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxWireDepth {
		return errWireDepth
	}
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return fmt.Errorf("at byte %d: %w", d.end-cap(b), err)
		}
		if err := fn(f); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (d *wireDecoder) str(f wireField) (string, error) {
	s, err := d.inputStr(f)
	if err != nil || d.alias || s == "" {
		return s, err
	}
	return d.copyStr(f.body), nil
}

// inputStr is the string of field f where it lies in the input, checked as
// str checks it (validUTF8: the encoder's check, cheaper than
// utf8.Valid's set-up on the short ASCII strings of names and metadata).
func (d *wireDecoder) inputStr(f wireField) (string, error) {
	if len(f.body) == 0 {
		return "", nil
	}
	s := unsafe.String(&f.body[0], len(f.body))
	if !validUTF8(s) {
		return "", errors.New("string field contains invalid UTF-8")
	}
	return s, nil
}

// target decodes a node's target, interned: the nodes this decoder gives
// one target share one string (TargetMemo finds them by its address), and
// a repeated target is neither validated nor copied again.
func (d *wireDecoder) target(f wireField) (string, error) {
	if t, ok := d.targets[string(f.body)]; ok {
		return t, nil
	}
	t, err := d.str(f)
	if err != nil {
		return "", err
	}
	if d.targets == nil {
		d.targets = map[string]string{}
	}
	if len(d.targets) < maxInternedTargets {
		d.targets[t] = t
	}
	return t, nil
}

// maxInternedTargets bounds the interned targets of one decoder: a file
// of a million distinct targets (an adversary's) keeps its memory
// proportional to its size, the map stopping growing here.
const maxInternedTargets = 1 << 12

func isBytes(f wireField) bool  { return f.typ == protowire.BytesType }
func isVarint(f wireField) bool { return f.typ == protowire.VarintType }
func isFixed64(f wireField) bool {
	return f.typ == protowire.Fixed64Type
}

func (d *wireDecoder) file(b []byte, m *Module, root *Graph, subs *[]*Graph) error {
	return d.each(b, func(f wireField) error {
		switch {
		case f.num == 1 && isBytes(f):
			d.hasVersion = true
			return d.each(f.body, func(g wireField) error {
				switch {
				case g.num == 1 && isVarint(g):
					m.FormatMajor = uint32(g.v)
				case g.num == 2 && isVarint(g):
					m.FormatMinor = uint32(g.v)
				}
				return nil
			})
		case f.num == 2 && isBytes(f):
			s, err := d.str(f)
			m.Producer = s
			return err
		case f.num == 3 && isBytes(f):
			s, err := d.str(f)
			m.TorchVersion = s
			return err
		case f.num == 9 && isVarint(f):
			m.GradEnabled, m.HasGradEnabled = f.v != 0, true
		case f.num == 11 && isVarint(f):
			m.InferenceMode, m.HasInferenceMode = f.v != 0, true
		case f.num == 4 && isBytes(f):
			d.hasGraph = true
			if err := d.graph(f.body, root); err != nil {
				return &wireGraphError{name: "", err: err}
			}
			return nil
		case f.num == 5 && isBytes(f):
			g := &Graph{}
			*subs = append(*subs, g)
			return d.each(f.body, func(h wireField) error {
				switch {
				case h.num == 1 && isBytes(h):
					s, err := d.str(h)
					g.Name = s
					return err
				case h.num == 2 && isBytes(h):
					if err := d.graph(h.body, g); err != nil {
						return &wireGraphError{name: g.Name, err: err}
					}
				}
				return nil
			})
		case f.num == 6 && isBytes(f):
			var a Attribute
			err := d.each(f.body, func(h wireField) error {
				switch {
				case h.num == 1 && isBytes(h):
					s, err := d.str(h)
					a.Name = s
					return err
				case h.num == 2 && isBytes(h):
					return d.tensor(h.body, &a.Meta)
				case h.num == 3 && isBytes(h):
					a.Data = append([]byte{}, h.body...)
				case h.num == 4 && isBytes(h):
					if a.Const == nil {
						a.Const = &Arg{Kind: argUnset}
					}
					return d.arg(h.body, a.Const)
				}
				return nil
			})
			if err == nil && a.Const != nil && unsetArg(a.Const) {
				err = fmt.Errorf("attribute %q: constant: argument has no value set", a.Name)
			}
			m.Attributes = append(m.Attributes, a)
			return err
		case f.num == 7 && isBytes(f):
			var s SchemaText
			err := d.pair(f.body, &s.Name, &s.Schema)
			m.Schemas = append(m.Schemas, s)
			return err
		case f.num == 8 && isBytes(f):
			var a Annotation
			err := d.pair(f.body, &a.Key, &a.Value)
			m.Annotations = append(m.Annotations, a)
			return err
		case f.num == 10 && isBytes(f):
			var c HOPClass
			err := d.each(f.body, func(g wireField) error {
				var err error
				switch {
				case g.num == 1 && isBytes(g):
					c.Target, err = d.str(g)
				case g.num == 2 && isBytes(g):
					var s string
					s, err = d.str(g)
					c.Classes = append(c.Classes, s)
				}
				return err
			})
			m.HOPClasses = append(m.HOPClasses, c)
			return err
		case f.num == 20 && isBytes(f):
			if m.Signature == nil {
				m.Signature = &Signature{}
			}
			return d.signature(f.body, m.Signature)
		}
		return nil
	})
}

// signature decodes a GraphSignature; a repeated message field appends, so
// a second occurrence merges into the first, as protobuf does.
func (d *wireDecoder) signature(b []byte, sig *Signature) error {
	return d.each(b, func(f wireField) error {
		if !isBytes(f) || (f.num != 1 && f.num != 2) {
			return nil
		}
		var kind uint64
		var name, target string
		var persistent bool
		err := d.each(f.body, func(g wireField) error {
			var err error
			switch {
			case g.num == 1 && isVarint(g):
				kind = g.v
			case g.num == 2 && isBytes(g):
				name, err = d.str(g)
			case g.num == 3 && isBytes(g):
				target, err = d.str(g)
			case g.num == 4 && f.num == 1 && isVarint(g):
				persistent = g.v != 0
			}
			return err
		})
		if f.num == 1 {
			sig.Inputs = append(sig.Inputs, InputSpec{Kind: InputKind(enumByte(kind)), Name: name, Target: target, Persistent: persistent})
		} else {
			sig.Outputs = append(sig.Outputs, OutputSpec{Kind: OutputKind(enumByte(kind)), Name: name, Target: target})
		}
		return err
	})
}

// enumByte narrows an enum number to the IR's byte-sized kinds; numbers
// that do not fit become 255, which Verify reports as no valid kind.
func enumByte(v uint64) uint8 {
	if v > 254 {
		return 255
	}
	return uint8(v)
}

// pair decodes a message of two string fields 1 and 2.
func (d *wireDecoder) pair(b []byte, one, two *string) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			*one, err = d.str(f)
		case f.num == 2 && isBytes(f):
			*two, err = d.str(f)
		}
		return err
	})
}

// parallelNodes is the graph size above which nodes decode on all cores.
const parallelNodes = 20000

func (d *wireDecoder) graph(b []byte, g *Graph) error {
	// A graph merged from several messages is resolved afterwards.
	delete(d.pending, g)
	// Count the node messages first, so the slice is allocated once, and
	// note where every markEvery-th one starts, so that large graphs can
	// be split between cores (a mark per markEvery nodes, not a list of
	// every node's bytes).
	count, marks, parsed, err := d.countNodes(b)
	if err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	if !parsed || count < parallelNodes || workers < 2 || d.depth+1 > maxWireDepth {
		g.Nodes = slices.Grow(g.Nodes, count)
		return d.each(b, func(f wireField) error {
			if f.num != 1 || !isBytes(f) {
				return nil
			}
			g.Nodes = append(g.Nodes, Node{})
			i := len(g.Nodes) - 1
			if i&progressBatch == progressBatch {
				nodesDone(progressBatch + 1)
			}
			if err := d.node(f.body, &g.Nodes[i]); err != nil {
				return &wireNodeError{index: i, name: g.Nodes[i].Name, err: err}
			}
			return nil
		})
	}
	base := len(g.Nodes)
	// One allocation, no copy; the workers fill the new nodes in place.
	// Nothing was ever written past len(g.Nodes), so the new ones are zero.
	g.Nodes = slices.Grow(g.Nodes, count)[:base+count]
	// The workers also resolve the references to the few nodes before
	// each node while they decode it (resolveWindow), with the names in the
	// cache; finishGraph resolves the rest. Only for a graph decoded whole:
	// a merged one (base > 0) is resolved afterwards.
	windowed := base == 0
	errs := make([]error, workers)
	decoders := make([]*wireDecoder, workers)
	// Each worker decodes whole runs of markEvery nodes, from a mark on.
	per := (len(marks) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*per*markEvery, count), min((w+1)*per*markEvery, count)
		if lo == hi {
			continue
		}
		start := marks[w*per]
		wd := &wireDecoder{end: d.end, alias: d.alias, region: d.region, depth: d.depth + 1, vals: map[string]*Value{},
			refsInInput: windowed && !d.alias}
		decoders[w] = wd
		wg.Go(func() {
			defer guardFaults(wd.region)()
			defer catchFault(wd.region, &errs[w])
			rest, done := b[start:], start
			for i := lo; i < hi; {
				f, size, err := nextField(rest)
				if err != nil { // parsed above: only if the input changed
					errs[w] = &wireNodeError{index: base + i, err: wd.fieldError(rest, err)}
					return
				}
				rest = rest[size:]
				if f.num != 1 || !isBytes(f) {
					continue
				}
				// Decode into a local and copy: the first touch of the new
				// node memory must be a write. A read first maps the
				// kernel's shared zero page, and the write after it costs a
				// copy-on-write fault with a TLB shootdown across cores.
				var n Node
				err = wd.node(f.body, &n)
				g.Nodes[base+i] = n
				if windowed && err == nil {
					wd.resolveWindow(g.Nodes, i, lo)
				}
				if (i-lo)&progressBatch == progressBatch {
					nodesDone(progressBatch + 1)
				}
				if (i-lo)&releaseBatch == releaseBatch {
					// The input this worker has decoded leaves memory.
					at := len(b) - len(rest)
					releaseMapped(wd.region, b[done:at])
					done = at
				}
				if err != nil {
					errs[w] = &wireNodeError{index: base + i, name: n.Name, err: err}
					return
				}
				i++
			}
			releaseMapped(wd.region, b[done:len(b)-len(rest)])
		})
	}
	wg.Wait()
	// The first error in node order, as a sequential decode reports it.
	if err := firstError(errs); err != nil {
		return err
	}
	pending := make([][]*Arg, 0, workers)
	for _, wd := range decoders {
		if wd != nil {
			d.unset = d.unset || wd.unset
			pending = append(pending, wd.unresolved)
		}
	}
	if windowed {
		if d.pending == nil {
			d.pending = map[*Graph][][]*Arg{}
		}
		d.pending[g] = pending
	}
	return nil
}

// countNodes counts the node messages of graph message b and notes where
// every markEvery-th one starts (graph). parsed is false when b does not
// parse (the sequential decode then reports it); an empty node is refused
// at once.
func (d *wireDecoder) countNodes(b []byte) (count int, marks []int, parsed bool, err error) {
	for rest := b; len(rest) > 0; {
		f, n, err := nextField(rest)
		if err != nil {
			return count, marks, false, nil // let the sequential decode report it
		}
		if f.num == 1 && isBytes(f) {
			if len(f.body) == 0 {
				// Refused before the nodes are allocated: millions of
				// two-byte empty nodes would each cost a Node first.
				return count, marks, true, &wireNodeError{index: count, err: errNodeNoName}
			}
			if count%markEvery == 0 {
				at := len(b) - len(rest)
				marks = append(marks, at)
			}
			count++
		}
		rest = rest[n:]
	}
	return count, marks, true, nil
}

// resolveWindow points the references of node i of nodes to the nearest
// of the refWindow nodes before it that has the name, looking no further
// back than node lo: most references name one of the last few nodes. They
// are what finishGraph would find when no two nodes share a name; when
// some do, it resolves every reference again through the index. It adds
// the references it did not resolve to d.unresolved. With refsInInput, a
// reference it resolves takes the name of its node, and the others a copy
// of theirs (every reference of the node: the input is released later).
func (d *wireDecoder) resolveWindow(nodes []Node, i, lo int) {
	n := &nodes[i]
	first := max(lo, i-refWindow)
	match := func(a *Arg) {
		for j := i - 1; j >= first; j-- {
			if nodes[j].Name == a.S {
				a.Ref = NodeID(j)
				if d.refsInInput {
					a.S = nodes[j].Name
				}
				return
			}
		}
		if d.refsInInput && a.S != "" {
			a.S = d.copyStr(unsafe.Slice(unsafe.StringData(a.S), len(a.S)))
		}
		d.unresolved = append(d.unresolved, a)
	}
	for k := range n.Args {
		if a := &n.Args[k]; a.Kind == ArgNode {
			match(a)
		} else if len(a.Elems()) > 0 {
			a.WalkRefs(match)
		}
	}
	for k := range n.Kwargs {
		n.Kwargs[k].Value.WalkRefs(match)
	}
}

// markEvery is how many nodes apart graph notes where node messages start:
// its workers start at these marks.
const markEvery = 1 << 10

// progressBatch+1 nodes make one report of nodes done to the progress
// line (internal/progress).
const progressBatch = 1<<12 - 1

// releaseBatch+1 nodes decoded make a worker release the input they
// were decoded from (releaseMapped), and it releases the rest of its range
// when done. Each release makes the kernel flush the other cores' TLBs,
// so releases are batched rather than made per node.
const releaseBatch = 1<<14 - 1

// maxSharedValues bounds the value cache.
const maxSharedValues = 1 << 16

// enter and leave bracket the decoding of a nested message, as each does.
func (d *wireDecoder) enter() error {
	d.depth++
	if d.depth > maxWireDepth {
		return errWireDepth
	}
	return nil
}

func (d *wireDecoder) leave() { d.depth-- }

// fieldError is each's error for a field that does not parse at rest.
func (d *wireDecoder) fieldError(rest []byte, err error) error {
	return fmt.Errorf("at byte %d: %w", d.end-cap(rest), err)
}

// node decodes a Node message. It and arg, which decode most of a graph's
// bytes, loop over fields themselves rather than through each's callback.
func (d *wireDecoder) node(b []byte, n *Node) error {
	op := int32(0)
	err := d.nodeFields(b, n, &op)
	d.finishNode(n, op)
	if err == nil && n.Name == "" {
		return errNodeNoName
	}
	return err
}

// errNodeNoName refuses a node without a name while decoding (FromProto
// too), not in Verify: the smallest such node is two bytes of input and a
// hundred and sixty of memory, so millions of them would cost memory out
// of proportion to the file before Verify could list them.
var errNodeNoName = errors.New("node has an empty name")

func (d *wireDecoder) nodeFields(b []byte, n *Node, op *int32) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	shared := false
	// A large node's arguments go straight into a list of the exact size,
	// counted first: through the scratch list they would cost its growth
	// and a copy, several times the input's size when the arguments are
	// tiny (a million `none` arguments).
	args := &d.scratch
	if len(b) > bigNodeBytes {
		n.Args = make([]Arg, 0, countBytesFields(b, 4))
		n.Kwargs = make([]Kwarg, 0, countBytesFields(b, 5))
		args = &n.Args
	}
	for len(b) > 0 {
		f, size, err := nextField(b)
		if err != nil {
			return d.fieldError(b, err)
		}
		b = b[size:]
		switch {
		case f.num == 1 && isBytes(f):
			n.Name, err = d.str(f)
		case f.num == 2 && isVarint(f):
			*op = int32(f.v)
		case f.num == 3 && isBytes(f):
			n.Target, err = d.target(f)
		case f.num == 4 && isBytes(f):
			// Into the scratch list, copied to the slab at the end: a
			// second pass to count them first cost more than the copy.
			*args = append(*args, Arg{Kind: argUnset})
			last := &(*args)[len(*args)-1]
			err = d.arg(f.body, last)
			if err == nil && last.Kind == argUnset {
				err = errArgUnset
			}
			if err != nil && errors.Is(err, errArgUnset) { // errors.Is is a call, not inlined
				// At once, not when the node is done: millions of
				// two-byte empty arguments would each cost an Arg first.
				err = fmt.Errorf("argument %d: %w", len(*args)-1, err)
			}
		case f.num == 5 && isBytes(f):
			n.Kwargs = append(n.Kwargs, Kwarg{Value: Arg{Kind: argUnset}})
			kw := &n.Kwargs[len(n.Kwargs)-1]
			err = d.kwarg(f.body, kw)
			if err == nil && kw.Value.Kind == argUnset {
				err = errArgUnset
			}
			if err != nil && errors.Is(err, errArgUnset) {
				err = fmt.Errorf("keyword argument %q: %w", kw.Name, err)
			}
		case f.num == 6 && isBytes(f):
			if n.Val != nil {
				// A second val field merges into the first: unshare it.
				if shared {
					n.Val, shared = n.Val.Clone(), false
				}
				err = d.value(f.body, n.Val)
			} else if v, ok := d.vals[string(f.body)]; ok {
				n.Val, shared = v, true
			} else {
				n.Val = &Value{}
				err = d.value(f.body, n.Val)
				if err == nil && len(d.vals) < maxSharedValues {
					d.vals[string(f.body)] = n.Val
					shared = true
				}
			}
		case f.num == 7 && isBytes(f):
			if n.Meta == nil {
				n.Meta = &Meta{}
			}
			err = d.meta(f.body, n.Meta)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *wireDecoder) finishNode(n *Node, op int32) {
	if len(d.scratch) > 0 {
		n.Args = append(d.allocArgs(len(d.scratch)), d.scratch...)
		clear(d.scratch) // drop the references for the collector
		d.scratch = d.scratch[:0]
	}
	n.Op = OpKind(op)
	if op < 0 || int(op) >= len(opKindNames) {
		n.Op = OpUnspecified
	}
}

func (d *wireDecoder) kwarg(b []byte, kw *Kwarg) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			kw.Name, err = d.str(f)
		case f.num == 2 && isBytes(f):
			err = d.arg(f.body, &kw.Value)
		}
		return err
	})
}

// arg decodes an Arg message into a (merging into its current kind, as
// protobuf does for a repeated oneof message field).
func (d *wireDecoder) arg(b []byte, a *Arg) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	for len(b) > 0 {
		f, size, err := nextField(b)
		if err != nil {
			return d.fieldError(b, err)
		}
		b = b[size:]
		if err := d.argField(f, a); err != nil {
			return err
		}
	}
	return nil
}

// argField decodes one field of an Arg message into a.
func (d *wireDecoder) argField(f wireField, a *Arg) error {
	switch f.num {
	case 1, 5, 9, 10, 11, 12, 14:
		if !isBytes(f) {
			return nil
		}
		kind := stringArgKind(f.num)
		var s string
		var err error
		if kind == ArgNode && d.refsInInput {
			s, err = d.inputStr(f)
		} else {
			s, err = d.str(f)
		}
		*a = Arg{Kind: kind, S: s}
		if kind == ArgNode {
			a.Ref = NoNode
		}
		return err
	case 2:
		if isVarint(f) {
			*a = IntArg(int64(f.v))
		}
	case 3:
		if isFixed64(f) {
			*a = FloatArg(math.Float64frombits(f.v))
		}
	case 4:
		if isVarint(f) {
			*a = Arg{Kind: ArgBool, B: f.v != 0}
		}
	case 6:
		if isBytes(f) {
			*a = Arg{Kind: ArgNone}
			return d.each(f.body, func(wireField) error { return nil })
		}
	case 7, 8:
		if !isBytes(f) {
			return nil
		}
		kind := ArgList
		if f.num == 8 {
			kind = ArgTuple
		}
		return d.listArg(f.body, kind, a)
	case 13:
		if !isBytes(f) {
			return nil
		}
		if a.Kind != ArgSym || a.Sym() == nil {
			*a = SymArg(&SymExpr{})
		}
		return d.sym(f.body, a.Sym())
	case 15:
		if !isBytes(f) {
			return nil
		}
		if a.Kind != ArgDict {
			*a = DictArg([]string{}, []Arg{})
		}
		add := d.entryAdder(a)
		return d.each(f.body, func(g wireField) error {
			if g.num != 1 || !isBytes(g) {
				return nil
			}
			kw := Kwarg{Value: Arg{Kind: argUnset}}
			err := d.kwarg(g.body, &kw)
			add(kw)
			return err
		})
	case 16:
		if !isBytes(f) {
			return nil
		}
		if a.Kind != ArgComplex {
			*a = Arg{Kind: ArgComplex}
		}
		return d.each(f.body, func(g wireField) error {
			switch {
			case g.num == 1 && isFixed64(g):
				a.SetFloat(math.Float64frombits(g.v))
			case g.num == 2 && isFixed64(g):
				a.SetImag(math.Float64frombits(g.v))
			}
			return nil
		})
	case 17:
		if !isBytes(f) {
			return nil
		}
		if a.Kind != ArgSlice {
			*a = WithElems(Arg{Kind: ArgSlice}, []Arg{{Kind: argUnset}, {Kind: argUnset}, {Kind: argUnset}})
		}
		err := d.each(f.body, func(g wireField) error {
			if g.num < 1 || g.num > 3 || !isBytes(g) {
				return nil
			}
			return d.arg(g.body, &a.Elems()[g.num-1])
		})
		// A part that is unset, or set but empty, is None (as FromProto has it).
		for i := range a.Elems() {
			if a.Elems()[i].Kind == argUnset {
				a.Elems()[i] = Arg{Kind: ArgNone}
			}
		}
		return err
	case 18:
		if isBytes(f) {
			*a = Arg{Kind: ArgEllipsis}
			return d.each(f.body, func(wireField) error { return nil })
		}
	case 19:
		if !isBytes(f) {
			return nil
		}
		if a.Kind != ArgConstant {
			*a = ConstantArg("", []string{}, []Arg{})
		}
		add := d.entryAdder(a)
		return d.each(f.body, func(g wireField) error {
			switch {
			case g.num == 1 && isBytes(g):
				s, err := d.str(g)
				a.S = s
				return err
			case g.num == 2 && isBytes(g):
				kw := Kwarg{Value: Arg{Kind: argUnset}}
				err := d.kwarg(g.body, &kw)
				add(kw)
				return err
			}
			return nil
		})
	}
	return nil
}

// listArg decodes the items of a list or tuple message b into a (merging
// into its current kind, as argField does). It is a method of its own so
// that its defer is open-coded (in argField's switch it would be a
// deferred call run through the runtime's deferreturn).
func (d *wireDecoder) listArg(b []byte, kind ArgKind, a *Arg) error {
	// The elements grow in a slice of their own: an Arg's has no spare
	// capacity (a list field repeated appends to the first).
	elems := a.Elems()
	if a.Kind != kind {
		elems = d.allocArgs(countBytesFields(b, 1))
		*a = WithElems(Arg{Kind: kind}, elems)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	for rest := b; len(rest) > 0; {
		g, size, err := nextField(rest)
		if err != nil {
			return d.fieldError(rest, err)
		}
		rest = rest[size:]
		if g.num != 1 || !isBytes(g) {
			continue
		}
		elems = append(elems, Arg{Kind: argUnset})
		a.SetElems(elems)
		last := &elems[len(elems)-1]
		if err := d.arg(g.body, last); err != nil {
			return err
		}
		if last.Kind == argUnset {
			return errArgUnset
		}
	}
	return nil
}

// entryAdder returns a function that appends a key and its value to a
// dict or constant a: the keys and the elements grow in slices of their
// own (an Arg's elements have no spare capacity), a's extension is its own.
func (d *wireDecoder) entryAdder(a *Arg) func(kw Kwarg) {
	x := a.ownExt()
	elems := a.Elems()
	return func(kw Kwarg) {
		x.keys = append(x.keys, kw.Name)
		elems = append(elems, kw.Value)
		a.SetElems(elems)
		d.unset = d.unset || kw.Value.Kind == argUnset
	}
}

// stringArgKind maps the Arg oneof's string fields to their kinds.
func stringArgKind(num protowire.Number) ArgKind {
	switch num {
	case 1:
		return ArgNode
	case 5:
		return ArgStr
	case 9:
		return ArgDtype
	case 10:
		return ArgDevice
	case 11:
		return ArgLayout
	case 12:
		return ArgMemoryFormat
	}
	return ArgOp
}

func (d *wireDecoder) sym(b []byte, s *SymExpr) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isVarint(f):
			s.Kind = SymKind(int32(f.v))
		case f.num == 2 && isBytes(f):
			s.Expr, err = d.str(f)
		case f.num == 3 && isBytes(f):
			s.Hint, err = d.str(f)
			s.HasHint = true
		}
		return err
	})
}

func (d *wireDecoder) dim(b []byte, x *Dim) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isVarint(f):
			*x = Dim{Val: int64(f.v)}
		case f.num == 2 && isBytes(f):
			var s string
			s, err = d.str(f)
			*x = Dim{Expr: s}
		}
		return err
	})
}

func (d *wireDecoder) tensor(b []byte, t *TensorMeta) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			t.Shape = append(t.Shape, Dim{})
			err = d.dim(f.body, &t.Shape[len(t.Shape)-1])
		case f.num == 2 && isBytes(f):
			t.Stride = append(t.Stride, Dim{})
			err = d.dim(f.body, &t.Stride[len(t.Stride)-1])
		case f.num == 3 && isBytes(f):
			err = d.dim(f.body, &t.StorageOffset)
		case f.num == 4 && isBytes(f):
			t.Dtype, err = d.str(f)
		case f.num == 5 && isBytes(f):
			t.Device, err = d.str(f)
		case f.num == 6 && isVarint(f):
			t.RequiresGrad = f.v != 0
		case f.num == 7 && isBytes(f):
			t.MemoryFormat, err = d.str(f)
		case f.num == 8 && isVarint(f):
			t.IsQuantized = f.v != 0
		case f.num == 9 && isBytes(f):
			if t.QParams == nil {
				t.QParams = &QParams{}
			}
			err = d.qparams(f.body, t.QParams)
		case f.num == 10 && isVarint(f):
			t.StorageID, t.HasStorageID = int64(f.v), true
		case f.num == 11 && isBytes(f):
			t.Layout, err = d.str(f)
		}
		return err
	})
}

func (d *wireDecoder) qparams(b []byte, q *QParams) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			q.QScheme, err = d.str(f)
		case f.num == 2 && isFixed64(f):
			q.Scale = math.Float64frombits(f.v)
		case f.num == 3 && isVarint(f):
			q.ZeroPoint = int64(f.v)
		case f.num == 4 && isFixed64(f):
			q.Scales = append(q.Scales, math.Float64frombits(f.v))
		case f.num == 4 && isBytes(f):
			for p := f.body; len(p) > 0; {
				v, n := protowire.ConsumeFixed64(p)
				if n < 0 {
					return protowire.ParseError(n)
				}
				q.Scales = append(q.Scales, math.Float64frombits(v))
				p = p[n:]
			}
		case f.num == 5 && isVarint(f):
			q.ZeroPoints = append(q.ZeroPoints, int64(f.v))
		case f.num == 5 && isBytes(f):
			for p := f.body; len(p) > 0; {
				v, n := protowire.ConsumeVarint(p)
				if n < 0 {
					return protowire.ParseError(n)
				}
				q.ZeroPoints = append(q.ZeroPoints, int64(v))
				p = p[n:]
			}
		case f.num == 6 && isVarint(f):
			q.Axis = int64(f.v)
		}
		return err
	})
}

func (d *wireDecoder) value(b []byte, v *Value) error {
	return d.each(b, func(f wireField) error {
		switch f.num {
		case 1:
			if !isBytes(f) {
				return nil
			}
			if v.Kind != ValTensor || v.Tensor == nil {
				*v = Value{Kind: ValTensor, Tensor: &TensorMeta{}}
			}
			return d.tensor(f.body, v.Tensor)
		case 2:
			if !isBytes(f) {
				return nil
			}
			if v.Kind != ValSym || v.Sym == nil {
				*v = Value{Kind: ValSym, Sym: &SymExpr{}}
			}
			return d.sym(f.body, v.Sym)
		case 3, 4:
			if !isBytes(f) {
				return nil
			}
			kind := ValList
			if f.num == 4 {
				kind = ValTuple
			}
			if v.Kind != kind {
				*v = Value{Kind: kind, Elems: []Value{}}
			}
			return d.each(f.body, func(g wireField) error {
				if g.num != 1 || !isBytes(g) {
					return nil
				}
				v.Elems = append(v.Elems, Value{})
				return d.value(g.body, &v.Elems[len(v.Elems)-1])
			})
		case 5:
			if isBytes(f) {
				*v = Value{Kind: ValNone}
				return d.each(f.body, func(wireField) error { return nil })
			}
		case 6:
			if isVarint(f) {
				*v = Value{Kind: ValInt, I: int64(f.v)}
			}
		case 7:
			if isFixed64(f) {
				*v = Value{Kind: ValFloat, F: math.Float64frombits(f.v)}
			}
		case 8:
			if isVarint(f) {
				*v = Value{Kind: ValBool, B: f.v != 0}
			}
		case 9:
			if isBytes(f) {
				s, err := d.str(f)
				*v = Value{Kind: ValOpaque, S: s}
				return err
			}
		}
		return nil
	})
}

func (d *wireDecoder) stackEntry(b []byte) (ModuleStackEntry, error) {
	var e ModuleStackEntry
	err := d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			e.Key, err = d.str(f)
		case f.num == 2 && isBytes(f):
			e.Path, err = d.str(f)
		case f.num == 3 && isBytes(f):
			e.Type, err = d.str(f)
		}
		return err
	})
	return e, err
}

func (d *wireDecoder) meta(b []byte, m *Meta) error {
	return d.each(b, func(f wireField) error {
		var err error
		switch {
		case f.num == 1 && isBytes(f):
			m.StackTrace, err = d.str(f)
		case (f.num == 2 || f.num == 3) && isBytes(f):
			var e ModuleStackEntry
			e, err = d.stackEntry(f.body)
			if f.num == 2 {
				m.NNModuleStack = append(m.NNModuleStack, e)
			} else {
				m.SourceFnStack = append(m.SourceFnStack, e)
			}
		case f.num == 4 && isVarint(f):
			m.SeqNr, m.HasSeqNr = int64(f.v), true
		case f.num == 5 && isBytes(f):
			m.FwdSource, err = d.str(f)
		case f.num == 6 && isBytes(f):
			var a Annotation
			err = d.pair(f.body, &a.Key, &a.Value)
			m.Extra = append(m.Extra, a)
		}
		return err
	})
}
