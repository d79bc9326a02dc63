package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Timings records how long each phase of a command took, for --timings.
// A nil *Timings records nothing, so commands call it unconditionally.
type Timings struct {
	w      io.Writer
	start  time.Time
	last   time.Time
	phases []string
}

// NewTimings returns a Timings printing to w, or nil when on is false.
func NewTimings(w io.Writer, on bool) *Timings {
	if !on {
		return nil
	}
	now := time.Now()
	return &Timings{w: w, start: now, last: now}
}

// Lap ends the phase called name: the wall time since the previous Lap
// (or since NewTimings).
func (t *Timings) Lap(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.phases = append(t.phases, fmt.Sprintf("%s %s", name, ms(now.Sub(t.last))))
	t.last = now
}

// Print writes one line, "timings: PHASE N ms, …, total N ms".
func (t *Timings) Print() {
	if t == nil {
		return
	}
	fmt.Fprintf(t.w, "timings: %s, total %s\n", strings.Join(t.phases, ", "), ms(time.Since(t.start)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
