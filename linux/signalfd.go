//go:build cgo

package linux

import (
	"encoding/binary"
)

// signalfd: a descriptor that reads the pending signals of a set (which
// the threads normally block) as struct signalfd_siginfo, as Linux's
// fs/signalfd.c: a read takes the reading thread's own signals first, then
// the process's; it waits for the first one (EAGAIN with SFD_NONBLOCK;
// a signal it does not block interrupts it with ERESTARTSYS); poll
// reports it readable when one of the set is pending for the polling
// thread.

// signalfdInfoSize is sizeof(struct signalfd_siginfo).
const signalfdInfoSize = 128

func (p *Process) sysSignalfd(a *[6]uint64) uint64 { return p.signalfd(a[0], a[1], a[2], 0) }

func (p *Process) sysSignalfd4(a *[6]uint64) uint64 { return p.signalfd(a[0], a[1], a[2], a[3]) }

// signalfd is signalfd4(fd, mask, sizemask, flags): a new descriptor for
// fd -1, else a new mask for signalfd fd.
func (p *Process) signalfd(fd, maskAddr, size, flags uint64) uint64 {
	if flags&^uint64(oNONBLOCK|oCLOEXEC) != 0 {
		return sysErr(eINVAL)
	}
	set, e := p.sigset(maskAddr, size)
	if e != 0 {
		return sysErr(e)
	}
	if int32(fd) != -1 {
		f := p.fds[int(int32(fd))]
		switch {
		case f == nil:
			return sysErr(eBADF)
		case f.kind != fileSignalfd:
			return sysErr(eINVAL)
		}
		f.sigmask = set
		p.signalsChanged()
		return uint64(uint32(fd))
	}
	f := &openFile{kind: fileSignalfd, sigmask: set, flags: oRDWR | flags&oNONBLOCK, ino: p.ov.nextIno}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	p.ov.nextIno++
	return p.withCloexec(uint64(n), flags&oCLOEXEC != 0)
}

// signalsChanged wakes the threads reading a signalfd or polling: they
// look again when they get the CPU (Process.resumed).
func (p *Process) signalsChanged() {
	for _, t := range p.thr.list {
		if t.state == blocked && (t.resume == resumeSignalfd || t.resume == resumePoll) {
			t.wake(0)
		}
	}
}

// signalfdRead reads the pending signals of f's set for thread t into
// buf: as many whole signalfd_siginfo as fit; block set when none is
// pending and it must wait.
func (p *Process) signalfdRead(t *thread, f *openFile, buf, count uint64) (n uint64, errno int, block bool) {
	if count < signalfdInfoSize {
		return 0, eINVAL, false
	}
	count = min(count, maxRW)
	if !p.writable(buf, count-count%signalfdInfoSize) {
		return 0, eFAULT, false
	}
	for n+signalfdInfoSize <= count {
		sig := p.nextSignal(t, ^f.sigmask)
		if sig == 0 {
			break
		}
		si := p.dequeue(t, sig)
		p.writeGuest(buf+n, si.signalfdBytes())
		n += signalfdInfoSize
	}
	switch {
	case n > 0:
		return n, 0, false
	case f.flags&oNONBLOCK != 0:
		return 0, eAGAIN, false
	}
	return 0, 0, true
}

// signalfdIO is read(2) of a signalfd by the running thread.
func (p *Process) signalfdIO(fd, buf, count uint64) uint64 {
	f := p.fds[int(int32(fd))]
	t := p.thr.cur
	n, e, block := p.signalfdRead(t, f, buf, count)
	switch {
	case e != 0:
		return sysErr(e)
	case !block:
		return n
	}
	if _, timer := p.nextRealExpiry(); p.live() == 1 && !timer && !p.outsideSignals() {
		p.sysStop(StopDeadlock, 0, "deadlock: read of a signalfd with no other thread or timer to send a signal")
		return 0
	}
	p.waitOn(0, 0, -1, "read of a signalfd")
	t.resume, t.wargs, t.sigWait = resumeSignalfd, [8]uint64{fd, buf, count, f.ino}, true
	return 0
}

// signalfdResume retries the read thread t waits in; false if it must
// wait again.
func (p *Process) signalfdResume(t *thread) bool {
	f := p.waitedFile(t, fileSignalfd)
	if f == nil {
		return true
	}
	n, e, block := p.signalfdRead(t, f, t.wargs[1], t.wargs[2])
	return p.retried(t, resumeSignalfd, n, e, block)
}

// signalfdBytes encodes si as a struct signalfd_siginfo (signalfd_copyinfo:
// the fields of its siginfo layout).
func (si *sigInfo) signalfdBytes() []byte {
	le := binary.LittleEndian
	raw := si.bytes()
	b := make([]byte, signalfdInfoSize)
	code := int32(le.Uint32(raw[8:]))
	copy(b, raw[:12]) // ssi_signo, ssi_errno, ssi_code
	switch {
	case code > 0 && code < siKernel && si.fault:
		copy(b[72:], raw[16:24]) // ssi_addr
	case code == siTimer:
		copy(b[24:], raw[16:24]) // ssi_tid, ssi_overrun
		copy(b[48:], raw[24:32]) // ssi_ptr
		copy(b[44:], raw[24:28]) // ssi_int
	case code < 0: // SIL_RT: sigqueue, tkill
		copy(b[12:], raw[16:24]) // ssi_pid, ssi_uid
		copy(b[48:], raw[24:32])
		copy(b[44:], raw[24:28])
	default: // SIL_KILL
		copy(b[12:], raw[16:24])
	}
	return b
}
