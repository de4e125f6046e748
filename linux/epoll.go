//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"

	"github.com/sframesim/sframesim/arch"
)

// epoll and eventfd, as Linux's fs/eventpoll.c and fs/eventfd.c do them
// for the descriptors the guest can have (pipes, signalfds, eventfds, the
// standard streams; regular files and directories cannot be watched:
// EPERM).
//
// An epoll instance keeps its interest list in the order of
// EPOLL_CTL_ADD, and epoll_wait reports the ready ones in that order (the
// kernel's order, that of readiness, would depend on timing the guest
// cannot see: this one is deterministic). Level-triggered entries are
// reported while ready; EPOLLONESHOT ones once, until EPOLL_CTL_MOD;
// EPOLLET ones when the file has changed since they were last reported:
// new data or an end closed for a reader, room made for a writer, a
// write or read of an eventfd (the wakeups the kernel's queues get). An
// entry stays while its open file does, under the descriptor number it
// was added with, even if that number was closed and another still
// refers to the file, as in Linux. A wait blocks on the deterministic
// clock like poll, and a signal ends it with EINTR (epoll_wait is never
// restarted). An epoll instance inside another, and EPOLLET on a signalfd,
// stop the run.
//
// An eventfd is a 64-bit counter: a read takes it (EFD_SEMAPHORE: 1 of
// it) and waits while it is 0; a write adds to it and waits while that
// would pass 2^64-2; EFD_NONBLOCK makes EAGAIN of the waits.

// epoll is an epoll instance: its interest list.
type epoll struct {
	items []*epItem
}

// epItem is one watched descriptor.
type epItem struct {
	fd       int
	file     *openFile
	events   uint32
	data     uint64
	disabled bool   // EPOLLONESHOT, reported
	reported bool   // EPOLLET: reported at least once, at gen
	gen      uint64 // EPOLLET: the file's generation when last reported
}

// eventfd is an eventfd's counter.
type eventfd struct {
	count     uint64
	semaphore bool
	gen       uint64 // reads and writes (EPOLLET)
}

// epoll_event bits (include/uapi/linux/eventpoll.h).
const (
	epollIn        = 0x1
	epollOut       = 0x4
	epollErr       = 0x8
	epollHup       = 0x10
	epollRdhup     = 0x2000
	epollExclusive = 1 << 28
	epollWakeup    = 1 << 29
	epollOneshot   = 1 << 30
	epollET        = 1 << 31

	epollCtlAdd, epollCtlDel, epollCtlMod = 1, 2, 3

	epMaxEvents  = 0x7fffffff / 16 // INT_MAX / sizeof(struct epoll_event), at most
	eventfdMax   = ^uint64(0) - 1  // ULLONG_MAX - 1
	efdSemaphore = 1
	waitEpoll    = 2 // thread.wargs[0] of an epoll_wait (pollScan)
)

// epollEventSize is sizeof(struct epoll_event): packed on x86-64.
func (p *Process) epollEventSize() uint64 {
	if p.Arch == arch.ARM64 {
		return 16
	}
	return 12
}

func (p *Process) sysEpollCreate(a *[6]uint64) uint64 {
	if int32(a[0]) <= 0 {
		return sysErr(eINVAL)
	}
	return p.epollCreate(0)
}

func (p *Process) sysEpollCreate1(a *[6]uint64) uint64 {
	if a[0]&^uint64(oCLOEXEC) != 0 {
		return sysErr(eINVAL)
	}
	return p.withCloexec(p.epollCreate(0), a[0]&oCLOEXEC != 0)
}

func (p *Process) epollCreate(flags uint64) uint64 {
	f := &openFile{kind: fileEpoll, ep: &epoll{}, flags: oRDWR | flags, ino: p.ov.nextIno}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	p.ov.nextIno++
	return uint64(n)
}

