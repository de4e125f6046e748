//go:build cgo

package linux

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// Threads, as Linux runs them, on one emulated CPU: clone with the flags
// of glibc's pthread_create, futexes, and one deterministic scheduler
// (sched.go). The running thread's registers are the engine's; the others
// keep theirs in an emu.CPUContext (thread pointer included: FS base,
// TPIDR_EL0). Threads are switched between two emu.Engine.Start calls,
// never inside one, so every instruction record of a Start belongs to one
// thread.

// DefaultQuantum is Config.Quantum's default: a thread runs at most that
// many instructions before the next runnable one gets the CPU.
const DefaultQuantum = 1_000_000

// threadState is where a thread stands.
type threadState int

const (
	running  threadState = iota // runnable (or the running one)
	blocked                     // waits in a futex or a sleep
	finished                    // called exit
)

// thread is one guest thread.
type thread struct {
	tid      int
	state    threadState
	ctx      *emu.CPUContext // the registers while not running
	pc       uint64          // the PC in ctx
	clearTID uint64          // set_tid_address / CLONE_CHILD_CLEARTID
	sig      threadSignals   // mask, pending signals, alternate stack (signals.go)
	insns    uint64          // instructions it executed
	prctl    prctlState      // its names and flags (sys_prctl.go)
	nice     int             // setpriority (sys_ids.go)
	policy   int             // sched_setscheduler: SCHED_OTHER, BATCH or IDLE
	persona  uint32          // personality (sys_ids.go)
	robust   uint64          // set_robust_list's head (not inherited)
	ran      uint64          // instructions since it was scheduled in
	start    int64           // CLOCK_BOOTTIME when it was made, in ns (/proc's starttime)

	// While blocked: the futex word waited on (0: a sleep), the bitset,
	// the order of waiting (FIFO wakeups), the deadline on the base clock
	// (see Process.base; -1: none) and the system call's result once woken.
	futex    uint64
	bitset   uint32
	seq      uint64
	deadline int64
	ret      uint64
	setRet   bool // deliver ret in the return register when scheduled in
	why      string
	sigWait  bool // it waits for a signal (pause, sigsuspend, sigwait, a signalfd, the only thread's poll)
	// wakeAt: when a timer it waits on expires (a timerfd it reads or
	// polls; -1: none): the scheduler wakes it then to look again, its
	// call's own deadline aside.
	wakeAt int64
	// What a signal makes of the call (an ERESTART* code or eINTR:
	// signals.go), the result when the deadline passes, and what
	// completes the call when the thread gets the CPU back (resume, with
	// its arguments).
	intr       int
	timeoutRet uint64
	resume     resumeKind
	wargs      [8]uint64

	// The last system call (to restart it: its instruction, number and
	// first argument), the ERESTART* code it returned until the return
	// to user mode acts on it, and what restart_syscall continues.
	sysPC, sysNr, sysArg0 uint64
	restarting            int
	restart               restartBlock

	// Set by clone in the system call hook; the context is made when the
	// engine has stopped (Process.startChildren).
	newSP, newTLS uint64
	setTLS, fresh bool
}

// threadTable is a process's threads, in tid order (creation order).
type threadTable struct {
	// list: the threads that have not exited, in tid order, and the
	// running one until the scheduler switches away from it after it
	// exited (retire). Exited threads leave only a few words each
	// (exited), and past keptExited only their count and instructions
	// (exitedMore, exitedInsns): a program that creates and joins
	// threads without end costs neither memory nor time per past thread.
	list        []*thread
	exited      []ExitedThread
	exitedMore  int
	exitedInsns uint64
	cur         *thread
	nextTID     int
	seq         uint64
	resched     bool // switch threads once the engine has stopped
	yield       bool // the running thread gave up the CPU (sched_yield, blocking)
	switches    uint64
}

