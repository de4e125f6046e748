//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Pipes (pipe, pipe2) between the guest's threads, and waiting for
// descriptors to be ready (poll, ppoll, select, pselect6), as Linux does
// them: a read of an empty pipe blocks while a write end is open (end of
// file once none is), a write blocks while the pipe is full (16 pages;
// writes of at most PIPE_BUF bytes are atomic) and fails with EPIPE and a
// SIGPIPE once no read end is open; O_NONBLOCK makes EAGAIN of a wait. A
// signal interrupts a blocked read or write with ERESTARTSYS (restarted
// after an SA_RESTART handler; a write that wrote something returns how
// much), a poll or select with ERESTARTNOHAND (EINTR after a handler),
// as Linux's pipe_read, pipe_write and do_sys_poll.

const (
	pipeCap   = 65536 // the default pipe size: 16 pages
	pipeBuf   = 4096  // PIPE_BUF
	oNONBLOCK = 0o4000
	oCLOEXEC  = 0o2000000
)

// pipe is a pipe's buffer; its ends are open files of kind filePipe
// (openFile.flags: O_RDONLY or O_WRONLY, and O_NONBLOCK). Its bytes are
// held in pages, as Linux's pipe_buffers hold them: a write's first
// len%4096 bytes go into the last page if they fit after its contents,
// the rest into new pages of up to 4096 bytes; a page is freed once read
// whole; the pipe is full (no POLLOUT, writers wait) when every one of
// its capacity's pages is taken, so 64 writes of 1000 bytes fill it.
type pipe struct {
	ino   uint64
	buf   []byte
	pages []pipePage // buf's bytes by page, in order
	size  int        // its capacity, if F_SETPIPE_SZ set one (else pipeCap)
	// Generations for EPOLLET (epoll.go): wgen counts the writes and
	// closed ends a reader is woken by, rgen the reads and closed ends a
	// writer is.
	wgen, rgen uint64
}

// pipePage is one page of a pipe's buffer: n bytes from offset off.
type pipePage struct{ off, n int }

// capacity is how many bytes the pipe holds at most.
func (pp *pipe) capacity() int {
	if pp.size == 0 {
		return pipeCap
	}
	return pp.size
}

// full reports whether every page of the pipe's capacity holds bytes.
func (pp *pipe) full() bool { return len(pp.pages) >= pp.capacity()/pageSize }

// pageSize is the size of a page of a pipe's buffer.
const pageSize = 4096

// put appends b (at most what fits: put returns how much) to the pipe as
// Linux's pipe_write does: merging its first chars bytes into the last
// page if they fit there after its contents, then whole pages while any
// is free.
func (pp *pipe) put(b []byte, chars int) int {
	n := 0
	if chars = min(chars, len(b)); chars > 0 && len(pp.pages) > 0 {
		if last := &pp.pages[len(pp.pages)-1]; last.off+last.n+chars <= pageSize {
			last.n += chars
			n = chars
		}
	}
	for n < len(b) && !pp.full() {
		k := min(len(b)-n, pageSize)
		pp.pages = append(pp.pages, pipePage{n: k})
		n += k
	}
	pp.buf = append(pp.buf, b[:n]...)
	return n
}

// take removes the first k (at most len(buf)) bytes, freeing the pages
// read whole.
func (pp *pipe) take(k int) {
	pp.buf = pp.buf[k:]
	for k > 0 {
		pg := &pp.pages[0]
		d := min(k, pg.n)
		pg.off, pg.n, k = pg.off+d, pg.n-d, k-d
		if pg.n == 0 {
			pp.pages = pp.pages[1:]
		}
	}
	if len(pp.pages) == 0 {
		pp.pages = nil
	}
}

// pipeMaxSize is /proc/sys/fs/pipe-max-size, the most an unprivileged
// F_SETPIPE_SZ may ask for.
const pipeMaxSize = 1 << 20

