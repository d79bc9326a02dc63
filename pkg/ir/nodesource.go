package ir

import (
	"fmt"
	"io"
	"sync"
)

// NodeSource is a graph's nodes as the encoders read them, one at a time,
// for a graph made of another graph's nodes (a partition of a joint graph,
// pkg/jointgraph) without copying them into a []Node: node i's references
// may still be the other graph's, and Ref says where each points in this
// one and the name it stores.
type NodeSource interface {
	Len() int
	// Node returns node i. The node is only read.
	Node(i int) *Node
	// Ref returns, for a reference a in the arguments of a node Node
	// returned, the id in this graph it refers to (NoNode when unresolved)
	// and the name it stores.
	Ref(a *Arg) (NodeID, string)
}

// OwnNames is implemented by a NodeSource that can tell that every
// reference of its nodes stores its own name: when OwnNames returns true,
// Ref(a) returns a.S as the name for every reference a (the id it
// returns may differ), and the encoders may read a.S without asking Ref.
type OwnNames interface {
	OwnNames() bool
}

// GraphNodes is g's nodes as a NodeSource.
func GraphNodes(g *Graph) NodeSource { return graphNodes{g} }

type graphNodes struct{ g *Graph }

func (s graphNodes) Len() int                    { return len(s.g.Nodes) }
func (s graphNodes) Node(i int) *Node            { return &s.g.Nodes[i] }
func (s graphNodes) Ref(a *Arg) (NodeID, string) { return a.Ref, a.S }

// EncodeSourceTo writes m to w in the given encoding, with the nodes of its
// root graph read from root instead of m.Graphs[0] (whose nodes are not
// read): the bytes EncodeTo writes for m with root's nodes copied into its
// root graph, references renamed as root.Ref says. All three encodings
// are streamed: memory does not grow with the output. On an error w may
// have been written to; an error of w is a *WriteError.
func EncodeSourceTo(w io.Writer, m *Module, root NodeSource, enc Encoding) error {
	return EncodeSourceToMemo(w, m, root, enc, nil)
}

// EncodeSourceToMemo is EncodeSourceTo with the binary encodings of node
// values memoized in vals, which encodings of other modules whose nodes
// share values may use at the same time (nil: a memo of this encoding's
// own). The bytes are EncodeSourceTo's.
func EncodeSourceToMemo(w io.Writer, m *Module, root NodeSource, enc Encoding, vals *ValueMemo) error {
	switch enc {
	case Binary:
		// Streamed: the output is written as it is made, in pieces of
		// streamChunk bytes, or fileChunk to a regular file (a root graph
		// larger than that is written at its place in the file, or else
		// encoded twice, to know its length first: streamRoot).
		e, _ := streamEncoders.Get().(*wireEncoder)
		if e == nil {
			e = &wireEncoder{}
		}
		own := e.vals
		if vals == nil {
			if own == nil {
				own = NewValueMemo(0)
			}
			vals = own
		}
		e.vals, e.root, e.w, e.chunk, e.f = vals, root, w, streamChunk, asOutputFile(w)
		if e.f != nil {
			e.chunk = fileChunk
		}
		if cap(e.b) < 2*e.chunk {
			e.b = make([]byte, 0, 2*e.chunk)
		}
		e.file(m)
		e.flush()
		if e.cut && e.err == nil {
			end, err := e.f.Seek(0, io.SeekCurrent)
			if err == nil {
				err = e.f.Truncate(end)
			}
			if err != nil {
				e.err = &WriteError{Err: err}
			}
		}
		err := e.err
		memo, entries := e.memo, e.entries
		*e = wireEncoder{b: e.b[:0]}
		if vals == own {
			// The memo was this encoding's alone: it and the memory of
			// its entries serve the next one.
			clear(own.slots)
			e.vals, e.memo, e.entries = own, memo[:0], entries[:0]
		}
		streamEncoders.Put(e)
		return err
	case JSON, Text:
		f, err := sourceFile(m, root, vals)
		if err != nil {
			return err
		}
		return libraryEncode(w, f, enc)
	}
	return fmt.Errorf("unknown encoding")
}

// streamEncoders keeps the buffers of finished streamed binary encodings
// for the next one: a command that writes several outputs (joint -o
// --fw-out --bw-out) reuses one buffer instead of allocating one each.
var streamEncoders sync.Pool
