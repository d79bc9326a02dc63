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
