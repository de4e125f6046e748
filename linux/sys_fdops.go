//go:build cgo

package linux

import "fmt"

// Descriptor operations beside read and write: closing ranges, advisory
// locks, positional vector reads and writes with flags, and the hints
// (readahead, sync_file_range) that have nothing to do here.

// sysCloseRange is close_range(first, last, flags): the open descriptors
// in [first, last] are closed; with CLOSE_RANGE_CLOEXEC they are kept
// (close-on-exec has nothing to do: the guest cannot exec, and F_GETFD
// reports no flag).
func (p *Process) sysCloseRange(a *[6]uint64) uint64 {
	const closeRangeUnshare, closeRangeCloexec = 2, 4
	first, last := uint32(a[0]), uint32(a[1])
	if a[2]&^uint64(closeRangeUnshare|closeRangeCloexec) != 0 || first > last {
		return sysErr(eINVAL)
	}
	if a[2]&closeRangeCloexec != 0 {
		for fd := int(first); fd <= int(min(last, fdLimit-1)); fd++ {
			if p.fds[fd] != nil {
				p.cloexec.set(fd)
			}
		}
		return 0
	}
	for fd := int(first); fd <= int(min(last, fdLimit-1)); fd++ {
		p.closeFD(fd)
	}
	return 0
}

// flock's operations.
const (
	lockSH = 1
	lockEX = 2
	lockNB = 4
	lockUN = 8
)

// sysFlock is flock(fd, op). A lock belongs to the open file description
// (openFile.flock: dup shares it, its last close drops it) and conflicts
// with the other descriptions' locks of the same file, as on Linux, also
// within one process: LOCK_NB is then EWOULDBLOCK, else the thread waits
// until the holder unlocks or closes (a thread waiting on its own
// process's lock with no other thread to drop it waits forever natively:
// here every thread waits, which stops the run, named). Changing a lock
// drops the old one first, as Linux does, so a refused LOCK_NB change
// leaves none.
func (p *Process) sysFlock(a *[6]uint64) uint64 {
	fd, op := int(int32(a[0])), a[1]
	f := p.fds[fd]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case op&^lockNB != lockSH && op&^lockNB != lockEX && op&^lockNB != lockUN:
		return sysErr(eINVAL)
	case f.pathOnly():
		return sysErr(eBADF)
	}
	want := int8(op &^ lockNB)
	if want == lockUN {
		if f.flock != 0 {
			f.flock = 0
			p.flockChanged()
		}
		return 0
	}
	if f.flock == want {
		return 0
	}
	if f.flock != 0 {
		f.flock = 0
		p.flockChanged()
	}
	if !p.flockConflicts(f, want) {
		f.flock = want
		return 0
	}
	if op&lockNB != 0 {
		return sysErr(eAGAIN) // EWOULDBLOCK
	}
	t := p.thr.cur
	p.waitOn(0, 0, -1, fmt.Sprintf("flock of %s", f.path))
	t.resume, t.wargs = resumeFlock, [8]uint64{uint64(fd), uint64(want), f.ino}
	return 0
}

// flockConflicts reports whether another open file description of f's
// file holds a lock that want (lockSH, lockEX) conflicts with.
func (p *Process) flockConflicts(f *openFile, want int8) bool {
	for _, g := range p.fds {
		if g != f && g.flock != 0 && (want == lockEX || g.flock == lockEX) && sameLockFile(f, g) {
			return true
		}
	}
	return false
}

// sameLockFile reports whether two open files are one file for flock: a
// file or directory by its inode number (a file of the view keeps its
// number once copied up), anything else by kind and number.
func sameLockFile(f, g *openFile) bool {
	file := func(x *openFile) bool { return x.kind == fileRegular || x.kind == fileDir }
	if file(f) || file(g) {
		return file(f) && file(g) && f.ino == g.ino
	}
	return f.kind == g.kind && f.ino == g.ino
}

// flockChanged wakes the threads waiting for a flock: they try again
// when they get the CPU (flockResume).
func (p *Process) flockChanged() { p.wakeResumes(resumeFlock) }

// wakeResumes wakes the threads blocked in a call that resumes as k: they
// try again (resumed).
func (p *Process) wakeResumes(k resumeKind) {
	for _, t := range p.thr.list {
		if t.state == blocked && t.resume == k {
			t.wake(0)
		}
	}
}

// flockResume completes the flock thread t waits in (wargs: fd, the lock,
// the file's inode), or puts it back to waiting.
func (p *Process) flockResume(t *thread) bool {
	f := p.fds[int(int32(t.wargs[0]))]
	if f == nil || f.ino != t.wargs[2] {
		t.ret = sysErr(eBADF) // closed meanwhile
		return true
	}
	want := int8(t.wargs[1])
	if p.flockConflicts(f, want) {
		return p.waitAgain(t, -1, resumeFlock)
	}
	f.flock = want
	t.ret = 0
	return true
}

