//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Timers on the deterministic clocks (sys_time.go): alarm, the interval
// timers (setitimer: ITIMER_REAL on the real clock, ITIMER_VIRTUAL and
// ITIMER_PROF on the process's CPU time, which is its instruction count)
// and POSIX timers (timer_create on CLOCK_REALTIME, MONOTONIC, BOOTTIME,
// TAI or PROCESS_CPUTIME_ID, signalling the process or, with
// SIGEV_THREAD_ID, one thread).
//
// A timer expires at an exact instruction: Continue never lets the engine
// run past the next expiry (timerSlice), so the signal arrives after the
// same instruction on every run, in the middle of a loop as in a blocking
// call (a timer's signal interrupts it as any other: signals.go). When
// every thread waits, the clock jumps to the next expiry of a timer on
// the real clock as to the end of a sleep (sched.go); the CPU-time clock
// stands still then.
//
// As in Linux, a POSIX timer whose signal is still queued is not re-armed
// until the signal is taken: then the periods it missed become the
// signal's si_overrun (timer_getoverrun) and the next expiry is the first
// period after that moment. An interval timer sends its signal at each
// period (a standard signal already pending absorbs it).

// Timer clocks: the base clock (Process.base: instructions plus time
// slept) or the process's CPU time (instructions).
const (
	clockReal = iota
	clockCPU
)

// itimer is one of the process's interval timers (and alarm): the
// expiry on its clock and the period (0: one-shot).
type itimer struct {
	armed            bool
	expiry, interval int64
}

// posixTimer is a timer_create timer.
type posixTimer struct {
	id               int32
	clock            int   // clockReal, clockCPU
	offset           int64 // the clock it was created on minus the timer clock
	armed            bool
	expiry, interval int64
	notify           int // sigevNone, sigevSignal, sigevThreadID
	sig              int
	tid              int // SIGEV_THREAD_ID's thread
	value            uint64
	queued           bool   // its signal is queued, not taken yet
	gen              uint64 // settings changed since the signal was queued: no re-arm then
	overrun          int32  // timer_getoverrun: of the last signal taken
}

// timerState is the process's timers (part of sigState).
type timerState struct {
	itimers [3]itimer // ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF
	posix   []posixTimer
	nextID  int32
}

func (s timerState) clone() timerState {
	s.posix = slices.Clone(s.posix)
	return s
}

// sigevent's sigev_notify.
const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThread   = 2
	sigevThreadID = 4
)

// maxSec is the most seconds a timeout holds in nanoseconds (KTIME_MAX).
const maxSec = (1<<63-1)/1_000_000_000 - 1

const (
	siTimer      = -2 // si_code of a POSIX timer's signal (SI_TIMER)
	timerAbstime = 1
	sigALRM      = 14
	sigVTALRM    = 26
	sigPROF      = 27
)

// itimerClock and itimerSignal: the clock and signal of each interval
// timer.
var (
	itimerClock  = [3]int{clockReal, clockCPU, clockCPU}
	itimerSignal = [3]int{sigALRM, sigVTALRM, sigPROF}
)

// clockAt returns the timer clock's current value.
func (p *Process) clockAt(clock int) int64 {
	if clock == clockCPU {
		return int64(p.Engine.Executed())
	}
	return p.base()
}

// timerClock maps a clockid to a timer clock and the offset of the clock
// the guest reads from it (clock_gettime = timer clock + offset).
func (p *Process) timerClock(clk uint64) (clock int, offset int64, ok bool) {
	switch clk {
	case 0, 1, 7, 11: // REALTIME, MONOTONIC, BOOTTIME, TAI
		now, _ := p.now(clk)
		return clockReal, now - p.base(), true
	case 2: // PROCESS_CPUTIME_ID
		return clockCPU, 0, true
	}
	// A CPU clock by pid (glibc's timer_create makes CLOCK_PROCESS_CPUTIME_ID
	// one): ~pid << 3 | per-thread bit | PROF, VIRT or SCHED. The
	// process's own, whichever: its CPU time is its instruction count.
	if c := int32(clk); c < 0 && c&4 == 0 && c&3 != 3 {
		if pid := ^(c >> 3); pid == 0 || pid == guestPID {
			return clockCPU, 0, true
		}
	}
	return 0, 0, false
}

// forward moves a periodic expiry past now; it returns the new expiry and
// how many periods were missed beyond the one that expired.
func forward(expiry, interval, now int64) (int64, int64) {
	k := (now-expiry)/interval + 1
	return expiry + k*interval, k - 1
}

