//go:build cgo

package linux

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
)

// Signals from outside the guest (the user's Ctrl-C, a kill(1) of the
// sframesim process) passed on to the program, as qemu-user passes the
// host's signals on: the program takes one as it would natively, with its
// handler or the default action (SIGINT then ends it with status 130).
//
// A signal is taken between two runs of the engine, at most RunChunk
// instructions after it came (a few milliseconds). Send does not stop the
// engine: a stop from another goroutine can race with the block hook, so
// that a block runs uncounted (or is counted and does not run), which is
// harmless when the run ends there (a timeout) but not here, where it goes
// on. A guest waiting for its stdin or for room on its stdout
// (hostwait.go) is woken within waitSlice, its read or write returning
// ERESTARTSYS as a pipe's does on Linux, which becomes EINTR or a restart
// (SA_RESTART) on the way back to user mode, and nothing at all for a
// signal the guest ignores.
//
// Where every thread waits, nothing inside the guest can wake one and one
// of them waits for a signal (pause, sigsuspend, sigwait, a read of a
// signalfd, a poll of the only thread: AArch64's pause), a run with Config.Signals waits for one from outside, as the
// program would natively, instead of ending as a deadlock; the timeout,
// Interrupt and End still end it. Threads that only wait for each other
// (a lock never released) stay a deadlock: no signal is awaited there.
//
// Such a signal comes at a time no run can repeat, so a program that
// took one cannot be run again to find an exact fault (RunFast): from the
// first signal taken on, the engine counts per instruction, where a fault
// needs no second run. The siginfo is SI_USER from pid 0, as Linux gives
// a process for a sender outside its pid namespace.

// HostSignals passes signals from outside to the program a Process runs
// (Config.Signals). Its zero value is ready; Send may be called from any
// goroutine, before, during and after the run.
type HostSignals struct {
	pending atomic.Uint64 // signals sent and not yet taken, as sigmask bits
	end     atomic.Pointer[string]
}

// Send passes sig (1 to 64) to the program: it is pending until the
// process takes it, and a standard signal sent again before is taken once,
// as the kernel does.
func (h *HostSignals) Send(sig int) error {
	if sig < 1 || sig > nsig {
		return fmt.Errorf("signal %d: want 1 to %d", sig, nsig)
	}
	h.pending.Or(sigmask(sig))
	return nil
}

// End ends the run, whatever the program does with the signals (it may
// ignore or handle them), with StopInterrupted and why as the detail; from
// any goroutine. As with Send, the run ends between two runs of the
// engine, or within waitSlice while the guest waits for the host.
func (h *HostSignals) End(why string) { h.end.CompareAndSwap(nil, &why) }

// endedFromOutside reports whether the run must end for Signals.End, and
// then marks it interrupted (stopForSignal).
func (p *Process) endedFromOutside() bool {
	if p.cfg.Signals == nil {
		return false
	}
	why := p.cfg.Signals.end.Load()
	if why == nil {
		return false
	}
	p.interrupted.Store(true)
	p.intrWhy = *why
	return true
}

// outsideSignals reports whether a signal may still come from outside
// (Config.Signals): a wait for a signal that nothing inside the guest can
// send is then no deadlock.
func (p *Process) outsideSignals() bool { return p.cfg.Signals != nil }

// waitsForSignal reports whether a blocked thread waits for a signal.
func (p *Process) waitsForSignal() bool {
	for _, t := range p.thr.list {
		if t.state == blocked && t.sigWait {
			return true
		}
	}
	return false
}

// waitOutside waits, every thread blocked, until a signal comes from
// outside (and takes it) or the run must stop (stopWaiting).
func (p *Process) waitOutside() error {
	if testHostWait != nil {
		testHostWait()
	}
	for !p.stopWaiting() {
		if p.hostSignalsWaiting() {
			return p.takeHostSignals()
		}
		d := waitSlice
		if !p.deadline.IsZero() {
			d = max(min(d, time.Until(p.deadline)), 0)
		}
		time.Sleep(d)
	}
	return nil
}

// hostSignalsWaiting reports whether a signal from outside waits to be
// taken (a wait for the host then ends: waitFD).
func (p *Process) hostSignalsWaiting() bool {
	return p.cfg.Signals != nil && p.cfg.Signals.pending.Load() != 0
}

// takeHostSignals makes the signals sent from outside since the last call
// pending for the process, between two runs of the engine. The first one
// switches counting per block off (see above).
func (p *Process) takeHostSignals() error {
	if p.cfg.Signals == nil {
		return nil
	}
	set := p.cfg.Signals.pending.Swap(0)
	if set == 0 {
		return nil
	}
	if p.Engine.CountingBlocks() {
		if err := p.Engine.CountBlocks(false); err != nil {
			return err
		}
	}
	for set != 0 {
		sig := bits.TrailingZeros64(set) + 1
		set &= set - 1
		p.queueSignal(nil, sigInfo{signo: int32(sig), code: siUser, uid: guestUID}, false)
	}
	return nil
}
