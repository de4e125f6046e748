//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// System calls on the process: exit, set_robust_list, resource limits,
// getrandom, uname, futex, sched_getaffinity, getcpu and arch_prctl (the
// process and user ids are constants in handlers, syscalls.go).

// sysExit is exit_group (and exit of the last thread): the run ends.
func (p *Process) sysExit(a *[6]uint64) uint64 {
	status := int(a[0] & 0xff)
	p.sysStop(StopExited, status, fmt.Sprintf("exited with status %d", status))
	return 0
}

func (p *Process) sysSetRobustList(a *[6]uint64) uint64 {
	if a[1] != 24 {
		return sysErr(eINVAL)
	}
	p.thr.cur.robust = a[0]
	return 0
}

// sysGetRobustList reports the robust-futex list head a thread of the
// process registered (0: none) and the size of a head.
func (p *Process) sysGetRobustList(a *[6]uint64) uint64 {
	ts := p.threadsOf(uint64(uint32(a[0])))
	if int32(a[0]) < 0 || ts == nil {
		return sysErr(eSRCH)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], ts[0].robust)
	if !p.writeGuest(a[1], b[:]) {
		return sysErr(eFAULT)
	}
	binary.LittleEndian.PutUint64(b[:], 24)
	if !p.writeGuest(a[2], b[:]) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) rlimit(res uint64) (cur, max uint64) {
	if res < uint64(len(p.limits)) && p.limits[res].set {
		return p.limits[res].cur, p.limits[res].max
	}
	return defaultRlimit(res)
}

// rlimitSet is a limit setrlimit or prlimit64 set.
type rlimitSet struct {
	set      bool
	cur, max uint64
}

// nofile is the descriptor limit in force: RLIMIT_NOFILE's soft limit,
// at most fdLimit.
func (p *Process) nofile() int {
	cur, _ := p.rlimit(7)
	return int(min(cur, fdLimit))
}

// defaultRlimit is the limit res has at the start.
func defaultRlimit(res uint64) (cur, max uint64) {
	const inf = ^uint64(0)
	switch res {
	case 3: // RLIMIT_STACK
		return stackSize, inf
	case 6: // RLIMIT_NPROC: the process's threads (threads.go)
		return maxThreads, maxThreads
	case 11: // RLIMIT_SIGPENDING (signals.go)
		return sigPendingLimit, sigPendingLimit
	case 7: // RLIMIT_NOFILE
		return fdLimit, fdLimit
	case 4: // RLIMIT_CORE: no core files (the usual soft limit)
		return 0, inf
	case 8: // RLIMIT_MEMLOCK (sys_ids.go)
		return memlockLimit, memlockLimit
	}
	return inf, inf
}

