//go:build cgo

package linux

import (
	"fmt"
	"time"
)

// The scheduler: one CPU, threads switched between two emu.Engine.Start
// calls. A thread keeps the CPU until it blocks (a futex wait, a sleep),
// exits, yields (sched_yield) or has run Config.Quantum instructions; then
// the next runnable thread in tid order after it gets the CPU (round
// robin), itself last. Nothing depends on the host: the same program and
// input give the same interleaving on every run, whatever the chunks
// Continue is called with. When every thread is blocked, the clock jumps
// to the earliest deadline (a futex timeout, the end of a sleep, a
// timer's expiry: timers.go); without one the run ends with StopDeadlock.
// A thread woken while blocked may find when it is picked that its call
// must wait again (a pipe another thread emptied first: resumed).

// quantum returns the instructions a thread runs before it is switched
// out.
func (p *Process) quantum() uint64 {
	if p.cfg.Quantum > 0 {
		return p.cfg.Quantum
	}
	return DefaultQuantum
}

// slice bounds the next Start so that the running thread stops at the end
// of its quantum; a lone thread is never switched.
func (p *Process) slice(n uint64) uint64 {
	if len(p.thr.list) == 1 {
		return n
	}
	q, ran := p.quantum(), p.thr.cur.ran
	if ran >= q {
		return 1 // only before the first schedule of a restored state
	}
	return min(n, q-ran)
}

// base is the clock the fake clocks are offsets of (time.go): 1 ns per
// instruction plus the time slept.
func (p *Process) base() int64 { return int64(p.Engine.Executed()) + int64(p.sleep) }

// needSchedule reports whether the running thread must give up the CPU or
// a clone left work for schedule.
func (p *Process) needSchedule() bool {
	return p.thr.resched || len(p.thr.list) > 1 && p.thr.cur.ran >= p.quantum()
}

// schedule runs after a Start: it makes the contexts of new threads and
// switches to the thread that runs next.
func (p *Process) schedule() error {
	if err := p.startChildren(); err != nil {
		return err
	}
	cur, yield := p.thr.cur, p.thr.yield
	p.thr.resched, p.thr.yield = false, false
	if cur.state == running && !yield && cur.ran < p.quantum() {
		return nil // only a clone: the parent goes on
	}
	for {
		p.wakeExpired()
		p.fireTimers()
		if next := p.pick(cur); next != nil {
			if !p.resumed(next) {
				continue // its call must wait again
			}
			return p.switchTo(next)
		}
		// Every thread waits: jump to the earliest deadline, a thread's
		// or a timer's.
		at := int64(-1)
		for _, t := range p.thr.list {
			if t.state == blocked && t.deadline >= 0 && (at < 0 || t.deadline < at) {
				at = t.deadline
			}
			if t.state == blocked && t.wakeAt >= 0 && (at < 0 || t.wakeAt < at) {
				at = t.wakeAt
			}
		}
		if e, ok := p.nextRealExpiry(); ok && (at < 0 || e < at) {
			at = e
		}
		if at < 0 && p.cfg.Signals != nil && p.waitsForSignal() {
			// Only a signal from outside can wake one, and one waits
			// for a signal (pause, sigsuspend, sigwait, a signalfd):
			// wait for it, as the program would natively. (Threads
			// that only wait for each other, a lock never released,
			// stay a deadlock.)
			if err := p.waitOutside(); err != nil || p.exit != nil {
				return err
			}
			continue
		}
		if at < 0 {
			p.stopAt(StopDeadlock, 0, p.sysPC, "deadlock: every thread waits and none can wake it: "+p.threadStates())
			return nil
		}
		if d := at - p.base(); d > 0 {
			p.sleep += time.Duration(d)
		}
	}
}

// wakeExpired wakes the blocked threads whose deadline has passed: a futex
// wait fails with ETIMEDOUT, a sleep returns 0 (thread.timeoutRet); and
// those whose timer expired (thread.wakeAt), to look again.
func (p *Process) wakeExpired() {
	now := p.base()
	for _, t := range p.thr.list {
		if t.state == blocked && t.deadline >= 0 && t.deadline <= now {
			t.wake(t.timeoutRet)
		} else if t.state == blocked && t.wakeAt >= 0 && t.wakeAt <= now {
			t.wake(0) // it looks again (Process.resumed)
		}
	}
}

// pick returns the first runnable thread after cur in tid order, wrapping
// around (cur itself last), or nil.
func (p *Process) pick(cur *thread) *thread {
	l := p.thr.list
	at := 0
	for i, t := range l {
		if t == cur {
			at = i
		}
	}
	for k := 1; k <= len(l); k++ {
		if t := l[(at+k)%len(l)]; t.state == running {
			return t
		}
	}
	return nil
}

// switchTo gives the CPU to t: it saves the running thread's registers,
// loads t's and delivers the result of the system call t blocked in.
func (p *Process) switchTo(t *thread) error {
	cur := p.thr.cur
	if t != cur {
		if p.onSwitch != nil {
			p.onSwitch(cur.tid, t.tid, cur.state == finished)
		}
		if cur.state == finished {
			p.retire(cur)
		} else {
			c, err := p.Engine.SaveCPU()
			if err != nil {
				return fmt.Errorf("switching threads: %w", err)
			}
			pc, err := p.Engine.PC()
			if err != nil {
				return fmt.Errorf("switching threads: %w", err)
			}
			cur.ctx, cur.pc = c, pc
		}
		if err := p.Engine.RestoreCPU(t.ctx); err != nil {
			return fmt.Errorf("switching threads: %w", err)
		}
		t.ctx = nil
		p.thr.cur = t
		p.thr.switches++
	}
	t.ran = 0
	if t.setRet {
		t.setRet = false
		if err := p.Engine.SetReg(p.abi.ret, t.ret); err != nil {
			return err
		}
	}
	// The thread returns to user mode: its pending signals.
	return p.deliverSignals()
}