// timerSlice bounds the instructions of the next engine run so that it
// stops at the next expiry of an armed timer (at least one instruction).
func (p *Process) timerSlice(n uint64) uint64 {
	ts := &p.sig.timers
	bound := func(clock int, expiry int64) {
		d := expiry - p.clockAt(clock)
		n = min(n, uint64(max(d, 1)))
	}
	for i, it := range ts.itimers {
		if it.armed {
			bound(itimerClock[i], it.expiry)
		}
	}
	for _, t := range ts.posix {
		if t.armed && !t.queued {
			bound(t.clock, t.expiry)
		}
	}
	return n
}

// nextRealExpiry returns the earliest expiry on the real clock of a
// timer whose firing could change something (its signal is not already
// pending, nor ignored), for the scheduler's jump when every thread waits.
func (p *Process) nextRealExpiry() (int64, bool) {
	ts := &p.sig.timers
	at, ok := int64(0), false
	consider := func(e int64) {
		if !ok || e < at {
			at, ok = e, true
		}
	}
	if it := ts.itimers[0]; it.armed && !p.ignored(sigALRM) && p.sig.shared.set&sigmask(sigALRM) == 0 {
		consider(it.expiry)
	}
	for _, t := range ts.posix {
		if t.armed && !t.queued && t.clock == clockReal && t.notify != sigevNone && !p.ignored(t.sig) {
			consider(t.expiry)
		}
	}
	return at, ok
}

// fireTimers sends the signals of the timers that have expired.
func (p *Process) fireTimers() {
	ts := &p.sig.timers
	for i := range ts.itimers {
		it := &ts.itimers[i]
		if !it.armed {
			continue
		}
		now := p.clockAt(itimerClock[i])
		if it.expiry > now {
			continue
		}
		if it.interval > 0 {
			it.expiry, _ = forward(it.expiry, it.interval, now)
		} else {
			it.armed = false
		}
		p.queueSignal(nil, sigInfo{signo: int32(itimerSignal[i]), code: siKernel}, false)
	}
	for i := range ts.posix {
		t := &ts.posix[i]
		if !t.armed || t.queued {
			continue
		}
		now := p.clockAt(t.clock)
		if t.expiry > now {
			continue
		}
		queued := false
		if t.notify != sigevNone {
			var target *thread
			if t.notify == sigevThreadID {
				if target = p.threadByTID(int32(t.tid)); target == nil {
					t.armed = false // its thread is gone
					continue
				}
			}
			si := sigInfo{signo: int32(t.sig), code: siTimer, timer: true, timerID: t.id, value: t.value, gen: t.gen}
			queued = p.queueSignal(target, si, false)
		}
		switch {
		case queued:
			t.queued = true
			if t.interval == 0 {
				t.armed = false
			}
		case t.interval > 0: // ignored or SIGEV_NONE: keeps its period
			t.expiry, _ = forward(t.expiry, t.interval, now)
		default:
			t.armed = false
		}
	}
}

// timerTaken is told that a POSIX timer's signal was dequeued: the timer
// is re-armed past now and the periods it missed become si_overrun.
func (p *Process) timerTaken(si *sigInfo) {
	ts := &p.sig.timers
	for i := range ts.posix {
		t := &ts.posix[i]
		if t.id != si.timerID || !t.queued || t.gen != si.gen {
			continue
		}
		t.queued = false
		t.overrun = 0
		if t.armed && t.interval > 0 {
			var missed int64
			t.expiry, missed = forward(t.expiry, t.interval, p.clockAt(t.clock))
			t.overrun = int32(min(missed, 1<<31-1)) // DELAYTIMER_MAX
			// Taken by rt_sigtimedwait, in a run: bound it anew.
			p.rebound()
		}
		si.overrun = t.overrun
		return
	}
}

// timespecNS reads a struct timespec in nanoseconds (EINVAL if not
// normalized or negative).
func (p *Process) timespecNS(b []byte) (int64, int) {
	s, ns := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if s < 0 || ns < 0 || ns >= 1e9 {
		return 0, eINVAL
	}
	if s > maxSec {
		s = maxSec // KTIME_MAX
	}
	return s*1e9 + ns, 0
}

