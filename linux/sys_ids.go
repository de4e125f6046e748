//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// Ids, children, priorities and scheduling, as Linux answers them for
// the guest: a process of an unprivileged user (uid and gid 1000, no
// supplementary groups, no capabilities), session and process-group
// leader, alone on one CPU, with no children (it cannot fork).

// ids is the answer to a set*id call that asks for the ids in want (the
// real, effective and saved ids, or -1 for "unchanged"): an unprivileged
// process may only set them to ones it has, all own here.
func ids(own uint64, want ...uint64) uint64 {
	for _, id := range want {
		switch {
		case uint32(id) == ^uint32(0):
		case uint32(id) != uint32(own):
			return sysErr(ePERM)
		}
	}
	return 0
}

func (p *Process) sysSetuid(a *[6]uint64) uint64 {
	if uint32(a[0]) == ^uint32(0) {
		return sysErr(eINVAL)
	}
	return ids(guestUID, a[0])
}

func (p *Process) sysSetgid(a *[6]uint64) uint64 {
	if uint32(a[0]) == ^uint32(0) {
		return sysErr(eINVAL)
	}
	return ids(guestGID, a[0])
}

func (p *Process) sysSetreuid(a *[6]uint64) uint64  { return ids(guestUID, a[0], a[1]) }
func (p *Process) sysSetregid(a *[6]uint64) uint64  { return ids(guestGID, a[0], a[1]) }
func (p *Process) sysSetresuid(a *[6]uint64) uint64 { return ids(guestUID, a[0], a[1], a[2]) }
func (p *Process) sysSetresgid(a *[6]uint64) uint64 { return ids(guestGID, a[0], a[1], a[2]) }

// getres writes id as the real, effective and saved id.
func (p *Process) getres(id uint32, a *[6]uint64) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], id)
	for _, addr := range a[:3] {
		if !p.writeGuest(addr, b[:]) {
			return sysErr(eFAULT)
		}
	}
	return 0
}

func (p *Process) sysGetresuid(a *[6]uint64) uint64 { return p.getres(guestUID, a) }
func (p *Process) sysGetresgid(a *[6]uint64) uint64 { return p.getres(guestGID, a) }

// sysSetgroups: setting supplementary groups needs CAP_SETGID.
func (p *Process) sysSetgroups(a *[6]uint64) uint64 {
	if uint32(a[0]) > 65536 { // NGROUPS_MAX
		return sysErr(eINVAL)
	}
	return sysErr(ePERM)
}

// sysSetsid and sysSetpgid: the process leads its session already, so it
// can neither make a new one nor move to another group (EPERM).
func (p *Process) sysSetsid(a *[6]uint64) uint64 { return sysErr(ePERM) }

func (p *Process) sysSetpgid(a *[6]uint64) uint64 {
	switch {
	case int64(a[1]) < 0 || int32(a[1]) < 0:
		return sysErr(eINVAL)
	case a[0] != 0 && a[0] != guestPID:
		return sysErr(eSRCH)
	}
	return sysErr(ePERM)
}

// Wait options (include/uapi/linux/wait.h).
const (
	wNOHANG    = 1
	wSTOPPED   = 2 // WUNTRACED for wait4
	wEXITED    = 4
	wCONTINUED = 8
	wNOWAIT    = 0x01000000
	wKernel    = 0xe0000000 // __WNOTHREAD, __WALL, __WCLONE
)

// sysWait4 and sysWaitid: no children (ECHILD), after Linux's checks of
// the options.
func (p *Process) sysWait4(a *[6]uint64) uint64 {
	if uint32(a[2])&^uint32(wNOHANG|wSTOPPED|wCONTINUED|wKernel) != 0 {
		return sysErr(eINVAL)
	}
	return sysErr(eCHILD)
}

func (p *Process) sysWaitid(a *[6]uint64) uint64 {
	opts := uint32(a[3])
	switch {
	case opts&^uint32(wNOHANG|wSTOPPED|wEXITED|wCONTINUED|wNOWAIT|wKernel) != 0,
		opts&(wEXITED|wSTOPPED|wCONTINUED) == 0,
		a[0] > 3: // P_ALL, P_PID, P_PGID, P_PIDFD
		return sysErr(eINVAL)
	}
	return sysErr(eCHILD)
}

