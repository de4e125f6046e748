//go:build cgo

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestOutputWriteFailsEmulator: verify's report (text on stderr, JSON)
// and corpus's summary, JSON and JUnit that cannot be written make the
// status 2; the guest's own output failing is the guest's affair.
func TestOutputWriteFailsEmulator(t *testing.T) {
	dir := testcorpus.Dir(t)
	bin := filepath.Join(dir, "v3/x86-64/nolibc-O2")
	tmp := t.TempDir()
	shard := filepath.Join(tmp, "shard.json")
	corpusArgs := []string{"corpus", "-j", "1", "--progress", "none", "--run", "^v3/x86-64/nolibc-O2$", dir}
	if _, errOut, status := runCmd(t, "", append(corpusArgs[:len(corpusArgs)-1:len(corpusArgs)-1], "--json", shard, dir)...); status != exitOK {
		t.Fatalf("corpus --json: status %d, stderr %q", status, errOut)
	}
	checkOutputFails(t, []outputCase{
		{[]string{"verify", bin}, true, ""},
		{[]string{"verify", "--json", "-", bin}, false, "sframesim verify: --json: writing -: no space left on device"},
		{corpusArgs, false, "sframesim corpus: writing to standard output: no space left on device"},
		{append(corpusArgs[:len(corpusArgs)-1:len(corpusArgs)-1], "--junit", "-", dir), false, "sframesim corpus: --junit: writing -: no space left on device"},
		{[]string{"corpus", "merge", shard}, false, "sframesim corpus merge: writing to standard output: no space left on device"},
		{[]string{"corpus", "merge", "--json", "-", shard}, false, "sframesim corpus merge: --json: writing -: no space left on device"},
	})

	// The guest's stdout failing: verify's verdict stands; run exits with
	// the program's status (nolibc's write fails with EIO: it exits 1).
	for _, c := range []struct {
		args   []string
		status int
	}{
		{[]string{"verify", bin}, exitOK},
		{[]string{"run", bin}, 1},
	} {
		var errOut bytes.Buffer
		if status := run(c.args, fullWriter{}, &errOut); status != c.status || strings.Contains(errOut.String(), "writing to standard output") {
			t.Errorf("%q with the guest's stdout failing: status %d, stderr %q; want %d", c.args, status, errOut.String(), c.status)
		}
	}
}

// TestClosedStdout runs sframesim as a process whose stdout or stderr was
// closed (>&-), which the Go runtime would otherwise fill with /dev/null:
// the verdict written there is lost, so the status is 2, with a message on
// stderr when it works. Output sent to /dev/null on purpose is not an
// error, nor is the guest's own stdout closed under verify.
func TestClosedStdout(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2")
	for _, c := range []struct {
		redirect string
		args     []string
		status   int
		stderr   string
	}{
		{">&-", []string{"validate", bin}, exitError, "sframesim validate: writing to standard output: write /dev/stdout: bad file descriptor"},
		{">&-", []string{"check", bin}, exitError, "sframesim check: writing to standard output: write /dev/stdout: bad file descriptor"},
		{">/dev/null", []string{"validate", bin}, exitOK, ""},
		{"2>&-", []string{"validate", bin}, exitOK, ""},              // nothing to say on stderr
		{"2>&-", []string{"validate"}, exitError, ""},                // the sample's note on stderr
		{"2>&-", []string{"verify", bin}, exitError, ""},             // the report is on stderr
		{">&-", []string{"verify", bin}, exitOK, "result:       OK"}, // the guest's stdout
	} {
		cmd := exec.Command("/bin/sh", append([]string{"-c", `exec "$0" "$@" ` + c.redirect, exe}, c.args...)...)
		cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.status || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%s %q: status %d, stderr %q; want %d and %q", c.redirect, c.args, status, stderr.String(), c.status, c.stderr)
		}
	}
}
