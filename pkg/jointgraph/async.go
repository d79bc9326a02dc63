package jointgraph

// background is work running on another goroutine, for the steps Build
// and the partition move off their own goroutine (names reserved ahead,
// precheck, the live-node search, the second half of a materialized
// partition). Its wait re-raises the work's panic on the waiting
// goroutine, where Build's and SplitLazy's recover report it as an
// internal error: a panic left on the other goroutine would kill the
// process. A nil *background is no work (done in line).
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
