//go:build cgo

package linux

import (
	"fmt"
	"path/filepath"
)

// prctl: the options programs use on themselves, as Linux 6.1 answers
// them for an unprivileged process on a CPU without SVE. Their state is
// the threads' (checkpoints copy it with them); the dumpable flag, the
// memory's, is set on every thread at once. An option that changes what
// the kernel would do to the process (seccomp filters, memory tagging,
// pointer authentication keys, speculation controls, ...) stops the run,
// named: it cannot be emulated honestly.

// prctl options (include/uapi/linux/prctl.h).
const (
	prSetPdeathsig      = 1
	prGetPdeathsig      = 2
	prGetDumpable       = 3
	prSetDumpable       = 4
	prGetKeepcaps       = 7
	prSetKeepcaps       = 8
	prSetName           = 15
	prGetName           = 16
	prGetSeccomp        = 21
	prCapbsetRead       = 23
	prSetTimerslack     = 29
	prGetTimerslack     = 30
	prSetChildSubreaper = 36
	prGetChildSubreaper = 37
	prSetNoNewPrivs     = 38
	prGetNoNewPrivs     = 39
	prSetTHPDisable     = 41
	prGetTHPDisable     = 42
	prSVESetVL          = 50
	prSVEGetVL          = 51
	prSetVMA            = 0x53564d41

	commLen           = 16    // TASK_COMM_LEN, the NUL included
	capLastCap        = 40    // CAP_CHECKPOINT_RESTORE, Linux 6.1's last
	defaultTimerslack = 50000 // ns
)

// prctlState is a thread's part of prctl. Its zero value is a new
// process's main thread's; a new thread starts with its creator's.
type prctlState struct {
	comm       string // the name PR_SET_NAME gave (named)
	named      bool
	pdeathsig  int
	undumpable bool
	keepcaps   bool
	subreaper  bool
	noNewPrivs bool
	thpDisable bool
	timerslack uint64 // 0: the default
}

// comm returns thread t's name: what PR_SET_NAME set, else the program's
// file name, cut to 15 bytes, as execve sets it.
func (p *Process) comm(t *thread) string {
	if t.prctl.named {
		return t.prctl.comm
	}
	name := filepath.Base(p.Path)
	return name[:min(len(name), commLen-1)]
}

func (p *Process) sysPrctl(a *[6]uint64) uint64 {
	t := &p.thr.cur.prctl
	rest := a[2] | a[3] | a[4]
	putInt := func(addr uint64, v int) uint64 {
		var b [4]byte
		b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		if !p.writeGuest(addr, b[:]) {
			return sysErr(eFAULT)
		}
		return 0
	}
	flag := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	switch a[0] {
	case prSetPdeathsig:
		if a[1] > 64 {
			return sysErr(eINVAL)
		}
		t.pdeathsig = int(a[1])
	case prGetPdeathsig:
		return putInt(a[1], t.pdeathsig)
	case prGetDumpable:
		return flag(!t.undumpable)
	case prSetDumpable:
		if a[1] > 1 {
			return sysErr(eINVAL)
		}
		for _, th := range p.thr.list {
			th.prctl.undumpable = a[1] == 0
		}
	case prGetKeepcaps:
		return flag(t.keepcaps)
	case prSetKeepcaps:
		if a[1] > 1 {
			return sysErr(eINVAL)
		}
		t.keepcaps = a[1] == 1
	case prSetName:
		name, e := p.cstringMax(a[1], commLen-1)
		if e != 0 {
			return sysErr(e)
		}
		t.comm, t.named = name, true
	case prGetName:
		var b [commLen]byte
		copy(b[:], p.comm(p.thr.cur))
		if !p.writeGuest(a[1], b[:]) {
			return sysErr(eFAULT)
		}
	case prGetSeccomp:
		return 0 // SECCOMP_MODE_DISABLED
	case prCapbsetRead:
		if a[1] > capLastCap {
			return sysErr(eINVAL)
		}
		return 1 // every capability is in the bounding set
	case prSetTimerslack:
		t.timerslack = a[1]
	case prGetTimerslack:
		if t.timerslack == 0 {
			return defaultTimerslack
		}
		return t.timerslack
	case prSetChildSubreaper:
		t.subreaper = a[1] != 0
	case prGetChildSubreaper:
		return putInt(a[1], int(flag(t.subreaper)))
	case prSetNoNewPrivs:
		if a[1] != 1 || rest != 0 {
			return sysErr(eINVAL)
		}
		t.noNewPrivs = true
	case prGetNoNewPrivs:
		if a[1]|rest != 0 {
			return sysErr(eINVAL)
		}
		return flag(t.noNewPrivs)
	case prSetTHPDisable:
		if rest != 0 {
			return sysErr(eINVAL)
		}
		t.thpDisable = a[1] != 0
	case prGetTHPDisable:
		if a[1]|rest != 0 {
			return sysErr(eINVAL)
		}
		return flag(t.thpDisable)
	case prSVESetVL, prSVEGetVL:
		return sysErr(eINVAL) // no SVE (AT_HWCAP says so)
	case prSetVMA:
		// Naming anonymous memory: the names show only in /proc, which
		// the guest has not.
		if a[1] != 0 || a[2]&4095 != 0 {
			return sysErr(eINVAL)
		}
	default:
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call prctl with option %d", a[0]))
		return sysErr(eINVAL)
	}
	return 0
}