// setPipeSize is fcntl F_SETPIPE_SZ: the capacity becomes arg rounded up
// to a power of two pages; EPERM past pipe-max-size, EBUSY if what the
// pipe holds would not fit.
func setPipeSize(pp *pipe, arg uint64) uint64 {
	if arg > 1<<31 {
		return sysErr(eINVAL)
	}
	size := 4096
	for uint64(size) < arg {
		size <<= 1
	}
	switch {
	case size > pipeMaxSize:
		return sysErr(ePERM)
	case len(pp.pages) > size/pageSize:
		return sysErr(eBUSY) // more pages taken than it would have
	}
	pp.size = size
	return uint64(size)
}

// ends reports whether a read end and a write end of pipe ino are open.
func (p *Process) ends(ino uint64) (r, w bool) {
	for _, f := range p.fds {
		if f.kind == filePipe && f.pipe.ino == ino {
			if f.flags&oACCMODE == oWRONLY {
				w = true
			} else {
				r = true
			}
		}
	}
	return r, w
}

// pipeEnds returns, by pipe, whether a read end and a write end are open
// (ends for every pipe, in one pass).
func (p *Process) pipeEnds() map[uint64][2]bool {
	ends := map[uint64][2]bool{}
	for _, f := range p.fds {
		addEnd(ends, f)
	}
	return ends
}

// addEnd notes in ends that f, if a pipe's end, is open.
func addEnd(ends map[uint64][2]bool, f *openFile) {
	if f.kind == filePipe {
		e := ends[f.pipe.ino]
		e[b2i(f.flags&oACCMODE == oWRONLY)] = true
		ends[f.pipe.ino] = e
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pipeChanged wakes the threads waiting on pipe ino or polling: they try
// again when they get the CPU (Process.resumed).
func (p *Process) pipeChanged(ino uint64) {
	for _, t := range p.thr.list {
		if t.state != blocked {
			continue
		}
		switch {
		case (t.resume == resumePipeRead || t.resume == resumePipeWrite) && t.wargs[3] == ino,
			t.resume == resumePoll:
			t.wake(0)
		}
	}
}

func (p *Process) sysPipe(a *[6]uint64) uint64 { return p.makePipe(a[0], 0) }

func (p *Process) sysPipe2(a *[6]uint64) uint64 {
	if a[1]&^uint64(oNONBLOCK|oCLOEXEC) != 0 {
		return sysErr(eINVAL)
	}
	return p.makePipe(a[0], a[1])
}

// makePipe is pipe2(fds, flags).
func (p *Process) makePipe(addr, flags uint64) uint64 {
	if !p.writable(addr, 8) {
		return sysErr(eFAULT)
	}
	pp := &pipe{ino: p.ov.nextIno}
	nb := flags & oNONBLOCK
	r, e := p.allocFD(0, &openFile{kind: filePipe, pipe: pp, flags: nb, ino: pp.ino})
	if e != 0 {
		return sysErr(e)
	}
	w, e := p.allocFD(0, &openFile{kind: filePipe, pipe: pp, flags: oWRONLY | nb, ino: pp.ino})
	if e != 0 {
		p.closeFD(r)
		return sysErr(e)
	}
	p.ov.nextIno++
	p.withCloexec(uint64(r), flags&oCLOEXEC != 0)
	p.withCloexec(uint64(w), flags&oCLOEXEC != 0)
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], uint32(r))
	binary.LittleEndian.PutUint32(b[4:], uint32(w))
	p.writeGuest(addr, b[:])
	return 0
}

// pipeFile returns fd's open file if it is a pipe end.
func (p *Process) pipeFile(fd uint64) *openFile {
	if f := p.fds[int(int32(fd))]; f != nil && f.kind == filePipe {
		return f
	}
	return nil
}

