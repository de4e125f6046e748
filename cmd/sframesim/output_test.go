package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// fullWriter is stdout on a full disk (>/dev/full): every write fails.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// outputCase is a command line whose own output cannot be written: to
// stdout (errOnly false), or to stderr, where stdout works.
type outputCase struct {
	args    []string
	errOnly bool
	message string // what stderr says, when stdout failed
}

// checkOutputFails runs each case with the failing writer and wants exit
// status 2 and, when stderr works, the message saying why.
func checkOutputFails(t *testing.T, cases []outputCase) {
	t.Helper()
	for _, c := range cases {
		var buf bytes.Buffer
		var status int
		if c.errOnly {
			status = run(c.args, &buf, fullWriter{})
		} else {
			status = run(c.args, fullWriter{}, &buf)
		}
		if status != exitError {
			t.Errorf("%q: status %d, want %d: the output was lost", c.args, status, exitError)
		}
		if !c.errOnly && !strings.Contains(buf.String(), c.message) {
			t.Errorf("%q: stderr %q, want %q", c.args, buf.String(), c.message)
		}
		if n := strings.Count(buf.String(), "no space left on device"); !c.errOnly && n != 1 {
			t.Errorf("%q: stderr names the failed write %d times, want once:\n%s", c.args, n, buf.String())
		}
	}
}

// TestOutputWriteFails: a command whose verdict, summary or report cannot
// be written exits 2 and says why on stderr, never 0 as if it had been
// read.
func TestOutputWriteFails(t *testing.T) {
	dir := testcorpus.Dir(t)
	bin := filepath.Join(dir, "v3/x86-64/nolibc-O2")
	out := filepath.Join(t.TempDir(), "mutated")
	const onStdout = "writing to standard output: no space left on device"
	checkOutputFails(t, []outputCase{
		{[]string{"validate", bin}, false, "sframesim validate: " + onStdout},
		{[]string{"validate"}, true, ""}, // the sample's note on stderr
		{[]string{"dump", bin}, false, "sframesim dump: no space left on device"},
		{[]string{"check", bin}, false, "sframesim check: " + onStdout},
		{[]string{"check", "--json", "-", bin}, false, "sframesim check: --json: writing -: no space left on device"},
		{[]string{"check", "--json", "-", bin}, true, ""}, // the summary
		{[]string{"mutate", "--fde", "1", "-o", out, bin}, false, "sframesim mutate: " + onStdout},
		{[]string{"version"}, false, "sframesim version: " + onStdout},
		{[]string{"--help"}, false, "sframesim: " + onStdout},
		{[]string{"help"}, false, "sframesim help: " + onStdout},
		{[]string{"help", "check"}, false, "sframesim help: " + onStdout},
	})
}
