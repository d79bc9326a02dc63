package jointgraph

import (
	"math"
	"testing"
)

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
	}
}
