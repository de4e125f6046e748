//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// System calls on the process: exit, set_robust_list, resource limits,
// getrandom, uname, futex, sched_getaffinity, getcpu and arch_prctl (the
// process and user ids are constants in handlers, syscalls.go).

func (p *Process) sysExit(a *[6]uint64) uint64 {
	status := int(a[0] & 0xff)
	p.sysStop(StopExited, status, fmt.Sprintf("exited with status %d", status))
	return 0
}

func (p *Process) sysSetRobustList(a *[6]uint64) uint64 {
	if a[1] != 24 {
		return sysErr(eINVAL)
	}
	return 0
}

func (p *Process) rlimit(res uint64) (cur, max uint64) {
	const inf = ^uint64(0)
	switch res {
	case 3: // RLIMIT_STACK
		return stackSize, inf
	case 7: // RLIMIT_NOFILE
		return fdLimit, fdLimit
	}
	return inf, inf
}

func (p *Process) sysPrlimit64(a *[6]uint64) uint64 {
	if a[0] != 0 && a[0] != guestPID {
		return sysErr(eSRCH)
	}
	if a[1] >= 16 {
		return sysErr(eINVAL)
	}
	if a[3] != 0 {
		cur, max := p.rlimit(a[1])
		if !p.put64(a[3], cur, max) {
			return sysErr(eFAULT)
		}
	}
	return 0
}

func (p *Process) sysGetrlimit(a *[6]uint64) uint64 {
	return p.sysPrlimit64(&[6]uint64{0, a[0], 0, a[1]})
}

func (p *Process) sysGetrandom(a *[6]uint64) uint64 {
	n := min(a[1], 1<<25)
	if !p.writable(a[0], n) {
		return sysErr(eFAULT)
	}
	for done := uint64(0); done < n; {
		k := min(n-done, ioChunk)
		p.writeGuest(a[0]+done, p.rng.bytes(int(k)))
		done += k
	}
	return n
}

func (p *Process) sysUname(a *[6]uint64) uint64 {
	var b [6 * 65]byte
	for i, s := range []string{"Linux", "sframesim", "6.1.0-sframesim", "#1 SMP PREEMPT_DYNAMIC", p.abi.machine, "(none)"} {
		copy(b[65*i:65*i+64], s)
	}
	if !p.writeGuest(a[0], b[:]) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysFutex(a *[6]uint64) uint64 {
	const (
		futexWait, futexWake, futexWakeOp, futexWaitBitset, futexWakeBitset = 0, 1, 5, 9, 10
	)
	switch op := a[1] & 0x7f; op {
	case futexWake, futexWakeBitset, futexWakeOp:
		return 0
	case futexWait, futexWaitBitset:
		b, ok := p.readGuest(a[0], 4)
		if !ok {
			return sysErr(eFAULT)
		}
		if binary.LittleEndian.Uint32(b) != uint32(a[2]) {
			return sysErr(eAGAIN)
		}
		if a[3] != 0 {
			return sysErr(eTIMEDOUT)
		}
		p.sysStop(StopDeadlock, 0, fmt.Sprintf("deadlock: futex wait on %#x with no other thread to wake it", a[0]))
		return 0
	default:
		return sysErr(eNOSYS)
	}
}

func (p *Process) sysSchedGetaffinity(a *[6]uint64) uint64 {
	if a[0] != 0 && a[0] != guestPID {
		return sysErr(eSRCH)
	}
	if a[1] < 8 || a[1]%8 != 0 {
		return sysErr(eINVAL)
	}
	if !p.put64(a[2], 1) {
		return sysErr(eFAULT)
	}
	return 8
}

func (p *Process) sysGetcpu(a *[6]uint64) uint64 {
	for _, addr := range a[:2] {
		if addr != 0 && !p.writeGuest(addr, make([]byte, 4)) {
			return sysErr(eFAULT)
		}
	}
	return 0
}

func (p *Process) sysArchPrctl(a *[6]uint64) uint64 {
	return p.abi.archPrctl(p, a[0], a[1])
}
