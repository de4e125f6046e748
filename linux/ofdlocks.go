//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
)

// Open file description locks (fcntl F_OFD_GETLK, F_OFD_SETLK,
// F_OFD_SETLKW): byte-range locks, as POSIX record locks, but owned by
// the open file description (what open made, shared by its duplicates)
// instead of the process, so that two descriptions of one file conflict
// even within a process, between its threads or not (QEMU, systemd and
// some databases lock so). A description's locks are released when its
// last descriptor is closed. As in Linux, l_pid must be 0 (EINVAL), a
// conflicting lock is reported with l_pid -1, a lock replaces the
// description's own over its range (and joins its neighbours of the same
// type), and F_OFD_SETLKW waits until the conflict is gone, with no
// deadlock detection. A POSIX record lock the process asks for (F_SETLK,
// F_SETLKW, F_GETLK) conflicts with these, as in Linux; POSIX record locks
// themselves are not kept (the guest is a process alone: recordLock), so
// an OFD lock never finds one in its way, where Linux would.

// lockRange is a lock of an open file description on [start, end) (end ^0:
// to the end of the file).
type lockRange struct {
	start, end uint64
	wr         bool
}

// ofdLock emulates F_OFD_GETLK (36), F_OFD_SETLK (37) and F_OFD_SETLKW
// (38) on descriptor fd (f) with the struct flock at addr.
func (p *Process) ofdLock(fd int, f *openFile, cmd, addr uint64) uint64 {
	req, e := p.readFlock(f, addr, cmd == 36)
	if e != 0 {
		return sysErr(e)
	}
	if req.pid != 0 {
		return sysErr(eINVAL)
	}
	if cmd == 36 {
		c, ok := p.ofdConflict(f, req)
		return p.putConflict(addr, c, ok)
	}
	if req.typ == fUNLCK {
		p.ofdSet(f, req)
		return 0
	}
	if e := lockAccess(f, req.typ); e != 0 {
		return sysErr(e)
	}
	if _, ok := p.ofdConflict(f, req); !ok {
		p.ofdSet(f, req)
		return 0
	}
	if cmd == 37 {
		return sysErr(eAGAIN)
	}
	p.waitLock(fd, f, req, false)
	return 0
}

// waitLock blocks the thread in F_OFD_SETLKW (F_SETLKW if posix) of req on
// descriptor fd (f) until no description's lock is in the way.
func (p *Process) waitLock(fd int, f *openFile, req flockReq, posix bool) {
	t := p.thr.cur
	what := "F_OFD_SETLKW"
	if posix {
		what = "F_SETLKW"
	}
	p.waitOn(0, 0, -1, fmt.Sprintf("%s of %s", what, f.path))
	t.resume, t.wargs = resumeOFDLock, [8]uint64{uint64(fd), uint64(req.typ), req.start, req.end, f.ino, b2u(posix)}
}

// putConflict writes what F_GETLK and F_OFD_GETLK give back to the struct
// flock at addr: the conflicting lock c (of a description: l_pid -1), or
// if none (!ok) l_type F_UNLCK, the rest as the guest gave it.
func (p *Process) putConflict(addr uint64, c lockRange, ok bool) uint64 {
	out := []byte{fUNLCK, 0}
	if ok {
		out = make([]byte, 32)
		le := binary.LittleEndian
		le.PutUint16(out[0:], fRDLCK)
		if c.wr {
			le.PutUint16(out[0:], fWRLCK)
		}
		le.PutUint64(out[8:], c.start)
		if c.end != ^uint64(0) {
			le.PutUint64(out[16:], c.end-c.start)
		}
		le.PutUint32(out[24:], ^uint32(0)) // l_pid -1
	}
	if !p.writeGuest(addr, out) {
		return sysErr(eFAULT)
	}
	return 0
}

// ofdConflict returns a lock of another description of f's file that req
// (a read or write lock) conflicts with.
func (p *Process) ofdConflict(f *openFile, req flockReq) (lockRange, bool) {
	return p.lockConflict(f, f, req)
}

// lockConflict returns a lock of a description of file's file but owner
// that req conflicts with: owner is the description asking (nil: the
// process, for a POSIX record lock, which every description's locks are
// in the way of).
func (p *Process) lockConflict(owner, file *openFile, req flockReq) (lockRange, bool) {
	for _, g := range p.fds {
		if g == owner || len(g.ofd) == 0 || !sameLockFile(file, g) {
			continue
		}
		for _, l := range g.ofd {
			if l.start < req.end && req.start < l.end && (req.typ == fWRLCK || l.wr) {
				return l, true
			}
		}
	}
	return lockRange{}, false
}

// ofdSet makes req f's lock over its range (F_UNLCK: none), and wakes the
// threads waiting for a lock if any of f's locks went or became a read
// lock.
func (p *Process) ofdSet(f *openFile, req flockReq) {
	var out []lockRange
	freed := false
	for _, l := range f.ofd {
		if l.end <= req.start || req.end <= l.start {
			out = append(out, l)
			continue
		}
		freed = freed || l.wr || req.typ == fUNLCK
		if l.start < req.start {
			out = append(out, lockRange{l.start, req.start, l.wr})
		}
		if req.end < l.end {
			out = append(out, lockRange{req.end, l.end, l.wr})
		}
	}
	if req.typ != fUNLCK {
		n := lockRange{req.start, req.end, req.typ == fWRLCK}
		var keep []lockRange
		for _, l := range out {
			// Its neighbours of the same type join it, as Linux merges.
			if l.wr == n.wr && l.start <= n.end && n.start <= l.end {
				n.start, n.end = min(n.start, l.start), max(n.end, l.end)
				continue
			}
			keep = append(keep, l)
		}
		out = append(keep, n)
	}
	f.ofd = out
	if freed {
		p.ofdChanged()
	}
}

// ofdRelease drops the locks of f, whose descriptor closed, if no other
// descriptor refers to it.
func (p *Process) ofdRelease(f *openFile) {
	if len(f.ofd) == 0 {
		return
	}
	for _, g := range p.fds {
		if g == f {
			return
		}
	}
	f.ofd = nil
	p.ofdChanged()
}

// ofdChanged wakes the threads waiting in F_OFD_SETLKW: they try again.
func (p *Process) ofdChanged() { p.wakeResumes(resumeOFDLock) }

// ofdResume completes the F_OFD_SETLKW thread t waits in (wargs: fd, the
// type, the range, the file's inode), or puts it back to waiting.
func (p *Process) ofdResume(t *thread) bool {
	f := p.fds[int(int32(t.wargs[0]))]
	if f == nil || f.ino != t.wargs[4] {
		t.ret = sysErr(eBADF) // closed meanwhile
		return true
	}
	req := flockReq{typ: int16(t.wargs[1]), start: t.wargs[2], end: t.wargs[3]}
	posix := t.wargs[5] != 0
	owner := f
	if posix {
		owner = nil
	}
	if _, ok := p.lockConflict(owner, f, req); ok {
		return p.waitAgain(t, -1, resumeOFDLock)
	}
	if !posix {
		p.ofdSet(f, req)
	}
	t.ret = 0
	return true
}
