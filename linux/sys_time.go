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

// now returns clock clk in nanoseconds, or false for an unknown clock.
func (p *Process) now(clk uint64) (int64, bool) {
	t := int64(p.Engine.Executed()) + int64(p.sleep)
	switch clk {
	case 0, 5, 8, 11: // REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI
		return epoch*1e9 + t, true
	case 1, 4, 6, 7, 9: // MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME, BOOTTIME_ALARM
		return 1000e9 + t, true
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
	if a[1] != 0 && !p.put64(a[1], 0, 1) {
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
	return p.sleepFor(d)
}

// sleepFor sleeps for d: a lone thread advances the clock at once,
// otherwise it blocks until the clock reaches the end.
func (p *Process) sleepFor(d time.Duration) uint64 {
	if p.live() == 1 {
		p.sleep += d
		return 0
	}
	p.waitOn(0, 0, p.base()+int64(d), fmt.Sprintf("sleep of %v", d))
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
		d = max(0, d-time.Duration(now))
	}
	return p.sleepFor(d)
}
