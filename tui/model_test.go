//go:build cgo

package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/sframe"
)

var pkgDir, _ = os.Getwd()

// screenTest drives the model through teatest at a fixed size with
// steps: "key:K" types key K, "type:TEXT" types text, "enter", "resize:W H",
// and "wait" waits until the command a key started has ended. It then
// quits and compares the final screen (without styles) with the golden
// file testdata/<test name>.golden (go test -update rewrites it).
func screenTest(t *testing.T, path string, w, h int, steps ...string) *Model {
	t.Helper()
	fm := screenRun(t, path, w, h, steps...)
	// The golden files are the package's, not the binary's directory's.
	golden.Check(t, filepath.Join(pkgDir, "testdata", t.Name()+".golden"), []byte(fm.Screen()+"\n"))
	return fm
}

// screenRun is screenTest without the golden file: it returns the model
// after the steps and q.
func screenRun(t *testing.T, path string, w, h int, steps ...string) *Model {
	t.Helper()
	t.Setenv("NO_COLOR", "1")
	m := New(open(t, path))
	done := make(chan struct{}, 16)
	m.done = done
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	for _, st := range steps {
		kind, arg, _ := strings.Cut(st, ":")
		switch kind {
		case "resize":
			var nw, nh int
			if _, err := fmt.Sscan(arg, &nw, &nh); err != nil {
				t.Fatal(err)
			}
			tm.Send(tea.WindowSizeMsg{Width: nw, Height: nh})
		case "enter":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "key", "type":
			tm.Type(arg)
		case "wait":
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("no command ended after %q", steps)
			}
		default:
			t.Fatalf("bad step %q", st)
		}
	}
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	return fm
}

// TestScreenStart is the first screen of the sample program at 80x24.
func TestScreenStart(t *testing.T) {
	screenTest(t, sample(t, "v3/x86-64/nolibc-O2"), 80, 24)
}

