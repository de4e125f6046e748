//go:build cgo

package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The guest of these tests, built static for each architecture:
//
//	$ARCH-linux-gnu-gcc -O2 -static -pthread -Wa,--gsframe -o hostsig-$ARCH src/hostsig.c

// lineWriter is a guest's stdout that passes each complete line on.
type lineWriter struct {
	mu    sync.Mutex
	part  bytes.Buffer
	lines chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 64)} }

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part.Write(b)
	for {
		line, err := w.part.ReadString('\n')
		if err != nil {
			w.part.Reset()
			w.part.WriteString(line)
			return len(b), nil
		}
		w.lines <- strings.TrimSuffix(line, "\n")
	}
}

// expect waits for the guest's next line and checks it.
func (w *lineWriter) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-w.lines:
		if got != want {
			t.Fatalf("guest printed %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("guest printed nothing, want %q", want)
	}
}

// hostWaits receives a value as the layer begins a wait for the host
// (testHostWait): the guest is then blocked where the test wants it.
type hostWaits chan struct{}

// watchHostWaits sets testHostWait for the test.
func watchHostWaits(t *testing.T) hostWaits {
	w := make(hostWaits, 16)
	testHostWait = func() { w <- struct{}{} }
	t.Cleanup(func() { testHostWait = nil })
	return w
}

// next waits until the run begins its next wait for the host.
func (w hostWaits) next(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w:
	case <-time.After(20 * time.Second):
		t.Fatalf("the run does not wait %s", what)
	}
}

// drain forgets the waits of the runs before.
func (w hostWaits) drain() {
	for len(w) > 0 {
		<-w
	}
}

type runResult struct {
	x   *Exit
	err error
}

// startHostsig runs hostsig-$ARCH scenario as `sframesim run` does
// (RunFast), with stdin a host pipe, and returns the pipe's write end.
func startHostsig(t *testing.T, a, scenario string, sigs *HostSignals) (*lineWriter, *os.File, <-chan runResult) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	out := newLineWriter()
	path := filepath.Join("testdata", "hostsig-"+a)
	done := make(chan runResult, 1)
	go func() {
		p, x, err := RunFast(path, Config{Args: []string{path, scenario}, Stdin: r, Stdout: out, Signals: sigs, Timeout: time.Minute})
		if p != nil {
			p.Close()
		}
		done <- runResult{x, err}
	}()
	return out, w, done
}

func waitRun(t *testing.T, done <-chan runResult) *Exit {
	t.Helper()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		return res.x
	case <-time.After(time.Minute):
		t.Fatal("the run did not end")
	}
	return nil
}

// TestHostSignalsWhileReading sends signals to a guest blocked reading
// its stdin: an ignored one changes nothing, one with an SA_RESTART
// handler runs the handler and the read goes on, one without SA_RESTART
// makes the read fail with EINTR.
func TestHostSignalsWhileReading(t *testing.T) {
	waits := watchHostWaits(t)
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			waits.drain()
			blocked := func() { t.Helper(); waits.next(t, "for its stdin") }
			sigs := new(HostSignals)
			out, in, done := startHostsig(t, a, "read", sigs)
			out.expect(t, "ready")
			blocked()
			sigs.Send(3)  // SIGQUIT: ignored
			sigs.Send(10) // SIGUSR1, SA_RESTART
			out.expect(t, "handler 10")
			blocked() // again, restarted
			in.WriteString("abc")
			out.expect(t, "read 3 bytes: abc (signal 10 handled before)")
			blocked()
			sigs.Send(2) // SIGINT, no SA_RESTART
			out.expect(t, "handler 02")
			out.expect(t, "read: EINTR (signal 2 handled)")
			blocked()
			in.WriteString("xy")
			out.expect(t, "read 2 bytes: xy (signal 0 handled before)")
			in.Close()
			out.expect(t, "end of input (signal 0 handled before)")
			if x := waitRun(t, done); x.Reason != StopExited || x.Status != 0 {
				t.Errorf("exit %v (%s), want status 0", x.Reason, x)
			}
		})
	}
}