// threadsOf returns the threads a PRIO_PROCESS, sched_* or similar call
// naming who (0: the caller) means, nil if none.
func (p *Process) threadsOf(who uint64) []*thread {
	if who == 0 {
		return []*thread{p.thr.cur}
	}
	for _, t := range p.thr.list {
		if uint64(t.tid) == who && t.state != finished {
			return []*thread{t}
		}
	}
	return nil
}

// priorityTargets returns the threads getpriority and setpriority name:
// PRIO_PROCESS a thread, PRIO_PGRP and PRIO_USER all of them; an errno
// for an unknown which (EINVAL) or who (ESRCH).
func (p *Process) priorityTargets(which, who uint64) ([]*thread, int) {
	// which is an int, who an id_t: 32 bits of their registers.
	which, who = uint64(uint32(which)), uint64(uint32(who))
	var ts []*thread
	switch which {
	case 0: // PRIO_PROCESS
		ts = p.threadsOf(who)
	case 1, 2: // PRIO_PGRP, PRIO_USER
		if who == 0 || which == 1 && who == guestPID || which == 2 && who == guestUID {
			for _, t := range p.thr.list {
				if t.state != finished {
					ts = append(ts, t)
				}
			}
		}
	default:
		return nil, eINVAL
	}
	if len(ts) == 0 {
		return nil, eSRCH
	}
	return ts, 0
}

// sysGetpriority returns 20 - nice of the highest priority named.
func (p *Process) sysGetpriority(a *[6]uint64) uint64 {
	ts, e := p.priorityTargets(a[0], a[1])
	if e != 0 {
		return sysErr(e)
	}
	best := 19
	for _, t := range ts {
		best = min(best, t.nice)
	}
	return uint64(20 - best)
}

// sysSetpriority sets the nice value (clamped to -20..19); lowering it
// needs a capability the guest lacks (EACCES), raising it does not.
func (p *Process) sysSetpriority(a *[6]uint64) uint64 {
	ts, e := p.priorityTargets(a[0], a[1])
	if e != 0 {
		return sysErr(e)
	}
	nice := min(max(int(int32(a[2])), -20), 19)
	for _, t := range ts {
		if nice < t.nice {
			return sysErr(eACCES)
		}
	}
	for _, t := range ts {
		t.nice = nice
	}
	return 0
}

// Scheduling policies (include/uapi/linux/sched.h).
const (
	schedOther, schedFIFO, schedRR, schedBatch, schedIdle, schedDeadline = 0, 1, 2, 3, 5, 6
	schedResetOnFork                                                     = 0x40000000
)

func (p *Process) sysSchedGetscheduler(a *[6]uint64) uint64 {
	if int32(a[0]) < 0 {
		return sysErr(eINVAL)
	}
	ts := p.threadsOf(a[0])
	if ts == nil {
		return sysErr(eSRCH)
	}
	return uint64(ts[0].policy)
}

func (p *Process) sysSchedGetparam(a *[6]uint64) uint64 {
	if int32(a[0]) < 0 || a[1] == 0 {
		return sysErr(eINVAL)
	}
	if p.threadsOf(a[0]) == nil {
		return sysErr(eSRCH)
	}
	if !p.writeGuest(a[1], make([]byte, 4)) {
		return sysErr(eFAULT)
	}
	return 0
}

// schedSet applies policy (-1: the thread's own) with the sched_param at
// param: the normal policies with priority 0; the real-time ones need
// RLIMIT_RTPRIO, which is 0 (EPERM).
func (p *Process) schedSet(pid uint64, policy int, param uint64) uint64 {
	if int32(pid) < 0 || param == 0 {
		return sysErr(eINVAL)
	}
	b, ok := p.readGuest(param, 4)
	if !ok {
		return sysErr(eFAULT)
	}
	ts := p.threadsOf(pid)
	if ts == nil {
		return sysErr(eSRCH)
	}
	if policy < 0 {
		policy = ts[0].policy
	}
	prio := int32(binary.LittleEndian.Uint32(b))
	switch policy &^ schedResetOnFork {
	case schedOther, schedBatch, schedIdle:
		if prio != 0 {
			return sysErr(eINVAL)
		}
	case schedFIFO, schedRR:
		if prio < 1 || prio > 99 {
			return sysErr(eINVAL)
		}
		return sysErr(ePERM)
	default:
		return sysErr(eINVAL)
	}
	ts[0].policy = policy &^ schedResetOnFork
	return 0
}