// initThreads makes the main thread, tid guestPID.
func (p *Process) initThreads() {
	t := &thread{tid: guestPID, deadline: -1, start: bootStart}
	p.thr = threadTable{list: []*thread{t}, cur: t, nextTID: guestPID + 1}
}

// keptExited is how many exited threads Threads lists by tid.
const keptExited = 1024

// ExitedThread is a thread that exited: its tid and the instructions it
// executed.
type ExitedThread struct {
	TID   int
	Insns uint64
}

// retire moves t, which exited and no longer runs, out of the list of
// threads.
func (p *Process) retire(t *thread) {
	for i, x := range p.thr.list {
		if x == t {
			p.thr.list = append(p.thr.list[:i], p.thr.list[i+1:]...)
			break
		}
	}
	if len(p.thr.exited) < keptExited {
		p.thr.exited = append(p.thr.exited, ExitedThread{TID: t.tid, Insns: t.insns})
		return
	}
	p.thr.exitedMore++
	p.thr.exitedInsns += t.insns
}

// ThreadCount returns how many threads the process has had, the main
// thread included, and of those Threads does not list (beyond the first
// keptExited that exited) how many there were and the instructions they
// executed.
func (p *Process) ThreadCount() (total, unlisted int, unlistedInsns uint64) {
	n := len(p.thr.list) + len(p.thr.exited) + p.thr.exitedMore
	return n, p.thr.exitedMore, p.thr.exitedInsns
}

// Thread describes one guest thread, for reports.
type Thread struct {
	TID   int
	Insns uint64 // instructions it executed
	State string // "running", "runnable", "blocked: ...", "exited"
	PC    uint64 // where it runs or will go on (0 once exited)
}

// Threads returns the process's threads so far, in tid order: those that
// have not exited, and the first keptExited that did (ThreadCount).
func (p *Process) Threads() []Thread {
	out := make([]Thread, 0, len(p.thr.list)+len(p.thr.exited))
	for _, x := range p.thr.exited {
		out = append(out, Thread{TID: x.TID, Insns: x.Insns, State: "exited"})
	}
	for _, t := range p.thr.list {
		th := Thread{TID: t.tid, Insns: t.insns, State: t.describe(t == p.thr.cur)}
		switch {
		case t.state == finished:
		case t == p.thr.cur:
			th.PC, _ = p.Engine.PC()
		default:
			th.PC = t.pc
		}
		out = append(out, th)
	}
	slices.SortFunc(out, func(a, b Thread) int { return cmp.Compare(a.TID, b.TID) })
	return out
}

// CurrentThread returns the tid of the thread the engine runs.
func (p *Process) CurrentThread() int { return p.thr.cur.tid }

// ThreadRegs is a copy of one thread's registers at a stop: reading it
// never touches the engine.
type ThreadRegs struct {
	Regs []arch.Reg // DWARF numbers: the architecture's Registers
	Vals []uint64   // in the order of Regs
}

// Get returns register r by DWARF number (false: not among Regs).
func (t *ThreadRegs) Get(r arch.Reg) (uint64, bool) {
	for i, x := range t.Regs {
		if x == r {
			return t.Vals[i], true
		}
	}
	return 0, false
}

// ThreadRegs returns thread tid's registers (Arch.Registers) as it stands
// between two runs: the engine's for the running thread, for another
// those saved when it was switched out. A thread blocked in a system call
// stands at the instruction after it, the call's result not yet in its
// return register. The engine's registers are as before on return.
func (p *Process) ThreadRegs(tid int) (*ThreadRegs, error) {
	var t *thread
	for _, x := range p.thr.list {
		if x.tid == tid {
			t = x
		}
	}
	switch {
	case t == nil && tid >= guestPID && tid < p.thr.nextTID:
		return nil, fmt.Errorf("thread %d has exited", tid) // tids are given in order, never again
	case t == nil:
		return nil, fmt.Errorf("no thread %d", tid)
	case t.state == finished:
		return nil, fmt.Errorf("thread %d has exited", tid)
	case t != p.thr.cur && t.ctx == nil:
		return nil, fmt.Errorf("thread %d has not started yet", tid)
	}
	r := &ThreadRegs{Regs: p.Arch.Registers, Vals: make([]uint64, len(p.Arch.Registers))}
	ids := make([]emu.RegID, len(r.Regs))
	for i, reg := range r.Regs {
		ids[i] = p.Engine.RegID(reg)
	}
	if t == p.thr.cur {
		return r, p.Engine.ReadRegs(ids, r.Vals)
	}
	return r, p.Engine.ReadContextRegs(t.ctx, ids, r.Vals)
}