// TestHostSignalDefault sends SIGTERM to a guest that computes and does
// not handle it: it dies of it, as natively (status 143), and one sent
// before the run started waits for it.
func TestHostSignalDefault(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			sigs := new(HostSignals)
			out, _, done := startHostsig(t, a, "spin", sigs)
			out.expect(t, "ready")
			sigs.Send(15)
			x := waitRun(t, done)
			if x.Reason != StopSignaled || x.Status != 143 || x.Signal != 15 {
				t.Errorf("exit %v status %d signal %d (%s), want killed by SIGTERM", x.Reason, x.Status, x.Signal, x)
			}
		})
		t.Run(a+"/before", func(t *testing.T) {
			sigs := new(HostSignals)
			sigs.Send(1) // SIGHUP
			_, _, done := startHostsig(t, a, "spin", sigs)
			x := waitRun(t, done)
			if x.Reason != StopSignaled || x.Status != 129 {
				t.Errorf("exit %v status %d (%s), want killed by SIGHUP", x.Reason, x.Status, x)
			}
		})
	}
	if err := new(HostSignals).Send(65); err == nil {
		t.Error("Send(65) succeeded")
	}
}

// TestHostSignalsEnd: End ends the run whatever the program does with the
// signals, computing or waiting for its stdin, with the detail given.
func TestHostSignalsEnd(t *testing.T) {
	for _, a := range threadArches {
		for _, scenario := range []string{"ignore", "read"} {
			t.Run(a+"/"+scenario, func(t *testing.T) {
				sigs := new(HostSignals)
				out, _, done := startHostsig(t, a, scenario, sigs)
				out.expect(t, "ready")
				sigs.Send(15)
				sigs.End("ended from outside")
				x := waitRun(t, done)
				if x.Reason != StopInterrupted || !strings.HasPrefix(x.Detail, "ended from outside at pc ") {
					t.Errorf("exit %v (%s), want interrupted, ended from outside", x.Reason, x)
				}
			})
		}
	}
}

// TestHostSignalsWake: where only a signal can wake the program (pause,
// sigwaitinfo), a run with Signals waits for one from outside, as the
// program would natively; without, it is a deadlock, as are threads that
// wait for each other.
func TestHostSignalsWake(t *testing.T) {
	w := watchHostWaits(t)
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			w.drain()
			waits := func() { t.Helper(); w.next(t, "for a signal") }
			sigs := new(HostSignals)
			out, _, done := startHostsig(t, a, "pause", sigs)
			out.expect(t, "ready")
			waits()
			sigs.Send(10)
			out.expect(t, "handler 10")
			out.expect(t, "pause: -1 Interrupted system call (signal 10 handled)")
			out.expect(t, "waiting")
			waits()
			sigs.Send(12)
			out.expect(t, "sigwaitinfo: 12, si_code 0, si_pid 0")
			if x := waitRun(t, done); x.Reason != StopExited || x.Status != 0 {
				t.Errorf("exit %v (%s), want status 0", x.Reason, x)
			}
		})
		t.Run(a+"/without", func(t *testing.T) {
			out, _, done := startHostsig(t, a, "pause", nil)
			out.expect(t, "ready")
			if x := waitRun(t, done); x.Reason != StopDeadlock {
				t.Errorf("exit %v (%s), want a deadlock", x.Reason, x)
			}
		})
		t.Run(a+"/deadlock", func(t *testing.T) {
			// Threads that wait for each other await no signal: a
			// deadlock still, with Signals too.
			out, _, done := startHostsig(t, a, "deadlock", new(HostSignals))
			out.expect(t, "ready")
			if x := waitRun(t, done); x.Reason != StopDeadlock {
				t.Errorf("exit %v (%s), want a deadlock", x.Reason, x)
			}
		})
	}
}
