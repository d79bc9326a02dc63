package pt2

import (
	"os"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
)

// FuzzDecode: no input makes the reader panic; every refusal is an input
// error; what decodes verifies (or not) without panicking, and decodes the
// same way twice.
func FuzzDecode(f *testing.F) {
	// Small seeds of each kind: both layouts, a HOP program, the
	// hand-written program with every Argument variant.
	seeds := []string{"../../testdata/pt2/2.6/effects.train.pt2", "../../testdata/pt2/2.14/input_mutation.aten.pt2",
		"../../testdata/pt2/hand/every_argument.json"}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if a, err := readArchive(data); err == nil {
			f.Add(a.program)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, "fuzz.pt2")
		if err != nil {
			if _, ok := err.(ir.InputError); !ok {
				t.Fatalf("error %T is not an input error: %v", err, err)
			}
			return
		}
		_ = ir.Verify(m, "fuzz.pt2")
		again, err := Decode(data, "fuzz.pt2")
		if err != nil {
			t.Fatalf("second decode fails: %v", err)
		}
		if printed(t, m) != printed(t, again) {
			t.Fatal("two decodes differ")
		}
	})
}
