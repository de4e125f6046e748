//go:build cgo

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestStopWhileGuestWaits runs sframesim as a process whose guest waits
// for the host: it reads a stdin pipe nobody writes to, or writes to a
// stdout pipe nobody reads. --timeout (run and verify) and, for verify,
// Ctrl-C still end the run, with the stop said and verify's report
// written (INCOMPLETE, status 2). Before, verify waited until the
// writer or reader let the guest go on (the test gives up after 20 s).
func TestStopWhileGuestWaits(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	lua := filepath.Join(root, "testdata", "realworld", "v3", "x86-64", "lua-static")
	if _, err := os.Stat(lua); err != nil {
		t.Fatalf("%v (make testdata unpacks the real-world corpus)", err)
	}
	const (
		reads  = `io.write("ready\n") io.flush() io.read("a")`
		writes = `io.write("ready\n") io.flush() local s = string.rep("x", 65536) while true do io.write(s) end`
	)
	for _, c := range []struct {
		name   string
		args   []string
		script string
		sigint bool
		stderr string // the stop, as said
	}{
		{"run/stdin/timeout", []string{"run", "--timeout", "2s"}, reads, false, "timeout: 2s of wall-clock time passed"},
		{"run/stdout/timeout", []string{"run", "--timeout", "2s"}, writes, false, "timeout: 2s of wall-clock time passed"},
		{"verify/stdin/timeout", []string{"verify", "--timeout", "2s"}, reads, false, "result:       INCOMPLETE, no mismatch in the"},
		{"verify/stdout/timeout", []string{"verify", "--timeout", "2s"}, writes, false, "result:       INCOMPLETE, no mismatch in the"},
		{"verify/stdin/sigint", []string{"verify"}, reads, true, "but the run stopped before the program's end: interrupted"},
		{"verify/stdout/sigint", []string{"verify"}, writes, true, "but the run stopped before the program's end: interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inR, inW, err := os.Pipe() // stdin: never written to
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer inW.Close()
			outR, outW, err := os.Pipe() // stdout: read up to "ready", then no more
			if err != nil {
				t.Fatal(err)
			}
			defer outR.Close()
			defer outW.Close()
			args := append([]string{}, c.args...)
			report := filepath.Join(t.TempDir(), "report.json")
			if c.args[0] == "verify" {
				args = append(args, "--json", report)
			}
			args = append(args, lua, "--", "-e", c.script)
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
			var stderr strings.Builder
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			// The guest is about to wait once it said so.
			if line, err := bufio.NewReader(outR).ReadString('\n'); line != "ready\n" {
				cmd.Process.Kill()
				<-waited
				t.Fatalf("stdout %q (%v); stderr:\n%s", line, err, stderr.String())
			}
			if c.sigint {
				time.Sleep(100 * time.Millisecond) // let it get to the wait
				cmd.Process.Signal(syscall.SIGINT)
			}
			select {
			case err = <-waited:
			case <-time.After(20 * time.Second):
				inW.Close()  // let the guest go on: stdin at its end,
				outR.Close() // stdout broken
				<-waited
				t.Fatalf("still running 20 s later; stderr:\n%s", stderr.String())
			}
			status := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != exitError || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("status %d (%v), stderr:\n%s\nwant status %d and %q", status, err, stderr.String(), exitError, c.stderr)
			}
			if _, err := os.Stat(report); c.args[0] == "verify" && err != nil {
				t.Errorf("the report: %v", err)
			}
		})
	}
}