func (t *thread) describe(current bool) string {
	switch {
	case t.state == finished:
		return "exited"
	case t.state == blocked:
		return "blocked: " + t.why
	case current:
		return "running"
	}
	return "runnable"
}

// live returns the number of threads that have not exited.
func (p *Process) live() int {
	n := 0
	for _, t := range p.thr.list {
		if t.state != finished {
			n++
		}
	}
	return n
}

// OnSwitch sets a function called when the engine is about to switch from
// thread from to thread to, while it still holds from's registers (the
// Session moves to the new thread's shadow stack); exited says from has
// exited and will never run again.
func (p *Process) OnSwitch(fn func(from, to int, exited bool)) { p.onSwitch = fn }

// Clone flags.
const (
	cloneVM            = 0x100
	cloneFS            = 0x200
	cloneFiles         = 0x400
	cloneSighand       = 0x800
	cloneThread        = 0x10000
	cloneSysvsem       = 0x40000
	cloneSettls        = 0x80000
	cloneParentSettid  = 0x100000
	cloneChildCleartid = 0x200000
	cloneChildSettid   = 0x1000000
	// threadFlags must all be set for a thread; threadOptional may be.
	threadFlags    = cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread | cloneSysvsem
	threadOptional = cloneSettls | cloneParentSettid | cloneChildCleartid | cloneChildSettid
)

// sysClone is clone(flags, stack, parent_tid, child_tid, tls) on x86-64,
// clone(flags, stack, parent_tid, tls, child_tid) on AArch64.
func (p *Process) sysClone(a *[6]uint64) uint64 {
	ctid, tls := a[3], a[4]
	if p.Arch == arch.ARM64 {
		ctid, tls = a[4], a[3]
	}
	return p.clone("clone", a[0], a[1], a[2], ctid, tls, 0)
}

// sysClone3 is clone3(struct clone_args *, size).
func (p *Process) sysClone3(a *[6]uint64) uint64 {
	if a[1] < 64 || a[1] > 4096 {
		return sysErr(eINVAL)
	}
	b, ok := p.readGuest(a[0], 88)
	if !ok || a[1] < 88 {
		if b, ok = p.readGuest(a[0], 64); !ok {
			return sysErr(eFAULT)
		}
		b = append(b, make([]byte, 24)...)
	}
	f := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	// flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size,
	// tls, set_tid, set_tid_size, cgroup
	flags, ctid, ptid, exitSig, stack, size, tls := f(0), f(2), f(3), f(4), f(5), f(6), f(7)
	if exitSig != 0 || f(9) != 0 || (stack == 0) != (size == 0) {
		return p.refuseClone("clone3", flags|exitSig)
	}
	return p.clone("clone3", flags, stack+size, ptid, ctid, tls, exitSig)
}

// refuseClone ends the run at a clone the layer does not emulate.
func (p *Process) refuseClone(name string, flags uint64) uint64 {
	p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call %s with flags %#x: only threads (the flags of pthread_create) are emulated, not new processes", name, flags))
	return 0
}

// maxThreads bounds the threads alive at once, as RLIMIT_NPROC does (and
// is reported as: getrlimit): a clone beyond it fails with EAGAIN. Each
// costs the host a CPU context and a shadow stack whatever the guest's
// own memory (threads may share a stack); 4096 keep that within ~200 MB.
// (A thread with a stack of its own mapped for it, as pthread_create
// makes, also takes two of the emulator's ~4064 memory regions.)
const maxThreads = 4096

