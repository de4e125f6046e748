//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// Signals, delivered as Linux delivers them (kernel/signal.c and the
// architectures' signal.c): each thread has its mask, its own pending set
// (tkill, tgkill, faults) and shares the process's (kill); a pending
// signal the thread does not block is delivered when the thread returns to
// user mode — after the system call that sent or unblocked it, after the
// fault that raised it, when the scheduler gives the thread the CPU. The
// synchronous signals (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGSYS)
// go first, then the lowest number, the thread's set before the process's.
//
// A signal with a handler gets a signal frame (rt_sigframe, laid out
// byte for byte as the kernel does: sigframe_x86_64.go,
// sigframe_aarch64.go) on the thread's stack or, with SA_ONSTACK, its
// alternate stack (sigaltstack), and the handler runs with the signal
// (unless SA_NODEFER) and sa_mask blocked; SA_RESETHAND makes the action
// SIG_DFL again. rt_sigreturn restores the registers, the mask, the
// floating-point state and the alternate stack settings from the frame,
// as the handler may have changed them. Without a handler the default
// action applies: ignore (SIGCHLD, SIGCONT, SIGURG, SIGWINCH), terminate
// (the run stops with StopSignaled and 128+N, as a shell reports it; the
// core-dumping ones too) or, for the stop signals, StopUnsupported (job
// control is not emulated). A CPU fault without a handler, or blocked, or
// ignored, ends the run with StopFault as before (Linux unblocks it and
// kills the process).
//
// A signal that a thread blocked in a system call does not block wakes it
// (signal_wake_up): the call returns what Linux's returns then — EINTR,
// or an ERESTART* code that the return to user mode turns into EINTR
// when a handler runs (ERESTARTNOHAND, ERESTART_RESTARTBLOCK, and
// ERESTARTSYS without SA_RESTART) and otherwise into a restart of the
// call (the PC back on the system call instruction, its number or first
// argument back in the return register; ERESTART_RESTARTBLOCK through
// restart_syscall and the thread's restart block). Per call: a futex wait
// ERESTARTSYS (with a timeout ERESTART_RESTARTBLOCK), nanosleep and a
// relative clock_nanosleep ERESTART_RESTARTBLOCK with the time left stored,
// an absolute one ERESTARTNOHAND, a pipe read or write ERESTARTSYS, poll
// and select ERESTARTNOHAND (poll with a timeout ERESTART_RESTARTBLOCK),
// sigsuspend and pause ERESTARTNOHAND, rt_sigtimedwait EINTR. sigsuspend,
// ppoll and pselect6 run with their mask; the handler's frame saves the
// one from before. Timers (timers.go) send their signals at exact
// instructions; signalfd (signalfd.go) reads pending signals.
//
// Not emulated: job control (the stop signals).

const nsig = 64

// Signal numbers the layer treats specially.
const (
	sigILL  = 4
	sigTRAP = 5
	sigBUS  = 7
	sigFPE  = 8
	sigKILL = 9
	sigSEGV = 11
	sigSTOP = 19
	sigSYS  = 31
)

// sigmask returns the bit of sig in a sigset_t word.
func sigmask(sig int) uint64 { return 1 << (sig - 1) }

const (
	// unblockable is what no mask may hold: SIGKILL and SIGSTOP.
	unblockable = 1<<(sigKILL-1) | 1<<(sigSTOP-1)
	// synchronous are the signals a fault raises, dequeued first.
	synchronous = 1<<(sigSEGV-1) | 1<<(sigBUS-1) | 1<<(sigILL-1) | 1<<(sigTRAP-1) | 1<<(sigFPE-1) | 1<<(sigSYS-1)
)

// sa_flags (include/uapi/asm-generic/signal-defs.h; SA_RESTORER is the
// same on x86-64 and arm64).
const (
	saNocldstop    = 0x1
	saNocldwait    = 0x2
	saSiginfo      = 0x4
	saExposeTagbit = 0x800
	saRestorer     = 0x04000000
	saOnstack      = 0x08000000
	saRestart      = 0x10000000
	saNodefer      = 0x40000000
	saResethand    = 0x80000000
	// saUAPI is what sigaction keeps: since Linux 5.11 unknown bits are
	// cleared, so that a program can tell which ones the kernel knows.
	saUAPI = saNocldstop | saNocldwait | saSiginfo | saExposeTagbit | saRestorer | saOnstack | saRestart | saNodefer | saResethand
)

// Handlers with a meaning of their own.
const (
	sigDFL = 0
	sigIGN = 1
)

// si_code values (include/uapi/asm-generic/siginfo.h).
const (
	siUser     = 0
	siKernel   = 0x80
	siTkill    = -6
	segvMaperr = 1
	segvAccerr = 2
	busAdraln  = 1
	illIllopc  = 1
	illIllopn  = 2
	fpeIntdiv  = 1
	trapBrkpt  = 1
)

// sigaltstack's ss_flags.
const (
	ssOnstack    = 1
	ssDisable    = 2
	ssAutodisarm = 1 << 31
)

// sigAction is a struct sigaction as rt_sigaction passes it on both
// targets: handler, flags, restorer, mask (32 bytes).
type sigAction struct{ handler, flags, restorer, mask uint64 }