// TestScreenMismatch continues to the first mismatch of a binary with a
// CFA fault injected into fib's second row.
func TestScreenMismatch(t *testing.T) {
	path := mutated(t, sample(t, "v3/x86-64/nolibc-O2"), sframe.Mutation{FDE: 5, FRE: 1, Field: sframe.MutateCFA, Delta: 8})
	m := screenTest(t, path, 80, 24, "key:m", "wait")
	scr := m.Screen()
	for _, want := range []string{"=> fre1", "0000000000401064  sp+40", "CFA = rsp+40 = 0x7fffffff", "! 0 fib+0x4", "!cfa"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
}

// TestScreenDeep is an AArch64 C++ program deep in its stack, at a larger
// size after a resize: breakpoint by symbol, continue, step.
func TestScreenDeep(t *testing.T) {
	screenTest(t, sample(t, "v3/aarch64/except-O2-static"), 80, 24,
		"key:B", "type:_Unwind_RaiseException", "enter", "wait", "key:c", "wait", "resize:120 40", "key:s", "wait")
}

// TestScreenHelp lists the keys.
func TestScreenHelp(t *testing.T) {
	screenTest(t, sample(t, "v3/x86-64/nolibc-O2"), 80, 24, "key:?")
}

// TestScreenBack goes 1000 instructions forward and back 999 with the
// prompt: the screen of instruction 1.
func TestScreenBack(t *testing.T) {
	screenTest(t, sample(t, "v3/x86-64/nolibc-O2"), 80, 24,
		"key:@", "type:1000", "enter", "wait", "key:-", "type:999", "enter", "wait")
}

// press is the key press of key name k as the terminal reports it.
func press(k string) tea.KeyPressMsg {
	switch k {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// TestKeys: what every key does when nothing runs, while a command runs,
// in a prompt and on the ? screen.
func TestKeys(t *testing.T) {
	m := New(open(t, sample(t, "v3/x86-64/nolibc-O2")))
	quits := func(cmd tea.Cmd) bool {
		if cmd == nil {
			return false
		}
		_, ok := cmd().(tea.QuitMsg)
		return ok
	}
	reset := func() {
		m.busy, m.busyWhat, m.msg, m.prompt, m.help, m.quitAfter, m.ahead = false, "", "", nil, false, false, nil
		m.d.interrupt.Store(false)
	}
	for _, tt := range []struct {
		keys         []string
		busy, prompt string
		msg          string
		help, quit   bool
	}{
		{keys: []string{"s", "i"}, busy: "stepping"},
		{keys: []string{"n"}, busy: "stepping over"},
		{keys: []string{"f"}, busy: "finishing"},
		{keys: []string{"c"}, busy: "continuing"},
		{keys: []string{"m"}, busy: "looking for a mismatch"},
		{keys: []string{"S", "p"}, busy: "stepping back"},
		{keys: []string{"r"}, busy: "restarting"},
		{keys: []string{"b"}, busy: "breakpoint"},
		{keys: []string{"B"}, prompt: "break at (address or symbol)"},
		{keys: []string{"g"}, prompt: "go to (address or symbol)"},
		{keys: []string{"-"}, prompt: "instructions back [100000]"},
		{keys: []string{"@"}, prompt: "go to instruction number"},
		{keys: []string{"[", "]", "."}, busy: "viewing a thread"},
		{keys: []string{"T"}, prompt: "view thread (tid; empty: the running one)"},
		{keys: []string{"?", "h"}, help: true},
		{keys: []string{"esc", "ctrl+c"}, msg: "nothing is running; q quits"},
		{keys: []string{"q"}, quit: true},
		{keys: []string{"x", "enter", "backspace", "P"}},
	} {
		for _, k := range tt.keys {
			reset()
			cmd := m.key(press(k))
			got := ""
			if m.prompt != nil {
				got = m.prompt.label
			}
			if m.busyWhat != tt.busy || got != tt.prompt || m.msg != tt.msg || m.help != tt.help || quits(cmd) != tt.quit {
				t.Errorf("%s: busy %q prompt %q msg %q help %v quit %v", k, m.busyWhat, got, m.msg, m.help, quits(cmd))
			}
		}
	}

	// While a command runs: Esc and ^C stop it (and drop the keys typed
	// meanwhile), q stops it and quits after, other keys wait for it.
	for _, k := range []string{"esc", "ctrl+c", "q", "s"} {
		reset()
		m.busy = true
		m.key(press("n"))
		m.key(press(k))
		wantAhead := map[string]int{"q": 1, "s": 2}[k]
		if stop := k != "s"; m.d.interrupt.Load() != stop || m.quitAfter != (k == "q") || len(m.ahead) != wantAhead {
			t.Errorf("busy, n %s: interrupt %v, quit after %v, %d keys ahead", k, m.d.interrupt.Load(), m.quitAfter, len(m.ahead))
		}
	}
	reset()
	m.busy = true
	for range maxAhead + 5 {
		m.key(press("s"))
	}
	if len(m.ahead) != maxAhead {
		t.Errorf("%d keys typed while busy: %d kept, want %d", maxAhead+5, len(m.ahead), maxAhead)
	}

	// A prompt takes text, Backspace erases, Enter runs it, Esc and ^C cancel.
	for _, k := range []string{"esc", "ctrl+c"} {
		reset()
		m.key(press("@"))
		m.key(press(k))
		if m.prompt != nil {
			t.Errorf("prompt, %s: still open", k)
		}
	}
	reset()
	m.key(press("@"))
	for _, k := range []string{"1", "q", "backspace", "2", "s"} {
		m.key(press(k))
	}
	if m.prompt == nil || string(m.prompt.text) != "12s" {
		t.Fatalf("prompt after 1 q Backspace 2 s: %+v", m.prompt)
	}
	m.key(press("enter"))
	if m.prompt != nil || m.msg != `error: not a number: "12s"` {
		t.Errorf("Enter: prompt %+v, msg %q", m.prompt, m.msg)
	}

	// On the ? screen q quits and any other key closes it.
	for _, k := range []string{"q", "s", "esc", "?"} {
		reset()
		m.help = true
		cmd := m.key(press(k))
		if quits(cmd) != (k == "q") || m.help != (k == "q") || m.busy {
			t.Errorf("help, %s: quit %v, help %v, busy %v", k, quits(cmd), m.help, m.busy)
		}
	}
}

// TestTypeAhead: keys typed while a command runs are handled when it
// ends, in order: s typed three times at once steps three times, and a
// prompt opened by a typed-ahead key takes the keys after it. A command
// that fails drops the keys typed after it.
func TestTypeAhead(t *testing.T) {
	path := sample(t, "v3/x86-64/nolibc-O2")
	fm := screenRun(t, path, 80, 24, "key:s", "key:s", "key:s", "wait", "wait", "wait")
	if fm.st.Insns != 3 || len(fm.ahead) != 0 {
		t.Errorf("s s s: at instruction %d, %d keys left, want 3, 0", fm.st.Insns, len(fm.ahead))
	}
	fm = screenRun(t, path, 80, 24, "key:s", "key:@", "type:10", "enter", "wait", "wait")
	if fm.st.Insns != 10 || fm.prompt != nil {
		t.Errorf("s @ 10 Enter: at instruction %d, prompt %+v, want 10 and none", fm.st.Insns, fm.prompt)
	}

	// The same, deterministically: the keys are typed while the model is
	// busy, and each end of a command is delivered by hand.
	m := New(open(t, path))
	m.busy = true
	for _, k := range []string{"s", "@", "1", "2"} {
		m.key(press(k))
	}
	m.Update(doneMsg{st: m.st})
	if !m.busy || m.busyWhat != "stepping" || len(m.ahead) != 3 {
		t.Fatalf("first end: busy %v %q, %d keys ahead; want stepping, 3", m.busy, m.busyWhat, len(m.ahead))
	}
	m.Update(doneMsg{st: m.st})
	if m.busy || m.prompt == nil || string(m.prompt.text) != "12" || len(m.ahead) != 0 {
		t.Fatalf("second end: busy %v, prompt %+v, %d keys ahead; want the @ prompt with 12", m.busy, m.prompt, len(m.ahead))
	}
	m.prompt = nil
	m.busy = true
	m.key(press("s"))
	m.Update(doneMsg{st: m.st, err: errors.New("no such symbol")})
	if m.busy || len(m.ahead) != 0 || m.msg != "error: no such symbol" {
		t.Errorf("after a failed command: busy %v, %d keys ahead, msg %q", m.busy, len(m.ahead), m.msg)
	}
}

// TestScreenThreads stops in the worker function of the threaded test
// program: the header names the running thread, t shows every thread.
func TestScreenThreads(t *testing.T) {
	path := filepath.Join(pkgDir, "..", "linux", "testdata", "threads-x86_64")
	m := screenRun(t, path, 100, 32,
		"key:B", "type:work", "enter", "wait", "key:c", "wait", "key:c", "wait", "key:t")
	scr := m.Screen()
	// The instruction count at the breakpoint depends on where the
	// checkout is (the program's path is on its stack): not in the golden.
	golden.Check(t, filepath.Join(pkgDir, "testdata", t.Name()+".golden"),
		[]byte(regexp.MustCompile(`insn \d+`).ReplaceAllString(scr, "insn N")+"\n"))
	if len(m.st.Threads) < 3 {
		t.Fatalf("%d threads, want at least 3", len(m.st.Threads))
	}
	for _, want := range []string{fmt.Sprintf("tid %d (", m.st.TID), "threads: ", "=> " + fmt.Sprint(m.st.TID), "depth "} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	// t again hides the pane; the header keeps the thread.
	m.key(press("t"))
	if scr := m.Screen(); strings.Contains(scr, "threads: ") || !strings.Contains(scr, fmt.Sprintf("tid %d (", m.st.TID)) {
		t.Errorf("after t again:\n%s", scr)
	}
}