func (p *Process) clone(name string, flags, sp, ptid, ctid, tls, exitSig uint64) uint64 {
	if flags&0xff != 0 || exitSig != 0 || flags&threadFlags != threadFlags || flags&^uint64(threadFlags|threadOptional|0xff) != 0 || sp == 0 {
		return p.refuseClone(name, flags)
	}
	if nproc, _ := p.rlimit(6); uint64(p.live()) >= min(nproc, maxThreads) {
		return sysErr(eAGAIN)
	}
	// A new thread inherits its creator's mask (and no alternate stack:
	// CLONE_VM without CLONE_VFORK clears it).
	t := &thread{tid: p.thr.nextTID, deadline: -1, newSP: sp, fresh: true}
	t.start, _ = p.now(7) // CLOCK_BOOTTIME
	t.sig.mask = p.thr.cur.sig.mask
	t.prctl, t.nice, t.policy, t.persona = p.thr.cur.prctl, p.thr.cur.nice, p.thr.cur.policy, p.thr.cur.persona
	t.prctl.pdeathsig = 0 // as copy_process clears it
	if flags&cloneSettls != 0 {
		t.newTLS, t.setTLS = tls, true
	}
	var tidb [4]byte
	binary.LittleEndian.PutUint32(tidb[:], uint32(t.tid))
	if flags&cloneParentSettid != 0 && !p.writeGuest(ptid, tidb[:]) {
		return sysErr(eFAULT)
	}
	if flags&cloneChildSettid != 0 && !p.writeGuest(ctid, tidb[:]) {
		return sysErr(eFAULT)
	}
	if flags&cloneChildCleartid != 0 {
		t.clearTID = ctid
	}
	p.thr.nextTID++
	p.thr.list = append(p.thr.list, t)
	p.thr.resched = true // the new thread's context is made after the stop
	p.Engine.Stop()
	return uint64(t.tid)
}

// startChildren makes the registers of the threads clone just created:
// the parent's, with the result 0, the new stack pointer and, with
// CLONE_SETTLS, the thread pointer. The engine holds the parent's.
func (p *Process) startChildren() error {
	var parent *emu.CPUContext
	var pc uint64
	for _, t := range p.thr.list {
		if !t.fresh {
			continue
		}
		if parent == nil {
			c, err := p.Engine.SaveCPU()
			if err != nil {
				return err
			}
			parent = c
			if pc, err = p.Engine.PC(); err != nil {
				return err
			}
		}
		if err := p.Engine.WriteRegs([]emu.RegID{p.abi.ret, p.Engine.RegID(p.Arch.SP)}, []uint64{0, t.newSP}); err != nil {
			return err
		}
		if t.setTLS {
			if err := p.setThreadPointer(t.newTLS); err != nil {
				return err
			}
		}
		c, err := p.Engine.SaveCPU()
		if err != nil {
			return err
		}
		t.ctx, t.pc, t.fresh = c, pc, false
		if err := p.Engine.RestoreCPU(parent); err != nil {
			return err
		}
	}
	return nil
}

// setThreadPointer sets the TLS register: FS base, TPIDR_EL0.
func (p *Process) setThreadPointer(v uint64) error {
	if p.Arch == arch.ARM64 {
		return p.Engine.WriteSysReg(emu.SysRegTPIDR_EL0, v)
	}
	return p.Engine.SetReg(emu.X86FSBase, v)
}

func (p *Process) sysSetTidAddress(a *[6]uint64) uint64 {
	p.thr.cur.clearTID = a[0]
	return uint64(p.thr.cur.tid)
}

func (p *Process) sysGettid(a *[6]uint64) uint64 { return uint64(p.thr.cur.tid) }