func decodeSigaction(b []byte) sigAction {
	le := binary.LittleEndian
	return sigAction{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:])}
}

func (a sigAction) encode() []byte {
	b := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint64(b, a.handler)
	le.PutUint64(b[8:], a.flags)
	le.PutUint64(b[16:], a.restorer)
	le.PutUint64(b[24:], a.mask)
	return b
}

// sigInfo is the part of a siginfo_t the layer fills in: the header, and
// the _kill (pid, uid), _rt (pid, uid, value), _timer (timer id, overrun,
// value) or _sigfault (addr) member of the union; or, for
// rt_sigqueueinfo, what the sender wrote.
type sigInfo struct {
	signo, errno, code int32
	pid, uid           uint32
	addr               uint64
	fault              bool // addr is set (the _sigfault member)
	value              uint64
	rt                 bool // value is set (the _rt member)
	timer              bool // a POSIX timer's (the _timer member)
	timerID, overrun   int32
	gen                uint64 // the timer's settings it was queued with (timers.go)
	raw                []byte // rt_sigqueueinfo: the sender's siginfo_t
}

// bytes encodes the 128-byte siginfo_t of both targets: si_signo,
// si_errno, si_code, then the union at offset 16.
func (si *sigInfo) bytes() []byte {
	b := make([]byte, 128)
	le := binary.LittleEndian
	if si.raw != nil {
		copy(b, si.raw)
		le.PutUint32(b, uint32(si.signo))
		return b
	}
	le.PutUint32(b, uint32(si.signo))
	le.PutUint32(b[4:], uint32(si.errno))
	le.PutUint32(b[8:], uint32(si.code))
	switch {
	case si.fault:
		le.PutUint64(b[16:], si.addr)
	case si.timer:
		le.PutUint32(b[16:], uint32(si.timerID))
		le.PutUint32(b[20:], uint32(si.overrun))
		le.PutUint64(b[24:], si.value)
	default:
		le.PutUint32(b[16:], si.pid)
		le.PutUint32(b[20:], si.uid)
		if si.rt {
			le.PutUint64(b[24:], si.value)
		}
	}
	return b
}

// sigQueue is a set of pending signals with their siginfo: a standard
// signal is pending at most once (a second one is lost), a real-time
// signal (32 and above) queues each time it is sent; a POSIX timer's
// signal is queued even if the same standard signal is pending (its
// siginfo is the timer's own, as send_sigqueue does).
type sigQueue struct {
	set  uint64
	info []sigInfo // in the order sent
}

func (q *sigQueue) add(si sigInfo) {
	m := sigmask(int(si.signo))
	if si.signo < 32 && q.set&m != 0 && !si.timer {
		return
	}
	q.set |= m
	q.info = append(q.info, si)
}

// take removes the first pending sig and returns its siginfo.
func (q *sigQueue) take(sig int) sigInfo {
	var si sigInfo
	more := false
	for i := 0; i < len(q.info); i++ {
		if int(q.info[i].signo) != sig {
			continue
		}
		if si.signo == 0 {
			si = q.info[i]
			q.info = slices.Delete(q.info, i, i+1)
			i--
			continue
		}
		more = true
		break
	}
	if !more {
		q.set &^= sigmask(sig)
	}
	return si
}

func (q sigQueue) clone() sigQueue { return sigQueue{q.set, slices.Clone(q.info)} }

// altStack is a thread's alternate signal stack (sigaltstack): size 0 is
// none; flags keeps SS_AUTODISARM.
type altStack struct {
	sp, size uint64
	flags    uint32
}

// on reports whether sp is on the alternate stack (the kernel's
// on_sig_stack: never with SS_AUTODISARM).
func (s *altStack) on(sp uint64) bool {
	return s.flags&ssAutodisarm == 0 && s.onStack(sp)
}

// onStack is __on_sig_stack: the stack grows down from sp+size.
func (s *altStack) onStack(sp uint64) bool { return sp > s.sp && sp-s.sp <= s.size }

// ssFlags is sas_ss_flags: SS_DISABLE without one, SS_ONSTACK while on it.
func (s *altStack) ssFlags(sp uint64) uint32 {
	switch {
	case s.size == 0:
		return ssDisable
	case s.on(sp):
		return ssOnstack
	}
	return 0
}

// encode is the stack_t of uc_stack and sigaltstack: ss_sp, ss_flags,
// ss_size (24 bytes), as __save_altstack writes it for sp.
func (s *altStack) encode(sp uint64) []byte {
	b := make([]byte, 24)
	le := binary.LittleEndian
	le.PutUint64(b, s.sp)
	le.PutUint32(b[8:], s.ssFlags(sp)|s.flags)
	le.PutUint64(b[16:], s.size)
	return b
}

