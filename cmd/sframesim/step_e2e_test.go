//go:build cgo

package main

import (
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

// TestStepInTmux drives the real sframesim binary in a tmux terminal of
// 80x24: it injects a CFA fault into a corpus binary with sframesim
// mutate, opens it with sframesim step, continues to the first mismatch
// (m) and reads the screen with capture-pane. tmux is installed by
// setup.sh; without it the test fails.
func TestStepInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is needed for the end-to-end test of sframesim step (setup.sh installs it): %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "sframesim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "bad")
	src := filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2")
	if out, err := exec.Command(bin, "mutate", "--fde", "5", "--fre", "1", "--field", "cfa", "--delta", "8", "-o", bad, src).CombinedOutput(); err != nil {
		t.Fatalf("mutate: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "tmux.sock")
	session := "sframesim-e2e"
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("new-session", "-d", "-s", session, "-x", "80", "-y", "24",
		fmt.Sprintf("cd %s && NO_COLOR=1 TERM=xterm-256color %s step ./bad; echo EXITED $?; sleep 30", dir, bin))
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	screen := func() string { return tm("capture-pane", "-p", "-t", session) }
	waitFor := func(want ...string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen lacks %q:\n%s", want, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("sframesim step  bad (x86-64)  insn 0", "? keys")
	tm("send-keys", "-t", session, "m")
	s := waitFor("MISMATCH")
	for _, want := range []string{
		"insn 10  fib+0x4", // where: the first instruction of the mutated row
		"=> fre1  401064 fib+0x4",
		"func idx [5]: pc = 0x401060, size = 76 bytes (fib)",   // the FDE
		"0000000000401064  sp+40     u         f   <- FRE [1]", // the row, as objdump prints it
		"CFA = rsp+40 = 0x7fffffffee",                          // the arithmetic
		"RA  = *(cfa-8) = *0x7fffffffee",
		"FP  = rbp (unchanged) = 0x",
		"! 0 fib+0x4",                                        // the mismatching frame, marked without colour
		"!cfa",                                               // and what differs
		"verify: MISMATCH CFA in frame 0: true 0x7fffffffee", // the verdict
		"stopped at a mismatch (cfa)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if lines := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(lines) > 24 {
		t.Errorf("%d lines on a 24-line terminal", len(lines))
	}
	// Step back one instruction and quit.
	tm("send-keys", "-t", session, "S")
	waitFor("insn 9 ")
	tm("send-keys", "-t", session, "q")
	waitFor("EXITED 0")
	if t.Failed() {
		t.Logf("screen:\n%s", s)
	}

	// A SIGTERM quits the UI, the terminal restored, with status 143.
	tm("respawn-pane", "-k", "-t", session,
		fmt.Sprintf("cd %s && NO_COLOR=1 TERM=xterm-256color %s step ./bad; echo EXITED $?; sleep 30", dir, bin))
	waitFor("sframesim step  bad (x86-64)  insn 0", "? keys")
	shell := strings.TrimSpace(tm("list-panes", "-t", session, "-F", "#{pane_pid}"))
	out, err := exec.Command("pgrep", "-P", shell, "-f", "step ./bad").Output()
	if err != nil {
		t.Fatalf("the step process under shell %s: %v", shell, err)
	}
	var pid int
	if _, err := fmt.Sscan(string(out), &pid); err != nil {
		t.Fatalf("pgrep: %q: %v", out, err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s = waitFor("sframesim step: SIGTERM: quit", "EXITED 143")
	if strings.Contains(s, "? keys") {
		t.Errorf("the UI is still on the screen:\n%s", s)
	}
	os.Remove(bad)
}
