//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// timerfd: a timer read through a descriptor, as Linux's fs/timerfd.c,
// on the deterministic clocks (sys_time.go): CLOCK_REALTIME, MONOTONIC and
// BOOTTIME, all offsets of the base clock (the _ALARM clocks need
// CAP_WAKE_ALARM, which the guest has not: EPERM).
//
// A read returns how many times the timer expired since the last read (a
// periodic timer counts every period that passed) and waits while it has
// not (EAGAIN with TFD_NONBLOCK); poll, select and epoll report it
// readable then. As in Linux, a timer that fires stops until a read or
// timerfd_gettime starts it again (counting the periods it missed): so an
// EPOLLET waiter is woken once per read. The state is brought up to date
// when asked for, from the clock: nothing happens at the expiry itself but
// for the threads that wait on the timer, which the scheduler wakes at
// that moment (thread.wakeAt; when every thread waits, the clock jumps
// there as to the end of a sleep). The clock cannot be set, so
// TFD_TIMER_CANCEL_ON_SET never cancels.

// timerfd is a timerfd's timer, on the base clock: Linux's timerfd_ctx.
type timerfd struct {
	clockid          uint64
	offset           int64 // the guest's clock minus the base clock
	running          bool  // it fires at expiry (the hrtimer is queued)
	expired          bool  // it fired and has not been started again
	expiry, interval int64
	ticks            uint64 // expirations not read yet
	gen              uint64 // firings (EPOLLET)
}

// timerfd_create and timerfd_settime flags.
const (
	tfdTimerAbstime     = 1
	tfdTimerCancelOnSet = 2
)

// tick fires the timer if it is running and its expiry has come
// (timerfd_tmrproc): one expiry, and it stops.
func (tf *timerfd) tick(now int64) {
	if tf.running && tf.expiry <= now {
		tf.running, tf.expired = false, true
		tf.ticks++
		tf.gen++
	}
}

// restart starts a periodic timer that fired again at its first period
// after now, counting the periods it missed (hrtimer_forward_now).
func (tf *timerfd) restart(now int64) {
	if tf.expired && tf.interval > 0 {
		var missed int64
		tf.expiry, missed = forward(tf.expiry, tf.interval, now)
		tf.ticks += uint64(missed)
		tf.running = true
	}
	tf.expired = false
}

// wakeAt is when the timer next fires (-1: never), for a thread that
// waits until it has.
func (tf *timerfd) wakeAt() int64 {
	if !tf.running {
		return -1
	}
	return tf.expiry
}

// sysTimerfdCreate is timerfd_create(clockid, flags).
func (p *Process) sysTimerfdCreate(a *[6]uint64) uint64 {
	clk, flags := a[0], a[1]
	if flags&^uint64(oCLOEXEC|oNONBLOCK) != 0 {
		return sysErr(eINVAL)
	}
	switch int32(clk) {
	case 0, 1, 7: // REALTIME, MONOTONIC, BOOTTIME
	case 8, 9: // REALTIME_ALARM, BOOTTIME_ALARM
		return sysErr(ePERM)
	default:
		return sysErr(eINVAL)
	}
	now, _ := p.now(clk)
	tf := &timerfd{clockid: clk, offset: now - p.base()}
	f := &openFile{kind: fileTimerfd, tfd: tf, flags: oRDWR | flags&oNONBLOCK, ino: p.ov.nextIno}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	p.ov.nextIno++
	return p.withCloexec(uint64(n), flags&oCLOEXEC != 0)
}

// timerfdFile returns the timerfd fd refers to, or the error Linux gives.
func (p *Process) timerfdFile(fd uint64) (*openFile, int) {
	f := p.fds[int(int32(fd))]
	switch {
	case f == nil:
		return nil, eBADF
	case f.kind != fileTimerfd:
		return nil, eINVAL
	}
	return f, 0
}

// timerfdGettime is the struct itimerspec timerfd_gettime reports: the
// time to the next expiry (0 when disarmed or a one-shot timer expired)
// and the period. A periodic timer that fired starts again (as a read
// does, but its expirations stay to be read).
func (p *Process) timerfdGettime(tf *timerfd) []byte {
	now := p.base()
	tf.tick(now)
	if tf.expired && tf.interval > 0 {
		tf.restart(now)
	}
	return itimerspec(tf.interval, max(tf.expiry-now, 0))
}

