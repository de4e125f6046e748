//go:build cgo

package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

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
	// The golden files are the package's, not the binary's directory's.
	if err := os.Chdir(pkgDir); err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, []byte(fm.Screen()+"\n"))
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
