//go:build cgo

package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// testdata/timers-x86_64 and timers-aarch64 are testdata/src/timers.c,
// built with
//
//	$ARCH-linux-gnu-gcc -O2 -static -pthread -Wa,--gsframe -o timers-$ARCH src/timers.c
//
// (gcc 12, glibc 2.36 of Debian bookworm, binutils 2.40), and
// testdata/timers-want/ARCH/SCENARIO.txt is what it prints: on x86-64 run
// natively (Linux 6.1 on the host), on AArch64 under qemu-aarch64 7.2 with
// QEMU_CPU=cortex-a72. The program prints nothing that depends on timing.

// timerScenarios are timers.c's scenarios with the signals delivered to
// handlers (those that depend on how many periods a loop lasted are
// checked by the program itself).
var timerScenarios = []struct {
	name      string
	delivered map[int]uint64 // nil: not checked
}{
	{name: "alarm", delivered: map[int]uint64{14: 2}},
	{name: "itimer"},
	{name: "posix"},
	{name: "threadid", delivered: map[int]uint64{10: 1}},
	{name: "restart", delivered: map[int]uint64{10: 2}},
	{name: "nanosleep", delivered: map[int]uint64{10: 3}},
	{name: "sigsuspend", delivered: map[int]uint64{10: 2}},
	{name: "sigwait"},
	{name: "sigqueue", delivered: map[int]uint64{35: 3}},
	{name: "poll", delivered: map[int]uint64{10: 1}},
	{name: "futex", delivered: map[int]uint64{10: 3}},
	{name: "wakeother", delivered: map[int]uint64{10: 2}},
	{name: "sigevthread"},
	{name: "signalfd"},
	{name: "pipes", delivered: map[int]uint64{13: 1}},
}

// runTimers runs one scenario with argv pinned.
func runTimers(t *testing.T, a string, args ...string) (string, *Exit, *Process) {
	t.Helper()
	var out bytes.Buffer
	p, err := Load(filepath.Join("testdata", "timers-"+a), Config{Args: append([]string{"timers"}, args...), Stdout: &out, MaxInsns: 200_000_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	x, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), x, p
}

func TestTimers(t *testing.T) {
	for _, a := range threadArches {
		for _, sc := range timerScenarios {
			t.Run(a+"/"+sc.name, func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join("testdata", "timers-want", a, sc.name+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				out, x, p := runTimers(t, a, sc.name)
				if out != string(want) {
					t.Errorf("output:\n%s\nwant:\n%s", out, want)
				}
				if x.Reason != StopExited || x.Status != 0 {
					t.Errorf("exit %v (%s), want status 0", x.Reason, x)
				}
				if got := p.SignalsDelivered(); sc.delivered != nil && !mapsEqual(got, sc.delivered) {
					t.Errorf("delivered %v, want %v", got, sc.delivered)
				}
			})
		}
	}
}

// TestTimersDeterministic runs each scenario twice: the same output, the
// same instruction count and thread switches, the same signals.
func TestTimersDeterministic(t *testing.T) {
	for _, a := range threadArches {
		for _, sc := range timerScenarios {
			t.Run(a+"/"+sc.name, func(t *testing.T) {
				out1, x1, p1 := runTimers(t, a, sc.name)
				out2, x2, p2 := runTimers(t, a, sc.name)
				if out1 != out2 || *x1 != *x2 || p1.thr.switches != p2.thr.switches || !mapsEqual(p1.SignalsDelivered(), p2.SignalsDelivered()) {
					t.Errorf("two runs differ: %q %+v %d %v\nand %q %+v %d %v", out1, *x1, p1.thr.switches, p1.SignalsDelivered(),
						out2, *x2, p2.thr.switches, p2.SignalsDelivered())
				}
			})
		}
	}
}

// TestRestartWithoutHandler: a signal to the process wakes the main
// thread, blocked in nanosleep and then in a pipe read, but the sending
// thread, which gets the CPU first, takes it: the main thread finds no
// signal to handle and its call goes on as Linux's do_signal does it —
// nanosleep (ERESTART_RESTARTBLOCK) through restart_syscall to its first
// deadline, the read (ERESTARTSYS) restarted with its arguments.
func TestRestartWithoutHandler(t *testing.T) {
	want := `nanosleep: handler ran 1, consistent: 1
  went on, handled in the sender
read: handler ran 1, consistent: 1
  went on, handled in the sender
`
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			out, x, _ := runTimers(t, a, "wakeother", "detail")
			if out != want || x.Reason != StopExited || x.Status != 0 {
				t.Errorf("exit %s, output:\n%s\nwant:\n%s", x, out, want)
			}
		})
	}
}

// TestTimersChunks: whatever the chunks Continue is called with, a timer's
// signal arrives at the same instruction: the output, the instruction
// count and the thread switches are those of Run.
func TestTimersChunks(t *testing.T) {
	for _, a := range threadArches {
		for _, name := range []string{"alarm", "itimer", "threadid", "sigwait"} {
			t.Run(a+"/"+name, func(t *testing.T) {
				want, wx, wp := runTimers(t, a, name)
				var out bytes.Buffer
				p, err := Load(filepath.Join("testdata", "timers-"+a), Config{Args: []string{"timers", name}, Stdout: &out})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				var x *Exit
				for i := uint64(0); x == nil; i++ {
					if x, err = p.Continue(1 + i*7919%100_003); err != nil {
						t.Fatal(err)
					}
				}
				if out.String() != want || *x != *wx || p.thr.switches != wp.thr.switches {
					t.Errorf("in chunks: %q %+v %d switches\nRun: %q %+v %d switches", out.String(), *x, p.thr.switches, want, *wx, wp.thr.switches)
				}
			})
		}
	}
}