// sysPrlimit64 is prlimit64(pid, resource, new, old): the old limit is
// written after the new one took effect, as in Linux. A limit may be
// lowered, and raised up to its hard limit (raising that is EPERM: no
// CAP_SYS_RESOURCE). The layer acts on RLIMIT_NOFILE (descriptors beyond
// it EMFILE), and never lets RLIMIT_NPROC and RLIMIT_SIGPENDING past
// its own bounds (threads.go, signals.go); the others are only kept.
func (p *Process) sysPrlimit64(a *[6]uint64) uint64 {
	pid, res := int32(a[0]), uint32(a[1])
	var cur, max uint64
	if a[2] != 0 {
		b, ok := p.readGuest(a[2], 16)
		if !ok {
			return sysErr(eFAULT)
		}
		cur, max = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	}
	switch {
	case res >= 16:
		return sysErr(eINVAL)
	case a[2] != 0 && cur > max:
		return sysErr(eINVAL)
	case pid != 0 && pid != guestPID:
		return sysErr(eSRCH)
	}
	oldCur, oldMax := p.rlimit(uint64(res))
	if a[2] != 0 {
		switch {
		case max > oldMax:
			return sysErr(ePERM)
		case res == 7 && max > fdLimit: // RLIMIT_NOFILE past nr_open
			return sysErr(ePERM)
		}
		p.limits[res] = rlimitSet{true, cur, max}
	}
	if a[3] != 0 && !p.put64(a[3], oldCur, oldMax) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysGetrlimit(a *[6]uint64) uint64 {
	return p.sysPrlimit64(&[6]uint64{0, a[0], 0, a[1]})
}

func (p *Process) sysSetrlimit(a *[6]uint64) uint64 {
	if a[1] == 0 {
		return sysErr(eFAULT)
	}
	return p.sysPrlimit64(&[6]uint64{0, a[0], a[1], 0})
}

func (p *Process) sysGetrandom(a *[6]uint64) uint64 {
	const grndRandom, grndInsecure = 2, 4
	if flags := uint32(a[2]); flags&^7 != 0 || flags&(grndRandom|grndInsecure) == grndRandom|grndInsecure {
		return sysErr(eINVAL)
	}
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

// sysSysinfo fills struct sysinfo (LP64: 112 bytes): uptime from the
// fake boot-time clock, no load, the memory cap as RAM (4 GiB without one)
// and what the guest has not mapped of it as free, no swap, one process,
// mem_unit 1. glibc's qsort and get_phys_pages read it.
func (p *Process) sysSysinfo(a *[6]uint64) uint64 {
	b := make([]byte, 112)
	le := binary.LittleEndian
	t, _ := p.now(7) // CLOCK_BOOTTIME
	le.PutUint64(b[0:], uint64((t+1e9-1)/1e9))
	total := p.ramTotal()
	le.PutUint64(b[32:], total)                         // totalram
	le.PutUint64(b[40:], total-min(total, p.vm.used())) // freeram
	le.PutUint16(b[80:], 1)                             // procs
	le.PutUint32(b[104:], 1)                            // mem_unit
	if !p.writeGuest(a[0], b) {
		return sysErr(eFAULT)
	}
	return 0
}

// ramTotal is the machine's RAM as sysinfo and /proc/meminfo give it: the
// memory cap, 4 GiB without one.
func (p *Process) ramTotal() uint64 {
	if p.vm.max == 0 {
		return 4 << 30
	}
	return p.vm.max
}

// sysGetgroups: the guest is in no supplementary group (its own, getgid,
// is not listed, as for a user whose groups are only that one).
func (p *Process) sysGetgroups(a *[6]uint64) uint64 {
	if int32(a[0]) < 0 {
		return sysErr(eINVAL)
	}
	return 0
}

// The kernel release uname reports, and the one a thread of personality
// UNAME26 sees (Linux's override_release: 2.6.(60 + minor)).
const (
	kernelRelease   = "6.1.0-sframesim"
	kernelRelease26 = "2.6.61-sframesim"
)

func (p *Process) sysUname(a *[6]uint64) uint64 {
	var b [6 * 65]byte
	release, machine := kernelRelease, p.abi.machine
	if p.thr.cur.persona&uname26 != 0 {
		release = kernelRelease26
	}
	if p.thr.cur.persona&perMask == perLinux32 && machine == "x86_64" {
		machine = "i686" // override_architecture
	}
	for i, s := range []string{"Linux", "sframesim", release, "#1 SMP PREEMPT_DYNAMIC", machine, "(none)"} {
		copy(b[65*i:65*i+64], s)
	}
	if !p.writeGuest(a[0], b[:]) {
		return sysErr(eFAULT)
	}
	return 0
}

// Futex operations.
const (
	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexClockRealtime = 256
)

// sysFutex is futex(uaddr, op, val, timeout or val2, uaddr2, val3). The
// PRIVATE flag makes no difference (one process); with one thread and no
// timer that could interrupt it, a wait that would block forever is a
// deadlock and one with a timeout times out at once.
func (p *Process) sysFutex(a *[6]uint64) uint64 {
	uaddr, op, val := a[0], a[1]&0x7f, uint32(a[2])
	realtime := a[1]&futexClockRealtime != 0
	if realtime && op != futexWait && op != futexWaitBitset {
		return sysErr(eNOSYS)
	}
	if uaddr%4 != 0 {
		return sysErr(eINVAL)
	}
	switch op {
	case futexWake:
		return uint64(p.futexWake(uaddr, int(int32(val)), ^uint32(0)))
	case futexWakeBitset:
		if uint32(a[5]) == 0 {
			return sysErr(eINVAL)
		}
		return uint64(p.futexWake(uaddr, int(int32(val)), uint32(a[5])))
	case futexWait, futexWaitBitset:
		mask := ^uint32(0)
		if op == futexWaitBitset {
			if mask = uint32(a[5]); mask == 0 {
				return sysErr(eINVAL)
			}
		}
		deadline := int64(-1)
		if a[3] != 0 {
			d, e := p.timespec(a[3])
			if e != 0 {
				return sysErr(e)
			}
			if op == futexWait { // relative
				deadline = p.base() + int64(d)
			} else { // absolute, on CLOCK_MONOTONIC or CLOCK_REALTIME
				clk := uint64(1)
				if realtime {
					clk = 0
				}
				now, _ := p.now(clk)
				deadline = p.base() + max(0, int64(d)-now)
			}
		}
		return p.futexWait(uaddr, val, mask, deadline)
	case futexRequeue, futexCmpRequeue:
		if op == futexCmpRequeue {
			w, ok := p.readGuest(uaddr, 4)
			if !ok {
				return sysErr(eFAULT)
			}
			if binary.LittleEndian.Uint32(w) != uint32(a[5]) {
				return sysErr(eAGAIN)
			}
		}
		nwake, nmove := int(int32(val)), int(int32(a[3]))
		if nwake < 0 || nmove < 0 || a[4]%4 != 0 {
			return sysErr(eINVAL)
		}
		n := 0
		for _, t := range p.waiters(uaddr, ^uint32(0)) {
			switch {
			case n < nwake:
				t.wake(0)
			case n < nwake+nmove:
				t.futex = a[4]
			default:
				return uint64(n)
			}
			n++
		}
		return uint64(n)
	case futexWakeOp:
		return p.futexWakeOp(uaddr, int(int32(val)), int(int32(a[3])), a[4], uint32(a[5]))
	default:
		return sysErr(eNOSYS)
	}
}

// futexWait is FUTEX_WAIT(_BITSET) until deadline on the base clock (-1:
// none). A signal interrupts it with ERESTARTSYS (restarted after a
// SA_RESTART handler) or, with a timeout, ERESTART_RESTARTBLOCK (EINTR
// after a handler; without one it goes on through restart_syscall).
func (p *Process) futexWait(uaddr uint64, val, mask uint32, deadline int64) uint64 {
	w, ok := p.readGuest(uaddr, 4)
	if !ok {
		return sysErr(eFAULT)
	}
	if binary.LittleEndian.Uint32(w) != val {
		return sysErr(eAGAIN)
	}
	if _, timer := p.nextRealExpiry(); p.live() == 1 && !timer {
		if deadline >= 0 {
			return sysErr(eTIMEDOUT)
		}
		p.sysStop(StopDeadlock, 0, fmt.Sprintf("deadlock: futex wait on %#x with no other thread to wake it", uaddr))
		return 0
	}
	t := p.thr.cur
	p.waitOn(uaddr, mask, deadline, fmt.Sprintf("futex wait on %#x", uaddr))
	if deadline >= 0 {
		t.intr = eRestartBlock
		t.restart = restartBlock{kind: restartFutex, deadline: deadline, addr: uaddr, val: val, bitset: mask}
	}
	return 0
}

// futexWakeOp is FUTEX_WAKE_OP: it changes the word at uaddr2 by the
// operation encoded in code, wakes nwake waiters of uaddr and, if the old
// value of uaddr2 passes the comparison, nwake2 waiters of uaddr2.
func (p *Process) futexWakeOp(uaddr uint64, nwake, nwake2 int, uaddr2 uint64, code uint32) uint64 {
	if uaddr2%4 != 0 {
		return sysErr(eINVAL)
	}
	w, ok := p.readGuest(uaddr2, 4)
	if !ok || !p.writable(uaddr2, 4) {
		return sysErr(eFAULT)
	}
	old := binary.LittleEndian.Uint32(w)
	sext := func(v uint32) uint32 { return uint32(int32(v<<20) >> 20) } // 12-bit fields
	op, cmp, oparg, cmparg := code>>28&0xf, code>>24&0xf, sext(code>>12&0xfff), sext(code&0xfff)
	if op&8 != 0 { // FUTEX_OP_OPARG_SHIFT
		if oparg > 31 {
			return sysErr(eINVAL)
		}
		oparg, op = 1<<oparg, op&7
	}
	var nv uint32
	switch op {
	case 0:
		nv = oparg
	case 1:
		nv = old + oparg
	case 2:
		nv = old | oparg
	case 3:
		nv = old &^ oparg
	case 4:
		nv = old ^ oparg
	default:
		return sysErr(eNOSYS)
	}
	binary.LittleEndian.PutUint32(w, nv)
	p.writeGuest(uaddr2, w)
	n := p.futexWake(uaddr, nwake, ^uint32(0))
	o, c := int32(old), int32(cmparg)
	var pass bool
	switch cmp {
	case 0:
		pass = o == c
	case 1:
		pass = o != c
	case 2:
		pass = o < c
	case 3:
		pass = o <= c
	case 4:
		pass = o > c
	case 5:
		pass = o >= c
	default:
		return sysErr(eNOSYS)
	}
	if pass {
		n += p.futexWake(uaddr2, nwake2, ^uint32(0))
	}
	return uint64(n)
}

func (p *Process) sysSchedGetaffinity(a *[6]uint64) uint64 {
	if p.threadsOf(a[0]) == nil {
		return sysErr(eSRCH) // no such thread (of ours: the only process)
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

// sysExecve is execve(path, argv, envp): what Linux finds wrong with the
// file before it would replace the process (ENOENT, ENOTDIR, ELOOP,
// EACCES for a directory or a file without an execute bit) is answered,
// so a program trying the directories of PATH in turn goes on; an
// executable file stops the run, named, as only one program is emulated.
func (p *Process) sysExecve(a *[6]uint64) uint64 {
	return p.execveat(atFDCWD, a[0], 0)
}

// sysExecveat is execveat(dirfd, path, argv, envp, flags).
func (p *Process) sysExecveat(a *[6]uint64) uint64 {
	const atEmptyPath, atSymlinkNofollow = 0x1000, 0x100
	if a[4]&^uint64(atEmptyPath|atSymlinkNofollow) != 0 {
		return sysErr(eINVAL)
	}
	return p.execveat(int32(a[0]), a[1], a[4])
}

// entryHead returns the first n bytes (fewer if it is shorter) of the
// regular file e names.
func (p *Process) entryHead(e ovEntry, n int) []byte {
	if e.node != nil {
		b := make([]byte, 0, n)
		e.node.data.each(0, min(int64(n), e.node.data.Len()), func(piece []byte, _ int64) bool {
			b = append(b, piece...)
			return true
		})
		return b
	}
	sf, errno := p.openShared(e.vf)
	if errno != 0 {
		return nil
	}
	defer p.released(sf)
	f := sf.file()
	if f == nil {
		return nil
	}
	b := make([]byte, n)
	k, _ := f.ReadAt(b, 0)
	return b[:k]
}

func (p *Process) execveat(dirfd int32, pathAddr, flags uint64) uint64 {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	name := path
	if path == "" && flags&atEmptyPath != 0 {
		f := p.fds[int(dirfd)]
		if f == nil {
			return sysErr(eBADF)
		}
		name = f.path
	} else {
		abs, e := p.resolve(dirfd, path)
		if e != 0 {
			return sysErr(e)
		}
		ent, e := p.lookup(abs, flags&atSymlinkNofollow == 0)
		switch {
		case e != 0:
			return sysErr(e)
		case ent.isDir():
			return sysErr(eACCES)
		case ent.node != nil && (ent.node.kind != nodeFile || !allows(ent.node, 1)):
			return sysErr(eACCES)
		case ent.node == nil && (ent.vf.fi == nil || !ent.vf.fi.Mode().IsRegular() || statMode(ent.vf.fi)&0o111 == 0):
			return sysErr(eACCES)
		}
		// Neither an ELF file nor a script (#!): no binary format takes
		// it (search_binary_handler).
		if head := p.entryHead(ent, 4); string(head) != "\x7fELF" && (len(head) < 2 || string(head[:2]) != "#!") {
			return sysErr(eNOEXEC)
		}
		name = abs
	}
	p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call execve of %s: only one program is emulated, not another in its place", name))
	return 0
}