func (p *Process) sysSchedSetscheduler(a *[6]uint64) uint64 {
	if int32(a[1]) < 0 {
		return sysErr(eINVAL)
	}
	return p.schedSet(a[0], int(int32(a[1])), a[2])
}

func (p *Process) sysSchedSetparam(a *[6]uint64) uint64 { return p.schedSet(a[0], -1, a[1]) }

// schedPriorities returns a policy's range of static priorities (1..99
// for the real-time ones, 0 for the others); false for an unknown one.
func schedPriorities(policy uint64) (lo, hi uint64, ok bool) {
	switch policy {
	case schedFIFO, schedRR:
		return 1, 99, true
	case schedOther, schedBatch, schedIdle, schedDeadline:
		return 0, 0, true
	}
	return 0, 0, false
}

func (p *Process) sysSchedGetPriorityMax(a *[6]uint64) uint64 {
	if _, hi, ok := schedPriorities(a[0]); ok {
		return hi
	}
	return sysErr(eINVAL)
}

func (p *Process) sysSchedGetPriorityMin(a *[6]uint64) uint64 {
	if lo, _, ok := schedPriorities(a[0]); ok {
		return lo
	}
	return sysErr(eINVAL)
}

// sysSchedSetaffinity accepts a mask with the one CPU (CPU 0) in it.
func (p *Process) sysSchedSetaffinity(a *[6]uint64) uint64 {
	if a[1] == 0 {
		return sysErr(eINVAL)
	}
	b, ok := p.readGuest(a[2], 1)
	if !ok {
		return sysErr(eFAULT)
	}
	if p.threadsOf(a[0]) == nil {
		return sysErr(eSRCH)
	}
	if b[0]&1 == 0 {
		return sysErr(eINVAL)
	}
	return 0
}

// memlockLimit is RLIMIT_MEMLOCK's default since Linux 5.16: 8 MiB.
const memlockLimit = 8 << 20

// sysMlock locks nothing (guest memory is never swapped out) but checks
// what Linux checks: the range is mapped (ENOMEM) and within the limit.
func (p *Process) sysMlock(a *[6]uint64) uint64 {
	lo, hi := a[0]&^4095, (a[0]+a[1]+4095)&^4095
	switch {
	case hi < lo:
		return sysErr(eINVAL)
	case hi-lo > memlockLimit:
		return sysErr(eNOMEM)
	case !p.vm.allows(lo, hi, 0):
		return sysErr(eNOMEM)
	}
	return 0
}

func (p *Process) sysMunlock(a *[6]uint64) uint64 {
	lo, hi := a[0]&^4095, (a[0]+a[1]+4095)&^4095
	if hi < lo {
		return sysErr(eINVAL)
	}
	if !p.vm.allows(lo, hi, 0) {
		return sysErr(eNOMEM)
	}
	return 0
}

// sysMlockall: MCL_CURRENT needs the memory in use within the limit.
func (p *Process) sysMlockall(a *[6]uint64) uint64 {
	const mclCurrent, mclFuture, mclOnfault = 1, 2, 4
	if a[0] == 0 || a[0]&^(mclCurrent|mclFuture|mclOnfault) != 0 || a[0] == mclOnfault {
		return sysErr(eINVAL)
	}
	if a[0]&mclCurrent != 0 && p.vm.used() > memlockLimit {
		return sysErr(eNOMEM)
	}
	return 0
}

// sysMlock2 is mlock with flags: MLOCK_ONFAULT, or none.
func (p *Process) sysMlock2(a *[6]uint64) uint64 {
	const mlockOnfault = 1
	if a[2]&^mlockOnfault != 0 {
		return sysErr(eINVAL)
	}
	return p.sysMlock(a)
}

// Capability sets (include/uapi/linux/capability.h): the guest's user has
// none, in any set.
const (
	capVersion1 = 0x19980330 // one 32-bit set of each kind
	capVersion2 = 0x20071026 // two, as version 3 (deprecated)
	capVersion3 = 0x20080522
)

