//go:build cgo

package tui

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/verify"
)

// threadsProgram is linux/testdata/threads-ARCH (src/threads.c: main
// joins two workers that take turns under a mutex and a condition
// variable).
func threadsProgram(arch string) string {
	return filepath.Join("..", "linux", "testdata", "threads-"+arch)
}

func openThreads(t *testing.T, arch string, quantum uint64) *Debugger {
	t.Helper()
	d, err := OpenConfig(threadsProgram(arch), nil, linux.Config{Quantum: quantum})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// unwound is what a State says about the thread it shows: its stop, the
// row and both stacks, not the registers (a blocked thread gets its
// system call's result when it runs again) or the threads list.
type unwound struct {
	PC               uint64
	Symbol, Source   string
	Disasm           []Line
	HasRow           bool
	FDE, Row, NoRow  string
	Calc             []string
	Frames           []StackRow
	Kind             verify.Kind
	Verdict, Stopped string
}

func unwoundOf(s State) unwound {
	return unwound{s.PC, s.Symbol, s.Source, s.Disasm, s.HasRow, s.FDE, s.Row, s.NoRow, s.Calc, s.Frames, s.Kind, s.Verdict, s.Stopped}
}

// trueFuncs is the true stack of a State, innermost first, functions
// without offsets.
func trueFuncs(s State) []string {
	var out []string
	for _, f := range s.Frames {
		if f.HasTrue || f.TrueNote != "" && !strings.HasPrefix(f.TrueNote, "beyond") {
			name, _, _ := strings.Cut(f.TrueFunc, "+")
			out = append(out, name)
		}
	}
	return out
}

// TestViewThread views, at every thread switch, each thread that waits
// (blocked, preempted or not started), and checks that the screen shows
// exactly what it shows once that thread runs again from there: its PC,
// row, unwound stack beside its true stack and verdict, computed as for
// the running thread. With the default quantum the workers only wait
// blocked in glibc (no SFrame data: the true stack alone, worker ←
// start_thread ← clone3 or thread_start); with a short one they are also preempted in
// work, where the unwound stack matches the true one.
func TestViewThread(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		for _, q := range []uint64{0, 3000} {
			t.Run(fmt.Sprintf("%s/quantum%d", a, q), func(t *testing.T) {
				d := openThreads(t, a, q)
				var blockedWorker, matched, resumed int
				for {
					running := d.s.Thread()
					// The views of the waiting threads.
					views := map[int]unwound{}
					for _, th := range d.p.Threads() {
						if th.State == "exited" || th.TID == running {
							continue
						}
						msg, err := d.View(th.TID)
						if err != nil {
							t.Fatalf("view %d (%s): %v", th.TID, th.State, err)
						}
						s := d.State(20)
						if s.View != th.TID || s.ViewState != th.State || s.TID != running || s.PC != th.PC || !strings.Contains(msg, fmt.Sprint(th.TID)) {
							t.Fatalf("viewing %+v: view %d (%s), running %d, PC %#x, %q", th, s.View, s.ViewState, s.TID, s.PC, msg)
						}
						for _, r := range s.Threads {
							if r.Viewed != (r.TID == th.TID) {
								t.Fatalf("viewing %d: threads pane %+v", th.TID, s.Threads)
							}
						}
						// A thread not started yet is its outermost frame.
						tf := trueFuncs(s)
						callers := strings.Join(tf, " < ")
						if len(tf) > 1 && !strings.Contains(callers, " < main < ") && !strings.Contains(callers, " < worker < start_thread < ") {
							t.Fatalf("viewing %d (%s): true stack %s", th.TID, th.State, callers)
						}
						if strings.HasPrefix(th.State, "blocked") && strings.Contains(callers, "worker") {
							blockedWorker++
						}
						if s.Kind == verify.OK && len(s.Frames) > 2 && strings.HasPrefix(s.Frames[0].Func, "work") {
							for _, f := range s.Frames[:2] {
								if !f.HasUnwound || !f.HasTrue || f.Mismatch() || f.Err != "" {
									t.Fatalf("viewing %d: frame %+v", th.TID, f)
								}
							}
							matched++
						}
						views[th.TID] = unwoundOf(s)
					}
					if _, err := d.View(0); err != nil {
						t.Fatal(err)
					}
					if s := d.State(20); s.View != 0 || s.TID != running {
						t.Fatalf("after View(0): view %d, running %d", s.View, s.TID)
					}
					x, _, err := d.s.RunUntil(func(shadow.Record) bool { return d.s.Thread() != running }, 50_000_000)
					if err != nil {
						t.Fatal(err)
					}
					if x != nil {
						break
					}
					d.readRegs()
					if want, ok := views[d.s.Thread()]; ok {
						if got := unwoundOf(d.State(20)); !reflect.DeepEqual(got, want) {
							t.Fatalf("tid %d runs again at insn %d:\n%+v\nviewed while it waited:\n%+v", d.s.Thread(), d.Insns(), got, want)
						}
						resumed++
					}
				}
				t.Logf("%d views of a blocked worker, %d of a preempted one with matching stacks; %d compared when the thread ran again", blockedWorker, matched, resumed)
				if blockedWorker == 0 || q != 0 && matched == 0 || resumed < 10 {
					t.Errorf("%d views of a blocked worker, %d with matching stacks", blockedWorker, matched)
				}
			})
		}
	}
}