// timevalNS reads a struct timeval in nanoseconds (EINVAL if not
// normalized or negative).
func timevalNS(b []byte) (int64, int) {
	s, us := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if s < 0 || us < 0 || us >= 1e6 {
		return 0, eINVAL
	}
	if s > maxSec {
		s = maxSec
	}
	return s*1e9 + us*1e3, 0
}

// remaining is how long until a timer expires, as timer_gettime and
// getitimer report it: a periodic timer past its expiry (its signal not
// taken yet) reports the time to its next period, a one-shot one 1 ns.
func remaining(armed bool, expiry, interval, now int64) int64 {
	switch {
	case !armed:
		return 0
	case expiry > now:
		return expiry - now
	case interval > 0:
		next, _ := forward(expiry, interval, now)
		return next - now
	}
	return 1
}

func (p *Process) sysSetitimer(a *[6]uint64) uint64 {
	which := a[0]
	if which > 2 {
		return sysErr(eINVAL)
	}
	var interval, value int64
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 32)
		if !ok {
			return sysErr(eFAULT)
		}
		var e int
		if interval, e = timevalNS(b); e != 0 {
			return sysErr(e)
		}
		if value, e = timevalNS(b[16:]); e != 0 {
			return sysErr(e)
		}
	}
	if a[2] != 0 && !p.writeGuest(a[2], p.getitimer(int(which))) {
		return sysErr(eFAULT)
	}
	p.setitimer(int(which), value, interval)
	return 0
}

// setitimer arms interval timer which to expire in value ns (0: disarm),
// then every interval ns.
func (p *Process) setitimer(which int, value, interval int64) {
	it := &p.sig.timers.itimers[which]
	*it = itimer{}
	if value > 0 {
		*it = itimer{armed: true, expiry: p.clockAt(itimerClock[which]) + value, interval: interval}
		p.rebound()
	}
}

// rebound ends the engine's run at the system call that armed a timer, so
// that the next run stops at its expiry (timerSlice) whatever the run's
// length: the signal arrives at the same instruction in every mode.
func (p *Process) rebound() { p.Engine.Stop() }

// getitimer encodes interval timer which as a struct itimerval.
func (p *Process) getitimer(which int) []byte {
	it := p.sig.timers.itimers[which]
	rem := remaining(it.armed, it.expiry, it.interval, p.clockAt(itimerClock[which]))
	if it.armed && rem < 1000 {
		rem = 1000 // an armed timer reports at least 1 µs
	}
	b := make([]byte, 32)
	le := binary.LittleEndian
	if it.armed {
		le.PutUint64(b, uint64(it.interval/1e9))
		le.PutUint64(b[8:], uint64(it.interval%1e9/1e3))
		le.PutUint64(b[16:], uint64(rem/1e9))
		le.PutUint64(b[24:], uint64(rem%1e9/1e3))
	}
	return b
}

func (p *Process) sysGetitimer(a *[6]uint64) uint64 {
	if a[0] > 2 {
		return sysErr(eINVAL)
	}
	if !p.writeGuest(a[1], p.getitimer(int(a[0]))) {
		return sysErr(eFAULT)
	}
	return 0
}

// sysAlarm is alarm(seconds): ITIMER_REAL once; it returns the seconds
// the previous alarm had left, rounded as Linux does.
func (p *Process) sysAlarm(a *[6]uint64) uint64 {
	old := p.getitimer(0)
	le := binary.LittleEndian
	s, us := le.Uint64(old[16:]), le.Uint64(old[24:])
	if s == 0 && us != 0 || us >= 500000 {
		s++
	}
	p.setitimer(0, int64(uint32(a[0]))*1e9, 0)
	return s
}

// timer returns the POSIX timer id (a timer_t: an int for the kernel),
// or nil.
func (p *Process) timer(id uint64) *posixTimer {
	if i := p.timerIndex(id); i >= 0 {
		return &p.sig.timers.posix[i]
	}
	return nil
}

func (p *Process) timerIndex(id uint64) int {
	for i, t := range p.sig.timers.posix {
		if int32(id) == t.id {
			return i
		}
	}
	return -1
}