// rwfFlags are the RWF_* flags of preadv2 and pwritev2 that change
// nothing here (RWF_HIPRI, RWF_DSYNC, RWF_SYNC); RWF_NOWAIT is
// EOPNOTSUPP, as from a file system without it, RWF_APPEND (pwritev2
// only) writes at the end.
const (
	rwfQuiet  = 1 | 2 | 4
	rwfNowait = 8
	rwfAppend = 16
)

// sysPreadv is preadv(fd, iov, iovcnt, offset): readv at offset.
func (p *Process) sysPreadv(a *[6]uint64) uint64 {
	if int64(a[3]) < 0 {
		return sysErr(eINVAL)
	}
	return p.preadv(a, int64(a[3]))
}

// sysPreadv2 is preadv2(fd, iov, iovcnt, offset, offset_high, flags):
// preadv, or readv at offset -1.
func (p *Process) sysPreadv2(a *[6]uint64) uint64 {
	switch {
	case a[5]&rwfNowait != 0:
		return sysErr(eOPNOTSUPP)
	case a[5]&^uint64(rwfQuiet) != 0:
		return sysErr(eOPNOTSUPP)
	case int64(a[3]) == -1:
		return p.sysReadv(a)
	case int64(a[3]) < 0:
		return sysErr(eINVAL)
	}
	return p.preadv(a, int64(a[3]))
}

// preadv reads fd's iovecs at off.
func (p *Process) preadv(a *[6]uint64, off int64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileRegular && f.kind != fileDir:
		return sysErr(eSPIPE)
	}
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	return p.readIovecs(int(int32(a[0])), iov, off)
}

// sysPwritev2 is pwritev2(fd, iov, iovcnt, offset, offset_high, flags):
// pwritev, writev at offset -1, at the end with RWF_APPEND.
func (p *Process) sysPwritev2(a *[6]uint64) uint64 {
	switch {
	case a[5]&rwfNowait != 0:
		return sysErr(eOPNOTSUPP)
	case a[5]&^uint64(rwfQuiet|rwfAppend) != 0:
		return sysErr(eOPNOTSUPP)
	case int64(a[3]) == -1 && a[5]&rwfAppend == 0:
		return p.sysWritev(a)
	}
	off := a[3]
	if int64(off) == -1 {
		off = 0 // RWF_APPEND: at the end (below), the offset unused
	}
	f, e := p.pwriteFile(a[0], off)
	if e != 0 {
		return sysErr(e)
	}
	if a[5]&rwfAppend != 0 {
		off = uint64(f.node.data.Len())
	}
	return p.writeFileV(f, a[1], a[2], int64(off))
}

// sysReadahead is readahead(fd, offset, count): nothing to read ahead.
func (p *Process) sysReadahead(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil || !readable(f):
		return sysErr(eBADF)
	case f.kind != fileRegular:
		return sysErr(eINVAL)
	}
	return 0
}

// sysSyncFileRange is sync_file_range(fd, offset, nbytes, flags): nothing
// to write back.
func (p *Process) sysSyncFileRange(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case a[3]&^7 != 0 || int64(a[1]) < 0 || int64(a[2]) < 0:
		return sysErr(eINVAL)
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileRegular && f.kind != fileDir:
		return sysErr(eSPIPE)
	}
	return 0
}

// sysMemfdCreate is memfd_create(name, flags): a file of the overlay with
// no name, open for reading and writing, as O_TMPFILE makes one (memfd's
// mode 0777; the name shows only in /proc, which the guest has not).
// Sealing is not emulated: F_ADD_SEALS is EINVAL, as for a file without
// MFD_ALLOW_SEALING; huge pages are EINVAL, as without hugetlbfs.
func (p *Process) sysMemfdCreate(a *[6]uint64) uint64 {
	const mfdCloexec, mfdAllowSealing = 1, 2
	if a[1]&^uint64(mfdCloexec|mfdAllowSealing) != 0 {
		return sysErr(eINVAL)
	}
	name, e := p.cstringMax(a[0], 250)
	switch {
	case e != 0:
		return sysErr(e)
	case len(name) > 249: // NAME_MAX less "memfd:"
		return sysErr(eINVAL)
	}
	n := p.newNode(nodeFile, 0o777)
	n.nlink = 0
	if !p.charge(nodeOverhead) {
		return sysErr(eNOSPC)
	}
	n.cost = nodeOverhead
	fd, e := p.allocFD(0, &openFile{kind: fileRegular, path: "/memfd:" + name, node: n, flags: oRDWR, ino: n.ino})
	if e != 0 {
		p.releaseNode(n)
		return sysErr(e)
	}
	return p.withCloexec(uint64(fd), a[1]&mfdCloexec != 0)
}
