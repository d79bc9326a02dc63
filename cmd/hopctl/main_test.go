package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptLeavesNoTemporaryFile builds hopctl, starts a write of a
// large graph, interrupts it while the temporary file exists, and checks
// the process exits 130 leaving neither the temporary file nor a
// destination behind.
func TestInterruptLeavesNoTemporaryFile(t *testing.T) {
	dir, bin := buildHopctl(t)
	ok, err := interruptWhileWriting(t, dir, os.Interrupt, func(args ...string) *exec.Cmd { return exec.Command(bin, args...) })
	if !ok {
		t.Skip("the write always finished before the temporary file was seen")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).ExitStatus() != 130 {
		t.Fatalf("exit: %v, want status 130", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "hopctl" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestIgnoredInterruptStaysIgnored: started with SIGINT ignored (as a
// shell starts a background job), hopctl is not made interruptible by
// its handler for temporary files: the write completes. The test binary
// itself starts hopctl, with SIGINT ignored in that process only
// (signal.Reset would not give this one its handler back).
func TestIgnoredInterruptStaysIgnored(t *testing.T) {
	if bin := os.Getenv("HOPCTL_TEST_EXEC_IGNORING_INT"); bin != "" {
		signal.Ignore(os.Interrupt) // SIG_IGN survives the exec
		args := append([]string{bin}, strings.Fields(os.Getenv("HOPCTL_TEST_ARGS"))...)
		t.Fatal(syscall.Exec(bin, args, os.Environ()))
	}
	dir, bin := buildHopctl(t)
	ok, err := interruptWhileWriting(t, dir, os.Interrupt, func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIgnoredInterruptStaysIgnored$")
		cmd.Env = append(os.Environ(), "HOPCTL_TEST_EXEC_IGNORING_INT="+bin, "HOPCTL_TEST_ARGS="+strings.Join(args, " "))
		return cmd
	})
	if !ok {
		t.Skip("the write always finished before the temporary file was seen")
	}
	if err != nil {
		t.Fatalf("exit: %v, want success", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "big.json")); err != nil || fi.Size() == 0 {
		t.Errorf("the output: %v, %v", fi, err)
	}
}

// buildHopctl builds hopctl into a temporary directory, which it returns
// with the binary's path.
func buildHopctl(t *testing.T) (dir, bin string) {
	if testing.Short() {
		t.Skip("builds the binary and writes a large file")
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "hopctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir, bin
}

// interruptWhileWriting starts a write of a large graph to dir/big.json
// (hopctl's arguments to command, which makes the process), sends SIGINT
// once its temporary file exists, and returns how the process ended;
// false if every attempt's write finished first.
func interruptWhileWriting(t *testing.T, dir string, sig os.Signal, command func(args ...string) *exec.Cmd) (bool, error) {
	for attempt := 0; attempt < 3; attempt++ {
		out := filepath.Join(dir, "big.json") // the JSON encoding is slow to write: a wide window
		cmd := command("synth", "-n", "40000", "-o", out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		signalled := false
	poll:
		for {
			select {
			case <-done:
				break poll
			default:
			}
			if tmps, _ := filepath.Glob(filepath.Join(dir, ".big.json.tmp*")); len(tmps) > 0 {
				cmd.Process.Signal(sig)
				signalled = true
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		if !signalled {
			if old, err := os.ReadFile(out + ".old"); err == nil {
				os.WriteFile(out, old, 0o644) // the old file again, for the next attempt
			} else {
				os.Remove(out)
			}
			continue // the write finished before the poll saw it; try again
		}
		return true, <-done
	}
	return false, nil
}

// TestTerminateKeepsTheOldFile: SIGTERM (what CI runners and timeouts send)
// during a write over an existing file exits 143 and leaves that file as
// it was, with no temporary file beside it.
func TestTerminateKeepsTheOldFile(t *testing.T) {
	dir, bin := buildHopctl(t)
	old := []byte("the old file\n")
	for _, name := range []string{"big.json", "big.json.old"} {
		if err := os.WriteFile(filepath.Join(dir, name), old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ok, err := interruptWhileWriting(t, dir, syscall.SIGTERM, func(args ...string) *exec.Cmd { return exec.Command(bin, args...) })
	if !ok {
		t.Skip("the write always finished before the temporary file was seen")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).ExitStatus() != 143 {
		t.Fatalf("exit: %v, want status 143", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "big.json")); err != nil || !bytes.Equal(got, old) {
		t.Errorf("the old file: %q, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "hopctl" && n != "big.json" && n != "big.json.old" {
			t.Errorf("left behind: %s", n)
		}
	}
}

// TestConcurrentWritersLeaveOneWholeFile: four hopctl processes converting
// one graph to the same target at once leave one whole file (equal to what
// a single run writes) and no temporary file.
func TestConcurrentWritersLeaveOneWholeFile(t *testing.T) {
	dir, bin := buildHopctl(t)
	in, want, out := filepath.Join(dir, "in.pb"), filepath.Join(dir, "want.json"), filepath.Join(dir, "out.json")
	for _, args := range [][]string{{"synth", "-n", "40000", "-o", in}, {"convert", in, want}} {
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	cmds := make([]*exec.Cmd, 4)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "convert", in, out)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := os.ReadFile(want); !bytes.Equal(got, w) {
		t.Errorf("the target (%d bytes) is not what one run writes (%d bytes)", len(got), len(w))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch e.Name() {
		case "hopctl", "in.pb", "want.json", "out.json":
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