// sysEpollCtl is epoll_ctl(epfd, op, fd, event).
func (p *Process) sysEpollCtl(a *[6]uint64) uint64 {
	op, fd := a[1], int(int32(a[2]))
	var ev struct {
		events uint32
		data   uint64
	}
	if op != epollCtlDel {
		b, ok := p.readGuest(a[3], p.epollEventSize())
		if !ok {
			return sysErr(eFAULT)
		}
		ev.events = binary.LittleEndian.Uint32(b)
		ev.data = binary.LittleEndian.Uint64(b[p.epollEventSize()-8:])
	}
	epf, f := p.fds[int(int32(a[0]))], p.fds[fd]
	switch {
	case epf == nil || f == nil:
		return sysErr(eBADF)
	case f.kind == fileRegular || f.kind == fileDir || f.kind == fileDevice:
		return sysErr(ePERM) // no poll: always ready, as Linux says
	case epf.kind != fileEpoll || epf == f:
		return sysErr(eINVAL)
	case op == epollCtlAdd && ev.events&epollExclusive != 0 && ev.events&^uint32(epollIn|epollOut|epollErr|epollHup|epollWakeup|epollET|epollExclusive) != 0:
		return sysErr(eINVAL)
	}
	ep := epf.ep
	var it *epItem
	at := -1
	for i, x := range ep.items {
		if x.fd == fd && x.file == f {
			it, at = x, i
		}
	}
	switch op {
	case epollCtlAdd:
		if it != nil {
			return sysErr(eEXIST)
		}
		if f.kind == fileEpoll {
			p.sysStop(StopUnsupported, 0, "unsupported system call epoll_ctl: an epoll instance watched by another")
			return sysErr(eINVAL)
		}
		if f.kind == fileSignalfd && ev.events&epollET != 0 {
			p.sysStop(StopUnsupported, 0, "unsupported system call epoll_ctl: EPOLLET on a signalfd")
			return sysErr(eINVAL)
		}
		ep.items = append(ep.items, &epItem{fd: fd, file: f, events: ev.events | epollErr | epollHup, data: ev.data})
	case epollCtlMod:
		switch {
		case it == nil:
			return sysErr(eNOENT)
		case it.events&epollExclusive != 0 || ev.events&epollExclusive != 0:
			return sysErr(eINVAL)
		}
		it.events, it.data, it.disabled, it.reported = ev.events|epollErr|epollHup, ev.data, false, false
	case epollCtlDel:
		if it == nil {
			return sysErr(eNOENT)
		}
		ep.items = append(ep.items[:at], ep.items[at+1:]...)
	default:
		return sysErr(eINVAL)
	}
	p.pollersChanged()
	return 0
}

// openFiles returns the open files descriptors refer to, and pipeEnds,
// in one pass over the descriptors.
func (p *Process) openFiles() (map[*openFile]bool, map[uint64][2]bool) {
	open, ends := make(map[*openFile]bool, len(p.fds)), map[uint64][2]bool{}
	for _, f := range p.fds {
		open[f] = true
		addEnd(ends, f)
	}
	return open, ends
}

// fileGen is the generation of f an EPOLLET entry watching for events
// compares: what changes when the kernel would wake such a waiter.
func fileGen(f *openFile, events uint32) uint64 {
	switch {
	case f.pipe != nil && f.flags&oACCMODE == oWRONLY:
		return f.pipe.rgen // room made
	case f.pipe != nil:
		return f.pipe.wgen // data came, or the writers went
	case f.efd != nil:
		return f.efd.gen
	case f.tfd != nil:
		return f.tfd.gen
	}
	return 0
}

