package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		want        string
	}{
		{512000, 1000000, "hopctl: load: 512,000 / 1,000,000 nodes, 1.3 s"},
		{1200000, 1000000, "hopctl: load: 1,000,000 / 1,000,000 nodes, 1.3 s"},
		{4096, 0, "hopctl: load: 4,096 nodes, 1.3 s"},
		{0, 0, "hopctl: load: 1.3 s"},
		{999, 999, "hopctl: load: 999 / 999 nodes, 1.3 s"},
	} {
		if got := Format("load", tc.done, tc.total, 1300*time.Millisecond); got != tc.want {
			t.Errorf("Format(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

func TestEnabled(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("TERM", "xterm")
	for _, tc := range []struct {
		tty  bool
		mode Mode
		want bool
	}{
		{true, Auto, true}, {false, Auto, false},
		{false, Always, true}, {true, Always, true},
		{true, Never, false}, {false, Never, false},
	} {
		if got := enabled(tc.tty, tc.mode); got != tc.want {
			t.Errorf("enabled(tty=%v, mode=%v) = %v, want %v", tc.tty, tc.mode, got, tc.want)
		}
	}
	t.Setenv("CI", "true")
	if enabled(true, Auto) {
		t.Error("shown by default in CI")
	}
	if !enabled(false, Always) {
		t.Error("--progress not shown in CI")
	}
	t.Setenv("CI", "")
	t.Setenv("TERM", "dumb")
	if enabled(true, Auto) {
		t.Error("shown by default on a dumb terminal")
	}
}

// On a terminal the line is rewritten in place after the delay, counts
// the nodes added, and is cleared at the end.
func TestLineOnTerminal(t *testing.T) {
	var w syncBuffer
	l := start(&w, true, time.Now(), 30*time.Millisecond, 5*time.Millisecond)
	l.Phase("encode", 10000)
	time.Sleep(10 * time.Millisecond)
	if got := w.String(); got != "" {
		t.Fatalf("shown before the delay: %q", got)
	}
	Add(4096)
	time.Sleep(80 * time.Millisecond)
	l.Stop()
	Add(1) // after Stop: not counted, not shown
	out := w.String()
	if !strings.HasPrefix(out, "\r\033[Khopctl: encode: 4,096 / 10,000 nodes, ") || !strings.HasSuffix(out, " s\r\033[K") {
		t.Errorf("terminal output %q", out)
	}
	if strings.Contains(out, "\n") {
		t.Errorf("terminal output has a newline: %q", out)
	}
}

// Asked for (--progress) outside a terminal, the line is a plain line at
// most once a second, and nothing is cleared.
func TestLineForcedPlain(t *testing.T) {
	var w syncBuffer
	l := start(&w, false, time.Now(), 0, 5*time.Millisecond)
	l.Phase("load", 0)
	time.Sleep(60 * time.Millisecond)
	l.Stop()
	out := w.String()
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "hopctl: load: ") || strings.Contains(out, "\r") {
		t.Errorf("plain output %q, want one line", out)
	}
}

// Configure and Phase: no line unless enabled, none before the first
// phase, none after Finish; a nil line does nothing.
func TestProcessLine(t *testing.T) {
	var w syncBuffer
	Configure(&w, false, Auto)
	Phase("load", 0)
	if process.line != nil {
		t.Fatal("a line started outside a terminal without --progress")
	}
	Finish()
	Configure(&w, false, Always)
	if process.line != nil {
		t.Fatal("a line started before the first phase")
	}
	Phase("load", 0)
	if process.line == nil {
		t.Fatal("no line with --progress")
	}
	Finish()
	Phase("write", 0)
	if process.line != nil {
		t.Fatal("a line started after Finish")
	}
	var l *Line
	l.Phase("x", 1)
	l.Stop()
}
