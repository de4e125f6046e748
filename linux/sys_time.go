//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"time"
)

// System calls on time: clocks and sleeping.

// epoch is the fake wall clock's start: 2025-01-01 00:00:00 UTC.
const epoch = 1735689600

// bootStart is the monotonic and boot-time clocks' value when the process
// starts (ns): it started 1000 s after boot.
const bootStart = 1000e9

// now returns clock clk in nanoseconds, or false for an unknown clock.
func (p *Process) now(clk uint64) (int64, bool) {
	t := int64(p.Engine.Executed()) + int64(p.sleep)
	switch clk {
	case 0, 5, 8, 11: // REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI
		return epoch*1e9 + t, true
	case 1, 4, 6, 7, 9: // MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME, BOOTTIME_ALARM
		return bootStart + t, true
	case 2, 3: // PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID
		return int64(p.Engine.Executed()), true
	}
	return 0, false
}

func (p *Process) sysClockGettime(a *[6]uint64) uint64 {
	t, ok := p.now(a[0])
	if !ok {
		return sysErr(eINVAL)
	}
	if !p.put64(a[1], uint64(t/1e9), uint64(t%1e9)) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysClockGetres(a *[6]uint64) uint64 {
	if _, ok := p.now(a[0]); !ok {
		return sysErr(eINVAL)
	}
	res := uint64(1)
	if int32(a[0]) == 5 || int32(a[0]) == 6 { // REALTIME_COARSE, MONOTONIC_COARSE: a tick (HZ 250)
		res = 4_000_000
	}
	if a[1] != 0 && !p.put64(a[1], 0, res) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysGettimeofday(a *[6]uint64) uint64 {
	t, _ := p.now(0)
	if a[0] != 0 && !p.put64(a[0], uint64(t/1e9), uint64(t%1e9/1e3)) {
		return sysErr(eFAULT)
	}
	if a[1] != 0 && !p.put64(a[1], 0) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysTime(a *[6]uint64) uint64 {
	t, _ := p.now(0)
	if a[0] != 0 && !p.put64(a[0], uint64(t/1e9)) {
		return sysErr(eFAULT)
	}
	return uint64(t / 1e9)
}

// clockTicks is USER_HZ, the unit of times(2).
const clockTicks = 100

// sysTimes is times(buf): the process's CPU time (the instructions it
// executed, all user time) in clock ticks, no children's; it returns the
// monotonic clock in ticks.
func (p *Process) sysTimes(a *[6]uint64) uint64 {
	cpu, _ := p.now(2)
	if a[0] != 0 && !p.put64(a[0], uint64(cpu)/(1e9/clockTicks), 0, 0, 0) {
		return sysErr(eFAULT)
	}
	t, _ := p.now(1)
	return uint64(t) / (1e9 / clockTicks)
}

// sysGetrusage is getrusage(who, usage): for the process and the thread,
// the CPU time (all user time) and, as the largest resident set, the most
// memory the guest has held at once (in KiB); nothing else happened (no faults
// counted, no context switches, no I/O blocks); for the children, none.
func (p *Process) sysGetrusage(a *[6]uint64) uint64 {
	const rusageSelf, rusageChildren, rusageThread = 0, -1, 1
	var v [18]uint64     // ru_utime, ru_stime (timevals), then 14 longs
	switch int32(a[0]) { // an int: glibc sets only the low 32 bits (x86-64)
	case rusageSelf, rusageThread:
		cpu, _ := p.now(2)
		v[0], v[1] = uint64(cpu)/1e9, uint64(cpu)%1e9/1e3
		v[4] = p.vm.maxUsed() / 1024 // ru_maxrss
	case rusageChildren:
	default:
		return sysErr(eINVAL)
	}
	if !p.put64(a[1], v[:]...) {
		return sysErr(eFAULT)
	}
	return 0
}

// timespec reads a struct timespec as a duration.
func (p *Process) timespec(addr uint64) (time.Duration, int) {
	b, ok := p.readGuest(addr, 16)
	if !ok {
		return 0, eFAULT
	}
	s, ns := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if s < 0 || ns < 0 || ns >= 1e9 {
		return 0, eINVAL
	}
	return time.Duration(s)*time.Second + time.Duration(ns), 0
}

func (p *Process) sysNanosleep(a *[6]uint64) uint64 {
	d, e := p.timespec(a[0])
	if e != 0 {
		return sysErr(e)
	}
	return p.sleepUntil(p.base()+int64(d), a[1], true)
}

// sleepUntil sleeps until deadline on the base clock: a lone thread
// advances the clock at once (when no timer can interrupt it), otherwise
// it blocks until the clock reaches the deadline. A signal interrupts a
// relative sleep with ERESTART_RESTARTBLOCK (the time left stored at rem,
// if not 0; without a handler it goes on through restart_syscall), an
// absolute one with ERESTARTNOHAND, as Linux's hrtimer_nanosleep.
func (p *Process) sleepUntil(deadline int64, rem uint64, relative bool) uint64 {
	now := p.base()
	if p.live() == 1 {
		if at, ok := p.nextRealExpiry(); !ok || at >= deadline {
			if deadline > now {
				p.sleep += time.Duration(deadline - now)
			}
			// A timer expiring at the very end fires now, as after a
			// blocking sleep.
			p.fireTimers()
			p.pollSignals()
			return 0
		}
	}
	t := p.thr.cur
	p.waitOn(0, 0, deadline, fmt.Sprintf("sleep of %v", time.Duration(max(deadline-now, 0))))
	t.intr = eRestartNoHand
	if relative {
		t.intr = eRestartBlock
		t.restart = restartBlock{kind: restartNanosleep, deadline: deadline, addr: rem}
	}
	return 0
}

func (p *Process) sysClockNanosleep(a *[6]uint64) uint64 {
	now, ok := p.now(a[0])
	if !ok || a[0] == 2 || a[0] == 3 {
		return sysErr(eINVAL)
	}
	d, e := p.timespec(a[2])
	if e != 0 {
		return sysErr(e)
	}
	if a[1]&1 != 0 { // TIMER_ABSTIME
		return p.sleepUntil(p.base()+max(0, int64(d)-now), 0, false)
	}
	return p.sleepUntil(p.base()+int64(d), a[3], true)
}

// The clock's discipline, read and set. The guest (uid 1000, without
// CAP_SYS_TIME) may read it: adjtimex and clock_adjtime of CLOCK_REALTIME
// with no mode, or ADJ_OFFSET_SS_READ, give the state of a kernel clock no
// NTP daemon disciplines, the same in every run (what Linux gives then:
// STA_UNSYNC, the largest error, the default constant and tolerance, a tick
// of 10000 µs at USER_HZ 100, and TIME_ERROR), with the fake clock's time.
// Setting it, or the time (settimeofday, clock_settime of CLOCK_REALTIME),
// is EPERM, after the checks Linux makes first.

const (
	adjOffsetSingleshot = 0x0001
	adjOffsetReadonly   = 0x2000
	adjAdjtime          = 0x8000
	timeError           = 5 // the clock is not synchronized
)

func (p *Process) sysAdjtimex(a *[6]uint64) uint64 { return p.adjtime(a[0]) }

func (p *Process) sysClockAdjtime(a *[6]uint64) uint64 {
	switch clk := int32(a[0]); {
	case clk == 0: // CLOCK_REALTIME
		return p.adjtime(a[1])
	case clk >= 1 && clk <= 11 && clk != 10:
		return sysErr(eOPNOTSUPP) // a clock that cannot be adjusted
	}
	return sysErr(eINVAL)
}

// adjtime is adjtimex of the struct timex at addr (208 bytes, the same on
// x86-64 and AArch64).
func (p *Process) adjtime(addr uint64) uint64 {
	b, ok := p.readGuest(addr, 208)
	if !ok {
		return sysErr(eFAULT)
	}
	le := binary.LittleEndian
	modes := le.Uint32(b[0:])
	switch {
	case modes&adjAdjtime != 0 && modes&adjOffsetSingleshot == 0:
		return sysErr(eINVAL)
	case modes&adjAdjtime != 0 && modes&adjOffsetReadonly == 0, modes&adjAdjtime == 0 && modes != 0:
		return sysErr(ePERM)
	}
	t, _ := p.now(0)
	out := make([]byte, 208)
	copy(out, b[:4])
	for _, f := range []struct {
		off int
		v   uint64
	}{
		{24, 16_000_000}, {32, 16_000_000}, // maxerror, esterror (µs): NTP_PHASE_LIMIT
		{48, 2}, {56, 1}, {64, 32_768_000}, // constant, precision, tolerance (500 ppm << 16)
		{72, uint64(t / 1e9)}, {80, uint64(t % 1e9 / 1e3)}, // time
		{88, 10000}, // tick
	} {
		le.PutUint64(out[f.off:], f.v)
	}
	le.PutUint32(out[40:], 0x40) // status: STA_UNSYNC
	if !p.writeGuest(addr, out) {
		return sysErr(eFAULT)
	}
	return timeError
}

func (p *Process) sysSettimeofday(a *[6]uint64) uint64 {
	if a[0] != 0 {
		b, ok := p.readGuest(a[0], 16)
		if !ok {
			return sysErr(eFAULT)
		}
		sec, usec := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
		if usec < 0 || usec > 1e6 || sec < 0 || usec == 1e6 {
			return sysErr(eINVAL)
		}
	}
	if a[1] != 0 {
		if _, ok := p.readGuest(a[1], 8); !ok {
			return sysErr(eFAULT)
		}
	}
	return sysErr(ePERM)
}

func (p *Process) sysClockSettime(a *[6]uint64) uint64 {
	if int32(a[0]) != 0 { // only CLOCK_REALTIME can be set
		return sysErr(eINVAL)
	}
	b, ok := p.readGuest(a[1], 16)
	if !ok {
		return sysErr(eFAULT)
	}
	sec, nsec := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return sysErr(eINVAL)
	}
	return sysErr(ePERM)
}