// threadSignals is one thread's part of the signal state.
type threadSignals struct {
	mask    uint64 // blocked
	pending sigQueue
	alt     altStack
	// What the last fault left for the signal frame: x86-64's trap
	// number, error code and CR2 (thread.trap_nr, error_code, cr2);
	// AArch64's fault address and ESR (thread.fault_address, fault_code).
	// Linux keeps them until the next fault, so later frames show them too.
	trapNo, errCode, faultAddr uint64
	// A fault queued for delivery: the PC the frame saves.
	faultPC  uint64
	faultSet bool
	// The mask to restore after sigsuspend, ppoll or pselect6 once a
	// handler's frame has saved it (or without a handler), and the mask
	// rt_sigtimedwait restores (real_blocked).
	saved       uint64
	restoreMask bool
	realBlocked uint64
}

// sigState is the process's part: the actions, the pending signals sent
// to the process, and how many of each were delivered.
type sigState struct {
	act       [nsig + 1]sigAction
	shared    sigQueue
	delivered [nsig + 1]uint64
	// sigreturn is set by rt_sigreturn: the registers are restored from
	// the frame once the engine has stopped.
	sigreturn bool
	timers    timerState // timers.go
}

func (s sigState) clone() sigState {
	s.shared = s.shared.clone()
	s.timers = s.timers.clone()
	return s
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

// SignalsDelivered returns how many times each signal was delivered to a
// handler so far, by signal number; nil if none was.
func (p *Process) SignalsDelivered() map[int]uint64 {
	var m map[int]uint64
	for sig, n := range p.sig.delivered {
		if n > 0 {
			if m == nil {
				m = map[int]uint64{}
			}
			m[sig] = n
		}
	}
	return m
}

// defaultIgnored reports whether sig's default action is to ignore it.
func defaultIgnored(sig int) bool {
	switch sig {
	case 17, 18, 23, 28: // SIGCHLD, SIGCONT, SIGURG, SIGWINCH
		return true
	}
	return false
}

// defaultStops reports whether sig's default action stops the process.
func defaultStops(sig int) bool { return sig >= 19 && sig <= 22 }

// ignored reports whether sig would be dropped when sent (sig_ignored):
// its action is SIG_IGN, or SIG_DFL with a default of ignoring it.
func (p *Process) ignored(sig int) bool {
	h := p.sig.act[sig].handler
	return h == sigIGN || h == sigDFL && defaultIgnored(sig)
}

func (p *Process) sysRtSigaction(a *[6]uint64) uint64 {
	sig := int(a[0])
	if sig < 1 || sig > nsig || a[3] != 8 || (a[1] != 0 && (sig == sigKILL || sig == sigSTOP)) {
		return sysErr(eINVAL)
	}
	var act sigAction
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 32)
		if !ok {
			return sysErr(eFAULT)
		}
		act = decodeSigaction(b)
		act.flags &= saUAPI
		act.mask &^= unblockable
	}
	if a[2] != 0 && !p.writeGuest(a[2], p.sig.act[sig].encode()) {
		return sysErr(eFAULT)
	}
	if a[1] != 0 {
		p.sig.act[sig] = act
		if p.ignored(sig) {
			// Setting SIG_IGN (or a default that ignores) discards the
			// pending ones, in every thread.
			p.discard(sig)
		}
	}
	return 0
}

// discard drops pending sig from the process and every thread.
func (p *Process) discard(sig int) {
	for p.sig.shared.set&sigmask(sig) != 0 {
		p.sig.shared.take(sig)
	}
	for _, t := range p.thr.list {
		for t.sig.pending.set&sigmask(sig) != 0 {
			t.sig.pending.take(sig)
		}
	}
}

func (p *Process) sysRtSigprocmask(a *[6]uint64) uint64 {
	if a[3] != 8 {
		return sysErr(eINVAL)
	}
	t := p.thr.cur
	old := t.sig.mask
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 8)
		if !ok {
			return sysErr(eFAULT)
		}
		set := binary.LittleEndian.Uint64(b) &^ unblockable
		switch a[0] {
		case 0: // SIG_BLOCK
			t.sig.mask |= set
		case 1: // SIG_UNBLOCK
			t.sig.mask &^= set
		case 2: // SIG_SETMASK
			t.sig.mask = set
		default:
			return sysErr(eINVAL)
		}
	}
	if a[2] != 0 && !p.put64(a[2], old) {
		return sysErr(eFAULT)
	}
	p.pollSignals()
	return 0
}

func (p *Process) sysRtSigpending(a *[6]uint64) uint64 {
	if a[1] > 8 {
		return sysErr(eINVAL)
	}
	t := p.thr.cur
	set := (t.sig.pending.set | p.sig.shared.set) & t.sig.mask
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], set)
	if !p.writeGuest(a[0], b[:a[1]]) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysSigaltstack(a *[6]uint64) uint64 {
	t := p.thr.cur
	sp, err := p.Engine.Reg(p.Engine.RegID(p.Arch.SP))
	if err != nil {
		return sysErr(eFAULT)
	}
	if a[1] != 0 && !p.writeGuest(a[1], t.sig.alt.encode(sp)) {
		return sysErr(eFAULT)
	}
	if a[0] != 0 {
		b, ok := p.readGuest(a[0], 24)
		if !ok {
			return sysErr(eFAULT)
		}
		return p.setAltStack(t, b, sp)
	}
	return 0
}

