//go:build cgo

package linux

import (
	"fmt"
	"strconv"
	"strings"
)

// The character devices every program may open, emulated (the host's are
// never opened): /dev/null, /dev/zero, /dev/full, and /dev/random and
// /dev/urandom, which read the deterministic stream getrandom reads. And
// /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N,
// which open what the descriptor refers to: a regular file or directory
// anew (an open file of its own, at offset 0, with the access asked for),
// a stream, pipe, device or anonymous inode as dup (on Linux a pipe
// reopened is the same pipe).

// devMinor gives the minor number (major 1, mem) of each device.
var devMinor = map[string]uint64{"/dev/null": 3, "/dev/zero": 5, "/dev/full": 7, "/dev/random": 8, "/dev/urandom": 9}

const (
	devNull    = 3
	devZero    = 5
	devFull    = 7
	devRandom  = 8
	devURandom = 9
)

// devStat is the struct stat of device minor with inode ino.
func devStat(ino, minor uint64) statInfo {
	return statInfo{dev: 5, ino: ino, nlink: 1, rdev: 1<<8 | minor, mode: 0o020666, blksize: 4096}
}

// fdTarget is what /proc/self/fd/N links to for open file f.
func fdTarget(f *openFile) string {
	switch f.kind {
	case filePipe, fileStdin, fileStdout, fileStderr:
		if f.path == "" {
			return fmt.Sprintf("pipe:[%d]", f.ino)
		}
	case fileSignalfd:
		return "anon_inode:[signalfd]"
	case fileEventfd:
		return "anon_inode:[eventfd]"
	case fileTimerfd:
		return "anon_inode:[timerfd]"
	case fileEpoll:
		return "anon_inode:[eventpoll]"
	}
	if f.node != nil && f.node.nlink == 0 && (f.kind == fileRegular || f.kind == fileDir) {
		return f.path + " (deleted)" // unlinked or removed while open, or a memfd
	}
	return f.path
}

// fdPrefixes are the directories whose entries name descriptors.
var fdPrefixes = []string{"/dev/fd/", "/proc/self/fd/", procPID + "fd/", "/proc/thread-self/fd/"}

// fdLinkStat is the lstat of abs, which names descriptor fd (fdPath): a
// symbolic link, as procfs shows /proc/self/fd/N (readable and executable
// by its owner if the descriptor reads, writable and executable if it
// writes; size 64) and devtmpfs /dev/stdin, /dev/stdout and /dev/stderr
// (links to /proc/self/fd/N).
func (p *Process) fdLinkStat(abs string, fd int) (statInfo, int) {
	f := p.fds[fd]
	switch {
	case abs == "/dev/stdin" || abs == "/dev/stdout" || abs == "/dev/stderr":
		return statInfo{dev: 5, ino: p.inode("dev:" + abs), nlink: 1, mode: 0o120777, size: 15, blksize: 4096}, 0
	case f == nil:
		return statInfo{}, eNOENT
	}
	mode := uint32(0o120000) // O_PATH: neither
	if readable(f) && !f.pathOnly() {
		mode |= 0o500
	}
	if writable(f) && !f.pathOnly() {
		mode |= 0o300
	}
	return statInfo{dev: 0x16, ino: p.inode("proc:" + procPID + "fd/" + strconv.Itoa(fd)), nlink: 1, mode: mode, uid: guestUID, gid: guestGID, size: 64, blksize: 1024}, 0
}

// fdPath returns the descriptor a path like /dev/stdout or /proc/self/fd/3
// names, if it is one.
func fdPath(abs string) (int, bool) {
	fd, rest, ok := fdPathBelow(abs)
	return fd, ok && rest == "" && !strings.HasSuffix(abs, "/")
}

// fdPathBelow is fdPath for a path that may go on below the descriptor's
// directory: the descriptor and the rest of the path ("" if none).
func fdPathBelow(abs string) (fd int, rest string, ok bool) {
	switch abs {
	case "/dev/stdin":
		return 0, "", true
	case "/dev/stdout":
		return 1, "", true
	case "/dev/stderr":
		return 2, "", true
	}
	for _, prefix := range fdPrefixes {
		if n, ok := strings.CutPrefix(abs, prefix); ok {
			n, rest, _ := strings.Cut(n, "/")
			// A descriptor's number as Linux writes it: no sign, no
			// leading zero.
			if fd, err := strconv.Atoi(n); err == nil && strconv.Itoa(fd) == n {
				return fd, rest, true
			}
		}
	}
	return 0, "", false
}

