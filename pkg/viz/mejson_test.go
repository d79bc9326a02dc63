package viz

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMEWriteJSONEqualsEncodingJSON: the streaming writer writes the
// document encoding/json writes (compact, no HTML escaping), on graphs with
// subgraphs, findings and group attributes.
func TestMEWriteJSONEqualsEncodingJSON(t *testing.T) {
	for _, path := range []string{"../../testdata/hops/nested3_mutation.pbtxt", "../../testdata/models/resnet18.pb"} {
		m, _, f := loadFile(t, path)
		c := ModelExplorer(&f, m)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := c.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			i := 0
			for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
				i++
			}
			t.Errorf("%s: differs at byte %d (%d vs %d bytes)", path, i, got.Len(), want.Len())
		}
	}
}
