//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/shadow"
)

// testdata/threads-x86_64 and threads-aarch64 are testdata/src/threads.c,
// built with
//
//	$ARCH-linux-gnu-gcc -O2 -static -pthread -Wa,--gsframe -o threads-$ARCH src/threads.c
//
// (gcc 12, glibc 2.36 of Debian bookworm, binutils 2.40: SFrame V1):
// pthread_create (clone3), pthread_join (the clear-tid futex), a mutex, a
// condition variable and nanosleep.
//
// testdata/threadwork-x86_64 and threadwork-aarch64 are
// testdata/src/threadwork.c, built the same way: "threadwork N" does the
// same work (trees of calls) in the main thread alone or split over N
// threads (verify's BenchmarkVerifyThreads).

const threadsOutput = `worker 0 round 0
worker 1 round 0
worker 0 round 1
worker 1 round 1
worker 0 round 2
worker 1 round 2
worker 0 round 3
worker 1 round 3
worker 0 round 4
worker 1 round 4
total 52500 joined 21
`

var threadArches = []string{"x86_64", "aarch64"}

func threadsProgram(arch string) string { return filepath.Join("testdata", "threads-"+arch) }

// runThreads runs the threads program to its end and returns its output,
// the exit and the threads.
func runThreads(t *testing.T, arch string, quantum uint64) (string, *Exit, []Thread) {
	t.Helper()
	out, x, p := runGuest(t, threadsProgram(arch), Config{Quantum: quantum, MaxInsns: 50_000_000})
	threads := p.Threads()
	p.Close()
	return out, x, threads
}

func TestThreads(t *testing.T) {
	for _, a := range threadArches {
		for _, q := range []uint64{0, 1000, 37} {
			t.Run(fmt.Sprintf("%s/quantum=%d", a, q), func(t *testing.T) {
				out, x, threads := runThreads(t, a, q)
				if x.Reason != StopExited || x.Status != 0 {
					t.Fatalf("exit %v (%s), want status 0\noutput:\n%s", x.Reason, x, out)
				}
				if out != threadsOutput {
					t.Errorf("output:\n%s\nwant:\n%s", out, threadsOutput)
				}
				if len(threads) != 3 {
					t.Fatalf("threads %+v, want 3", threads)
				}
				var sum uint64
				for i, th := range threads {
					if th.TID != guestPID+i || th.Insns == 0 {
						t.Errorf("thread %d: %+v", i, th)
					}
					sum += th.Insns
				}
				if sum != x.Insns {
					t.Errorf("threads ran %d instructions in all, the run %d", sum, x.Insns)
				}
				// The same run again gives the same interleaving.
				out2, x2, threads2 := runThreads(t, a, q)
				if out2 != out || *x2 != *x || !reflect.DeepEqual(threads2, threads) {
					t.Errorf("second run differs: %+v %+v, then %+v %+v", x, threads, x2, threads2)
				}
			})
		}
	}
}

// TestThreadsSession steps the threads program through a Session in
// chunks of different sizes: the interleaving is the same as Run's, and
// every thread's instructions go to its own shadow stack.
func TestThreadsSession(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			_, want, wantThreads := runThreads(t, a, 0)
			var out bytes.Buffer
			p, err := Load(threadsProgram(a), Config{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			if err := s.Batch(512); err != nil {
				t.Fatal(err)
			}
			seen := map[int]uint64{}
			s.Observe(func(r shadow.Record) bool {
				seen[s.Thread()]++
				return true
			})
			var x *Exit
			for x == nil {
				if x, _, err = s.RunUntil(nil, 7919); err != nil {
					t.Fatal(err)
				}
			}
			if x.Reason != StopExited || x.Insns != want.Insns || out.String() != threadsOutput {
				t.Fatalf("exit %+v, want %+v; output:\n%s", x, want, out.String())
			}
			for _, th := range wantThreads {
				if seen[th.TID] != th.Insns {
					t.Errorf("thread %d: observed %d instructions, ran %d", th.TID, seen[th.TID], th.Insns)
				}
				// An exited thread's shadow stack is dropped
				// (Session.retire).
				if has := s.ShadowOf(th.TID) != nil; has != (th.State != "exited") {
					t.Errorf("thread %d (%s): has a shadow stack %v", th.TID, th.State, has)
				}
			}
		})
	}
}

