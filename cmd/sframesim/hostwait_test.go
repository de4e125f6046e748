//go:build cgo

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestStopWhileGuestWaits runs sframesim as a process whose guest waits
// for the host: it reads a stdin pipe nobody writes to, or writes to a
// stdout pipe nobody reads, or computes. --timeout (run and verify) and,
// for verify, Ctrl-C, SIGTERM and SIGHUP still end the run, with the stop
// said and verify's report written (INCOMPLETE, status 2). Before, verify
// waited until the writer or reader let the guest go on (the test gives
// up after 20 s), and died of SIGTERM without a report. run passes the
// signals on to the program, which takes them as natively: lua stops its
// script ("interrupted!", status 1) at a Ctrl-C, as under qemu-user, and
// dies of a SIGTERM (status 143).
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
		reads    = `io.write("ready\n") io.flush() io.read("a")`
		writes   = `io.write("ready\n") io.flush() local s = string.rep("x", 65536) while true do io.write(s) end`
		computes = `io.write("ready\n") io.flush() local x = 0 while true do x = x + 1 end`
		stopped  = "but the run stopped before the program's end: interrupted"
	)
	for _, c := range []struct {
		name   string
		args   []string
		script string
		signal syscall.Signal // sent once the guest is ready (0: none)
		status int
		stderr string // the stop, as said
	}{
		{"run/stdin/timeout", []string{"run", "--timeout", "2s"}, reads, 0, exitError, "timeout: 2s of wall-clock time passed"},
		{"run/stdout/timeout", []string{"run", "--timeout", "2s"}, writes, 0, exitError, "timeout: 2s of wall-clock time passed"},
		{"run/stdin/sigint", []string{"run"}, reads, syscall.SIGINT, 1, "(command line):1: interrupted!\nstack traceback:\n\t[C]: in function 'io.read'"},
		{"run/stdout/sigint", []string{"run"}, writes, syscall.SIGINT, 1, "(command line):1: interrupted!\nstack traceback:\n\t[C]: in function 'io.write'"},
		{"run/compute/sigint", []string{"run"}, computes, syscall.SIGINT, 1, "interrupted!\nstack traceback:\n\t(command line):1: in main chunk"},
		{"run/stdin/sigterm", []string{"run"}, reads, syscall.SIGTERM, 143, "killed by signal 15 (SIGTERM)"},
		{"run/compute/sighup", []string{"run"}, computes, syscall.SIGHUP, 129, "killed by signal 1 (SIGHUP)"},
		{"verify/stdin/timeout", []string{"verify", "--timeout", "2s"}, reads, 0, exitError, "result:       INCOMPLETE, no mismatch in the"},
		{"verify/stdout/timeout", []string{"verify", "--timeout", "2s"}, writes, 0, exitError, "result:       INCOMPLETE, no mismatch in the"},
		{"verify/stdin/sigint", []string{"verify"}, reads, syscall.SIGINT, exitError, stopped},
		{"verify/stdout/sigint", []string{"verify"}, writes, syscall.SIGINT, exitError, stopped},
		{"verify/stdin/sigterm", []string{"verify"}, reads, syscall.SIGTERM, exitError, stopped},
		{"verify/compute/sighup", []string{"verify"}, computes, syscall.SIGHUP, exitError, "sframesim verify: SIGHUP: stopping the run; the report covers what was checked"},
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
			if c.signal != 0 {
				time.Sleep(100 * time.Millisecond) // let it get to the wait
				cmd.Process.Signal(c.signal)
			}
			select {
			case err = <-waited:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
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
			if status != c.status || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("status %d (%v), stderr:\n%s\nwant status %d and %q", status, err, stderr.String(), c.status, c.stderr)
			}
			if _, err := os.Stat(report); c.args[0] == "verify" && err != nil {
				t.Errorf("the report: %v", err)
			}
		})
	}
}