// setAltStack is do_sigaltstack: thread t's alternate signal stack becomes
// the stack_t in b, SP being sp; it returns 0 or the error.
func (p *Process) setAltStack(t *thread, b []byte, sp uint64) uint64 {
	le := binary.LittleEndian
	ss := altStack{sp: le.Uint64(b), flags: le.Uint32(b[8:]), size: le.Uint64(b[16:])}
	if t.sig.alt.on(sp) {
		return sysErr(ePERM)
	}
	mode := ss.flags &^ ssAutodisarm
	switch mode {
	case 0, ssOnstack:
	case ssDisable:
		ss.sp, ss.size = 0, 0
	default:
		return sysErr(eINVAL)
	}
	if mode != ssDisable && ss.size < p.abi.minSigStkSz {
		return sysErr(eNOMEM)
	}
	ss.flags &= ssAutodisarm
	t.sig.alt = ss
	return 0
}

// restoreAltstack is restore_altstack, for rt_sigreturn on both
// architectures: sigaltstack with the frame's uc_stack and the restored
// stack pointer, errors ignored.
func restoreAltstack(p *Process, t *thread, b []byte, sp uint64) {
	p.setAltStack(t, b, sp)
}

// send makes sig pending for thread t (tkill, tgkill), or for the process
// when t is nil (kill); sig 0 only checks. It returns the system call's
// result.
func (p *Process) send(t *thread, sig int, code int32) uint64 {
	if sig < 0 || sig > nsig {
		return sysErr(eINVAL)
	}
	if sig == 0 {
		return 0
	}
	if sig >= sigRTMIN && p.sigQueueFull() {
		// Linux queues no more siginfo: a kill's signal still comes (at
		// most once pending here), tkill's and tgkill's fail.
		if code != siUser {
			return sysErr(eAGAIN)
		}
		if q := p.queueOf(t); q.set&sigmask(sig) != 0 {
			return 0
		}
	}
	p.queueSignal(t, sigInfo{signo: int32(sig), code: code, pid: guestPID, uid: guestUID}, true)
	return 0
}

// sigPendingLimit is RLIMIT_SIGPENDING (getrlimit reports it): the
// real-time signals queued with their siginfo, and the POSIX timers (each
// holds one for its expiry), across the process. Past it, sigqueue,
// tkill and timer_create fail with EAGAIN, as on Linux: a program sending
// itself signals it blocks cannot make the host hold them without end.
const sigPendingLimit = 16384

// sigRTMIN is the first real-time signal: the ones queued each time.
const sigRTMIN = 32

// sigQueueFull reports whether the queued signals and the timers have
// reached sigPendingLimit.
func (p *Process) sigQueueFull() bool {
	n := len(p.sig.shared.info) + len(p.sig.timers.posix)
	for _, t := range p.thr.list {
		n += len(t.sig.pending.info)
	}
	limit, _ := p.rlimit(11)
	return uint64(n) >= min(limit, sigPendingLimit)
}

// queueOf returns the queue of signals pending for t, or for the process
// when t is nil.
func (p *Process) queueOf(t *thread) *sigQueue {
	if t == nil {
		return &p.sig.shared
	}
	return &t.sig.pending
}

// queueSignal makes a signal pending for thread t, or for the process when
// t is nil, unless it is ignored and not blocked (then it is dropped and
// the thread not even woken: a blocked one stays, as its action may
// change before it is unblocked, sig_ignored); it reports whether it was
// queued. A process's signal is blocked if its main thread blocks it, as
// Linux asks of the thread group's leader. A thread blocked in a
// system call that the signal can reach is interrupted (signalWake);
// poll, in a system call of the running thread, stops the engine so that
// the signal is taken on the way back to user mode.
func (p *Process) queueSignal(t *thread, si sigInfo, poll bool) bool {
	sig := int(si.signo)
	if p.ignored(sig) && sig != sigKILL {
		target := t
		if target == nil {
			target = p.threadByTID(guestPID)
		}
		if target == nil || target.sig.mask&sigmask(sig) == 0 {
			return false
		}
	}
	if t == nil {
		p.sig.shared.add(si)
	} else {
		if t.state == finished {
			return false
		}
		t.sig.pending.add(si)
	}
	p.signalWake(t, sig)
	p.signalsChanged() // readers of a signalfd, pollers
	if poll {
		p.pollSignals()
	}
	return true
}

// signalWake interrupts the thread that is to take a new pending sig
// (complete_signal, signal_wake_up): t, if it does not block sig; for a
// signal to the process, nobody if the running thread or another
// runnable one can take it, else the first thread in tid order that does
// not block it. A thread blocked in a system call is woken with the
// call's ERESTART* code or EINTR (thread.intr).
func (p *Process) signalWake(t *thread, sig int) {
	m := sigmask(sig)
	if t != nil {
		if t.state == blocked && t.sig.mask&m == 0 {
			p.interrupt(t)
		}
		return
	}
	if cur := p.thr.cur; cur.state == running && cur.sig.mask&m == 0 {
		return
	}
	for _, x := range p.thr.list {
		if x.state == finished || x.sig.mask&m != 0 {
			continue
		}
		if x.state == blocked {
			p.interrupt(x)
		}
		return
	}
}