// sysTimerCreate is timer_create(clockid, sigevent, timerid).
func (p *Process) sysTimerCreate(a *[6]uint64) uint64 {
	clk := a[0]
	clock, offset, ok := p.timerClock(clk)
	if !ok {
		if c := int32(clk); c == 3 || c == 8 || c == 9 || c < 0 && c&4 != 0 {
			p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call timer_create on clock %d: only CLOCK_REALTIME, MONOTONIC, BOOTTIME, TAI and the process's CPU-time clock are emulated (no thread CPU-time or alarm clocks)", c))
			return 0
		}
		return sysErr(eINVAL)
	}
	if p.sigQueueFull() {
		return sysErr(eAGAIN) // its signal's siginfo could not be allocated
	}
	ts := &p.sig.timers
	t := posixTimer{id: ts.nextID, clock: clock, offset: offset, notify: sigevSignal, sig: sigALRM, value: uint64(ts.nextID)}
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 64)
		if !ok {
			return sysErr(eFAULT)
		}
		le := binary.LittleEndian
		t.value, t.sig, t.notify = le.Uint64(b), int(int32(le.Uint32(b[8:]))), int(int32(le.Uint32(b[12:])))
		t.tid = int(int32(le.Uint32(b[16:])))
		switch t.notify {
		case sigevNone:
		case sigevSignal:
		case sigevThreadID:
			if p.threadByTID(int32(t.tid)) == nil {
				return sysErr(eINVAL)
			}
		default:
			return sysErr(eINVAL)
		}
		if t.notify != sigevNone && (t.sig < 1 || t.sig > nsig) {
			return sysErr(eINVAL)
		}
	}
	var idb [4]byte
	binary.LittleEndian.PutUint32(idb[:], uint32(t.id))
	if !p.writeGuest(a[2], idb[:]) {
		return sysErr(eFAULT)
	}
	ts.nextID++
	ts.posix = append(ts.posix, t)
	return 0
}

// readItimerspec reads the struct itimerspec at addr in nanoseconds:
// EFAULT, or EINVAL if a timespec is not normalized or negative.
func (p *Process) readItimerspec(addr uint64) (interval, value int64, errno int) {
	b, ok := p.readGuest(addr, 32)
	if !ok {
		return 0, 0, eFAULT
	}
	if interval, errno = p.timespecNS(b); errno != 0 {
		return 0, 0, errno
	}
	value, errno = p.timespecNS(b[16:])
	return interval, value, errno
}

// itimerspec encodes a struct itimerspec: interval, value.
func itimerspec(interval, value int64) []byte {
	b := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint64(b, uint64(interval/1e9))
	le.PutUint64(b[8:], uint64(interval%1e9))
	le.PutUint64(b[16:], uint64(value/1e9))
	le.PutUint64(b[24:], uint64(value%1e9))
	return b
}

func (p *Process) gettime(t *posixTimer) []byte {
	rem := remaining(t.armed, t.expiry, t.interval, p.clockAt(t.clock))
	if t.armed && t.expiry <= p.clockAt(t.clock) && t.interval == 0 && t.notify == sigevNone {
		rem = 0 // an expired one-shot SIGEV_NONE timer
	}
	return itimerspec(t.interval, rem)
}

// sysTimerSettime is timer_settime(timerid, flags, new, old).
func (p *Process) sysTimerSettime(a *[6]uint64) uint64 {
	t := p.timer(a[0])
	if t == nil {
		return sysErr(eINVAL)
	}
	interval, value, e := p.readItimerspec(a[2])
	if e != 0 {
		return sysErr(e)
	}
	if a[3] != 0 && !p.writeGuest(a[3], p.gettime(t)) {
		return sysErr(eFAULT)
	}
	t.gen++
	t.queued, t.armed, t.interval = false, false, interval
	if value == 0 {
		return 0
	}
	now := p.clockAt(t.clock)
	if a[1]&timerAbstime != 0 {
		t.expiry = value - t.offset // from the guest's clock to the timer clock
	} else {
		t.expiry = now + value
	}
	t.armed = true
	p.rebound()
	return 0
}

func (p *Process) sysTimerGettime(a *[6]uint64) uint64 {
	t := p.timer(a[0])
	if t == nil {
		return sysErr(eINVAL)
	}
	if !p.writeGuest(a[1], p.gettime(t)) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysTimerGetoverrun(a *[6]uint64) uint64 {
	t := p.timer(a[0])
	if t == nil {
		return sysErr(eINVAL)
	}
	return uint64(t.overrun)
}

// sysTimerDelete is timer_delete: a signal it queued stays pending.
func (p *Process) sysTimerDelete(a *[6]uint64) uint64 {
	i := p.timerIndex(a[0])
	if i < 0 {
		return sysErr(eINVAL)
	}
	p.sig.timers.posix = slices.Delete(p.sig.timers.posix, i, i+1)
	return 0
}