// pipeRead reads from pipe end f into the iovecs (checked writable); 0
// with block set when it must wait.
func (p *Process) pipeRead(f *openFile, iov [][2]uint64) (n uint64, errno int, block bool) {
	if f.flags&oACCMODE == oWRONLY {
		return 0, eBADF, false
	}
	var total uint64
	for _, v := range iov {
		total += v[1]
	}
	if total == 0 {
		return 0, 0, false
	}
	pp := f.pipe
	if len(pp.buf) == 0 {
		if _, w := p.ends(pp.ino); !w {
			return 0, 0, false // end of file
		}
		if f.flags&oNONBLOCK != 0 {
			return 0, eAGAIN, false
		}
		return 0, 0, true
	}
	for _, v := range iov {
		k := min(v[1], uint64(len(pp.buf)))
		p.writeGuest(v[0], pp.buf[:k])
		pp.take(int(k))
		n += k
		if len(pp.buf) == 0 {
			break
		}
	}
	pp.buf = slices.Clip(pp.buf)
	pp.rgen++
	p.pipeChanged(pp.ino)
	return n, 0, false
}

// pipeWrite writes the iovecs (checked readable) to pipe end f, skipping
// the first done bytes (written before it blocked); block set when it
// must wait for room, n then what it wrote so far.
func (p *Process) pipeWrite(f *openFile, iov [][2]uint64, done uint64) (n uint64, errno int, block bool) {
	if f.flags&oACCMODE != oWRONLY {
		return 0, eBADF, false
	}
	pp := f.pipe
	if r, _ := p.ends(pp.ino); !r {
		p.raiseSIGPIPE()
		if done > 0 {
			return done, 0, false // what it wrote before
		}
		return 0, ePIPE, false
	}
	var total uint64
	for _, v := range iov {
		total += v[1]
	}
	if total == 0 {
		return 0, 0, false
	}
	// What may fit: the first (total % 4096) bytes merged into the last
	// page (only at the write's start, as pipe_write merges once), then
	// whole free pages. Small writes are atomic so: all or wait.
	chars := 0
	if done == 0 {
		chars = int(total % pageSize)
	}
	room := uint64(pp.capacity()/pageSize-len(pp.pages)) * pageSize
	if chars > 0 && len(pp.pages) > 0 {
		if last := pp.pages[len(pp.pages)-1]; last.off+last.n+chars <= pageSize {
			room += uint64(chars)
		}
	}
	if room == 0 {
		if f.flags&oNONBLOCK != 0 {
			if done > 0 {
				return done, 0, false
			}
			return 0, eAGAIN, false
		}
		return done, 0, true
	}
	var b []byte
	skip, fault := done, false
	for _, v := range iov {
		if skip >= v[1] {
			skip -= v[1]
			continue
		}
		k := min(v[1]-skip, room-uint64(len(b)))
		piece, ok := p.readGuest(v[0]+skip, k)
		if !ok {
			fault = true
			break
		}
		b = append(b, piece...)
		skip = 0
		if uint64(len(b)) == room {
			break
		}
	}
	if fault && len(b) == 0 && done == 0 {
		return 0, eFAULT, false
	}
	n = done + uint64(pp.put(b, chars))
	if fault {
		total = n // a write stops at what it cannot read
	}
	if n > 0 {
		pp.wgen++
	}
	p.pipeChanged(pp.ino)
	if n < total && f.flags&oNONBLOCK == 0 {
		return n, 0, true // the rest when there is room
	}
	return n, 0, false
}