// epollReady collects the ready entries of ep for thread t, at most max,
// as (events, data) pairs; consume applies EPOLLONESHOT and EPOLLET.
// Entries whose file no descriptor refers to any more are dropped.
func (p *Process) epollReady(t *thread, ep *epoll, max int, consume bool) [][2]uint64 {
	var out [][2]uint64
	open, ends := p.openFiles()
	live := ep.items[:0]
	for _, it := range ep.items {
		if !open[it.file] {
			continue
		}
		live = append(live, it)
		if len(out) == max || it.disabled {
			continue
		}
		rev := p.readinessIn(t, it.file, ends) & it.events
		if rev == 0 {
			continue
		}
		gen := fileGen(it.file, it.events)
		if it.events&epollET != 0 && it.reported && gen == it.gen {
			continue
		}
		out = append(out, [2]uint64{uint64(rev), it.data})
		if consume {
			it.reported, it.gen = true, gen
			if it.events&epollOneshot != 0 {
				it.disabled = true
			}
		}
	}
	clear(ep.items[len(live):])
	ep.items = live
	return out
}

// epollScan is pollScan for an epoll_wait (w: waitEpoll, epfd, events,
// maxevents): the events written to the guest and how many.
func (p *Process) epollScan(t *thread, w *[8]uint64) (uint64, int) {
	f := p.fds[int(int32(w[1]))]
	if f == nil || f.kind != fileEpoll {
		return 0, eBADF // closed while it waited
	}
	ready := p.epollReady(t, f.ep, int(w[3]), true)
	size := p.epollEventSize()
	b := make([]byte, uint64(len(ready))*size)
	for i, r := range ready {
		e := b[uint64(i)*size:]
		binary.LittleEndian.PutUint32(e, uint32(r[0]))
		binary.LittleEndian.PutUint64(e[size-8:], r[1])
	}
	if len(b) > 0 && !p.writeGuest(w[2], b) {
		return 0, eFAULT
	}
	return uint64(len(ready)), 0
}

// epollWait is epoll_wait, epoll_pwait and epoll_pwait2 once the timeout
// is a deadline (-1: none) and the mask is set.
func (p *Process) epollWait(epfd, events, maxevents uint64, deadline int64) uint64 {
	t := p.thr.cur
	undo := func(ret uint64) uint64 {
		if t.sig.restoreMask {
			t.sig.mask, t.sig.restoreMask = t.sig.saved, false
		}
		return ret
	}
	f := p.fds[int(int32(epfd))]
	switch {
	case int32(maxevents) <= 0 || maxevents > epMaxEvents:
		return undo(sysErr(eINVAL))
	case !p.writable(events, maxevents*p.epollEventSize()):
		return undo(sysErr(eFAULT))
	case f == nil:
		return undo(sysErr(eBADF))
	case f.kind != fileEpoll:
		return undo(sysErr(eINVAL))
	case p.deliverable(t) != 0:
		return undo(sysErr(eINTR))
	}
	ret := p.waitReady([8]uint64{waitEpoll, epfd, events, maxevents}, deadline)
	if t.state == blocked && t.resume == resumePoll {
		t.intr = eINTR // never restarted
	}
	return ret
}

func (p *Process) epollDeadline(ms int32) int64 {
	if ms < 0 {
		return -1
	}
	return p.base() + int64(ms)*1e6
}

func (p *Process) sysEpollWait(a *[6]uint64) uint64 {
	return p.epollWait(a[0], a[1], a[2], p.epollDeadline(int32(a[3])))
}

func (p *Process) sysEpollPwait(a *[6]uint64) uint64 {
	if e := p.pollMask(a[4], a[5]); e != 0 {
		return sysErr(e)
	}
	return p.epollWait(a[0], a[1], a[2], p.epollDeadline(int32(a[3])))
}

func (p *Process) sysEpollPwait2(a *[6]uint64) uint64 {
	deadline, e := p.timeoutAt(a[3], false)
	if e != 0 {
		return sysErr(e)
	}
	if e := p.pollMask(a[4], a[5]); e != 0 {
		return sysErr(e)
	}
	return p.epollWait(a[0], a[1], a[2], deadline)
}

// pollersChanged wakes the threads polling (poll, select, epoll_wait):
// they look again when they get the CPU.
func (p *Process) pollersChanged() { p.wakeResumes(resumePoll) }