// TestThreadChurn: a program creating and joining 10 000 threads one after
// another (testdata/src/churn.c, freestanding, built with the host's gcc
// 12 and binutils 2.40:
//
//	$ARCH-linux-gnu-gcc -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie -Wa,--gsframe -o churn-$ARCH src/churn.c
//
// ) keeps no thread nor shadow stack per past thread: Threads lists those
// alive and the first 1024 that exited, ThreadCount counts the rest, and
// the anomaly each thread's shadow stack saw (an unexpected return) is
// still counted 10 000 times, first in the first thread.
func TestThreadChurn(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			var out bytes.Buffer
			p, err := Load(filepath.Join("testdata", "churn-"+a), Config{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			if err := s.Batch(512); err != nil {
				t.Fatal(err)
			}
			x, _, err := s.RunUntil(nil, 0)
			if err != nil || x == nil || x.Reason != StopExited || x.Status != 0 || out.String() != "churn 10000\n" {
				t.Fatalf("exit %+v %v, output %q", x, err, out.String())
			}
			total, unlisted, insns := p.ThreadCount()
			threads := p.Threads()
			if total != 10001 || unlisted != 10000-keptExited || len(threads) != 1+keptExited || insns == 0 {
				t.Errorf("ThreadCount %d, %d unlisted (%d instructions); Threads lists %d", total, unlisted, insns, len(threads))
			}
			for i, th := range threads {
				if th.TID != guestPID+i || (i > 0) != (th.State == "exited") {
					t.Errorf("Threads()[%d] = %+v", i, th)
					break
				}
			}
			if _, err := p.ThreadRegs(guestPID + 2000); err == nil || !strings.Contains(err.Error(), "has exited") {
				t.Errorf("ThreadRegs of an unlisted exited thread: %v", err)
			}
			if len(p.thr.list) != 1 {
				t.Errorf("%d threads kept in the list, want the main thread alone", len(p.thr.list))
			}
			if n := len(s.stacks); n != 1 {
				t.Errorf("%d shadow stacks kept, want 1", n)
			}
			var kinds []string
			s.EachAnomalyKind(func(tid int, k shadow.AnomalyKind) {
				kinds = append(kinds, fmt.Sprintf("%s %d tid %d", k.First.Kind, k.Count, tid))
			})
			if want := []string{fmt.Sprintf("unexpected-return 10000 tid %d", guestPID+1)}; !reflect.DeepEqual(kinds, want) {
				t.Errorf("anomalies %v, want %v", kinds, want)
			}
		})
	}
}

// TestThreadPC stops at every thread switch: the thread scheduled in
// starts where Threads said it stood at the stop before.
func TestThreadPC(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			p, err := Load(threadsProgram(a), Config{Stdout: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			checked := 0
			for {
				before := map[int]Thread{}
				for _, th := range p.Threads() {
					before[th.TID] = th
				}
				tid := s.Thread()
				if pc := s.State().PC; before[tid].PC != pc || before[tid].State != "running" {
					t.Fatalf("running thread %d: %+v, the session is at %#x", tid, before[tid], pc)
				}
				x, stopped, err := s.RunUntil(func(shadow.Record) bool { return s.Thread() != tid }, 50_000_000)
				if err != nil {
					t.Fatal(err)
				}
				if x != nil {
					break
				}
				if !stopped {
					t.Fatal("no stop")
				}
				if th, ok := before[s.Thread()]; ok {
					if th.PC != s.State().PC {
						t.Fatalf("thread %d resumes at %#x, Threads said %#x", th.TID, s.State().PC, th.PC)
					}
					checked++
				}
			}
			if checked < 3 {
				t.Errorf("%d switches checked", checked)
			}
			for _, th := range p.Threads() {
				if th.State != "exited" && th.TID != p.CurrentThread() || th.State == "exited" && th.PC != 0 {
					t.Errorf("after the end: %+v", th)
				}
			}
		})
	}
}