// interrupt wakes blocked thread t for a signal: its system call returns
// t.intr (nanosleep first stores the time left).
func (p *Process) interrupt(t *thread) {
	code := t.intr
	switch t.resume {
	case resumeSigwait: // restores the mask when it runs
	case resumePipeWrite:
		if t.wargs[4] > 0 {
			code = -1 // it returns what it wrote
		}
		t.resume = resumeNone
	case resumePoll:
		p.pollTimeLeft(t.wargs, t.deadline)
		t.resume = resumeNone
	default:
		t.resume = resumeNone
	}
	if code == -1 {
		t.wake(t.wargs[4])
		return
	}
	if t.restart.kind == restartNanosleep && t.restart.addr != 0 {
		// do_nanosleep stores the time left when a signal cuts it short.
		left := max(t.deadline-p.base(), 0)
		p.put64(t.restart.addr, uint64(left/1e9), uint64(left%1e9))
	}
	t.wake(sysErr(code))
	if code != eINTR {
		t.restarting = code
	}
}

// pollSignals stops the engine when the running thread has a signal to
// take on its way back to user mode: Continue delivers it.
func (p *Process) pollSignals() {
	if p.deliverable(p.thr.cur) != 0 {
		p.Engine.Stop()
	}
}

// deliverable returns the signal thread t would take next (0: none): the
// synchronous ones first, then the lowest number; its own before the
// process's (next_signal, dequeue_signal).
func (p *Process) deliverable(t *thread) int { return p.nextSignal(t, t.sig.mask) }

// nextSignal is deliverable with blocked as the mask.
func (p *Process) nextSignal(t *thread, blocked uint64) int {
	for _, set := range [2]uint64{t.sig.pending.set, p.sig.shared.set} {
		x := set &^ blocked
		if x == 0 {
			continue
		}
		if x&synchronous != 0 {
			x &= synchronous
		}
		return bits.TrailingZeros64(x) + 1
	}
	return 0
}

// dequeue takes signal sig from thread t's set or else the process's; a
// POSIX timer's signal re-arms its timer.
func (p *Process) dequeue(t *thread, sig int) sigInfo {
	var si sigInfo
	if t.sig.pending.set&sigmask(sig) != 0 {
		si = t.sig.pending.take(sig)
	} else {
		si = p.sig.shared.take(sig)
	}
	if si.timer {
		p.timerTaken(&si)
	}
	return si
}

// deliverSignals is the return to user mode of the running thread: it
// restores the registers of a rt_sigreturn, then takes its pending
// signals, sets up a frame for each one with a handler (the last one set
// up runs first, as in Linux) and applies the default action of the
// others. It runs between two engine runs.
func (p *Process) deliverSignals() error {
	if p.sig.sigreturn {
		p.sig.sigreturn = false
		if err := p.sigreturn(); err != nil {
			return err
		}
	}
	t := p.thr.cur
	if t.state != running || t.setRet {
		return nil // blocked, or woken: it returns to user mode when scheduled in
	}
	// A system call that returned an ERESTART* code: restart it, unless
	// a handler runs first (do_signal of both architectures).
	restart := t.restarting
	t.restarting = 0
	var cont uint64
	if restart != 0 {
		var err error
		if cont, err = p.Engine.PC(); err != nil {
			return err
		}
		orig := t.sysArg0 // AArch64: orig_x0
		if p.Arch == arch.AMD64 {
			orig = t.sysNr // x86-64: orig_ax
		}
		if err := p.Engine.WriteRegs([]emu.RegID{p.Engine.RegID(p.Arch.PC), p.abi.ret}, []uint64{t.sysPC, orig}); err != nil {
			return err
		}
	}
	handled := false
	defer func() {
		if !handled && t.sig.restoreMask {
			t.sig.mask, t.sig.restoreMask = t.sig.saved, false
		}
	}()
	for p.exit == nil {
		sig := p.deliverable(t)
		if sig == 0 {
			break
		}
		si := p.dequeue(t, sig)
		act := p.sig.act[sig]
		switch {
		case act.handler == sigIGN:
			continue
		case act.handler != sigDFL:
			if restart != 0 && !handled && (restart == eRestartNoHand || restart == eRestartBlock || restart == eRestartSys && act.flags&saRestart == 0) {
				if err := p.Engine.WriteRegs([]emu.RegID{p.Engine.RegID(p.Arch.PC), p.abi.ret}, []uint64{cont, sysErr(eINTR)}); err != nil {
					return err
				}
			}
			handled = true
			if err := p.handle(t, sig, &si, act); err != nil {
				return err
			}
			continue
		case defaultIgnored(sig):
			continue
		}
		pc, _ := p.Engine.PC()
		switch {
		case t.sig.faultSet:
			pc = t.sig.faultPC
		case p.inSyscall:
			pc = p.sysPC // the system call that sent it, as a stop there
		}
		name := SignalName(sig)
		if defaultStops(sig) {
			p.stopAt(StopUnsupported, 0, pc, fmt.Sprintf("%s would stop the process: job control is not emulated", name))
			return nil
		}
		p.stopAt(StopSignaled, 128+sig, pc, fmt.Sprintf("killed by signal %d (%s)", sig, name))
	}
	if restart == eRestartBlock && !handled && p.exit == nil {
		// The call goes on through restart_syscall (t.restart).
		return p.Engine.SetReg(p.abi.sysRegs[0], p.abi.restartSyscall)
	}
	return nil
}

