//go:build cgo

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestMain lets tests run this test binary as sframesim itself
// (SFRAMESIM_MAIN=1), to see what a whole process does.
func TestMain(m *testing.M) {
	if os.Getenv("SFRAMESIM_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestReportRefused: a report path that is a symbolic link, a FIFO or a
// device is refused before the run, and left as it was.
func TestReportRefused(t *testing.T) {
	bin := filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2")
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	fifo := filepath.Join(dir, "fifo.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	corpusDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(corpusDir, "nolibc-O2")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"verify", "--json", link, bin}, "sframesim verify: --json: " + link + " is a symbolic link: refusing to replace it or write through it"},
		{[]string{"verify", "--json", fifo, bin}, "sframesim verify: --json: " + fifo + " is a FIFO: refusing"},
		{[]string{"verify", "--json", "/dev/stdout", bin}, "sframesim verify: --json: /dev/stdout is a symbolic link: refusing"},
		{[]string{"verify", "--json", "/dev/null", bin}, "sframesim verify: --json: /dev/null is a character device: refusing"},
		{[]string{"corpus", "--progress", "none", "--json", link, corpusDir}, "sframesim corpus: --json: " + link + " is a symbolic link: refusing"},
		{[]string{"corpus", "--progress", "none", "--junit", "/dev/stdout", corpusDir}, "sframesim corpus: --junit: /dev/stdout is a symbolic link: refusing"},
		{[]string{"corpus", "--progress", "none", "--update", "--expect", link, corpusDir}, "sframesim corpus: --expect: " + link + " is a symbolic link: refusing"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:3], " "), func(t *testing.T) {
			out, errOut, status := runCmd(t, "", tt.args...)
			flag := tt.args[len(tt.args)-3]
			hint := flag + " - writes to standard output"
			if flag == "--expect" {
				hint = "" // no - for that one
			}
			if status != exitError || out != "" || !strings.Contains(errOut, tt.stderr) || !strings.Contains(errOut, hint) {
				t.Errorf("status %d (want %d)\nstdout %q (want none)\nstderr %q (want ⊇ %q, %q)", status, exitError, trim(out), trim(errOut), tt.stderr, hint)
			}
		})
	}
	if to, err := os.Readlink(link); err != nil || to != target {
		t.Errorf("the link was replaced: %q, %v", to, err)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "old\n" {
		t.Errorf("written through the link: %q, %v", data, err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi.Mode(), err)
	}
}

// TestCorpusWritesEveryReport: a report that cannot be written does not
// keep the other from being written; each failure is told, and the status
// is 2.
func TestCorpusWritesEveryReport(t *testing.T) {
	bin := filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2")
	corpusDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(corpusDir, "nolibc-O2")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tt := range []struct{ bad, good string }{{"--json", "--junit"}, {"--junit", "--json"}} {
		t.Run(tt.bad, func(t *testing.T) {
			good := filepath.Join(dir, "report"+tt.good[1:])
			bad := filepath.Join(missing, "report"+tt.bad[1:])
			out, errOut, status := runCmd(t, "", "corpus", "--progress", "none", tt.bad, bad, tt.good, good, corpusDir)
			want := fmt.Sprintf("sframesim corpus: %s: writing %s: open %s: no such file or directory", tt.bad, bad, missing)
			if status != exitError || !strings.Contains(out, "OK: 1 of 1 binaries as expected") || !strings.Contains(errOut, want) {
				t.Errorf("status %d (want %d)\nstdout %q\nstderr %q (want ⊇ %q)", status, exitError, trim(out), trim(errOut), want)
			}
			data, err := os.ReadFile(good)
			if err != nil {
				t.Fatalf("%s not written: %v", tt.good, err)
			}
			var v any
			if tt.good == "--json" {
				err = json.Unmarshal(data, &v)
			} else {
				err = xml.Unmarshal(data, &v)
			}
			if err != nil {
				t.Errorf("%s: %v", tt.good, err)
			}
		})
	}
	// Both fail: both are told.
	_, errOut, status := runCmd(t, "", "corpus", "--progress", "none", "--json", filepath.Join(missing, "a"), "--junit", filepath.Join(missing, "b"), corpusDir)
	if status != exitError || strings.Count(errOut, "no such file or directory") != 2 {
		t.Errorf("status %d, stderr %q: want 2 and both failures", status, errOut)
	}
}

// TestVerifyInterruptEarly: Ctrl-C from the moment the process can catch a
// signal — during package initialisation, which takes long (package
// interrupt), or later — ends verify with the report of what was checked
// (nothing, when it came before the run).
func TestVerifyInterruptEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sframesim 3 times")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(testcorpus.Dir(t), "v3/x86-64/except-O0-static")
	// (Not shorter: the runtime's handlers are in place a moment before
	// package interrupt's init runs, and a loaded machine may stall the
	// process for milliseconds in between.)
	for _, delay := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "r.json")
			cmd := exec.Command(exe, "verify", "--json", report, bin)
			cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// From when Go's runtime has its signal handlers (before any
			// package is initialised).
			waitSigCaught(t, cmd.Process.Pid, syscall.SIGINT)
			time.Sleep(delay)
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				t.Fatalf("killed by %v: no report", ws.Signal())
			}
			var rep struct {
				Stop     string `json:"stop"`
				Complete bool   `json:"complete"`
			}
			data, err := os.ReadFile(report)
			if err == nil {
				err = json.Unmarshal(data, &rep)
			}
			if err != nil {
				t.Fatalf("no report: %v; status %d, stderr %q", err, ws.ExitStatus(), stderr.String())
			}
			switch {
			case rep.Stop == "interrupted" && !rep.Complete && ws.ExitStatus() == exitError &&
				strings.Contains(stderr.String(), "result:       INCOMPLETE"):
			case rep.Complete && ws.ExitStatus() == exitOK:
				// The run ended before the signal.
			default:
				t.Errorf("status %d, report stop %q, complete %v\nstdout %q\nstderr %q", ws.ExitStatus(), rep.Stop, rep.Complete, trim(stdout.String()), stderr.String())
			}
		})
	}
}

// waitSigCaught waits until process pid catches sig (its SigCgt mask in
// /proc).
func waitSigCaught(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var mask uint64
			if _, err := fmt.Sscanf(line, "SigCgt: %x", &mask); err == nil && mask&(1<<(sig-1)) != 0 {
				return
			}
		}
	}
	t.Fatalf("process %d never caught %v", pid, sig)
}
