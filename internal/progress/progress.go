// Package progress is hopctl's progress line: on a terminal, a command
// that runs longer than Delay shows on stderr what it is doing — the
// phase, the nodes done out of the total when known, the elapsed time —
// on one line it rewrites in place and clears when done. Never in pipes,
// files or CI logs unless asked (--progress: then a plain line per
// second), never with --quiet.
//
// The command line configures the line (Configure: where, and whether);
// commands name their phases (Phase), and the first phase starts the line's
// goroutine, so commands that have none (version, config) start nothing.
// The work reports nodes done through Add, a process-wide counter that the
// line samples a few times a second, so the loops that count (decoding,
// encoding) pay one atomic addition per batch of nodes and nothing when
// no line is shown.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Delay is how long a command runs before its progress line appears.
const Delay = time.Second

// Mode says when the line is shown.
type Mode int

const (
	Auto   Mode = iota // on a terminal that is not a CI log or a dumb terminal
	Always             // --progress: also in pipes and logs, as plain lines
	Never              // --quiet
)

var (
	active atomic.Bool
	done   atomic.Int64
)

// process is the configuration and line of this process.
var process struct {
	sync.Mutex
	w     io.Writer
	tty   bool
	mode  Mode
	start time.Time
	line  *Line
	ended bool
}

// Configure says where the progress line goes (w, a terminal when tty)
// and when (mode), for the command about to run; its elapsed time counts
// from now. Without it, Phase shows nothing.
func Configure(w io.Writer, tty bool, mode Mode) {
	process.Lock()
	defer process.Unlock()
	process.w, process.tty, process.mode, process.start = w, tty, mode, time.Now()
	process.line, process.ended = nil, false
}

// Phase names the phase the command is in and its total in nodes (0 when
// not known), and starts the line on the first call when one is to be
// shown (Configure and the environment decide: enabled).
func Phase(name string, total int) {
	process.Lock()
	defer process.Unlock()
	if process.w == nil || process.ended {
		return
	}
	if process.line == nil {
		if !enabled(process.tty, process.mode) {
			process.ended = true // no line for this command
			return
		}
		process.line = start(process.w, process.tty, process.start, Delay, tick)
	}
	process.line.Phase(name, total)
}

// Finish clears the line, if one is shown; later phases show nothing.
func Finish() {
	process.Lock()
	defer process.Unlock()
	process.line.Stop()
	process.line, process.ended = nil, true
}

// Add counts n more nodes done in the current phase.
func Add(n int) {
	if active.Load() {
		done.Add(int64(n))
	}
}

// Line is a progress line being shown (or waiting to be). A nil *Line,
// what a command without a line has, does nothing.
type Line struct {
	w     io.Writer
	tty   bool
	start time.Time
	delay time.Duration

	mu     sync.Mutex
	phase  string
	total  int64
	shown  bool // something is on the terminal line
	last   time.Time
	stop   chan struct{}
	exited chan struct{}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// tick is how often the line is redrawn.
const tick = 250 * time.Millisecond

func enabled(tty bool, mode Mode) bool {
	switch mode {
	case Never:
		return false
	case Auto:
		return tty && os.Getenv("CI") == "" && os.Getenv("TERM") != "dumb"
	}
	return true
}

func start(w io.Writer, tty bool, at time.Time, delay, tick time.Duration) *Line {
	l := &Line{w: w, tty: tty, start: at, delay: delay, stop: make(chan struct{}), exited: make(chan struct{})}
	done.Store(0)
	active.Store(true)
	go l.run(tick)
	return l
}

func (l *Line) run(tick time.Duration) {
	defer close(l.exited)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			l.draw(now)
		}
	}
}

// Phase starts a phase of the work: name, and its total in nodes (0 when
// not known). The count of nodes done starts again from 0.
func (l *Line) Phase(name string, total int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.phase, l.total = name, int64(total)
	done.Store(0)
	l.mu.Unlock()
}

// Stop ends the line, clearing it from the terminal.
func (l *Line) Stop() {
	if l == nil {
		return
	}
	close(l.stop)
	<-l.exited
	active.Store(false)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown && l.tty {
		io.WriteString(l.w, "\r\033[K")
	}
	l.shown = false
}

func (l *Line) draw(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	elapsed := now.Sub(l.start)
	if elapsed < l.delay || l.phase == "" {
		return
	}
	if !l.tty && !l.last.IsZero() && now.Sub(l.last) < time.Second {
		return // plain lines: one a second
	}
	l.last = now
	text := Format(l.phase, done.Load(), l.total, elapsed)
	if l.tty {
		io.WriteString(l.w, "\r\033[K"+text)
	} else {
		io.WriteString(l.w, text+"\n")
	}
	l.shown = true
}

// Format is the text of a progress line: "hopctl: load: 512,000 / 1,000,000
// nodes, 1.3 s" (without a total: "512,000 nodes"; without nodes, only the
// time).
func Format(phase string, done, total int64, elapsed time.Duration) string {
	s := "hopctl: " + phase + ": "
	switch {
	case total > 0:
		s += thousands(min(done, total)) + " / " + thousands(total) + " nodes, "
	case done > 0:
		s += thousands(done) + " nodes, "
	}
	return s + fmt.Sprintf("%.1f s", elapsed.Seconds())
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