// sysExitThread is exit: the calling thread ends; the last one ends the
// process.
func (p *Process) sysExitThread(a *[6]uint64) uint64 {
	if p.live() == 1 {
		return p.sysExit(a)
	}
	t := p.thr.cur
	t.state = finished
	if t.clearTID != 0 {
		// CLONE_CHILD_CLEARTID: zero the tid word and wake one waiter
		// (pthread_join); a bad address is ignored, as by Linux.
		if p.writeGuest(t.clearTID, make([]byte, 4)) {
			p.futexWake(t.clearTID, 1, ^uint32(0))
		}
	}
	p.block()
	return 0
}

func (p *Process) sysSchedYield(a *[6]uint64) uint64 {
	if p.otherCouldRun() {
		p.thr.yield, p.thr.resched = true, true
		p.Engine.Stop()
	}
	return 0
}

// otherCouldRun reports whether a thread other than the running one is
// runnable or would be woken by the scheduler now (its deadline passed).
// A yield with none returns at once, as on Linux, without a stop: a
// program spinning on sched_yield while the others sleep is not slowed
// down by a reschedule per call.
func (p *Process) otherCouldRun() bool {
	now := p.base()
	for _, t := range p.thr.list {
		if t == p.thr.cur {
			continue
		}
		if t.state == running || t.state == blocked && (t.deadline >= 0 && t.deadline <= now || t.wakeAt >= 0 && t.wakeAt <= now) {
			return true
		}
	}
	return false
}

// block takes the running thread off the CPU (it blocked or exited): the
// scheduler picks another once the engine has stopped.
func (p *Process) block() {
	p.thr.yield, p.thr.resched = true, true
	p.Engine.Stop()
}

// waitOn blocks the running thread on futex word addr (0: a sleep or
// another wait) until a wake, a signal or the deadline (-1: none) on the
// base clock. A signal makes the call return ERESTARTSYS unless the
// caller sets t.intr.
func (p *Process) waitOn(addr uint64, bitset uint32, deadline int64, why string) {
	t := p.thr.cur
	p.thr.seq++
	t.state, t.futex, t.bitset, t.seq, t.deadline, t.why, t.sigWait, t.wakeAt = blocked, addr, bitset, p.thr.seq, deadline, why, false, -1
	t.ret, t.setRet = 0, true
	t.intr, t.timeoutRet, t.resume, t.restart = eRestartSys, 0, resumeNone, restartBlock{}
	if addr != 0 {
		t.timeoutRet = sysErr(eTIMEDOUT)
	}
	p.block()
}

// wake makes a blocked thread runnable with the system call result ret.
func (t *thread) wake(ret uint64) {
	t.state, t.futex, t.deadline, t.why, t.sigWait, t.wakeAt = running, 0, -1, "", false, -1
	t.ret, t.setRet = ret, true
}

// waiters returns the threads waiting on futex word addr whose bitset
// meets mask, in the order they started waiting.
func (p *Process) waiters(addr uint64, mask uint32) []*thread {
	var out []*thread
	for _, t := range p.thr.list {
		if t.state == blocked && t.futex == addr && addr != 0 && t.bitset&mask != 0 {
			out = append(out, t)
		}
	}
	for i := 1; i < len(out); i++ { // by seq (insertion sort: few waiters)
		for j := i; j > 0 && out[j].seq < out[j-1].seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// futexWake wakes up to n waiters of addr and returns how many it woke.
// As in Linux, n of 0 or less wakes one.
func (p *Process) futexWake(addr uint64, n int, mask uint32) int {
	n = max(n, 1)
	woken := 0
	for _, t := range p.waiters(addr, mask) {
		if woken >= n {
			break
		}
		t.wake(0)
		woken++
	}
	return woken
}

// threadStates lists every thread's state, for a deadlock's detail.
func (p *Process) threadStates() string {
	var parts []string
	for _, t := range p.thr.list {
		if t.state != finished {
			parts = append(parts, fmt.Sprintf("tid %d %s", t.tid, t.describe(false)))
		}
	}
	return strings.Join(parts, "; ")
}