// pipeIO is a read or write of a pipe by the running thread (of one
// buffer, or of an iovec array if vector): it blocks it (resumed by
// pipeResume) when the pipe makes it wait.
func (p *Process) pipeIO(fd, addr, cnt uint64, vector, write bool) uint64 {
	f := p.pipeFile(fd)
	if (f.flags&oACCMODE == oWRONLY) != write {
		return sysErr(eBADF)
	}
	iov, e := p.pipeIovecs(addr, cnt, vector, write)
	if e != 0 {
		return sysErr(e)
	}
	var n uint64
	var block bool
	if write {
		n, e, block = p.pipeWrite(f, iov, 0)
	} else {
		n, e, block = p.pipeRead(f, iov)
	}
	switch {
	case e != 0:
		return sysErr(e)
	case !block:
		return n
	}
	t := p.thr.cur
	kind, what := resumePipeRead, "read of"
	if write {
		kind, what = resumePipeWrite, "write to"
	}
	p.waitOn(0, 0, -1, fmt.Sprintf("%s pipe %d", what, f.pipe.ino))
	t.resume, t.wargs = kind, [8]uint64{fd, addr, cnt, f.pipe.ino, n, b2u(vector)}
	return 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// pipeIovecs are the iovecs of a pipe read or write: one buffer (read,
// write: iovCnt 0) or an iovec array.
func (p *Process) pipeIovecs(addr, cnt uint64, vector, write bool) ([][2]uint64, int) {
	if !vector {
		n := min(cnt, maxRW)
		if write && !p.mapped(addr, n) || !write && !p.writable(addr, n) {
			return nil, eFAULT
		}
		return [][2]uint64{{addr, n}}, 0
	}
	if write {
		return p.writeIovecs(addr, cnt)
	}
	iov, e := p.iovecs(addr, cnt)
	if e != 0 {
		return nil, e
	}
	for _, v := range iov {
		if !p.writable(v[0], v[1]) {
			return nil, eFAULT
		}
	}
	return iov, 0
}

// pipeResume retries the pipe read or write thread t blocked in; false if
// it must wait again.
func (p *Process) pipeResume(t *thread, k resumeKind) bool {
	fd, addr, cnt, ino, done := t.wargs[0], t.wargs[1], t.wargs[2], t.wargs[3], t.wargs[4]
	f := p.pipeFile(fd)
	if f == nil || f.pipe.ino != ino {
		t.ret = sysErr(eBADF) // closed meanwhile
		return true
	}
	write := k == resumePipeWrite
	iov, e := p.pipeIovecs(addr, cnt, t.wargs[5] != 0, write)
	if e != 0 {
		t.ret = sysErr(e)
		return true
	}
	var n uint64
	var block bool
	if write {
		n, e, block = p.pipeWrite(f, iov, done)
	} else {
		n, e, block = p.pipeRead(f, iov)
	}
	switch {
	case e != 0:
		t.ret = sysErr(e)
	case block:
		t.wargs[4] = n
		return p.waitAgain(t, -1, k)
	default:
		t.ret = n
	}
	return true
}

// waitAgain puts a thread that was woken back to waiting (its call cannot
// complete yet) and returns false; but if a signal it does not block came
// meanwhile, the call ends as a signal interrupting it would have ended it
// (true).
func (p *Process) waitAgain(t *thread, deadline int64, k resumeKind) bool {
	p.reblock(t, deadline, k)
	if p.deliverable(t) == 0 {
		return false
	}
	p.interrupt(t)
	return true
}

// reblock puts a thread that was woken back to waiting, with the same
// result on a signal.
func (p *Process) reblock(t *thread, deadline int64, k resumeKind) {
	p.thr.seq++
	t.state, t.seq, t.deadline, t.resume, t.setRet = blocked, p.thr.seq, deadline, k, true
	t.why = "waiting again"
	if k == resumePipeRead || k == resumePipeWrite {
		t.why = fmt.Sprintf("pipe %d", t.wargs[3])
	} else if k == resumePoll {
		t.why = "poll"
	}
}

// Poll events (the same on both targets).
const (
	pollIn     = 0x1
	pollPri    = 0x2
	pollOut    = 0x4
	pollErr    = 0x8
	pollHup    = 0x10
	pollNval   = 0x20
	pollRdnorm = 0x40
	pollWrnorm = 0x100
	// What select counts as ready for reading, writing and exceptions.
	pollInSet  = pollRdnorm | 0x80 | pollIn | pollHup | pollErr
	pollOutSet = 0x200 | pollWrnorm | pollOut | pollErr
	pollExSet  = pollPri
)

// readiness is the poll mask of fd for thread t (pollNval if it is not
// open).
func (p *Process) readiness(t *thread, fd int, ends map[uint64][2]bool) uint32 {
	f := p.fds[fd]
	if f == nil {
		return pollNval
	}
	return p.readinessIn(t, f, ends)
}

// readinessIn is the poll mask of open file f for thread t, with the open
// ends of every pipe at hand (pipeEnds; nil: looked up, a pass over the
// descriptors each).
func (p *Process) readinessIn(t *thread, f *openFile, ends map[uint64][2]bool) uint32 {
	switch {
	case f.kind == fileEventfd:
		return eventfdReadiness(f.efd)
	case f.kind == fileTimerfd:
		return p.timerfdReadiness(f.tfd)
	case f.kind == fileEpoll:
		if len(p.epollReady(t, f.ep, 1, false)) > 0 {
			return pollIn | pollRdnorm
		}
		return 0
	case f.kind == fileSignalfd:
		if p.nextSignal(t, ^f.sigmask) != 0 {
			return pollIn | pollRdnorm
		}
		return 0
	case f.kind == filePipe:
		var r, w bool
		if ends != nil {
			e := ends[f.pipe.ino]
			r, w = e[0], e[1]
		} else {
			r, w = p.ends(f.pipe.ino)
		}
		var m uint32
		if f.flags&oACCMODE == oWRONLY {
			if !f.pipe.full() {
				m |= pollOut | pollWrnorm
			}
			if !r {
				m |= pollErr
			}
		} else {
			if len(f.pipe.buf) > 0 {
				m |= pollIn | pollRdnorm
			}
			if !w {
				m |= pollHup
			}
		}
		return m
	case f.kind == fileStdin:
		return pollIn | pollRdnorm
	case f.kind == fileStdout, f.kind == fileStderr:
		return pollOut | pollWrnorm
	}
	return pollIn | pollOut | pollRdnorm | pollWrnorm // regular files and directories
}

// Kinds of wait in thread.wargs[0] of resumePoll.
const (
	waitPoll   = 0 // poll, ppoll: pollfd array, count
	waitSelect = 1 // select, pselect6: nfds, the three sets
)

// pollScan checks a poll or select of thread t (w: kind, then poll's fds
// and nfds or select's nfds and sets): the number ready, written back to
// the guest if any is (or if final), or an errno.
func (p *Process) pollScan(t *thread, w *[8]uint64, final bool) (uint64, int) {
	if w[0] == waitEpoll {
		return p.epollScan(t, w)
	}
	if w[0] == waitPoll {
		fds, nfds := w[1], w[2]
		b, ok := p.readGuest(fds, 8*nfds)
		if !ok {
			return 0, eFAULT
		}
		le := binary.LittleEndian
		n := uint64(0)
		ends := p.pipeEnds()
		for i := uint64(0); i < nfds; i++ {
			e := b[8*i:]
			fd, events := int32(le.Uint32(e)), uint32(le.Uint16(e[4:]))
			var rev uint32
			if fd >= 0 {
				rev = p.readiness(t, int(fd), ends) & (events | pollErr | pollHup | pollNval)
			}
			le.PutUint16(e[6:], uint16(rev))
			if rev != 0 {
				n++
			}
		}
		if n > 0 || final {
			if !p.writeGuest(fds, b) {
				return 0, eFAULT
			}
		}
		return n, 0
	}
	nfds := int(w[1])
	words := (nfds + 63) / 64
	var sets [3][]uint64
	for i := range sets {
		sets[i] = make([]uint64, words)
		if w[2+i] == 0 {
			continue
		}
		b, ok := p.readGuest(w[2+i], uint64(8*words))
		if !ok {
			return 0, eFAULT
		}
		for j := range sets[i] {
			sets[i][j] = binary.LittleEndian.Uint64(b[8*j:])
		}
	}
	var out [3][]uint64
	for i := range out {
		out[i] = make([]uint64, words)
	}
	n := uint64(0)
	masks := [3]uint32{pollInSet, pollOutSet, pollExSet}
	ends := p.pipeEnds()
	for fd := 0; fd < nfds; fd++ {
		bit := uint64(1) << (fd % 64)
		any := false
		for i := range sets {
			any = any || sets[i][fd/64]&bit != 0
		}
		if !any {
			continue
		}
		m := p.readiness(t, fd, ends)
		if m == pollNval {
			return 0, eBADF
		}
		for i := range sets {
			if sets[i][fd/64]&bit != 0 && m&masks[i] != 0 {
				out[i][fd/64] |= bit
				n++
			}
		}
	}
	if n > 0 || final {
		for i := range out {
			if w[2+i] == 0 {
				continue
			}
			b := make([]byte, 8*words)
			for j, x := range out[i] {
				binary.LittleEndian.PutUint64(b[8*j:], x)
			}
			// Only the bytes of nfds bits are written back, as Linux.
			if !p.writeGuest(w[2+i], b[:(nfds+7)/8]) {
				return 0, eFAULT
			}
		}
	}
	return n, 0
}

// waitReady is poll, ppoll, select and pselect6 once their arguments are
// read: the number ready now, or a wait until one is or the deadline
// (-1: none; the base clock); tsp receives the time left at the end
// (ppoll, pselect6, select: timeval if usec). A signal makes the call
// return ERESTARTNOHAND; poll with a timeout (restartPoll) goes on after
// a signal without a handler.
func (p *Process) waitReady(w [8]uint64, deadline int64) uint64 {
	t := p.thr.cur
	if p.deliverable(t) != 0 {
		return sysErr(eRestartNoHand) // ppoll's mask lets a pending one in
	}
	p.scanWake = -1
	n, e := p.pollScan(t, &w, deadline == p.base())
	if e != 0 {
		return p.pollDone(t, w, deadline, sysErr(e))
	}
	if n > 0 || deadline >= 0 && deadline <= p.base() {
		return p.pollDone(t, w, deadline, n)
	}
	// With no other thread, no timer and no timeout, only a signal can
	// end it (glibc's pause on AArch64 is such a ppoll of nothing): a
	// deadlock, unless one may come from outside (hostsignal.go).
	forSignal, wakeAt := false, p.scanWake
	if p.live() == 1 && deadline < 0 && wakeAt < 0 {
		if _, timer := p.nextRealExpiry(); !timer {
			if !p.outsideSignals() {
				p.sysStop(StopDeadlock, 0, "deadlock: poll with no other thread to make a descriptor ready")
				return 0
			}
			forSignal = true
		}
	}
	p.waitOn(0, 0, deadline, "poll")
	t.intr, t.resume, t.wargs, t.sigWait, t.wakeAt = eRestartNoHand, resumePoll, w, forSignal, wakeAt
	t.wargs[7] = uint64(deadline)
	if w[0] == waitPoll && w[5] == 0 && deadline >= 0 {
		// poll with a timeout goes on to the same deadline
		// (do_restart_poll).
		t.intr = eRestartBlock
		t.restart = restartBlock{kind: restartPoll, deadline: deadline, addr: w[1], nfds: w[2]}
	}
	return 0
}

// pollResume retries the poll thread t waits in; false if it must wait
// again.
func (p *Process) pollResume(t *thread) bool {
	deadline := int64(t.wargs[7])
	expired := deadline >= 0 && deadline <= p.base()
	p.scanWake = -1
	n, e := p.pollScan(t, &t.wargs, expired)
	switch {
	case e != 0:
		t.ret = p.pollDone(t, t.wargs, deadline, sysErr(e))
	case n > 0 || expired:
		t.ret = p.pollDone(t, t.wargs, deadline, n)
	default:
		t.wakeAt = p.scanWake
		return p.waitAgain(t, deadline, resumePoll)
	}
	return true
}

// pollDone ends a poll or select with ret: the time left is written to
// the timeout (poll_select_finish) and a ppoll or pselect6 mask restored.
func (p *Process) pollDone(t *thread, w [8]uint64, deadline int64, ret uint64) uint64 {
	p.pollTimeLeft(w, deadline)
	if t.sig.restoreMask {
		t.sig.mask, t.sig.restoreMask = t.sig.saved, false
	}
	return ret
}

// pollTimeLeft writes the time left until deadline at w[5] (a timespec,
// or a timeval if w[6] is 1), if both are set.
func (p *Process) pollTimeLeft(w [8]uint64, deadline int64) {
	if w[5] == 0 || deadline < 0 {
		return
	}
	left := max(deadline-p.base(), 0)
	if w[6] == 1 {
		p.put64(w[5], uint64(left/1e9), uint64(left%1e9/1e3))
	} else {
		p.put64(w[5], uint64(left/1e9), uint64(left%1e9))
	}
}

// sysPoll is poll(fds, nfds, timeout in ms; negative: none).
func (p *Process) sysPoll(a *[6]uint64) uint64 {
	if a[1] > fdLimit {
		return sysErr(eINVAL)
	}
	deadline := int64(-1)
	if ms := int32(a[2]); ms >= 0 {
		deadline = p.base() + int64(ms)*1e6
	}
	return p.waitReady([8]uint64{waitPoll, a[0], a[1]}, deadline)
}

// pollMask sets the mask of ppoll and pselect6 for the call (restored
// when it returns, or by the handler's frame).
func (p *Process) pollMask(addr, size uint64) int {
	if addr == 0 {
		return 0
	}
	set, e := p.sigset(addr, size)
	if e != 0 {
		return e
	}
	t := p.thr.cur
	t.sig.saved, t.sig.restoreMask = t.sig.mask, true
	t.sig.mask = set
	return 0
}

// timeoutAt reads a timespec (or a timeval, usec) timeout at addr as a
// deadline on the base clock (-1 for NULL).
func (p *Process) timeoutAt(addr uint64, usec bool) (int64, int) {
	if addr == 0 {
		return -1, 0
	}
	b, ok := p.readGuest(addr, 16)
	if !ok {
		return 0, eFAULT
	}
	var d int64
	var e int
	if usec {
		d, e = timevalNS(b)
	} else {
		d, e = p.timespecNS(b)
	}
	if e != 0 {
		return 0, e
	}
	return p.base() + d, 0
}

// sysPpoll is ppoll(fds, nfds, timeout, sigmask, sigsetsize).
func (p *Process) sysPpoll(a *[6]uint64) uint64 {
	if a[1] > fdLimit {
		return sysErr(eINVAL)
	}
	deadline, e := p.timeoutAt(a[2], false)
	if e != 0 {
		return sysErr(e)
	}
	if e := p.pollMask(a[3], a[4]); e != 0 {
		return sysErr(e)
	}
	return p.waitReady([8]uint64{waitPoll, a[0], a[1], 0, 0, a[2]}, deadline)
}

// sysSelect is select(nfds, readfds, writefds, exceptfds, timeval).
func (p *Process) sysSelect(a *[6]uint64) uint64 {
	if int32(a[0]) < 0 {
		return sysErr(eINVAL)
	}
	deadline, e := p.timeoutAt(a[4], true)
	if e != 0 {
		return sysErr(e)
	}
	return p.waitReady([8]uint64{waitSelect, uint64(min(int32(a[0]), fdLimit)), a[1], a[2], a[3], a[4], 1}, deadline)
}

// sysPselect6 is pselect6(nfds, readfds, writefds, exceptfds, timespec,
// {sigmask, sigsetsize}).
func (p *Process) sysPselect6(a *[6]uint64) uint64 {
	if int32(a[0]) < 0 {
		return sysErr(eINVAL)
	}
	deadline, e := p.timeoutAt(a[4], false)
	if e != 0 {
		return sysErr(e)
	}
	if a[5] != 0 {
		b, ok := p.readGuest(a[5], 16)
		if !ok {
			return sysErr(eFAULT)
		}
		if e := p.pollMask(binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])); e != 0 {
			return sysErr(e)
		}
	}
	return p.waitReady([8]uint64{waitSelect, uint64(min(int32(a[0]), fdLimit)), a[1], a[2], a[3], a[4]}, deadline)
}