// openSpecial opens abs if it is a device or names a descriptor (done
// set), with open's flags.
func (p *Process) openSpecial(abs string, flags uint64) (ret uint64, done bool) {
	if fd, ok := fdPath(abs); ok {
		f := p.fds[fd]
		if f == nil {
			return sysErr(eNOENT), true
		}
		if flags&p.abi.oDirectory != 0 && f.kind != fileDir {
			return sysErr(eNOTDIR), true
		}
		if (f.kind == fileRegular || f.kind == fileDir) && !f.pathOnly() {
			return p.reopen(f, flags), true
		}
		n, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e), true
		}
		return uint64(n), true
	}
	if n, ok := p.procFile(abs, flags&p.abi.oNofollow() == 0); ok {
		return p.procOpen(n, abs, flags), true
	}
	if abs == "/dev/tty" {
		return sysErr(eNXIO), true // no controlling terminal
	}
	minor, ok := devMinor[abs]
	if !ok {
		return 0, false
	}
	switch {
	case flags&(oCREAT|oEXCL) == oCREAT|oEXCL:
		return sysErr(eEXIST), true
	case flags&p.abi.oDirectory != 0:
		return sysErr(eNOTDIR), true
	}
	f := &openFile{kind: fileDevice, path: abs, ino: p.inode("dev:" + abs), minor: minor, flags: flags & (oACCMODE | oNONBLOCK)}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e), true
	}
	return uint64(n), true
}

// reopen opens the regular file or directory f again, as open of
// /proc/self/fd/N does: an open file of its own. Writing needs a file of
// the overlay (the view's are read-only: EACCES, as their 0444 says).
func (p *Process) reopen(f *openFile, flags uint64) uint64 {
	write := flags&oACCMODE != 0 || flags&oTRUNC != 0
	switch {
	case flags&oACCMODE == oACCMODE:
		return sysErr(eINVAL)
	case f.kind == fileDir && write:
		return sysErr(eISDIR)
	case write && f.node == nil:
		return sysErr(eACCES)
	case flags&oACCMODE != oWRONLY && !allows(f.node, 4), write && !allows(f.node, 2):
		return sysErr(eACCES) // checked anew, as a reopen by path is
	}
	g := &openFile{kind: f.kind, path: f.path, host: f.host, mode: f.mode, sf: f.sf, data: f.data, node: f.node,
		ino: f.ino, dirStat: f.dirStat, flags: flags & (oACCMODE | oAPPEND | oNONBLOCK)}
	if f.kind == fileDir {
		g.flags = 0
	}
	if write && flags&oTRUNC != 0 && f.node != nil {
		if e := p.resize(f.node, 0); e != 0 {
			return sysErr(e)
		}
		p.touch(f.node, touchModify|touchChange)
	}
	n, e := p.allocFD(0, g)
	if e != 0 {
		return sysErr(e)
	}
	return p.withCloexec(uint64(n), flags&oCLOEXEC != 0)
}

// devRead reads up to n bytes of device f into guest memory at addr
// (checked writable).
func (p *Process) devRead(f *openFile, addr, n uint64) uint64 {
	n = min(n, maxRW)
	switch f.minor {
	case devNull:
		return 0
	case devZero, devFull:
		zero := make([]byte, min(n, ioChunk))
		for done := uint64(0); done < n; done += uint64(len(zero)) {
			k := min(n-done, uint64(len(zero)))
			p.writeGuest(addr+done, zero[:k])
		}
		return n
	}
	n = min(n, 1<<25) // as getrandom: at most 32 MiB a call
	for done := uint64(0); done < n; {
		k := min(n-done, ioChunk)
		p.writeGuest(addr+done, p.rng.bytes(int(k)))
		done += k
	}
	return n
}

// devWrite writes n bytes to device f: all are taken, but by /dev/full
// (ENOSPC); the bytes are never read (no EFAULT), as Linux's do.
func devWrite(f *openFile, n uint64) uint64 {
	if f.minor == devFull {
		return sysErr(eNOSPC)
	}
	return min(n, maxRW)
}