// handle delivers sig to its handler: a frame on the stack, the handler's
// registers, the new mask.
func (p *Process) handle(t *thread, sig int, si *sigInfo, act sigAction) error {
	if t.sig.faultSet {
		if err := p.Engine.SetReg(p.Engine.RegID(p.Arch.PC), t.sig.faultPC); err != nil {
			return err
		}
		t.sig.faultSet = false
	}
	mask := t.sig.mask
	if t.sig.restoreMask {
		// sigsuspend and the like: the frame saves the mask from before
		// the call, the handler runs with the call's.
		t.sig.mask = t.sig.saved
		t.sig.restoreMask = false
	}
	ok, err := p.abi.setupFrame(p, t, sig, si, act)
	t.sig.mask = mask
	if err != nil {
		return err
	}
	if !ok {
		// The frame did not fit (no stack, or the alternate stack
		// overflowed): Linux forces SIGSEGV with its default action.
		pc, _ := p.Engine.PC()
		p.sig.act[sigSEGV] = sigAction{}
		p.stopAt(StopFault, 0, pc, fmt.Sprintf("SIGSEGV: no room for the signal frame of %s", SignalName(sig)))
		if p.exit != nil {
			p.exit.Signal = sigSEGV
		}
		return nil
	}
	p.sig.delivered[sig]++
	if act.flags&saNodefer == 0 {
		act.mask |= sigmask(sig)
	}
	t.sig.mask |= act.mask &^ unblockable
	if act.flags&saResethand != 0 {
		p.sig.act[sig].handler = sigDFL
	}
	return nil
}

// sysRtSigreturn is rt_sigreturn: the registers are restored from the
// frame once the engine has stopped (deliverSignals); the return register
// is one of them.
func (p *Process) sysRtSigreturn(a *[6]uint64) uint64 {
	p.sig.sigreturn = true
	p.noResult = true
	p.Engine.Stop()
	return 0
}

// sigreturn restores the state saved in the signal frame the stack
// pointer points at (as the handler left it); a frame that cannot be read
// kills the process with SIGSEGV, as in Linux.
func (p *Process) sigreturn() error {
	ok, err := p.abi.restoreFrame(p, p.thr.cur)
	if err != nil {
		return err
	}
	if !ok {
		p.stopAt(StopFault, 0, p.sysPC, "SIGSEGV: rt_sigreturn: bad signal frame")
		if p.exit != nil {
			p.exit.Signal = sigSEGV
		}
	}
	return nil
}

// forceFault raises a fault's signal in the running thread
// (force_sig_fault): the frame will save resume as the PC. Without a
// handler, or with the signal blocked or ignored, the run ends with
// StopFault at pc, as Linux kills the process.
func (p *Process) forceFault(si sigInfo, pc, resume uint64, detail string) {
	t, sig := p.thr.cur, int(si.signo)
	h := p.sig.act[sig].handler
	if h == sigDFL || h == sigIGN || t.sig.mask&sigmask(sig) != 0 {
		p.signalFault(sig, pc, detail)
		return
	}
	t.sig.pending.add(si)
	t.sig.faultPC, t.sig.faultSet = resume, true
	p.Engine.Stop()
}

func (p *Process) sysKill(a *[6]uint64) uint64 {
	pid := int32(a[0])
	if pid == 1 {
		// init, getppid's answer: there, but not the guest's to signal.
		if sig := int32(a[1]); sig < 0 || sig > nsig {
			return sysErr(eINVAL)
		}
		return sysErr(ePERM)
	}
	if pid != guestPID && pid != 0 && pid != -guestPID && pid != -1 {
		return sysErr(eSRCH)
	}
	return p.send(nil, int(int32(a[1])), siUser)
}

func (p *Process) sysTkill(a *[6]uint64) uint64 {
	t := p.threadByTID(int32(a[0]))
	if t == nil {
		return sysErr(eSRCH)
	}
	return p.send(t, int(int32(a[1])), siTkill)
}

func (p *Process) sysTgkill(a *[6]uint64) uint64 {
	t := p.threadByTID(int32(a[1]))
	if int32(a[0]) != guestPID || t == nil {
		return sysErr(eSRCH)
	}
	return p.send(t, int(int32(a[2])), siTkill)
}

// threadByTID returns the thread tid that has not exited, or nil.
func (p *Process) threadByTID(tid int32) *thread {
	for _, t := range p.thr.list {
		if int32(t.tid) == tid && t.state != finished {
			return t
		}
	}
	return nil
}

