package partition

import (
	"math"
	"testing"

	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/jointgraph"
)

// TestSavedBytesDoNotWrap: two saved f16[2**61] tensors hold 2**63 bytes
// together, one more than int64 holds; the total wrapped negative (the
// report said a negative size, and min-cut then saved more than the default
// partition). Totals saturate at math.MaxInt64. (A single tensor whose own
// size overflows int64 is refused by ir.Verify.)
func TestSavedBytesDoNotWrap(t *testing.T) {
	src := `format_version {major: 1}
graph {
  nodes {name: "x" op: PLACEHOLDER target: "x" val {tensor {shape: [{value: 2305843009213693952}] stride: [{value: 1}] dtype: "float16" device: "cpu" requires_grad: true}}}
  nodes {name: "sin" op: CALL_FUNCTION target: "aten.sin.default" args {node: "x"} val {tensor {shape: [{value: 2305843009213693952}] stride: [{value: 1}] dtype: "float16" device: "cpu" requires_grad: true}}}
  nodes {name: "cos" op: CALL_FUNCTION target: "aten.cos.default" args {node: "sin"} val {tensor {shape: [{value: 2305843009213693952}] stride: [{value: 1}] dtype: "float16" device: "cpu" requires_grad: true}}}
  nodes {name: "output" op: OUTPUT target: "output" args {tuple {items {node: "cos"}}}}
}`
	m, err := ir.Decode([]byte(src), ir.Text, "huge.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m, "huge.pbtxt"); err != nil {
		t.Fatal(err)
	}
	j := build(t, m, jointgraph.Options{})
	totals := map[Mode]int64{}
	for _, mode := range []Mode{Default, MinCut} {
		p, err := Split(j, mode)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Saved()) == 0 {
			t.Fatalf("%v: nothing saved", mode)
		}
		var tensors int
		for _, s := range p.Saved() {
			if s.Kind != "tensor" {
				continue
			}
			tensors++
			if s.Bytes != 1<<62 {
				t.Errorf("%v: saved %s has %d bytes, want 2**62", mode, s.Name, s.Bytes)
			}
		}
		totals[mode] = p.TotalBytes()
		want := int64(tensors) << 62
		if tensors >= 2 {
			want = math.MaxInt64
		}
		if totals[mode] != want {
			t.Errorf("%v: total %d bytes of %d saved tensors, want %d", mode, totals[mode], tensors, want)
		}
		if len(p.Saved()) > 2 {
			t.Errorf("%v: saves %d values of a two-op chain", mode, len(p.Saved()))
		}
	}
	if totals[Default] != math.MaxInt64 {
		t.Errorf("the default partition's total %d did not reach the saturating sum", totals[Default])
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	for _, c := range []struct{ a, b, mul, add int64 }{
		{2, 3, 6, 5},
		{1 << 62, 4, math.MaxInt64, 1<<62 + 4},
		{math.MaxInt64, 1, math.MaxInt64, math.MaxInt64},
		{0, math.MaxInt64, 0, math.MaxInt64},
	} {
		if got := satMul(c.a, c.b); got != c.mul {
			t.Errorf("satMul(%d, %d) = %d", c.a, c.b, got)
		}
		if got := satAdd(c.a, c.b); got != c.add {
			t.Errorf("satAdd(%d, %d) = %d", c.a, c.b, got)
		}
	}
}
