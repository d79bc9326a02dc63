package jointgraph

import "testing"

// TestBackground checks that wait waits for the work, re-raises its panic
// once, and that a nil background is no work.
func TestBackground(t *testing.T) {
	var nilWork *background
	nilWork.wait()

	ran := false
	goBackground(func() { ran = true }).wait()
	if !ran {
		t.Fatal("wait returned before the work ran")
	}

	b := goBackground(func() { panic("boom") })
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("wait re-raised %v, want boom", r)
			}
		}()
		b.wait()
	}()
	b.wait() // a second wait: the panic was re-raised already
}

// TestBackgroundWaitAfter: deferred after work on a later half, waitAfter
// keeps the caller's panic (the first in line) over the work's, and
// re-raises the work's when the caller has none.
func TestBackgroundWaitAfter(t *testing.T) {
	run := func(callerPanics bool) (r any) {
		defer func() { r = recover() }()
		later := goBackground(func() { panic("later") })
		defer later.waitAfter()
		if callerPanics {
			panic("earlier")
		}
		return nil
	}
	if r := run(true); r != "earlier" {
		t.Errorf("the caller panicked first: got %v, want earlier", r)
	}
	if r := run(false); r != "later" {
		t.Errorf("only the work panicked: got %v, want later", r)
	}
	var nilWork *background
	func() {
		defer func() {
			if r := recover(); r != "in line" {
				t.Errorf("nil work: got %v, want in line", r)
			}
		}()
		defer nilWork.waitAfter()
		panic("in line")
	}()
}
