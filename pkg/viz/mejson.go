package viz

import (
	"bufio"
	"encoding/json"
	"io"
)

// WriteJSON writes the collection as compact JSON (the same document
// encoding/json would write), one node at a time through a buffer, so that
// a graph of hundreds of thousands of nodes is never held twice in memory
// as encoded bytes (an indented encoding of a 100,000-operand cond was
// 400 MB and took 4 GiB to build).
func (c *MEGraphCollection) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	// put writes v's encoding without the newline json.Encoder appends.
	put := func(v any) error {
		b, err := marshal(v)
		if err != nil {
			return err
		}
		_, err = bw.Write(b)
		return err
	}
	bw.WriteString(`{"label":`)
	if err := put(c.Label); err != nil {
		return err
	}
	bw.WriteString(`,"graphs":[`)
	for gi := range c.Graphs {
		g := &c.Graphs[gi]
		if gi > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(`{"id":`)
		if err := put(g.ID); err != nil {
			return err
		}
		bw.WriteString(`,"nodes":[`)
		for i := range g.Nodes {
			if i > 0 {
				bw.WriteByte(',')
			}
			if err := put(&g.Nodes[i]); err != nil {
				return err
			}
		}
		bw.WriteByte(']')
		if len(g.GroupNodeAttributes) > 0 {
			// encoding/json sorts map keys; so does Marshal of the map.
			bw.WriteString(`,"groupNodeAttributes":`)
			if err := put(g.GroupNodeAttributes); err != nil {
				return err
			}
		}
		bw.WriteByte('}')
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b jsonBuf
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil // drop Encode's newline
}

type jsonBuf []byte

func (b *jsonBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
