//go:build cgo

package main

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFileArguments: a FIFO or a device as FILE or BINARY is
// refused at once (reading it would block, or never end) with an error
// naming it.
func TestSpecialFileArguments(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, kind string
	}{{fifo, "FIFO"}, {"/dev/zero", "character device"}} {
		want := c.file + ": not a regular file (" + c.kind + ")"
		for _, args := range [][]string{
			{"dump", c.file},
			{"dump", "--base", "0x1000", c.file},
			{"validate", c.file},
			{"verify", c.file},
			{"run", c.file},
			{"step", c.file},
		} {
			done := make(chan struct{})
			var out, errOut string
			var status int
			go func() {
				defer close(done)
				out, errOut, status = runCmd(t, "", args...)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%q: still running after 10s", args)
			}
			if status != exitError || out != "" || errOut != "sframesim "+args[0]+": "+want+"\n" {
				t.Errorf("%q: status %d, stdout %q, stderr %q; want status %d and %q", args, status, out, errOut, exitError, want)
			}
		}
	}
}