// TestCorpusTerminated: a SIGTERM (a CI job's timeout) or SIGHUP stops
// corpus as Ctrl-C does: the binaries that ran are reported, the report
// files written. Before, it died of the signal, with no report.
func TestCorpusTerminated(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spin := hostsigPath(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(spin, filepath.Join(dir, "spin")); err != nil {
				t.Fatal(err)
			}
			manifest := filepath.Join(dir, "manifest.json")
			if err := os.WriteFile(manifest, []byte(`[{"name": "spin", "path": "spin", "args": ["spin"]}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(dir, "report.json")
			cmd := exec.Command(exe, "corpus", "--progress", "none", "--json", report, manifest)
			cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitSigCaught(t, cmd.Process.Pid, sig)
			time.Sleep(300 * time.Millisecond) // into the run
			cmd.Process.Signal(sig)
			cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				t.Fatalf("killed by %v: no report", ws.Signal())
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("no report: %v; status %d, stderr %q", err, ws.ExitStatus(), stderr.String())
			}
			said := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[sig] + ": stopping the running binaries"
			if !strings.Contains(string(data), `"interrupted": true`) || !strings.Contains(stderr.String(), said) {
				t.Errorf("status %d, stderr %q, report:\n%s", ws.ExitStatus(), stderr.String(), data)
			}
		})
	}
}

// TestRunEndsAfterTerm: a program that ignores SIGTERM and SIGHUP does not
// keep run going: 5 s after the signal, run ends it (status 2, said).
func TestRunEndsAfterTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 5 s")
	}
	g := startHostsig(t, "run", "ignore")
	start := time.Now()
	g.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	g.cmd.Process.Signal(syscall.SIGINT) // ignored too: changes nothing
	err := g.exit(t, 30*time.Second, "SIGTERM")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitError || !strings.Contains(g.stderr.String(), "stopped: the program did not end within 5s of SIGTERM") {
		t.Errorf("%v, stderr %q; want status %d and the stop", err, g.stderr.String(), exitError)
	}
	if d := time.Since(start); d < 5*time.Second {
		t.Errorf("ended %v after SIGTERM, before the grace", d)
	}
}

// TestNohup: a SIGHUP that sframesim was started with ignored (nohup)
// stays ignored: run does not pass it on, verify does not stop at it.
func TestNohup(t *testing.T) {
	signal.Ignore(syscall.SIGHUP) // inherited by the commands started, as under nohup
	defer signal.Reset(syscall.SIGHUP)
	for _, c := range []struct {
		cmd    string
		status int
	}{{"run", 143}, {"verify", exitError}} {
		t.Run(c.cmd, func(t *testing.T) {
			g := startHostsig(t, c.cmd, "spin")
			g.cmd.Process.Signal(syscall.SIGHUP)
			select {
			case err := <-g.waited:
				t.Fatalf("ended at a SIGHUP it was started with ignored: %v, stderr %q", err, g.stderr.String())
			case <-time.After(500 * time.Millisecond):
			}
			g.cmd.Process.Signal(syscall.SIGTERM)
			err := g.exit(t, 30*time.Second, "SIGTERM")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.status {
				t.Errorf("%v, stderr %q; want status %d", err, g.stderr.String(), c.status)
			}
		})
	}
}

// hostsigPath is the absolute path of linux/testdata/hostsig-x86_64, the
// guest of the linux package's host-signal tests (src/hostsig.c).
func hostsigPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "linux", "testdata", "hostsig-x86_64"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hostsigRun is sframesim running hostsig as a process, past its "ready".
type hostsigRun struct {
	cmd    *exec.Cmd
	stderr *strings.Builder
	waited <-chan error // cmd.Wait's result
}

// startHostsig starts `sframesim COMMAND hostsig SCENARIO` and returns once
// the guest has said it is ready.
func startHostsig(t *testing.T, command, scenario string) hostsigRun {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, command, hostsigPath(t), scenario)
	cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("stdout %q (%v)", line, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	return hostsigRun{cmd, stderr, waited}
}

// exit waits up to d for the command to end (after what) and returns
// cmd.Wait's result; it kills the command and fails the test if it goes on.
func (g hostsigRun) exit(t *testing.T, d time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-g.waited:
		return err
	case <-time.After(d):
		g.cmd.Process.Kill()
		<-g.waited
		t.Fatalf("still running %v after %s", d, what)
	}
	return nil
}
