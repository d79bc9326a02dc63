package jointgraph

// background is work running on another goroutine, for the steps Build
// and the partition move off their own goroutine (names reserved ahead,
// precheck, the live-node search, the later half of dce's renumbering and
// of the forward copy, the second half of a materialized partition). Its
// wait re-raises the work's panic on the waiting goroutine, where Build's
// and SplitLazy's recover report it as an internal error: a panic left on
// the other goroutine would kill the process. A nil *background is no
// work (done in line).
type background struct {
	done  chan struct{}
	panic any // the work's panic, until wait re-raises it
}

// goBackground starts f on another goroutine.
func goBackground(f func()) *background {
	b := &background{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		defer func() { b.panic = recover() }()
		f()
	}()
	return b
}

// wait waits for the work to end and re-raises its panic, the first time
// it is called after one; later calls only wait. Safe on nil.
func (b *background) wait() {
	if b == nil {
		return
	}
	<-b.done
	if p := b.panic; p != nil {
		b.panic = nil
		panic(p)
	}
}

// waitAfter is wait for work that comes after the caller's own in line
// order (the later half of a loop), deferred right after the work starts:
// it waits on every way out, and when the caller panics, that panic stands,
// as it came first in line, and the work's is dropped.
func (b *background) waitAfter() {
	if p := recover(); p != nil {
		if b != nil {
			<-b.done
		}
		panic(p)
	}
	b.wait()
}

// asyncHalves is the smallest graph whose per-node loops dce's
// renumbering and the joint's forward copy run in two halves, the later one
// on another goroutine: below it a goroutine's start and wake-up
// (microseconds) are a large part of the half they would take over
// (tens of nanoseconds a node). A variable for the tests.
var asyncHalves = 1 << 14