// TestThreadsTimeoutDeadlock runs the program's other two modes: a timed
// wait on a condition variable (FUTEX_WAIT_BITSET with a CLOCK_REALTIME
// deadline) times out on the fake clock while main yields, and a worker
// waiting forever while main joins it is a deadlock naming both threads.
func TestThreadsTimeoutDeadlock(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			run := func(mode string) (string, *Exit) {
				var out bytes.Buffer
				p, err := Load(threadsProgram(a), Config{Args: []string{"threads", mode}, Stdout: &out, MaxInsns: 20_000_000})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				x, err := p.Run()
				if err != nil {
					t.Fatal(err)
				}
				return out.String(), x
			}
			out, x := run("timeout")
			if want := "timedwait: timed out\njoined after yielding\n"; x.Reason != StopExited || out != want {
				t.Errorf("timeout: %v, output %q, want %q", x, out, want)
			}
			out, x = run("deadlock")
			if x.Reason != StopDeadlock || out != "" ||
				!strings.Contains(x.Detail, "tid 4242 blocked: futex wait on 0x") ||
				!strings.Contains(x.Detail, "tid 4243 blocked: futex wait on 0x") {
				t.Errorf("deadlock: %v: %s, output %q", x.Reason, x.Detail, out)
			}
		})
	}
}

// TestCloneFork: clone with the flags of fork stays refused, naming the
// call.
func TestCloneFork(t *testing.T) {
	for _, a := range threadArches {
		p, err := Load(threadsProgram(a), Config{})
		if err != nil {
			t.Fatal(err)
		}
		p.sysPC = 0x1234
		args := [6]uint64{17} // SIGCHLD: fork
		p.sysClone(&args)
		if x := p.Exited(); x == nil || x.Reason != StopUnsupported || !strings.Contains(x.Detail, "unsupported system call clone with flags 0x11") {
			t.Errorf("%s: fork-like clone: %+v", a, x)
		}
		p.Close()
	}
}

