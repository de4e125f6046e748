//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// Signals: actions and the mask are recorded; nothing is ever delivered.

type sigState struct {
	act  [65][32]byte // struct sigaction per signal (handler, flags, restorer, mask)
	mask uint64
	alt  [24]byte // stack_t
}

var signalNames = map[int]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns "SIGABRT" for 6, and so on ("signal N" if unnamed).
func SignalName(sig int) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}

func (p *Process) sysRtSigaction(a *[6]uint64) uint64 {
	sig := a[0]
	if sig < 1 || sig > 64 || a[3] != 8 || (a[1] != 0 && (sig == 9 || sig == 19)) {
		return sysErr(eINVAL)
	}
	var act []byte
	if a[1] != 0 {
		var ok bool
		if act, ok = p.readGuest(a[1], 32); !ok {
			return sysErr(eFAULT)
		}
	}
	if a[2] != 0 && !p.writeGuest(a[2], p.sig.act[sig][:]) {
		return sysErr(eFAULT)
	}
	copy(p.sig.act[sig][:], act)
	return 0
}

func (p *Process) sysRtSigprocmask(a *[6]uint64) uint64 {
	if a[3] != 8 {
		return sysErr(eINVAL)
	}
	old := p.sig.mask
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 8)
		if !ok {
			return sysErr(eFAULT)
		}
		set := binary.LittleEndian.Uint64(b) &^ (1<<(9-1) | 1<<(19-1))
		switch a[0] {
		case 0: // SIG_BLOCK
			p.sig.mask |= set
		case 1: // SIG_UNBLOCK
			p.sig.mask &^= set
		case 2: // SIG_SETMASK
			p.sig.mask = set
		default:
			return sysErr(eINVAL)
		}
	}
	if a[2] != 0 && !p.put64(a[2], old) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysSigaltstack(a *[6]uint64) uint64 {
	if a[1] != 0 {
		old := p.sig.alt
		if old == [24]byte{} {
			binary.LittleEndian.PutUint32(old[8:], 2) // SS_DISABLE
		}
		if !p.writeGuest(a[1], old[:]) {
			return sysErr(eFAULT)
		}
	}
	if a[0] != 0 {
		b, ok := p.readGuest(a[0], 24)
		if !ok {
			return sysErr(eFAULT)
		}
		copy(p.sig.alt[:], b)
	}
	return 0
}

// signal sends sig to the guest itself.
func (p *Process) signal(sig uint64) uint64 {
	if sig > 64 {
		return sysErr(eINVAL)
	}
	if sig == 0 {
		return 0
	}
	handler := binary.LittleEndian.Uint64(p.sig.act[sig][:])
	name := SignalName(int(sig))
	switch {
	case sig == 9 || sig == 19:
	case handler == 1: // SIG_IGN
		return 0
	case p.sig.mask&(1<<(sig-1)) != 0:
		return 0 // blocked: stays pending forever
	case handler != 0:
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("%s sent to itself has a handler at %#x%s: signal delivery is not emulated", name, handler, p.symbolSuffix(handler)))
		return 0
	}
	switch sig {
	case 17, 18, 23, 28: // SIGCHLD, SIGCONT, SIGURG, SIGWINCH: ignored by default
		return 0
	case 19, 20, 21, 22: // stop signals
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("%s would stop the process: job control is not emulated", name))
		return 0
	}
	p.sysStop(StopSignaled, 128+int(sig), fmt.Sprintf("killed by signal %d (%s)", sig, name))
	return 0
}

func (p *Process) sysKill(a *[6]uint64) uint64 {
	if pid := int32(a[0]); pid != guestPID && pid != 0 && pid != -guestPID {
		return sysErr(eSRCH)
	}
	return p.signal(a[1])
}

func (p *Process) sysTkill(a *[6]uint64) uint64 {
	if !p.isThread(int32(a[0])) {
		return sysErr(eSRCH)
	}
	return p.signal(a[1])
}

func (p *Process) sysTgkill(a *[6]uint64) uint64 {
	if int32(a[0]) != guestPID || !p.isThread(int32(a[1])) {
		return sysErr(eSRCH)
	}
	return p.signal(a[2])
}

// isThread reports whether tid is a thread of the process that has not
// exited. A signal to any thread acts on the process: one that terminates
// ends the run (signals are not delivered).
func (p *Process) isThread(tid int32) bool {
	for _, t := range p.thr.list {
		if int32(t.tid) == tid && t.state != finished {
			return true
		}
	}
	return false
}