// sysTimerfdSettime is timerfd_settime(fd, flags, new, old): the old
// setting is written after the new one took effect, as in Linux.
func (p *Process) sysTimerfdSettime(a *[6]uint64) uint64 {
	interval, value, e := p.readItimerspec(a[2])
	switch {
	case e != 0:
		return sysErr(e)
	case a[1]&^uint64(tfdTimerAbstime|tfdTimerCancelOnSet) != 0:
		return sysErr(eINVAL)
	}
	f, e := p.timerfdFile(a[0])
	if e != 0 {
		return sysErr(e)
	}
	tf := f.tfd
	old := p.timerfdGettime(tf)
	tf.running, tf.expired, tf.ticks, tf.interval, tf.expiry = false, false, 0, interval, 0
	if value != 0 {
		tf.running = true
		if a[1]&tfdTimerAbstime != 0 {
			tf.expiry = value - tf.offset // from the guest's clock to the base clock
		} else {
			tf.expiry = p.base() + value
		}
	}
	p.timerfdChanged(f.ino)
	if a[3] != 0 && !p.writeGuest(a[3], old) {
		return sysErr(eFAULT)
	}
	return 0
}

// sysTimerfdGettime is timerfd_gettime(fd, curr).
func (p *Process) sysTimerfdGettime(a *[6]uint64) uint64 {
	f, e := p.timerfdFile(a[0])
	if e != 0 {
		return sysErr(e)
	}
	if !p.writeGuest(a[1], p.timerfdGettime(f.tfd)) {
		return sysErr(eFAULT)
	}
	return 0
}

// timerfdTry reads timerfd f's expirations into the 8 bytes at buf:
// block set when there are none yet and it must wait.
func (p *Process) timerfdTry(f *openFile, buf, count uint64) (n uint64, errno int, block bool) {
	if count < 8 {
		return 0, eINVAL, false
	}
	tf, now := f.tfd, p.base()
	tf.tick(now)
	switch {
	case tf.ticks > 0:
		// Taken even if the buffer is bad, as in Linux.
		tf.restart(now)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], tf.ticks)
		tf.ticks = 0
		if !p.writeGuest(buf, b[:]) {
			return 0, eFAULT, false
		}
		return 8, 0, false
	case f.flags&oNONBLOCK != 0:
		return 0, eAGAIN, false
	}
	return 0, 0, true
}

// timerfdIO is read(2) of a timerfd by the running thread (a write is
// EINVAL, as Linux's timerfd has no write).
func (p *Process) timerfdIO(fd, buf, count uint64, write bool) uint64 {
	if write {
		return sysErr(eINVAL)
	}
	f := p.fds[int(int32(fd))]
	n, e, block := p.timerfdTry(f, buf, count)
	switch {
	case e != 0:
		return sysErr(e)
	case !block:
		return n
	}
	p.waitOn(0, 0, -1, fmt.Sprintf("read of timerfd %d", f.ino))
	t := p.thr.cur
	t.resume, t.wargs, t.wakeAt = resumeTimerfd, [8]uint64{fd, buf, count, f.ino}, f.tfd.wakeAt()
	return 0
}

// timerfdResume retries the read thread t waits in; false if it must
// wait again (until the timer's next expiry).
func (p *Process) timerfdResume(t *thread) bool {
	f := p.waitedFile(t, fileTimerfd)
	if f == nil {
		return true
	}
	n, e, block := p.timerfdTry(f, t.wargs[1], t.wargs[2])
	if block {
		t.wakeAt = f.tfd.wakeAt()
	}
	return p.retried(t, resumeTimerfd, n, e, block)
}

// timerfdChanged wakes the threads reading timerfd ino, and pollers: its
// next expiry changed.
func (p *Process) timerfdChanged(ino uint64) {
	for _, t := range p.thr.list {
		if t.state == blocked && (t.resume == resumeTimerfd && t.wargs[3] == ino || t.resume == resumePoll) {
			t.wake(0)
		}
	}
}

// timerfdReadiness is the poll mask of a timerfd. A poll that would wait
// notes when it fires next (Process.scanWake): then it is readable, or
// readable anew for an EPOLLET waiter.
func (p *Process) timerfdReadiness(tf *timerfd) uint32 {
	tf.tick(p.base())
	if at := tf.wakeAt(); at >= 0 && (p.scanWake < 0 || at < p.scanWake) {
		p.scanWake = at
	}
	if tf.ticks > 0 {
		return pollIn | pollRdnorm
	}
	return 0
}