// TestFutexOps checks the futex operations that the threads program does
// not reach on threads set up by hand: wakes by bitset, requeues and
// WAKE_OP, in the order the waiters started waiting.
func TestFutexOps(t *testing.T) {
	p, err := Load(threadsProgram("x86_64"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w1, w2 := p.SP-64, p.SP-128 // words on the stack
	setup := func() []*thread {
		p.initThreads()
		p.writeGuest(w1, []byte{7, 0, 0, 0})
		p.writeGuest(w2, []byte{5, 0, 0, 0})
		var ts []*thread
		for i, mask := range []uint32{1, 2, 3} {
			th := &thread{tid: guestPID + 1 + i, deadline: -1}
			p.thr.list = append(p.thr.list, th)
			p.thr.cur = th
			p.waitOn(w1, mask, -1, "test")
			ts = append(ts, th)
		}
		p.thr.cur = p.thr.list[0]
		return ts
	}
	states := func(ts []*thread) string {
		var b strings.Builder
		for _, th := range ts {
			switch {
			case th.state == running:
				b.WriteByte('R')
			case th.futex == w1:
				b.WriteByte('1')
			case th.futex == w2:
				b.WriteByte('2')
			}
		}
		return b.String()
	}
	word := func(addr uint64) uint32 {
		b, _ := p.readGuest(addr, 4)
		return uint32(b[0]) | uint32(b[1])<<8
	}
	for _, c := range []struct {
		name   string
		args   [6]uint64
		ret    uint64
		states string
		w2     uint32
	}{
		{"wake 2", [6]uint64{w1, futexWake | 128, 2}, 2, "RR1", 5},
		{"wake 0 wakes one", [6]uint64{w1, futexWake, 0}, 1, "R11", 5},
		{"wake bitset 2", [6]uint64{w1, futexWakeBitset, 9, 0, 0, 2}, 2, "1RR", 5},
		{"wake bitset 0", [6]uint64{w1, futexWakeBitset, 9, 0, 0, 0}, sysErr(eINVAL), "111", 5},
		{"requeue", [6]uint64{w1, futexRequeue, 1, 1, w2}, 2, "R21", 5},
		{"cmp requeue", [6]uint64{w1, futexCmpRequeue, 0, 9, w2, 7}, 3, "222", 5},
		{"cmp requeue changed", [6]uint64{w1, futexCmpRequeue, 0, 9, w2, 8}, sysErr(eAGAIN), "111", 5},
		// WAKE_OP: w2 += 1 (old 5); wake 1 of w1; 5 > 4: wake 1 of w2 (none).
		{"wake op add", [6]uint64{w1, futexWakeOp, 1, 1, w2, 1<<28 | 1<<12 | 4<<24 | 4}, 1, "R11", 6},
		// w2 = 1<<3, old 5 == 6 fails: only w1's waiters.
		{"wake op shift", [6]uint64{w1, futexWakeOp, 2, 1, w2, 8<<28 | 3<<12 | 6}, 2, "RR1", 8},
		{"wait changed", [6]uint64{w1, futexWait, 6}, sysErr(eAGAIN), "111", 5},
	} {
		ts := setup()
		if ret := p.sysFutex(&c.args); ret != c.ret || states(ts) != c.states || word(w2) != c.w2 {
			t.Errorf("%s: returned %d, states %s, w2 %d; want %d, %s, %d", c.name, int64(ret), states(ts), word(w2), int64(c.ret), c.states, c.w2)
		}
	}
}

// TestThreadRegs: at every thread switch, the registers ThreadRegs gave
// for a waiting thread are those it resumes with (but the result of the
// system call it waited in), and reading them leaves the engine and the
// run as they were.
func TestThreadRegs(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			var out bytes.Buffer
			p, err := Load(threadsProgram(a), Config{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			ret := p.Engine.RegID(0) // rax, x0: the system call result
			checked := 0
			for {
				tid := s.Thread()
				cur, err := p.ThreadRegs(tid)
				if err != nil {
					t.Fatal(err)
				}
				saved := map[int]*ThreadRegs{}
				for _, th := range p.Threads() {
					r, err := p.ThreadRegs(th.TID)
					switch {
					case th.State == "exited":
						if err == nil {
							t.Errorf("thread %d exited, ThreadRegs gave no error", th.TID)
						}
						continue
					case err != nil:
						t.Fatalf("thread %d (%s): %v", th.TID, th.State, err)
					}
					if pc, _ := r.Get(p.Arch.PC); pc != th.PC {
						t.Fatalf("thread %d: PC %#x, Threads says %#x", th.TID, pc, th.PC)
					}
					saved[th.TID] = r
				}
				if again, _ := p.ThreadRegs(tid); !reflect.DeepEqual(again, cur) {
					t.Fatalf("the running thread's registers changed: %v, then %v", cur.Vals, again.Vals)
				}
				x, stopped, err := s.RunUntil(func(shadow.Record) bool { return s.Thread() != tid }, 50_000_000)
				if err != nil {
					t.Fatal(err)
				}
				if x != nil {
					if _, want, _ := runThreads(t, a, 0); *x != *want || out.String() != threadsOutput {
						t.Errorf("exit %+v, without ThreadRegs %+v, output:\n%s", x, want, out.String())
					}
					break
				}
				if !stopped {
					t.Fatal("no stop")
				}
				if want := saved[s.Thread()]; want != nil {
					got, err := p.ThreadRegs(s.Thread())
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range got.Regs {
						if got.Vals[i] != want.Vals[i] && p.Engine.RegID(r) != ret {
							t.Fatalf("thread %d resumes with %s = %#x, ThreadRegs said %#x", s.Thread(), p.Arch.RegName(r), got.Vals[i], want.Vals[i])
						}
					}
					checked++
				}
			}
			if checked < 3 {
				t.Errorf("%d switches checked", checked)
			}
			t.Logf("%d switches checked", checked)
			if _, err := p.ThreadRegs(999); err == nil {
				t.Error("no error for a thread that never was")
			}
		})
	}
}

// TestThreadLimit: at most maxThreads threads are alive at once, as
// RLIMIT_NPROC (which getrlimit reports) bounds them: the next clone fails
// with EAGAIN, and one again succeeds once a thread has exited.
func TestThreadLimit(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			for i := 1; i < maxThreads; i++ {
				if r := g.call("clone", threadFlags, g.buf+8192, 0, 0, 0); r <= 0 {
					t.Fatalf("clone %d = %d", i, r)
				}
			}
			expect(t, "clone beyond the limit", g.call("clone", threadFlags, g.buf+8192, 0, 0, 0), -eAGAIN)
			expect(t, "getrlimit(RLIMIT_NPROC)", g.call("prlimit64", 0, 6, 0, g.buf), 0)
			b := readGuestBytes(t, g.p, g.buf, 16)
			if cur, max := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]); cur != maxThreads || max != maxThreads {
				t.Errorf("RLIMIT_NPROC %d/%d, want %d", cur, max, maxThreads)
			}
			g.p.thr.list[1].state = finished
			if r := g.call("clone", threadFlags, g.buf+8192, 0, 0, 0); r <= 0 {
				t.Errorf("clone after a thread exited = %d", r)
			}
		})
	}
}