// SignalEvent is a signal delivery or a return from a handler, as observers
// of the true call stack need it (OnSignal). It is told before the
// registers change: the engine still holds the interrupted state
// (delivery) or the trampoline's (rt_sigreturn).
type SignalEvent struct {
	Signal    int  // the signal delivered (0 for a return)
	Sigreturn bool // rt_sigreturn: back to the state the frame holds
	// The interrupted state (delivery), or the state rt_sigreturn
	// restores: PC, stack pointer, frame pointer.
	PC, SP, FP uint64
	// Delivery: the handler, its stack pointer and frame pointer at entry
	// and the address it returns to (sa_restorer, or the vDSO's
	// __kernel_rt_sigreturn).
	Handler, HandlerSP, HandlerFP, Return uint64
	// Frame is the rt_sigframe's address (where the handler's stack
	// pointer starts; on x86-64, rt_sigreturn finds it 8 bytes below its
	// stack pointer).
	Frame uint64
}

// OnSignal sets a function told of each signal delivery and each
// rt_sigreturn of the running thread (the Session pushes and pops signal
// frames on the shadow stack).
func (p *Process) OnSignal(fn func(SignalEvent)) { p.onSignal = fn }

func (p *Process) signalEvent(ev SignalEvent) {
	if p.onSignal != nil {
		p.onSignal(ev)
	}
}

// Waiting for signals: sigsuspend, pause, the sigwait family; sending
// with a value: sigqueue; and restart_syscall.

// resumeKind says what completes a blocked system call when its thread
// gets the CPU back (Process.resumed).
type resumeKind int

const (
	resumeNone      resumeKind = iota
	resumeSigwait              // rt_sigtimedwait: take a waited-for signal
	resumePipeRead             // read from a pipe (pipes.go)
	resumePipeWrite            // write to a pipe
	resumePoll                 // poll, ppoll, pselect6
	resumeSignalfd             // read of a signalfd (signalfd.go)
	resumeEventfd              // read or write of an eventfd (epoll.go)
	resumeTimerfd              // read of a timerfd (timerfd.go)
	resumeFlock                // flock (sys_fdops.go)
	resumeOFDLock              // F_OFD_SETLKW (ofdlocks.go)
)

// restartBlock is what restart_syscall continues (the kernel's
// restart_block): a relative nanosleep or a futex wait with a timeout,
// to the same deadline.
type restartBlock struct {
	kind     int
	deadline int64  // on the base clock
	addr     uint64 // nanosleep's rem; the futex word
	val      uint32 // the futex value expected
	bitset   uint32
	nfds     uint64 // poll's
}

const (
	restartNone = iota
	restartNanosleep
	restartFutex
	restartPoll
)

// resumed completes the system call t blocked in now that it is to run
// again; false if it must wait again (it is blocked again then).
func (p *Process) resumed(t *thread) bool {
	k := t.resume
	t.resume = resumeNone
	switch k {
	case resumeSigwait:
		p.sigwaitResume(t)
	case resumePipeRead, resumePipeWrite:
		return p.pipeResume(t, k)
	case resumePoll:
		return p.pollResume(t)
	case resumeSignalfd:
		return p.signalfdResume(t)
	case resumeEventfd:
		return p.eventfdResume(t)
	case resumeTimerfd:
		return p.timerfdResume(t)
	case resumeFlock:
		return p.flockResume(t)
	case resumeOFDLock:
		return p.ofdResume(t)
	}
	return true
}

// waitedFile returns the file of kind that thread t's blocked read or
// write (wargs: fd, ..., ino) waits on, or nil with the call's result
// EBADF if the descriptor was closed (or is another file) meanwhile.
func (p *Process) waitedFile(t *thread, kind fileKind) *openFile {
	f := p.fds[int(int32(t.wargs[0]))]
	if f == nil || f.kind != kind || f.ino != t.wargs[3] {
		t.ret = sysErr(eBADF)
		return nil
	}
	return f
}

// retried ends the read or write thread t waits in (resume kind k) with
// what its retry gave: n, or errno e; or, if it would block again, puts
// it back to waiting (false, unless a signal came meanwhile: waitAgain).
func (p *Process) retried(t *thread, k resumeKind, n uint64, e int, block bool) bool {
	switch {
	case e != 0:
		t.ret = sysErr(e)
	case block:
		return p.waitAgain(t, -1, k)
	default:
		t.ret = n
	}
	return true
}

// sigset reads a sigset_t of size (which must be 8) at addr.
func (p *Process) sigset(addr, size uint64) (uint64, int) {
	if size != 8 {
		return 0, eINVAL
	}
	b, ok := p.readGuest(addr, 8)
	if !ok {
		return 0, eFAULT
	}
	return binary.LittleEndian.Uint64(b) &^ unblockable, 0
}

// suspend blocks the running thread until a signal it does not block is
// pending (at once if one is): the call then returns ERESTARTNOHAND, a
// handler makes that EINTR.
func (p *Process) suspend(why string) uint64 {
	t := p.thr.cur
	if p.deliverable(t) != 0 {
		return sysErr(eRestartNoHand)
	}
	p.waitOn(0, 0, -1, why)
	t.intr, t.sigWait = eRestartNoHand, true
	return 0
}

// sysRtSigsuspend is rt_sigsuspend(mask, size): wait with mask for a
// signal; the handler's frame saves the mask from before.
func (p *Process) sysRtSigsuspend(a *[6]uint64) uint64 {
	set, e := p.sigset(a[0], a[1])
	if e != 0 {
		return sysErr(e)
	}
	t := p.thr.cur
	t.sig.saved, t.sig.restoreMask = t.sig.mask, true
	t.sig.mask = set
	return p.suspend("sigsuspend")
}