// TestViewThreadBack: a command that runs or goes back shows the running
// thread again; going back across thread switches, a thread viewed there
// shows what a debugger that only went forward shows.
func TestViewThreadBack(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			d, fwd := openThreads(t, a, 0), openThreads(t, a, 0)
			// Into the second round of the workers: several switches.
			work, err := d.Resolve("work")
			if err != nil {
				t.Fatal(err)
			}
			d.ToggleBreakpoint(work)
			var first uint64
			for i := 0; i < 4; i++ {
				if _, err := d.Continue(); err != nil || d.exit != nil {
					t.Fatalf("continue: %v, %v", err, d.exit)
				}
				if i == 0 {
					first = d.Insns()
				}
			}
			other := func(d *Debugger) int {
				for _, th := range d.p.Threads() {
					if th.TID != d.s.Thread() && strings.HasPrefix(th.State, "blocked") {
						return th.TID
					}
				}
				t.Fatal("no blocked thread")
				return 0
			}
			for _, cmd := range []struct {
				name string
				run  func() (string, error)
			}{
				{"step", d.Step},
				{"back", func() (string, error) { return d.Back(1) }},
				{"seek", func() (string, error) { return d.Seek(first) }},
				{"continue", d.Continue},
			} {
				tid := other(d)
				if _, err := d.View(tid); err != nil {
					t.Fatal(err)
				}
				if s := d.State(20); s.View != tid {
					t.Fatalf("before %s: viewing %d, want %d", cmd.name, s.View, tid)
				}
				if _, err := cmd.run(); err != nil {
					t.Fatalf("%s: %v", cmd.name, err)
				}
				if s := d.State(20); s.View != 0 || s.TID != d.s.Thread() {
					t.Fatalf("after %s: viewing %d, running %d", cmd.name, s.View, s.TID)
				}
			}
			// Back at the first stop (the continue ran to the next one).
			if _, err := d.Seek(first); err != nil {
				t.Fatal(err)
			}
			if _, err := fwd.Seek(first); err != nil {
				t.Fatal(err)
			}
			for _, th := range fwd.p.Threads() {
				if th.State == "exited" {
					continue
				}
				_, err1 := d.View(th.TID)
				_, err2 := fwd.View(th.TID)
				if err1 != nil || err2 != nil {
					t.Fatalf("view %d: %v, %v", th.TID, err1, err2)
				}
				got, want := comparable(d.State(20)), comparable(fwd.State(20))
				got.Breakpoints, want.Breakpoints = nil, nil
				for i := range got.Disasm {
					got.Disasm[i].Break = false
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("viewing %d after going back:\n%+v\nforward only:\n%+v", th.TID, got, want)
				}
			}
		})
	}
}

// TestScreenThreadView stops in the second worker's work (the third stop
// at the breakpoint), shows the threads and views the first worker,
// blocked in pthread_cond_wait: the header says which thread is viewed and
// which runs, the threads pane marks both, the stacks are the blocked
// worker's. A step shows the running thread again.
func TestScreenThreadView(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			m := screenRun(t, threadsProgram(a), 100, 40,
				"key:B", "type:work", "enter", "wait", "key:c", "wait", "key:c", "wait", "key:c", "wait", "key:t", "key:[", "wait")
			if a == "x86_64" {
				// Static glibc reads the program's absolute path
				// (/proc/self/exe): the instruction counts depend on the
				// checkout's path, and on AArch64 a register too.
				golden.Check(t, filepath.Join(pkgDir, "testdata", t.Name()+".golden"),
					[]byte(regexp.MustCompile(`insn \d+`).ReplaceAllString(m.Screen(), "insn N")+"\n"))
			}
			st := m.st
			if st.View == 0 || st.View == st.TID || !strings.HasPrefix(st.ViewState, "blocked: futex wait") {
				t.Fatalf("viewing %d (%s), running %d", st.View, st.ViewState, st.TID)
			}
			scr := m.Screen()
			for _, want := range []string{
				fmt.Sprintf("viewing tid %d (", st.View),
				fmt.Sprintf(" | running: tid %d at work | ", st.TID),
				fmt.Sprintf("-> %d ", st.View), fmt.Sprintf("=> %d ", st.TID),
				fmt.Sprintf("verify tid %d: ", st.View),
			} {
				if !strings.Contains(scr, want) {
					t.Errorf("screen lacks %q", want)
				}
			}
			if tf := strings.Join(trueFuncs(st), " < "); !strings.Contains(tf, "pthread_cond_wait < worker < start_thread < ") {
				t.Errorf("true stack %s", tf)
			}
			// ] comes back to the running thread (the next in tid order),
			// . and a step too.
			for _, k := range []string{"]", ".", "s"} {
				if _, err := m.d.View(st.View); err != nil {
					t.Fatal(err)
				}
				m.st = m.d.State(disasmLines)
				pressDone(t, m, k)
				if m.st.View != 0 || !strings.Contains(m.Screen(), fmt.Sprintf("tid %d (", m.st.TID)) || strings.Contains(m.Screen(), "viewing tid") {
					t.Errorf("after %s: viewing %d\n%s", k, m.st.View, m.Screen())
				}
			}
		})
	}
}

// pressDone presses key k and runs the command it starts to its end, as
// the Bubble Tea runtime would.
func pressDone(t *testing.T, m *Model, k string) {
	t.Helper()
	cmd := m.key(press(k))
	if cmd == nil || !m.busy {
		t.Fatalf("%s: no command", k)
	}
	msgs := []tea.Msg{cmd()}
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		switch msg := msg.(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					msgs = append(msgs, c())
				}
			}
		case doneMsg:
			m.Update(msg)
			return
		}
	}
	t.Fatalf("%s: the command did not end", k)
}
