//go:build cgo

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestBrokenPipe runs sframesim as a process whose stdout is a pipe with
// no reader: the guest's write gets EPIPE and a SIGPIPE that kills it, as
// natively, and sframesim lives on to say so (run: status 128+13, and
// nothing on stderr, as from a shell) and to write verify's report,
// instead of dying of the SIGPIPE itself.
func TestBrokenPipe(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(testcorpus.Dir(t), "v3/aarch64/recurse-O2-static") // prints, then exits 3
	report := filepath.Join(t.TempDir(), "report.json")
	for _, c := range []struct {
		args   []string
		status int
		stderr string // "": none
	}{
		{[]string{"run", bin}, 128 + 13, ""},
		{[]string{"verify", "--json", report, bin}, 0, "run:          killed by signal 13 (SIGPIPE)"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd := exec.Command(exe, c.args...)
		cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode() // -1 if killed by a signal
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.status || c.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%q: status %d (%v), stderr %q; want %d and %q", c.args, status, err, stderr.String(), c.status, c.stderr)
		}
	}
	if _, err := os.Stat(report); err != nil {
		t.Errorf("verify's report: %v", err)
	}
}