func (p *Process) sysPause(a *[6]uint64) uint64 { return p.suspend("pause") }

// sysRtSigtimedwait is rt_sigtimedwait(set, info, timeout, size): take a
// pending signal of set (they are normally blocked), waiting for one
// until the timeout (NULL: none); EAGAIN when it passes, EINTR if another
// signal interrupts the wait.
func (p *Process) sysRtSigtimedwait(a *[6]uint64) uint64 {
	set, e := p.sigset(a[0], a[3])
	if e != 0 {
		return sysErr(e)
	}
	deadline := int64(-1)
	if a[2] != 0 {
		b, ok := p.readGuest(a[2], 16)
		if !ok {
			return sysErr(eFAULT)
		}
		d, e := p.timespecNS(b)
		if e != 0 {
			return sysErr(e)
		}
		deadline = p.base() + d
	}
	t := p.thr.cur
	if sig := p.nextSignal(t, ^set); sig != 0 {
		return p.takeWaited(t, sig, a[1])
	}
	if deadline == p.base() {
		return sysErr(eAGAIN)
	}
	// The waited-for signals are unblocked while it waits, so that they
	// wake it (real_blocked keeps the mask).
	t.sig.realBlocked = t.sig.mask
	t.sig.mask &^= set
	p.waitOn(0, 0, deadline, "sigtimedwait")
	t.intr, t.timeoutRet, t.resume, t.sigWait = eINTR, sysErr(eAGAIN), resumeSigwait, true
	t.wargs = [8]uint64{set, a[1]}
	return 0
}

// takeWaited dequeues sig for rt_sigtimedwait, stores its siginfo at info
// (if not NULL) and returns the call's result.
func (p *Process) takeWaited(t *thread, sig int, info uint64) uint64 {
	si := p.dequeue(t, sig)
	if info != 0 && !p.writeGuest(info, si.bytes()) {
		return sysErr(eFAULT)
	}
	return uint64(sig)
}

// sigwaitResume ends a wait of rt_sigtimedwait: the mask is restored and a
// waited-for signal taken if one is pending; otherwise the result stays
// (EINTR, or EAGAIN for the timeout).
func (p *Process) sigwaitResume(t *thread) {
	t.sig.mask = t.sig.realBlocked
	if sig := p.nextSignal(t, ^t.wargs[0]); sig != 0 {
		t.ret = p.takeWaited(t, sig, t.wargs[1])
		t.restarting = 0
	}
}

// queueInfo reads the siginfo_t of rt_sigqueueinfo and rt_tgsigqueueinfo:
// a process may send itself any si_code, as Linux allows.
func (p *Process) queueInfo(sig int, addr uint64) (sigInfo, int) {
	b, ok := p.readGuest(addr, 128)
	if !ok {
		return sigInfo{}, eFAULT
	}
	if sig < 0 || sig > nsig {
		return sigInfo{}, eINVAL
	}
	return sigInfo{signo: int32(sig), raw: b}, 0
}

// sysRtSigqueueinfo is rt_sigqueueinfo(tgid, sig, info): sigqueue.
func (p *Process) sysRtSigqueueinfo(a *[6]uint64) uint64 {
	si, e := p.queueInfo(int(int32(a[1])), a[2])
	if e != 0 {
		return sysErr(e)
	}
	if int32(a[0]) != guestPID {
		return sysErr(eSRCH)
	}
	if si.signo >= sigRTMIN && p.sigQueueFull() {
		return sysErr(eAGAIN)
	}
	if si.signo != 0 {
		p.queueSignal(nil, si, true)
	}
	return 0
}

// sysRtTgsigqueueinfo is rt_tgsigqueueinfo(tgid, tid, sig, info):
// pthread_sigqueue.
func (p *Process) sysRtTgsigqueueinfo(a *[6]uint64) uint64 {
	si, e := p.queueInfo(int(int32(a[2])), a[3])
	if e != 0 {
		return sysErr(e)
	}
	t := p.threadByTID(int32(a[1]))
	if int32(a[0]) != guestPID || t == nil {
		return sysErr(eSRCH)
	}
	if si.signo >= sigRTMIN && p.sigQueueFull() {
		return sysErr(eAGAIN)
	}
	if si.signo != 0 {
		p.queueSignal(t, si, true)
	}
	return 0
}

// sysRestartSyscall is restart_syscall: it continues what the thread's
// restart block holds (a nanosleep or a futex wait to its deadline);
// EINTR if nothing.
func (p *Process) sysRestartSyscall(a *[6]uint64) uint64 {
	t := p.thr.cur
	rb := t.restart
	t.restart = restartBlock{}
	switch rb.kind {
	case restartNanosleep:
		return p.sleepUntil(rb.deadline, rb.addr, true)
	case restartFutex:
		return p.futexWait(rb.addr, rb.val, rb.bitset, rb.deadline)
	case restartPoll:
		return p.waitReady([8]uint64{waitPoll, rb.addr, rb.nfds}, rb.deadline)
	}
	return sysErr(eINTR)
}