func (p *Process) sysEventfd(a *[6]uint64) uint64 { return p.eventfd(a[0], 0) }

func (p *Process) sysEventfd2(a *[6]uint64) uint64 {
	return p.withCloexec(p.eventfd(a[0], a[1]), a[1]&oCLOEXEC != 0)
}

func (p *Process) eventfd(initval, flags uint64) uint64 {
	if flags&^uint64(oCLOEXEC|oNONBLOCK|efdSemaphore) != 0 {
		return sysErr(eINVAL)
	}
	f := &openFile{kind: fileEventfd, efd: &eventfd{count: uint64(uint32(initval)), semaphore: flags&efdSemaphore != 0},
		flags: oRDWR | flags&oNONBLOCK, ino: p.ov.nextIno}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	p.ov.nextIno++
	return uint64(n)
}

// eventfdTry reads or writes eventfd f with the 8 bytes at buf: block set
// when it must wait.
func (p *Process) eventfdTry(f *openFile, buf uint64, write bool) (n uint64, errno int, block bool) {
	efd := f.efd
	if write {
		b, ok := p.readGuest(buf, 8)
		if !ok {
			return 0, eFAULT, false
		}
		v := binary.LittleEndian.Uint64(b)
		switch {
		case v == ^uint64(0):
			return 0, eINVAL, false
		case efd.count > eventfdMax-v:
			if f.flags&oNONBLOCK != 0 {
				return 0, eAGAIN, false
			}
			return 0, 0, true
		}
		efd.count += v
	} else {
		if !p.writable(buf, 8) {
			return 0, eFAULT, false
		}
		if efd.count == 0 {
			if f.flags&oNONBLOCK != 0 {
				return 0, eAGAIN, false
			}
			return 0, 0, true
		}
		v := efd.count
		if efd.semaphore {
			v = 1
		}
		efd.count -= v
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		p.writeGuest(buf, b[:])
	}
	efd.gen++
	p.eventfdChanged(f.ino)
	return 8, 0, false
}

// eventfdIO is read(2) or write(2) of an eventfd by the running thread.
func (p *Process) eventfdIO(fd, buf, count uint64, write bool) uint64 {
	f := p.fds[int(int32(fd))]
	if count < 8 {
		return sysErr(eINVAL)
	}
	n, e, block := p.eventfdTry(f, buf, write)
	switch {
	case e != 0:
		return sysErr(e)
	case !block:
		return n
	}
	what := "read of"
	if write {
		what = "write to"
	}
	p.waitOn(0, 0, -1, fmt.Sprintf("%s eventfd %d", what, f.ino))
	t := p.thr.cur
	t.resume, t.wargs = resumeEventfd, [8]uint64{fd, buf, b2u(write), f.ino}
	return 0
}

// eventfdResume retries the eventfd read or write thread t waits in;
// false if it must wait again.
func (p *Process) eventfdResume(t *thread) bool {
	f := p.waitedFile(t, fileEventfd)
	if f == nil {
		return true
	}
	n, e, block := p.eventfdTry(f, t.wargs[1], t.wargs[2] != 0)
	return p.retried(t, resumeEventfd, n, e, block)
}

// eventfdChanged wakes the threads waiting on eventfd ino, and pollers.
func (p *Process) eventfdChanged(ino uint64) {
	for _, t := range p.thr.list {
		if t.state == blocked && (t.resume == resumeEventfd && t.wargs[3] == ino || t.resume == resumePoll) {
			t.wake(0)
		}
	}
}

// eventfdReadiness is the poll mask of an eventfd.
func eventfdReadiness(efd *eventfd) uint32 {
	var m uint32
	if efd.count > 0 {
		m |= pollIn | pollRdnorm
	}
	if efd.count < eventfdMax {
		m |= pollOut | pollWrnorm
	}
	return m
}