// TestSignalQueueLimit: real-time signals queued with their siginfo and
// POSIX timers count against RLIMIT_SIGPENDING (getrlimit reports it):
// past it sigqueue, tgkill and timer_create fail with EAGAIN, and kill's
// signal, already pending, is not queued again.
func TestSignalQueueLimit(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			const sig = 40
			var set [8]byte
			binary.LittleEndian.PutUint64(set[:], 1<<(sig-1))
			if err := g.p.Engine.WriteMem(g.buf, set[:]); err != nil {
				t.Fatal(err)
			}
			expect(t, "block", g.call("rt_sigprocmask", 0, g.buf, 0, 8), 0)
			info := g.buf + 1024 // a zeroed siginfo_t
			for i := 0; i < sigPendingLimit; i++ {
				if r := g.call("rt_sigqueueinfo", guestPID, sig, info); r != 0 {
					t.Fatalf("sigqueue %d = %d", i, r)
				}
			}
			expect(t, "sigqueue past the limit", g.call("rt_sigqueueinfo", guestPID, sig, info), -eAGAIN)
			expect(t, "tgkill past the limit", g.call("tgkill", guestPID, guestPID, sig), -eAGAIN)
			expect(t, "kill past the limit, pending already", g.call("kill", guestPID, sig), 0)
			expect(t, "a standard signal", g.call("kill", guestPID, 10), 0)
			expect(t, "timer_create past the limit", g.call("timer_create", 1, 0, g.buf+2048), -eAGAIN)
			if n := len(g.p.sig.shared.info); n != sigPendingLimit+1 {
				t.Errorf("%d signals queued, want %d and SIGUSR1", n, sigPendingLimit)
			}
			expect(t, "getrlimit(RLIMIT_SIGPENDING)", g.call("prlimit64", 0, 11, 0, g.buf), 0)
			b := readGuestBytes(t, g.p, g.buf, 16)
			if cur, max := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]); cur != sigPendingLimit || max != sigPendingLimit {
				t.Errorf("RLIMIT_SIGPENDING %d/%d, want %d", cur, max, sigPendingLimit)
			}
		})
	}
}