// capHeader checks a cap_user_header_t {version, pid} at hdr as Linux
// does: an unknown version is replaced with the one it prefers
// (EINVAL); it returns how many 12-byte cap_user_data_t the version has
// and the pid.
func (p *Process) capHeader(hdr uint64) (words int, pid int32, errno int) {
	b, ok := p.readGuest(hdr, 8)
	if !ok {
		return 0, 0, eFAULT
	}
	switch binary.LittleEndian.Uint32(b) {
	case capVersion1:
		words = 1
	case capVersion2, capVersion3:
		words = 2
	default:
		var v [4]byte
		binary.LittleEndian.PutUint32(v[:], capVersion3)
		if !p.writeGuest(hdr, v[:]) {
			return 0, 0, eFAULT
		}
		return 0, 0, eINVAL
	}
	return words, int32(binary.LittleEndian.Uint32(b[4:])), 0
}

// sysCapget reports the capabilities of the process or one of its
// threads: none. With no data pointer it only checks the header (a
// program asks so which version the kernel prefers).
func (p *Process) sysCapget(a *[6]uint64) uint64 {
	words, pid, e := p.capHeader(a[0])
	switch {
	case a[1] == 0 && (e == 0 || e == eINVAL):
		return 0
	case e != 0:
		return sysErr(e)
	case pid < 0:
		return sysErr(eINVAL)
	case p.threadsOf(uint64(pid)) == nil:
		return sysErr(eSRCH)
	case !p.writeGuest(a[1], make([]byte, 12*words)):
		return sysErr(eFAULT)
	}
	return 0
}

// sysCapset sets the calling thread's capabilities: only to none, what
// it has (a process without CAP_SETPCAP cannot add to any set).
func (p *Process) sysCapset(a *[6]uint64) uint64 {
	words, pid, e := p.capHeader(a[0])
	if e != 0 {
		return sysErr(e)
	}
	if pid != 0 && int(pid) != p.thr.cur.tid {
		return sysErr(ePERM) // another task's: not since Linux 2.6.24
	}
	b, ok := p.readGuest(a[1], uint64(12*words))
	if !ok {
		return sysErr(eFAULT)
	}
	for _, c := range b {
		if c != 0 {
			return sysErr(ePERM)
		}
	}
	return 0
}

// Personalities (include/uapi/linux/personality.h). personalityInert are
// the flags Linux applies only when it executes a program (the memory
// layout) or never reads: here, where nothing is executed, they change
// nothing.
const (
	personalityQuery = 0xffffffff
	perLinux32       = 0x0008
	perMask          = 0x00ff
	uname26          = 0x0020000
	readImpliesExec  = 0x0400000
	stickyTimeouts   = 0x4000000
	personalityInert = 0x0040000 | // ADDR_NO_RANDOMIZE: the layout is fixed anyway
		0x0080000 | // FDPIC_FUNCPTRS
		0x0100000 | // MMAP_PAGE_ZERO
		0x0200000 | // ADDR_COMPAT_LAYOUT
		0x0800000 | // ADDR_LIMIT_32BIT
		0x1000000 | // SHORT_INODE
		0x2000000 | // WHOLE_SECONDS
		0x8000000 // ADDR_LIMIT_3GB
)

// sysPersonality sets the calling thread's personality and returns the
// one it had (0xffffffff only asks). What changes the behaviour of the
// running program is emulated: UNAME26 and, on x86-64, PER_LINUX32 in
// uname. READ_IMPLIES_EXEC and STICKY_TIMEOUTS are not: the run stops
// there rather than going on unlike Linux.
func (p *Process) sysPersonality(a *[6]uint64) uint64 {
	t := p.thr.cur
	old, v := t.persona, uint32(a[0])
	if v == personalityQuery {
		return uint64(old)
	}
	if v&perMask == perLinux32 && p.abi.machine == "aarch64" {
		return sysErr(eINVAL) // a CPU without AArch32 at EL0, as arm64's own check
	}
	if bad := v &^ (perMask | uname26 | personalityInert); bad != 0 {
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call personality(%#x): the flags %#x (READ_IMPLIES_EXEC %#x, STICKY_TIMEOUTS %#x) are not emulated", v, bad, readImpliesExec, stickyTimeouts))
		return sysErr(eINVAL)
	}
	t.persona = v
	return uint64(old)
}
