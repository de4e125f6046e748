//go:build cgo

package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// System calls on files: open, read, write, stat, fcntl, ioctl, dup,
// access, readlink, getcwd.

type fileKind int

const (
	fileStdin fileKind = iota
	fileStdout
	fileStderr
	fileRegular
	fileDir      // a directory of the overlay (overlay.go) or of the view (fsview.go), for getdents64
	filePipe     // an end of a pipe (pipes.go)
	fileSignalfd // a signalfd (signalfd.go)
	fileEpoll    // an epoll instance (epoll.go)
	fileEventfd  // an eventfd (epoll.go)
	fileTimerfd  // a timerfd (timerfd.go)
	fileDevice   // /dev/null, zero, full, random, urandom (devices.go)
)

// openFile is an open file description: one of the standard streams, an
// allowed host file (sf), read lazily, or contents held in data, or a
// file or directory of the overlay (node).
type openFile struct {
	kind    fileKind
	path    string // as the guest named it (absolute)
	host    string // the host file read
	mode    uint32 // a host file's st_mode (statMode; 0: 0o100444)
	sf      *sharedFile
	data    []byte // the contents, if not sf (and sf's once mapped as an ELF object)
	node    *oNode
	flags   uint64 // the access mode and O_APPEND
	off     int64
	ino     uint64
	names   []string    // a directory's entries, listed when read from its start
	dirStat statInfo    // a directory of the view (node nil): its stat
	pipe    *pipe       // filePipe: the pipe, shared by its ends
	sigmask uint64      // fileSignalfd: the signals it reads
	ep      *epoll      // fileEpoll: the interest list
	efd     *eventfd    // fileEventfd: the counter
	tfd     *timerfd    // fileTimerfd: the timer
	minor   uint64      // fileDevice: its minor number (major 1)
	proc    *procNode   // a file or directory procfs.go made (dirStat: its stat)
	flock   int8        // the flock it holds: 0, lockSH or lockEX
	ofd     []lockRange // its open file description locks (ofdlocks.go)
}

// size returns the file's size.
func (f *openFile) size() int64 {
	switch {
	case f.proc != nil:
		return 0 // procfs's: the contents are made when read
	case f.node != nil:
		return f.node.data.Len()
	case f.sf != nil:
		return f.sf.size
	}
	return int64(len(f.data))
}

func (p *Process) initFiles() error {
	v, err := newFSView(p.sysroot, p.cfg.ReadAllow, p.Path)
	if err != nil {
		return err
	}
	p.view = v
	cwd, _ := os.Getwd()
	p.ov = newOverlay(cwd)
	p.cwd = cwd
	p.fds = map[int]*openFile{0: {kind: fileStdin, ino: 1}, 1: {kind: fileStdout, ino: 2}, 2: {kind: fileStderr, ino: 3}}
	if f := p.stdinFile(); f != nil {
		p.fds[0] = f
	}
	p.syncFDs()
	return nil
}

const atFDCWD = -100

// atEmptyPath is AT_EMPTY_PATH: an empty path names dirfd's file.
const atEmptyPath = 0x1000

// inode returns the inode number the guest sees for a host file: one per
// file, in the order the guest first meets them (ld.so tells libraries
// apart by device and inode).
func (p *Process) inode(host string) uint64 {
	if p.inodes == nil {
		p.inodes = map[string]uint64{}
	}
	n, ok := p.inodes[host]
	if !ok {
		n = uint64(100 + len(p.inodes))
		p.inodes[host] = n
	}
	return n
}

// resolve makes a guest path absolute (relative ones against dirfd: the
// directory's path, which follows it when the guest renames it; or the
// working directory) and clean, each ".." taken as Linux takes it: from
// the directory the components before it name, their links followed
// (walkDots). A path without ".." is not looked up here.
func (p *Process) resolve(dirfd int32, path string) (string, int) {
	if path == "" {
		return "", eNOENT
	}
	dots := false
	for rest := path; rest != ""; {
		c, next, _ := strings.Cut(rest, "/")
		if len(c) > nameMax {
			return "", eNAMETOOLONG // no name is longer than NAME_MAX
		}
		dots = dots || c == ".."
		rest = next
	}
	var base string
	var baseNode *oNode // the overlay's node of a relative path's directory
	switch {
	case filepath.IsAbs(path):
		base = "/"
	case dirfd != atFDCWD:
		f, ok := p.fds[int(dirfd)]
		switch {
		case !ok:
			return "", eBADF
		case f.kind != fileDir:
			return "", eNOTDIR
		}
		base, baseNode = f.path, f.node
	case p.cwd == "":
		return "", eNOENT // the host's was gone at the start
	default:
		base, baseNode = p.cwd, p.ov.cwd
	}
	if baseNode != nil && baseNode.nlink == 0 && !filepath.IsAbs(path) {
		// A removed directory (the working directory, or a descriptor's):
		// "." is still it, ".." its parent when it was removed, any other
		// name ENOENT, as Linux looks up nothing in a dead directory.
		first := ""
		for c := range strings.SplitSeq(path, "/") {
			if c != "" && c != "." {
				first = c
				break
			}
		}
		switch first {
		case "":
			return deadPath(base, baseNode), 0
		case "..":
		default:
			return "", eNOENT
		}
	}
	// Without "..", the lexical clean path is the same, and costs no
	// lookup.
	var abs string
	switch {
	case dots:
		links := 0
		var e int
		if abs, e = p.walkDots(base, path, &links); e != 0 {
			return "", e
		}
	case filepath.IsAbs(path):
		abs = filepath.Clean(path)
	default:
		abs = filepath.Join(base, path)
	}
	// Files are found by their absolute names: one longer than PATH_MAX,
	// below a directory reached step by step (mkdirat and openat from
	// one descriptor to the next), is ENAMETOOLONG, where Linux, which
	// goes from the directory itself, has no limit. Without it, the cost
	// of each call would grow with the depth, and a program that dug a
	// directory 20 000 deep would take hours.
	if len(abs) >= pathMax {
		return "", eNAMETOOLONG
	}
	return abs, 0
}

// oPATH is O_PATH (the same on both targets).
const oPATH = 0o10000000

// openPath opens abs with O_PATH: a descriptor that names the file (a
// symbolic link itself with O_NOFOLLOW) for fstat, fchdir, the *at calls
// and F_GETFL, without opening it: every other use is EBADF (pathOnly).
// The flags but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC are ignored.
func (p *Process) openPath(raw, abs string, flags uint64) uint64 {
	if n, ok := p.procFile(abs, flags&p.abi.oNofollow() == 0); ok {
		if (flags&p.abi.oDirectory != 0 || trailingSlash(raw)) && !n.isDir() {
			return sysErr(eNOTDIR)
		}
		f := &openFile{kind: fileRegular, path: n.path, dirStat: p.procStat(&n), flags: oPATH | flags&(p.abi.oDirectory|p.abi.oNofollow())}
		if n.isDir() {
			f.kind = fileDir
		}
		f.ino = f.dirStat.ino
		fd, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
	}
	ent, e := p.lookup(abs, flags&p.abi.oNofollow() == 0)
	switch {
	case e != 0:
		return sysErr(e)
	case (flags&p.abi.oDirectory != 0 || trailingSlash(raw)) && !ent.isDir():
		return sysErr(eNOTDIR)
	}
	st := p.entryStat(ent)
	f := &openFile{kind: fileRegular, path: ent.path, node: ent.node, ino: st.ino, dirStat: st,
		flags: oPATH | flags&(p.abi.oDirectory|p.abi.oNofollow())}
	if ent.isDir() {
		f.kind, f.path = fileDir, ent.real() // as open's
	}
	n, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	return uint64(n)
}

// pathOnly reports whether f was opened with O_PATH: most calls on it
// are EBADF.
func (f *openFile) pathOnly() bool { return f.flags&oPATH != 0 }

// nameMax is NAME_MAX: the longest name of a directory entry.
const nameMax = 255

// O_* flags shared by both targets.
const (
	oACCMODE = 3
	oWRONLY  = 1
	oRDWR    = 2
	oCREAT   = 0o100
	oEXCL    = 0o200
	oTRUNC   = 0o1000
	oAPPEND  = 0o2000
	oTMPFILE = 0o20000000 // without O_DIRECTORY, which O_TMPFILE includes
)

// oNofollow is O_NOFOLLOW: on both targets the bit above O_DIRECTORY.
func (a *sysABI) oNofollow() uint64 { return a.oDirectory << 1 }

// trailingSlash reports whether path ends in a slash (or "/."): it must
// then name a directory (ENOTDIR), which resolve's cleaned name no longer
// tells.
func trailingSlash(path string) bool {
	return strings.HasSuffix(path, "/") || strings.HasSuffix(path, "/.") || path == "."
}

// lastDots returns the last component of path if it is "." or "..", else
// "" (rmdir's LAST_DOT and LAST_DOTDOT).
func lastDots(path string) string {
	path = strings.TrimRight(path, "/")
	base := path[strings.LastIndexByte(path, '/')+1:]
	if base == "." || base == ".." {
		return base
	}
	return ""
}

// lastDir finds the directory that holds the last component of the guest
// path raw (resolved: abs), as Linux's walk to it (path_parentat) does
// before a call that makes or removes a name looks at the component
// itself: its errno (ENOENT, ENOTDIR) if that fails. The directory is
// abs's parent; for a last "." abs itself, which the cleaned path no
// longer tells apart ("f/." is ENOTDIR, "missing/." ENOENT); for a last
// "..", resolve looked it up already, as for a lone "." (the start).
func (p *Process) lastDir(raw, abs string) int {
	dir := filepath.Dir(abs)
	switch lastDots(raw) {
	case "..":
		return 0
	case ".":
		if !strings.Contains(strings.TrimRight(raw, "/"), "/") {
			return 0
		}
		dir = abs
	}
	ent, e := p.lookup(dir, true)
	switch {
	case e != 0:
		return e
	case !ent.isDir():
		return eNOTDIR
	}
	return 0
}

// guestPath reads a path argument and resolves it against dirfd.
func (p *Process) guestPath(dirfd int32, pathAddr uint64) (string, int) {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return "", e
	}
	return p.resolve(dirfd, path)
}

func (p *Process) open(dirfd int32, pathAddr, flags, mode uint64) uint64 {
	raw, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	abs, e := p.resolve(dirfd, raw)
	if e != 0 {
		return sysErr(e)
	}
	if flags&oPATH != 0 {
		return p.openPath(raw, abs, flags)
	}
	acc, write := flags&oACCMODE, flags&oACCMODE != 0 || flags&oTRUNC != 0
	if acc == oACCMODE {
		return sysErr(eINVAL)
	}
	if ret, done := p.openSpecial(abs, flags); done {
		return ret
	}
	follow := flags&p.abi.oNofollow() == 0 && flags&(oCREAT|oEXCL) != oCREAT|oEXCL
	ent, e := p.lookup(abs, follow)
	created := false // by this open: its mode does not apply to it
	if flags&oTMPFILE != 0 && e == 0 {
		return p.openTmpfile(ent, flags, mode)
	}
	if trailingSlash(raw) {
		switch {
		case e == eNOENT && flags&oCREAT != 0:
			if e := p.lastDir(raw, abs); e != 0 {
				return sysErr(e) // "missing/new/", "missing/."
			}
			return sysErr(eISDIR) // a name to create that must be a directory
		case e == 0 && !ent.isDir():
			return sysErr(eNOTDIR)
		}
	}
	switch {
	case e == eNOENT && flags&oCREAT != 0:
		path, e := p.parentOf(ent.path)
		if e == eNOENT && !p.ov.writable(ent.path) {
			e = eROFS // as before: nothing is created outside the writable trees
		}
		if e != 0 {
			return sysErr(e)
		}
		n := p.newNode(nodeFile, uint32(mode)&^p.ov.umask)
		if e := p.putNew(path, n); e != 0 {
			return sysErr(e)
		}
		ent, created = ovEntry{path: path, node: n}, true
	case e != 0:
		return sysErr(e)
	case flags&(oCREAT|oEXCL) == oCREAT|oEXCL:
		return sysErr(eEXIST)
	case ent.isDir():
		if write || flags&oCREAT != 0 {
			return sysErr(eISDIR)
		}
		if !p.entryAllows(ent, 4) {
			return sysErr(eACCES) // a listing needs read permission
		}
		// Its path with all links resolved, as Linux names it (in
		// /proc/self/fd, for fchdir's getcwd): ".." from it (a dirfd's)
		// is then its parent.
		f := &openFile{kind: fileDir, path: ent.real(), node: ent.node}
		if ent.node == nil {
			// A directory of the view (a named tree's, the sysroot's, one
			// above a named file), listed by getdents64 as the view
			// shows it; its stat is taken now.
			st := p.entryStat(ent)
			f.ino, f.dirStat = st.ino, st
		} else {
			f.ino = ent.node.ino
		}
		fd, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
	case flags&p.abi.oDirectory != 0:
		return sysErr(eNOTDIR)
	case ent.node != nil && ent.node.kind == nodeLink, ent.node == nil && ent.vf.fi.Mode()&fs.ModeSymlink != 0:
		return sysErr(eLOOP) // O_NOFOLLOW on a link
	case ent.node != nil && ent.node.kind == nodeSock:
		return sysErr(eNXIO) // a socket is connected to, not opened
	}
	switch {
	case created:
	case acc != oWRONLY && !p.entryAllows(ent, 4), write && !p.entryAllows(ent, 2):
		return sysErr(eACCES)
	case ent.node != nil && ent.node.kind == nodeFifo:
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported: open of the named pipe %s: named pipes are made, not opened", ent.path))
		return 0
	}
	if write && ent.node == nil {
		n, e := p.copyUp(ent)
		if e != 0 {
			return sysErr(e)
		}
		ent.node = n
	}
	if ent.node != nil {
		if flags&oTRUNC != 0 && ent.node.kind == nodeFile {
			if e := p.resize(ent.node, 0); e != 0 {
				return sysErr(e)
			}
			p.touch(ent.node, touchModify|touchChange) // even if it was empty
		}
		fd, e := p.allocFD(0, &openFile{kind: fileRegular, path: ent.path, node: ent.node, flags: flags & (oACCMODE | oAPPEND), ino: ent.node.ino})
		if e != 0 {
			p.releaseNode(ent.node)
			return sysErr(e)
		}
		return uint64(fd)
	}
	vf := ent.vf
	host := vf.host
	sf, e := p.openShared(vf) // regular files only (EISDIR, EACCES)
	if e != 0 {
		return sysErr(e)
	}
	if flags&p.abi.oDirectory != 0 {
		p.released(sf)
		return sysErr(eNOTDIR)
	}
	fd, e := p.allocFD(0, &openFile{kind: fileRegular, path: abs, host: host, sf: sf, ino: p.inode(host), mode: p.viewMode(abs, vf.fi)})
	if e != 0 {
		p.released(sf)
		return sysErr(e)
	}
	return uint64(fd)
}

// openTmpfile opens a new file without a name in directory dir
// (O_TMPFILE).
func (p *Process) openTmpfile(dir ovEntry, flags, mode uint64) uint64 {
	switch {
	case flags&oACCMODE == 0:
		return sysErr(eINVAL)
	case !dir.isDir():
		return sysErr(eNOTDIR)
	case !p.ov.writable(dir.path):
		return sysErr(eROFS)
	case !p.entryAllows(dir, 3):
		return sysErr(eACCES)
	}
	n := p.newNode(nodeFile, uint32(mode)&^p.ov.umask)
	n.nlink, n.linkable = 0, flags&oEXCL == 0
	if !p.charge(nodeOverhead) {
		return sysErr(eNOSPC)
	}
	n.cost = nodeOverhead
	// Named "#ino" in the directory, as Linux's d_tmpfile names it
	// (/proc/self/fd shows that name).
	path := filepath.Join(dir.path, fmt.Sprintf("#%d", n.ino))
	fd, e := p.allocFD(0, &openFile{kind: fileRegular, path: path, node: n, flags: flags & (oACCMODE | oAPPEND), ino: n.ino})
	if e != 0 {
		p.releaseNode(n)
		return sysErr(e)
	}
	return uint64(fd)
}

func (p *Process) sysOpenat(a *[6]uint64) uint64 {
	return p.withCloexec(p.open(int32(a[0]), a[1], a[2], a[3]), a[2]&oCLOEXEC != 0)
}

func (p *Process) sysOpen(a *[6]uint64) uint64 {
	return p.withCloexec(p.open(atFDCWD, a[0], a[1], a[2]), a[1]&oCLOEXEC != 0)
}

func (p *Process) sysCreat(a *[6]uint64) uint64 {
	return p.open(atFDCWD, a[0], oCREAT|oWRONLY|oTRUNC, a[1])
}

// dup makes newfd (or, if newfd < 0, the lowest free fd) share oldfd's
// open file: EBADF if oldfd is not open or newfd is beyond the descriptor
// limit, EMFILE if no descriptor is free.
func (p *Process) dup(oldfd, newfd int) uint64 {
	f := p.fds[oldfd]
	if f == nil || newfd >= p.nofile() {
		return sysErr(eBADF)
	}
	if newfd < 0 {
		fd, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
	}
	if newfd == oldfd {
		return uint64(newfd) // dup2 onto itself changes nothing (dup3 is EINVAL)
	}
	p.setFD(newfd, f)
	return uint64(newfd)
}

func (p *Process) sysDup(a *[6]uint64) uint64 { return p.dup(int(int32(a[0])), -1) }

func (p *Process) sysDup2(a *[6]uint64) uint64 {
	// newfd is unsigned for the kernel: a negative one is beyond the limit.
	if int32(a[1]) < 0 {
		return sysErr(eBADF)
	}
	return p.dup(int(int32(a[0])), int(int32(a[1])))
}

func (p *Process) sysDup3(a *[6]uint64) uint64 {
	if a[0] == a[1] || a[2]&^oCLOEXEC != 0 { // only O_CLOEXEC
		return sysErr(eINVAL)
	}
	return p.withCloexec(p.sysDup2(a), a[2]&oCLOEXEC != 0)
}

func (p *Process) sysClose(a *[6]uint64) uint64 {
	if !p.closeFD(int(int32(a[0]))) {
		return sysErr(eBADF)
	}
	return 0
}

// readInto reads up to n bytes from fd (at off, or at and advancing the
// file offset if off < 0) into guest memory at addr, which the caller
// checked is writable. Host memory used: at most ioChunk at a time.
func (p *Process) readInto(fd int, addr, n uint64, off int64) (uint64, int) {
	f := p.fds[fd]
	if f == nil || f.kind == fileStdout || f.kind == fileStderr || f.flags&oACCMODE == oWRONLY {
		return 0, eBADF
	}
	if f.kind == fileDir {
		return 0, eISDIR
	}
	if f.kind == fileEpoll || f.kind == fileEventfd || f.kind == fileTimerfd {
		return 0, eINVAL // an eventfd or timerfd is read whole by read(2) (eventfdIO, timerfdIO)
	}
	if f.kind == fileDevice {
		return p.devRead(f, addr, n), 0
	}
	n = min(n, maxRW)
	if f.kind == fileStdin {
		if off >= 0 {
			return 0, eSPIPE
		}
		if p.cfg.Stdin == nil || n == 0 {
			return 0, 0
		}
		// A fresh buffer: if the run is stopped while the read waits, the
		// read still owns it.
		b := make([]byte, min(n, ioChunk))
		k, end, err := p.hostRead(p.cfg.Stdin, p.inFD, b)
		switch end {
		case waitStopped:
			return 0, eINTR
		case waitSignal:
			return 0, eRestartSys // as pipe_read and n_tty_read
		}
		if k == 0 && err != nil && err != io.EOF {
			return 0, eIO
		}
		p.writeGuest(addr, b[:k])
		return uint64(k), 0
	}
	at := off
	if at < 0 {
		at = f.off
	}
	var k uint64
	if f.node != nil {
		if n > 0 {
			p.accessed(f.node) // also at the end of the file
		}
		if size := f.node.data.Len(); at < size {
			hi := min(size, at+int64(n))
			f.node.data.each(at, hi, func(piece []byte, off int64) bool {
				p.writeGuest(addr+uint64(off-at), piece)
				return true
			})
			k = uint64(hi - at)
		}
	} else if f.sf != nil {
		var e int
		if k, e = p.fileToGuest(f.sf, at, addr, n); e != 0 {
			return 0, e
		}
	} else {
		if f.proc != nil && at == 0 && !p.procRemake(f) {
			return 0, eSRCH // its thread has exited
		}
		if at >= int64(len(f.data)) {
			return 0, 0
		}
		b := f.data[at:min(int64(len(f.data)), at+int64(n))]
		p.writeGuest(addr, b)
		k = uint64(len(b))
	}
	if off < 0 {
		f.off += int64(k)
	}
	return k, 0
}

func (p *Process) sysRead(a *[6]uint64) uint64 {
	if p.pipeFile(a[0]) != nil {
		return p.pipeIO(a[0], a[1], a[2], false, false)
	}
	if f := p.fds[int(int32(a[0]))]; f != nil && f.kind == fileSignalfd {
		return p.signalfdIO(a[0], a[1], a[2])
	}
	if f := p.fds[int(int32(a[0]))]; f != nil && f.kind == fileEventfd {
		return p.eventfdIO(a[0], a[1], a[2], false)
	}
	if f := p.fds[int(int32(a[0]))]; f != nil && f.kind == fileTimerfd {
		return p.timerfdIO(a[0], a[1], a[2], false)
	}
	if !p.writable(a[1], min(a[2], maxRW)) {
		return sysErr(eFAULT)
	}
	n, e := p.readInto(int(int32(a[0])), a[1], a[2], -1)
	if e != 0 {
		return sysErr(e)
	}
	return n
}

func (p *Process) sysPread64(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case int64(a[3]) < 0:
		return sysErr(eINVAL)
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileRegular && f.kind != fileDir && f.kind != fileDevice:
		return sysErr(eSPIPE) // a stream, as Linux has no FMODE_PREAD for it
	}
	if !p.writable(a[1], min(a[2], maxRW)) {
		return sysErr(eFAULT)
	}
	n, e := p.readInto(int(int32(a[0])), a[1], a[2], int64(a[3]))
	if e != 0 {
		return sysErr(e)
	}
	return n
}

// iovecs reads an iovec array (at most UIO_MAXIOV entries); their total
// length is cut to maxRW, as Linux does.
func (p *Process) iovecs(addr, n uint64) ([][2]uint64, int) {
	if n > 1024 {
		return nil, eINVAL
	}
	raw, ok := p.readGuest(addr, 16*n)
	if !ok {
		return nil, eFAULT
	}
	v := make([][2]uint64, n)
	var total uint64
	for i := range v {
		v[i] = [2]uint64{binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])}
		if int64(v[i][1]) < 0 || total+v[i][1] > 1<<63-1 {
			return nil, eINVAL // the total overflows ssize_t
		}
		v[i][1] = min(v[i][1], maxRW-min(total, maxRW))
		total += v[i][1]
	}
	return v, 0
}

// writeIovecs reads the iovecs of a write (n of them at addr): those up
// to the first whose buffer is not readable guest memory, which ends the
// write there, as copying it would (EFAULT if it is the first).
func (p *Process) writeIovecs(addr, n uint64) ([][2]uint64, int) {
	iov, e := p.iovecs(addr, n)
	if e != 0 {
		return nil, e
	}
	for i, v := range iov {
		if !p.mapped(v[0], v[1]) {
			var before uint64
			for _, w := range iov[:i] {
				before += w[1]
			}
			if before == 0 {
				return nil, eFAULT
			}
			return iov[:i], 0
		}
	}
	return iov, 0
}

func (p *Process) sysReadv(a *[6]uint64) uint64 {
	if p.pipeFile(a[0]) != nil {
		return p.pipeIO(a[0], a[1], a[2], true, false)
	}
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	if f := p.fds[int(int32(a[0]))]; f != nil && (f.kind == fileSignalfd || f.kind == fileEventfd || f.kind == fileTimerfd) {
		return p.anonReadv(a[0], f, iov)
	}
	return p.readIovecs(int(int32(a[0])), iov, -1)
}

// anonReadv is readv of a signalfd, eventfd or timerfd: the read of its
// first non-empty iovec, which must hold what one read returns (as
// read(2) wants, else EINVAL); one spread over several stops the run.
func (p *Process) anonReadv(fd uint64, f *openFile, iov [][2]uint64) uint64 {
	var first [2]uint64
	var total uint64
	for _, v := range iov {
		if first[1] == 0 {
			first = v
		}
		total += v[1]
	}
	need := uint64(8)
	if f.kind == fileSignalfd {
		need = signalfdInfoSize
	}
	if total >= need && first[1] < need {
		p.sysStop(StopUnsupported, 0, "unsupported system call readv: a signalfd, eventfd or timerfd read into several iovecs")
		return sysErr(eINVAL)
	}
	switch f.kind {
	case fileSignalfd:
		return p.signalfdIO(fd, first[0], first[1])
	case fileEventfd:
		return p.eventfdIO(fd, first[0], first[1], false)
	}
	return p.timerfdIO(fd, first[0], first[1], false)
}

// readIovecs reads fd into the iovecs one after the other (readInto), at
// off on (preadv) or, if off < 0, at and advancing the file offset
// (readv); it stops at the first short read, and an error after some
// bytes ends it with those bytes.
func (p *Process) readIovecs(fd int, iov [][2]uint64, off int64) uint64 {
	var total uint64
	for _, v := range iov {
		if !p.writable(v[0], v[1]) {
			return sysErr(eFAULT)
		}
		at := off
		if off >= 0 {
			at = off + int64(total)
		}
		n, e := p.readInto(fd, v[0], v[1], at)
		if e != 0 {
			if total > 0 {
				break
			}
			return sysErr(e)
		}
		total += n
		if n < v[1] {
			break
		}
	}
	return total
}

// writer returns the stream fd writes to, or nil if it cannot be written
// (fd 0 and opened files are read-only).
func (p *Process) writer(fd int) *hostStream {
	f := p.fds[fd]
	switch {
	case f == nil:
		return nil
	case f.kind == fileStdout:
		return &hostStream{p.cfg.Stdout, p.outFD}
	case f.kind == fileStderr:
		return &hostStream{p.cfg.Stderr, p.errFD}
	}
	return nil
}

// hostStream is Config.Stdout or Stderr with its descriptor (hostFD).
type hostStream struct {
	w  io.Writer
	fd int
}

// writeFrom writes the guest bytes [addr, addr+n) (mapped) to w in ioChunk
// pieces: nothing the guest writes is held beyond one piece. It returns
// how many were written and, if that is short, why (writeErr).
func (p *Process) writeFrom(w *hostStream, addr, n uint64) (done uint64, why writeEnd) {
	return p.streamOut(w, n, func(buf []byte, off uint64) bool {
		return p.Engine.ReadMem(addr+off, buf) == nil
	})
}

// streamOut is writeFrom of n bytes that fill puts into buf, from offset
// off of the n (false: the write fails).
func (p *Process) streamOut(w *hostStream, n uint64, fill func(buf []byte, off uint64) bool) (done uint64, why writeEnd) {
	for done < n {
		// A fresh buffer per piece would do too; the scratch buffer is
		// replaced if a stopped write still holds it.
		buf := p.scratchBuf()[:min(ioChunk, n-done)]
		if !fill(buf, done) {
			return done, writeFailed
		}
		k, end, err := p.hostWrite(w.w, w.fd, buf)
		done += uint64(k)
		switch end {
		case waitStopped:
			p.scratch = nil
			return done, writeFailed
		case waitSignal:
			return done, writeSignal
		}
		if err != nil || k < len(buf) {
			if errors.Is(err, syscall.EPIPE) {
				return done, writeBroken
			}
			return done, writeFailed
		}
	}
	return done, writeDone
}

// writeEnd says why writeFrom wrote less than asked.
type writeEnd int

const (
	writeDone   writeEnd = iota // it wrote everything
	writeFailed                 // the write failed, or the run was stopped
	writeBroken                 // the reader of a pipe had gone (EPIPE: the guest's stdout piped into head, say)
	writeSignal                 // a signal from outside came while it waited (hostsignal.go)
)

// writeFile writes n bytes of guest memory at addr to the overlay file f
// at off, or at and advancing its offset if off < 0 (at its end with
// O_APPEND, pwrite included, as Linux does).
func (p *Process) writeFile(f *openFile, addr, n uint64, off int64) (uint64, int) {
	if f.flags&oACCMODE == 0 {
		return 0, eBADF
	}
	at := off
	switch {
	case f.flags&oAPPEND != 0:
		at = f.node.data.Len()
	case off < 0:
		at = f.off
	}
	if n > math.MaxInt64-uint64(at) {
		return 0, eINVAL // rw_verify_area: the end past the largest offset
	}
	k, e := p.writeNode(f.node, addr, n, at) // EFBIG at maxFileSize
	if e == 0 && off < 0 {
		f.off = at + int64(k)
	}
	return k, e
}

// writeFileV writes the iovecs at addr (n of them) to the overlay file f,
// as writeFile.
func (p *Process) writeFileV(f *openFile, addr, n uint64, off int64) uint64 {
	iov, e := p.writeIovecs(addr, n)
	if e != 0 {
		return sysErr(e)
	}
	var total uint64
	for _, v := range iov {
		at := off
		if off >= 0 {
			at = off + int64(total)
		}
		k, e := p.writeFile(f, v[0], v[1], at)
		if e != 0 {
			if total > 0 {
				break
			}
			return sysErr(e)
		}
		total += k
		if k < v[1] {
			break
		}
	}
	return total
}

// overlayFile returns fd's open file if it is a file of the overlay.
func (p *Process) overlayFile(fd uint64) *openFile {
	if f := p.fds[int(int32(fd))]; f != nil && f.kind == fileRegular && f.node != nil {
		return f
	}
	return nil
}

// pwriteFile returns the file a positional write (pwrite64, pwritev) at
// offset off writes to: an overlay file, or an errno as Linux gives it.
func (p *Process) pwriteFile(fd, off uint64) (*openFile, int) {
	f := p.fds[int(int32(fd))]
	switch {
	case f == nil:
		return nil, eBADF
	case int64(off) < 0:
		return nil, eINVAL
	case f.kind != fileRegular:
		return nil, eSPIPE
	case f.node == nil:
		return nil, eBADF
	}
	return f, 0
}

func (p *Process) sysPwrite64(a *[6]uint64) uint64 {
	if f := p.fds[int(int32(a[0]))]; f != nil && int64(a[3]) >= 0 {
		switch {
		case f.kind == fileDevice:
			return devWrite(f, a[2])
		case f.proc != nil && f.proc.comm != 0 && f.flags&oACCMODE != 0:
			return p.procCommWrite(f, a[1], a[2])
		}
	}
	f, e := p.pwriteFile(a[0], a[3])
	if e != 0 {
		return sysErr(e)
	}
	n := min(a[2], maxRW)
	if !p.mapped(a[1], n) {
		return sysErr(eFAULT)
	}
	k, e := p.writeFile(f, a[1], n, int64(a[3]))
	if e != 0 {
		return sysErr(e)
	}
	return k
}

func (p *Process) sysPwritev(a *[6]uint64) uint64 {
	f, e := p.pwriteFile(a[0], a[3])
	if e != 0 {
		return sysErr(e)
	}
	return p.writeFileV(f, a[1], a[2], int64(a[3]))
}

func (p *Process) sysWrite(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == fileEventfd:
		return p.eventfdIO(a[0], a[1], a[2], true)
	case f.kind == fileTimerfd || f.kind == fileSignalfd || f.kind == fileEpoll:
		return sysErr(eINVAL) // no write for it (FMODE_CAN_WRITE)
	case f.kind == fileDevice && f.flags&oACCMODE == 0:
		return sysErr(eBADF)
	case f.kind == fileDevice:
		return devWrite(f, a[2])
	case f.proc != nil && f.proc.comm != 0 && f.flags&oACCMODE != 0:
		return p.procCommWrite(f, a[1], a[2]) // /proc/self/comm: the thread's name
	}
	if p.pipeFile(a[0]) != nil {
		return p.pipeIO(a[0], a[1], a[2], false, true)
	}
	if f := p.overlayFile(a[0]); f != nil {
		n := min(a[2], maxRW)
		if !p.mapped(a[1], n) {
			return sysErr(eFAULT)
		}
		k, e := p.writeFile(f, a[1], n, -1)
		if e != 0 {
			return sysErr(e)
		}
		return k
	}
	w := p.writer(int(int32(a[0])))
	if w == nil {
		return sysErr(eBADF)
	}
	n := min(a[2], maxRW)
	if !p.mapped(a[1], n) {
		return sysErr(eFAULT)
	}
	done, why := p.writeFrom(w, a[1], n)
	if done == 0 && why != writeDone && n > 0 {
		return p.writeErr(why)
	}
	return done
}

func (p *Process) sysWritev(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == fileTimerfd || f.kind == fileSignalfd || f.kind == fileEpoll:
		return sysErr(eINVAL) // no write for it (FMODE_CAN_WRITE)
	case f.kind == fileDevice:
		if f.flags&oACCMODE == 0 {
			return sysErr(eBADF)
		}
		iov, e := p.iovecs(a[1], a[2])
		if e != 0 {
			return sysErr(e)
		}
		var total uint64
		for _, v := range iov {
			total += v[1]
		}
		return devWrite(f, total)
	case f.kind == fileEventfd:
		// Linux writes each iovec in turn (eventfd has no write_iter):
		// one is a write(2); more stop the run.
		iov, e := p.iovecs(a[1], a[2])
		if e != 0 {
			return sysErr(e)
		}
		if len(iov) == 0 {
			return 0
		}
		if len(iov) > 1 {
			p.sysStop(StopUnsupported, 0, "unsupported system call writev: an eventfd written from several iovecs")
			return sysErr(eINVAL)
		}
		return p.eventfdIO(a[0], iov[0][0], iov[0][1], true)
	}
	if p.pipeFile(a[0]) != nil {
		return p.pipeIO(a[0], a[1], a[2], true, true)
	}
	if f := p.overlayFile(a[0]); f != nil {
		return p.writeFileV(f, a[1], a[2], -1)
	}
	w := p.writer(int(int32(a[0])))
	if w == nil {
		return sysErr(eBADF)
	}
	iov, e := p.writeIovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	var total uint64
	for _, v := range iov {
		done, why := p.writeFrom(w, v[0], v[1])
		total += done
		if total == 0 && why != writeDone && v[1] > 0 {
			return p.writeErr(why)
		}
		if done < v[1] {
			break
		}
	}
	return total
}

// raiseSIGPIPE sends the guest the SIGPIPE of a write to a pipe without a
// reader, as the kernel does (SI_USER, from the process itself).
func (p *Process) raiseSIGPIPE() {
	p.queueSignal(nil, sigInfo{signo: 13, code: siUser, pid: guestPID, uid: guestUID}, true)
}

// writeErr is the result of a write to stdout or stderr that wrote
// nothing, for the reason why: EINTR if the run was stopped meanwhile;
// EPIPE and a SIGPIPE if the host's pipe has no reader, as Linux does for
// a pipe, so a program ends as it would natively, or handles EPIPE if it
// ignores SIGPIPE; ERESTARTSYS for a signal from outside, as pipe_write
// gives; else EIO.
func (p *Process) writeErr(why writeEnd) uint64 {
	switch {
	case p.exit != nil:
		return sysErr(eINTR)
	case why == writeBroken:
		p.raiseSIGPIPE()
		return sysErr(ePIPE)
	case why == writeSignal:
		return sysErr(eRestartSys)
	}
	return sysErr(eIO)
}

func (p *Process) sysLseek(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	if f.kind == fileDir {
		// The position is the index of the next entry, getdents64's
		// d_off (telldir and seekdir); 0 lists the directory anew.
		off := int64(a[1])
		switch uint32(a[2]) {
		case 0: // SEEK_SET
		case 1: // SEEK_CUR
			off += f.off
		default:
			return sysErr(eINVAL)
		}
		if off < 0 {
			return sysErr(eINVAL)
		}
		if off == 0 {
			f.names = nil
		}
		f.off = off
		return uint64(off)
	}
	if f.kind == fileSignalfd || f.kind == fileEpoll || f.kind == fileEventfd || f.kind == fileTimerfd || f.kind == fileDevice {
		return uint64(f.off) // noop_llseek (null_lseek, zero: 0): the offset, never moved
	}
	if f.kind != fileRegular {
		return sysErr(eSPIPE)
	}
	if f.proc != nil && uint32(a[2]) > 1 {
		return sysErr(eINVAL) // seq_lseek: SEEK_SET and SEEK_CUR only
	}
	off := int64(a[1])
	switch uint32(a[2]) { // an unsigned int
	case 0: // SEEK_SET
	case 1: // SEEK_CUR
		off += f.off
	case 2: // SEEK_END
		off += f.size()
	case 3, 4: // SEEK_DATA, SEEK_HOLE
		size := f.size()
		switch {
		case uint64(off) >= uint64(size):
			return sysErr(eNXIO)
		case f.node != nil && uint32(a[2]) == 3:
			// The overlay's files have holes where nothing was written
			// (whole chunks of fileData), as tmpfs has where no page is.
			if off = f.node.data.seekData(off); off < 0 {
				return sysErr(eNXIO)
			}
		case f.node != nil:
			off = f.node.data.seekHole(off)
		case uint32(a[2]) == 4:
			off = size // the view's: a file without holes (generic_file_llseek)
		}
	default:
		return sysErr(eINVAL)
	}
	if off < 0 || off > maxFileSize {
		return sysErr(eINVAL) // generic_file_llseek_size: up to s_maxbytes
	}
	f.off = off
	return uint64(off)
}

func (p *Process) sysFcntl(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	if f.pathOnly() {
		switch a[1] {
		case 0, 1030, 1, 2: // F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD
		case 3: // F_GETFL
			return f.flags
		default:
			return sysErr(eBADF) // check_fcntl_cmd
		}
	}
	switch a[1] {
	case 0, 1030: // F_DUPFD, F_DUPFD_CLOEXEC
		// The minimum is unsigned for the kernel.
		from := a[2] & 0xffffffff
		if from >= uint64(p.nofile()) {
			return sysErr(eINVAL)
		}
		fd, e := p.allocFD(int(from), f)
		if e != 0 {
			return sysErr(e)
		}
		return p.withCloexec(uint64(fd), a[1] == 1030)
	case 1: // F_GETFD
		return b2u(p.cloexec.has(int(int32(a[0]))))
	case 2: // F_SETFD: FD_CLOEXEC, the only flag
		if fd := int(int32(a[0])); fd < fdLimit {
			if a[2]&1 != 0 {
				p.cloexec.set(fd)
			} else {
				p.cloexec.clear(fd)
			}
		}
		return 0
	case 4: // F_SETFL: of the flags the layer knows, O_APPEND can change
		if f.node != nil {
			f.flags = f.flags&^oAPPEND | a[2]&oAPPEND
		}
		f.setNonblock(a[2]&oNONBLOCK != 0)
		return 0
	case 3: // F_GETFL
		if f.kind == fileStdout || f.kind == fileStderr {
			return 1 // O_WRONLY
		}
		if f.kind == fileDir {
			return p.abi.oDirectory
		}
		return f.flags
	case 5, 6, 7: // F_GETLK, F_SETLK, F_SETLKW
		return p.recordLock(int(int32(a[0])), f, a[1], a[2])
	case 36, 37, 38: // F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
		return p.ofdLock(int(int32(a[0])), f, a[1], a[2])
	case 1031, 1032: // F_SETPIPE_SZ, F_GETPIPE_SZ
		switch {
		case f.pipe == nil:
			return sysErr(eBADF)
		case a[1] == 1032:
			return uint64(f.pipe.capacity())
		}
		return setPipeSize(f.pipe, uint64(uint32(a[2])))
	}
	return sysErr(eINVAL)
}

// recordLock emulates POSIX record locks (fcntl F_GETLK, F_SETLK,
// F_SETLKW) for a process that is alone, as the guest is: a process's
// locks never conflict with each other (its threads share them), and no
// other process exists, so every lock is granted at once but where an
// open file description lock (ofdlocks.go) is in the way, and F_GETLK
// finds none else (it sets l_type to F_UNLCK, as Linux does). What Linux
// checks before looking for conflicts is checked here too: the struct
// flock is readable (EFAULT); l_type is F_RDLCK or F_WRLCK (and for the
// setters also F_UNLCK), l_whence SEEK_SET, SEEK_CUR or SEEK_END, and the
// range starts at 0 or later (EINVAL); a read (write) lock needs a
// descriptor open for reading (writing) (EBADF). Open file description
// locks (F_OFD_*, ofdLock) can conflict within one process: they are
// kept.
func (p *Process) recordLock(fd int, f *openFile, cmd, addr uint64) uint64 {
	req, e := p.readFlock(f, addr, cmd == 5)
	if e != 0 {
		return sysErr(e)
	}
	if cmd == 5 {
		c, ok := p.lockConflict(nil, f, req)
		return p.putConflict(addr, c, ok)
	}
	if req.typ == fUNLCK {
		return 0
	}
	if e := lockAccess(f, req.typ); e != 0 {
		return sysErr(e)
	}
	if _, ok := p.lockConflict(nil, f, req); ok {
		if cmd == 6 {
			return sysErr(eAGAIN)
		}
		p.waitLock(fd, f, req, true)
	}
	return 0
}

// struct flock's l_type.
const fRDLCK, fWRLCK, fUNLCK = 0, 1, 2

// flockReq is a struct flock read from the guest: the lock type and the
// range [start, end) it covers (end ^0: to the end of the file, however
// far it grows), and l_pid.
type flockReq struct {
	typ        int16
	start, end uint64
	pid        int32
}

// readFlock reads the struct flock at addr (LP64, both arches: short
// l_type, l_whence; off_t l_start, l_len; pid_t l_pid) and checks it as
// Linux does (flock_to_posix_lock): EFAULT, EINVAL for a bad type (F_UNLCK
// too if get), whence or a range before 0, EOVERFLOW past the largest
// offset.
func (p *Process) readFlock(f *openFile, addr uint64, get bool) (flockReq, int) {
	b, ok := p.readGuest(addr, 32)
	if !ok {
		return flockReq{}, eFAULT
	}
	le := binary.LittleEndian
	typ, whence := int16(le.Uint16(b[0:])), int16(le.Uint16(b[2:]))
	start, length := int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:]))
	req := flockReq{typ: typ, pid: int32(le.Uint32(b[24:]))}
	switch {
	case typ == fUNLCK && get, typ != fRDLCK && typ != fWRLCK && typ != fUNLCK:
		return req, eINVAL
	}
	switch whence {
	case 0: // SEEK_SET
	case 1: // SEEK_CUR
		start += f.off
	case 2: // SEEK_END
		start += f.size()
	default:
		return req, eINVAL
	}
	const offsetMax = 1<<63 - 1
	switch {
	case start < 0:
		return req, eINVAL
	case length > 0:
		if length-1 > offsetMax-start {
			return req, eOVERFLOW
		}
		req.start, req.end = uint64(start), uint64(start+length)
	case length == 0:
		req.start, req.end = uint64(start), ^uint64(0)
	default:
		if start+length < 0 {
			return req, eINVAL
		}
		req.start, req.end = uint64(start+length), uint64(start)
	}
	return req, 0
}

// lockAccess is EBADF for a read (write) lock on a descriptor not open
// for reading (writing).
func lockAccess(f *openFile, typ int16) int {
	if typ == fRDLCK && !readable(f) || typ == fWRLCK && !writable(f) {
		return eBADF
	}
	return 0
}

// setNonblock sets or clears O_NONBLOCK (fcntl F_SETFL, ioctl FIONBIO):
// F_GETFL shows it; pipes, signalfds, eventfds and timerfds honour it (a
// regular file never waits; stdin's reads still wait for the host).
func (f *openFile) setNonblock(on bool) {
	f.flags &^= oNONBLOCK
	if on {
		f.flags |= oNONBLOCK
	}
}

// The ioctls Linux serves for every file (fs/ioctl.c) or for pipes, with
// the same numbers on x86-64 and AArch64 (asm-generic/ioctls.h).
const (
	ioFIONREAD = 0x541b // int: bytes a read would get now
	ioFIONBIO  = 0x5421 // int: O_NONBLOCK on (nonzero) or off
	ioFIONCLEX = 0x5450 // clear close-on-exec
	ioFIOCLEX  = 0x5451 // set close-on-exec
)

// sysIoctl emulates the ioctls of every file Linux has: FIOCLEX and
// FIONCLEX (accepted: the guest cannot exec, and F_GETFD does not track
// close-on-exec either), FIONBIO (O_NONBLOCK, as fcntl F_SETFL sets it)
// and FIONREAD on a pipe (the bytes in it, from either end) or a regular
// file (its size less the offset, as an int, as Linux computes it). The
// rest, terminal ioctls included, fail with ENOTTY: the guest's standard
// streams are not a terminal, so that what it does never depends on where
// sframesim's own input and output go, and FIONREAD on them, which would
// need the host's stream, fails so too.
func (p *Process) sysIoctl(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	// The command is an unsigned int for the kernel.
	switch uint32(a[1]) {
	case ioFIOCLEX, ioFIONCLEX:
		if fd := int(int32(a[0])); fd < fdLimit {
			if uint32(a[1]) == ioFIOCLEX {
				p.cloexec.set(fd)
			} else {
				p.cloexec.clear(fd)
			}
		}
		return 0
	case ioFIONBIO:
		b, ok := p.readGuest(a[2], 4)
		if !ok {
			return sysErr(eFAULT)
		}
		f.setNonblock(binary.LittleEndian.Uint32(b) != 0)
		return 0
	case ioFIONREAD:
		var n int64
		switch f.kind {
		case filePipe:
			n = int64(len(f.pipe.buf))
		case fileRegular:
			n = f.size() - f.off
		default:
			return sysErr(eNOTTY)
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(int32(n)))
		if !p.writeGuest(a[2], b[:]) {
			return sysErr(eFAULT)
		}
		return 0
	}
	return sysErr(eNOTTY)
}

// statInfo is what the layer knows about a file, for the arch's struct stat.
type statInfo struct {
	dev, ino, nlink, rdev uint64
	mode, uid, gid        uint32
	size, blksize, blocks int64
	// times are atime, mtime and ctime, of an overlay's node; nil:
	// every time is the fake clock's start, epoch.
	times *[3]timespec
}

// timespec is a struct timespec: seconds and nanoseconds.
type timespec struct{ sec, nsec int64 }

// statTimes returns st's atime, mtime and ctime.
func statTimes(st statInfo) [3]timespec {
	if st.times != nil {
		return *st.times
	}
	return epochTimes
}

// fileStat is fstat's struct stat of open file f: its stat, with a
// directory of the overlay's link count (dirNlink).
func (p *Process) fileStat(f *openFile) statInfo {
	st := f.stat()
	if f.node != nil && f.node.kind == nodeDir && !f.pathOnly() {
		st.nlink = p.dirNlink(f.path, f.node)
	}
	return st
}

func (f *openFile) stat() statInfo {
	if f.pathOnly() || f.proc != nil {
		return f.dirStat // taken at open
	}
	if f.node != nil {
		return nodeStat(f.node)
	}
	if f.kind == fileDir {
		return f.dirStat
	}
	if f.kind == fileRegular {
		n, mode := f.size(), f.mode
		if mode == 0 {
			mode = 0o100444
		}
		return statInfo{dev: 0x801, ino: f.ino, nlink: 1, mode: mode, uid: guestUID, gid: guestGID, size: n, blksize: 4096, blocks: statBlocks(mode, n)}
	}
	if f.kind == fileDevice {
		return devStat(f.ino, f.minor)
	}
	if f.kind == fileSignalfd || f.kind == fileEpoll || f.kind == fileEventfd || f.kind == fileTimerfd { // an anonymous inode
		return statInfo{dev: 0xe, ino: f.ino, nlink: 1, mode: 0o600, uid: guestUID, gid: guestGID, blksize: 4096}
	}
	return statInfo{dev: 0xc, ino: f.ino, nlink: 1, mode: 0o010600, uid: guestUID, gid: guestGID, blksize: 4096}
}

func (p *Process) putStat(addr uint64, st statInfo) uint64 {
	if !p.writeGuest(addr, p.abi.stat(st)) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysFstat(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	return p.putStat(a[1], p.fileStat(f))
}

// statPath stats a file of the view.
func (p *Process) statPath(dirfd int32, pathAddr, buf uint64, flags uint64) uint64 {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	if flags&^uint64(atSymlinkNofollow|0x800|atEmptyPath) != 0 { // AT_NO_AUTOMOUNT
		return sysErr(eINVAL)
	}
	if path == "" && flags&atEmptyPath != 0 {
		return p.sysFstat(&[6]uint64{uint64(dirfd), buf})
	}
	abs, e := p.resolve(dirfd, path)
	if e != 0 {
		return sysErr(e)
	}
	if minor, ok := devMinor[abs]; ok {
		return p.putStat(buf, devStat(p.inode("dev:"+abs), minor))
	}
	nofollow := flags&atSymlinkNofollow != 0 && !trailingSlash(path)
	if n, ok := p.procFile(abs, !nofollow); ok {
		return p.putStat(buf, p.procStat(&n))
	}
	if fd, ok := fdPath(abs); ok {
		if nofollow {
			st, e := p.fdLinkStat(abs, fd)
			if e != 0 {
				return sysErr(e)
			}
			return p.putStat(buf, st)
		}
		if f := p.fds[fd]; f != nil {
			return p.putStat(buf, p.fileStat(f))
		}
		return sysErr(eNOENT)
	}
	ent, e := p.lookup(abs, flags&atSymlinkNofollow == 0 || trailingSlash(path))
	if e != 0 {
		return sysErr(e)
	}
	if trailingSlash(path) && !ent.isDir() {
		return sysErr(eNOTDIR)
	}
	return p.putStat(buf, p.entryStat(ent))
}

const atSymlinkNofollow = 0x100

func (p *Process) sysNewfstatat(a *[6]uint64) uint64 {
	return p.statPath(int32(a[0]), a[1], a[2], a[3])
}
func (p *Process) sysStat(a *[6]uint64) uint64  { return p.statPath(atFDCWD, a[0], a[1], 0) }
func (p *Process) sysLstat(a *[6]uint64) uint64 { return p.statPath(atFDCWD, a[0], a[1], 0x100) }

// access is faccessat2(dirfd, path, mode, flags): flags AT_EACCESS
// (the real and effective ids are one here), AT_SYMLINK_NOFOLLOW (a link
// itself, whose mode is 0777) and AT_EMPTY_PATH (dirfd's own file).
func (p *Process) access(dirfd int32, pathAddr, mode, flags uint64) uint64 {
	const atEaccess = 0x200
	if mode&^7 != 0 || flags&^uint64(atEaccess|atSymlinkNofollow|atEmptyPath) != 0 {
		return sysErr(eINVAL) // only R_OK, W_OK, X_OK
	}
	if flags&atEmptyPath != 0 {
		if path, e := p.cstring(pathAddr); e == 0 && path == "" {
			return p.accessFD(dirfd, uint32(mode))
		}
	}
	abs, e := p.guestPath(dirfd, pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	if _, ok := devMinor[abs]; ok {
		if mode&1 != 0 {
			return sysErr(eACCES) // X_OK: rw-rw-rw-
		}
		return 0
	}
	if fd, ok := fdPath(abs); ok && p.fds[fd] != nil {
		return 0
	}
	if n, ok := p.procFile(abs, true); ok {
		// The guest owns its /proc files: their owner's bits.
		if perm := uint64(n.mode>>6) & 7; mode&^perm != 0 {
			return sysErr(eACCES) // r--r--r--, r-x------
		}
		return 0
	}
	ent, e := p.lookup(abs, flags&atSymlinkNofollow == 0)
	switch {
	case e != 0:
		return sysErr(e)
	case ent.node != nil && ent.node.kind == nodeLink, ent.node == nil && ent.vf.fi != nil && ent.vf.fi.Mode()&fs.ModeSymlink != 0:
		return 0 // a link itself (AT_SYMLINK_NOFOLLOW): rwxrwxrwx
	}
	return p.accessEntry(ent, uint32(mode))
}

// accessFD is access of descriptor fd's own file (AT_EMPTY_PATH).
func (p *Process) accessFD(fd int32, mode uint32) uint64 {
	f := p.fds[int(fd)]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == fileRegular && (f.node != nil || f.path != "") || f.kind == fileDir:
		if f.node != nil {
			return p.accessEntry(ovEntry{path: f.path, node: f.node}, mode)
		}
		if ent, e := p.lookup(f.path, true); e == 0 {
			return p.accessEntry(ent, mode)
		}
	}
	if mode&1 != 0 {
		return sysErr(eACCES) // pipes, devices, anonymous inodes: no execute bit
	}
	return 0
}

// accessEntry is access of what ent names, mode its R_OK, W_OK, X_OK.
func (p *Process) accessEntry(ent ovEntry, mode uint32) uint64 {
	switch {
	case mode&2 != 0 && ent.node == nil && !p.ov.writable(ent.path): // W_OK
		return sysErr(eROFS)
	case mode&2 != 0 && ent.node != nil && ent.node.kind == nodeDir && !p.ov.writable(ent.path):
		return sysErr(eROFS) // a directory above a writable tree
	case mode&1 != 0 && ent.node == nil && !ent.isDir() && (ent.vf.fi == nil || statMode(ent.vf.fi)&0o111 == 0):
		return sysErr(eACCES) // X_OK: the view's directories are 0555, its files 0444 with the host's execute bits
	case !p.entryAllows(ent, mode):
		return sysErr(eACCES) // R_OK, W_OK, X_OK are the bits' own values
	}
	return 0
}

func (p *Process) sysAccess(a *[6]uint64) uint64    { return p.access(atFDCWD, a[0], a[1], 0) }
func (p *Process) sysFaccessat(a *[6]uint64) uint64 { return p.access(int32(a[0]), a[1], a[2], 0) }
func (p *Process) sysFaccessat2(a *[6]uint64) uint64 {
	return p.access(int32(a[0]), a[1], a[2], a[3])
}

func (p *Process) readlink(dirfd int32, pathAddr, buf, size uint64) uint64 {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	if int64(size) <= 0 {
		return sysErr(eINVAL)
	}
	var target string
	if path == "" {
		// The link an O_PATH|O_NOFOLLOW descriptor names (dirfd);
		// anything else is ENOENT, as for an empty path elsewhere.
		f := p.fds[int(dirfd)]
		switch {
		case dirfd == atFDCWD:
			return sysErr(eNOENT)
		case f == nil:
			return sysErr(eBADF)
		case !f.pathOnly() || f.dirStat.mode&0o170000 != 0o120000:
			return sysErr(eNOENT)
		}
		path = f.path // the link itself: lookup below does not follow it
	}
	if fd, ok := fdPath(path); ok {
		if target, e = p.fdLink(path, fd); e != 0 {
			return sysErr(e)
		}
	} else if path == "/proc/self/exe" || path == fmt.Sprintf("/proc/%d/exe", guestPID) {
		target = realPath(p.Path) // links resolved, as the kernel names what it ran
	} else {
		abs, e := p.resolve(dirfd, path)
		if e != 0 {
			return sysErr(e)
		}
		if fd, ok := fdPath(abs); ok { // relative to /proc/self/fd, say
			t, e := p.fdLink(abs, fd)
			if e != 0 {
				return sysErr(e)
			}
			return p.readlinkResult(t, buf, size)
		}
		if n, ok := p.procFile(abs, false); ok {
			if !n.isLink() {
				return sysErr(eINVAL) // not a symbolic link
			}
			return p.readlinkResult(n.link, buf, size)
		}
		ent, e := p.lookup(abs, false)
		switch {
		case e != 0:
			return sysErr(e)
		case ent.node != nil && ent.node.kind == nodeLink:
			target = ent.node.target
			p.accessed(ent.node) // readlink reads the link (touch_atime)
		case ent.node != nil || ent.vf.fi == nil:
			return sysErr(eINVAL) // not a symbolic link
		default:
			t, err := os.Readlink(ent.vf.host)
			if err != nil {
				return sysErr(eINVAL) // not a symbolic link
			}
			target = t
		}
	}
	return p.readlinkResult(target, buf, size)
}

// fdLink is the target of the link abs, which names descriptor fd
// (fdPath): what fdTarget says of it, or for /dev/stdin, /dev/stdout and
// /dev/stderr their /proc/self/fd entry.
func (p *Process) fdLink(abs string, fd int) (string, int) {
	switch f := p.fds[fd]; {
	case abs == "/dev/stdin" || abs == "/dev/stdout" || abs == "/dev/stderr":
		return fmt.Sprintf("/proc/self/fd/%d", fd), 0
	case f == nil:
		return "", eNOENT
	default:
		return fdTarget(f), 0
	}
}

// readlinkResult writes what fits of target into the buffer at buf of
// size bytes (no NUL) and returns how much that is.
func (p *Process) readlinkResult(target string, buf, size uint64) uint64 {
	b := []byte(target)[:min(uint64(len(target)), size)]
	if !p.writeGuest(buf, b) {
		return sysErr(eFAULT)
	}
	return uint64(len(b))
}

func (p *Process) sysReadlink(a *[6]uint64) uint64 { return p.readlink(atFDCWD, a[0], a[1], a[2]) }
func (p *Process) sysReadlinkat(a *[6]uint64) uint64 {
	return p.readlink(int32(a[0]), a[1], a[2], a[3])
}

func (p *Process) sysGetcwd(a *[6]uint64) uint64 {
	if p.cwd == "" {
		return sysErr(eNOENT)
	}
	if n := p.ov.cwd; n != nil && n.nlink == 0 {
		return sysErr(eNOENT) // it was removed (d_unlinked)
	}
	if _, ok := p.procFile(p.cwd, true); !ok {
		if _, e := p.lookup(p.cwd, true); e == eNOENT {
			return sysErr(eNOENT) // it was removed, or its thread has exited (/proc/self/task/TID)
		}
	}
	b := append([]byte(p.cwd), 0)
	if uint64(len(b)) > a[1] {
		return sysErr(eRANGE)
	}
	if !p.writeGuest(a[0], b) {
		return sysErr(eFAULT)
	}
	return uint64(len(b))
}

// sysChdir makes a directory the guest sees its working directory (all
// links in the path resolved, as getcwd gives it). Only the guest's
// changes: the host's stays.
func (p *Process) sysChdir(a *[6]uint64) uint64 {
	path, node, e := p.dirAt(a[0])
	if e != 0 {
		return sysErr(e)
	}
	return p.enterDir(path, node)
}

// dirAt returns the directory the guest's path at pathAddr names, links
// resolved (node: its overlay node, nil for one of the view or procfs),
// or an errno: what chdir and chroot look up.
func (p *Process) dirAt(pathAddr uint64) (string, *oNode, int) {
	abs, e := p.guestPath(atFDCWD, pathAddr)
	if e != 0 {
		return "", nil, e
	}
	if n, ok := p.procFile(abs, true); ok { // /proc/self, say: /proc/PID
		if !n.isDir() {
			return "", nil, eNOTDIR
		}
		return n.path, nil, 0
	}
	ent, e := p.lookup(abs, true)
	switch {
	case e != 0:
		return "", nil, e
	case !ent.isDir():
		return "", nil, eNOTDIR
	}
	return ent.real(), ent.node, 0
}

// sysFchdir makes the directory open at fd the working directory.
func (p *Process) sysFchdir(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileDir:
		return sysErr(eNOTDIR)
	}
	return p.enterDir(f.path, f.node)
}

// enterDir makes the directory at path (node: its overlay node, nil for
// one of the view, all 0555) the working directory, unless it lacks
// search permission.
func (p *Process) enterDir(path string, node *oNode) uint64 {
	if !allows(node, 1) {
		return sysErr(eACCES)
	}
	p.cwd, p.ov.cwd = path, node
	return 0
}

// deadPrefix starts the names resolve gives a removed directory that a
// relative path names ("." in it): no path the guest gives has a NUL.
const deadPrefix = "\x00dead:"

// deadPath is the name of node, the removed directory that was at path:
// its inode number and that path.
func deadPath(path string, node *oNode) string {
	return deadPrefix + strconv.FormatUint(node.ino, 10) + ":" + path
}

// deadEntry is what the name deadPath gave stands for: the removed
// directory, which the working directory or a descriptor holds, at the
// path it had (ENOENT if none holds it any more).
func (p *Process) deadEntry(name string) (ovEntry, int) {
	num, path, _ := strings.Cut(strings.TrimPrefix(name, deadPrefix), ":")
	ino, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return ovEntry{}, eNOENT
	}
	held := func(n *oNode) bool { return n != nil && n.nlink == 0 && n.ino == ino }
	if held(p.ov.cwd) {
		return ovEntry{path: path, node: p.ov.cwd}, 0
	}
	for _, f := range p.fds {
		if held(f.node) {
			return ovEntry{path: path, node: f.node}, 0
		}
	}
	return ovEntry{}, eNOENT
}

// System calls that change files: all of them act on the overlay
// (overlay.go), never on the host.

// maxFileSize is the largest size a file may have: ext4's s_maxbytes
// with 4 KiB blocks (what the guest's files show themselves on: stat's
// st_dev and st_blksize).
const maxFileSize = 1<<44 - 4096

func (p *Process) truncate(n *oNode, length uint64) uint64 {
	switch {
	case int64(length) < 0:
		return sysErr(eINVAL)
	case length > maxFileSize:
		return sysErr(eFBIG) // inode_newsize_ok
	}
	if n.kind == nodeDir {
		return sysErr(eISDIR)
	}
	if e := p.resize(n, int64(length)); e != 0 {
		return sysErr(e)
	}
	p.touch(n, touchModify|touchChange) // even to the same length
	dropSetID(n)
	return 0
}

func (p *Process) sysFtruncate(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileRegular || f.flags&oACCMODE == 0:
		return sysErr(eINVAL) // not open for writing
	}
	return p.truncate(f.node, a[1])
}

func (p *Process) sysTruncate(a *[6]uint64) uint64 {
	abs, e := p.guestPath(atFDCWD, a[0])
	if e != 0 {
		return sysErr(e)
	}
	ent, e := p.lookup(abs, true)
	if e != 0 {
		return sysErr(e)
	}
	if ent.isDir() {
		return sysErr(eISDIR)
	}
	if !p.entryAllows(ent, 2) {
		return sysErr(eACCES)
	}
	n, e := p.copyUp(ent)
	if e != 0 {
		return sysErr(e)
	}
	return p.truncate(n, a[1])
}

// fsync and fdatasync: nothing to write back.
func (p *Process) sysFsync(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == filePipe || f.kind == fileEventfd || f.kind == fileTimerfd || f.kind == fileSignalfd || f.kind == fileEpoll:
		return sysErr(eINVAL) // no fsync for it
	}
	return 0
}

// newName resolves the guest path at pathAddr (relative to dirfd) for a
// name about to be made (mkdir, symlink, link): EEXIST when it exists (a
// last "." or ".." too, once its directory was found), else the errors
// of its parent directory (missing, not a directory, read-only).
func (p *Process) newName(dirfd int32, pathAddr uint64) (string, int) {
	raw, e := p.cstring(pathAddr)
	if e != 0 {
		return "", e
	}
	abs, e := p.resolve(dirfd, raw)
	if e != 0 {
		return "", e
	}
	if lastDots(raw) != "" {
		if e := p.lastDir(raw, abs); e != 0 {
			return "", e
		}
		return "", eEXIST // filename_create: not LAST_NORM
	}
	if _, e := p.lookup(abs, false); e == 0 {
		return "", eEXIST
	}
	return p.parentOf(abs)
}

// mknod makes a regular file, a named pipe or a socket's name at the
// guest path pathAddr (relative to dirfd), as mknodat does for a process
// without CAP_MKNOD: a device is EPERM, once the name is known to be new.
// A named pipe is made and shown, but opening one stops the run (named):
// its ends are not emulated.
func (p *Process) mknod(dirfd int32, pathAddr, mode uint64) uint64 {
	const sIFMT, sIFREG, sIFIFO, sIFCHR, sIFBLK, sIFSOCK = 0o170000, 0o100000, 0o010000, 0o020000, 0o060000, 0o140000
	kind := nodeFile
	switch uint32(mode) & sIFMT {
	case 0, sIFREG:
	case sIFIFO:
		kind = nodeFifo
	case sIFSOCK:
		kind = nodeSock
	case sIFCHR, sIFBLK:
		kind = -1
	default:
		return sysErr(eINVAL)
	}
	path, e := p.newName(dirfd, pathAddr)
	switch {
	case e != 0:
		return sysErr(e)
	case kind < 0:
		return sysErr(ePERM) // a device needs CAP_MKNOD
	}
	n := p.newNode(kind, uint32(mode)&0o7777&^p.ov.umask)
	if e := p.putNew(path, n); e != 0 {
		return sysErr(e)
	}
	return 0
}

func (p *Process) sysMknod(a *[6]uint64) uint64   { return p.mknod(atFDCWD, a[0], a[1]) }
func (p *Process) sysMknodat(a *[6]uint64) uint64 { return p.mknod(int32(a[0]), a[1], a[2]) }

func (p *Process) mkdir(dirfd int32, pathAddr, mode uint64) uint64 {
	path, e := p.newName(dirfd, pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	n := p.newNode(nodeDir, uint32(mode)&0o1777&^p.ov.umask) // no set-id bits
	if d := p.ov.nodes[filepath.Dir(path)]; d != nil {
		n.mode |= d.mode & 0o2000 // but a set-group-ID directory's
	}
	n.opaque, n.nlink = true, 2
	if e := p.putNew(path, n); e != 0 {
		return sysErr(e)
	}
	return 0
}

func (p *Process) sysMkdir(a *[6]uint64) uint64   { return p.mkdir(atFDCWD, a[0], a[1]) }
func (p *Process) sysMkdirat(a *[6]uint64) uint64 { return p.mkdir(int32(a[0]), a[1], a[2]) }

// remove removes the name abs: a directory (rmdir) or anything else
// (unlink).
func (p *Process) remove(abs string, dir bool) uint64 {
	if dir && p.ov.isRootOrAbove(abs) {
		return sysErr(eBUSY)
	}
	path, e := p.parentOf(abs)
	if e != 0 {
		if e == eBUSY {
			return sysErr(eBUSY)
		}
		if _, le := p.lookup(abs, false); le != 0 {
			return sysErr(le) // missing: ENOENT before EROFS
		}
		return sysErr(e)
	}
	ent, e := p.lookup(path, false)
	switch {
	case e != 0:
		return sysErr(e)
	case dir && !ent.isDir():
		return sysErr(eNOTDIR)
	case !dir && ent.isDir():
		return sysErr(eISDIR)
	case dir && p.ov.isRootOrAbove(path):
		return sysErr(eBUSY)
	case dir && len(p.children(ent)) > 0:
		return sysErr(eNOTEMPTY)
	}
	if e := p.materialize(path); e != 0 {
		return sysErr(e)
	}
	p.unname(path)
	return 0
}

func (p *Process) sysUnlink(a *[6]uint64) uint64 { return p.unlinkat(atFDCWD, a[0], false) }
func (p *Process) sysRmdir(a *[6]uint64) uint64  { return p.unlinkat(atFDCWD, a[0], true) }

func (p *Process) sysUnlinkat(a *[6]uint64) uint64 {
	const atRemovedir = 0x200
	if a[2]&^atRemovedir != 0 {
		return sysErr(eINVAL)
	}
	return p.unlinkat(int32(a[0]), a[1], a[2]&atRemovedir != 0)
}

// unlinkat is unlink (dir false) or rmdir of the path at pathAddr, with
// what Linux's do_rmdir and do_unlinkat say of its last component once
// the directories before it were found: rmdir of "." EINVAL, of ".."
// ENOTEMPTY; unlink of either EISDIR, of a name with a trailing slash
// EISDIR or ENOTDIR.
func (p *Process) unlinkat(dirfd int32, pathAddr uint64, dir bool) uint64 {
	raw, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	abs, e := p.resolve(dirfd, raw)
	if e != 0 {
		return sysErr(e)
	}
	if dots := lastDots(raw); dots != "" {
		if e := p.lastDir(raw, abs); e != 0 {
			return sysErr(e)
		}
		switch {
		case !dir:
			return sysErr(eISDIR) // LAST_DOT or LAST_DOTDOT: a directory
		case dots == ".":
			return sysErr(eINVAL)
		}
		return sysErr(eNOTEMPTY)
	}
	if !dir && trailingSlash(raw) {
		ent, e := p.lookup(abs, false) // the last component itself (a link is no directory)
		switch {
		case e != 0:
			return sysErr(e)
		case ent.isDir():
			return sysErr(eISDIR)
		}
		return sysErr(eNOTDIR)
	}
	return p.remove(abs, dir)
}

func (p *Process) symlink(targetAddr uint64, dirfd int32, pathAddr uint64) uint64 {
	target, e := p.cstring(targetAddr)
	if e != 0 {
		return sysErr(e)
	}
	if target == "" {
		return sysErr(eNOENT)
	}
	path, e := p.newName(dirfd, pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	n := p.newNode(nodeLink, 0o777)
	n.target = target
	if e := p.putNew(path, n); e != 0 {
		return sysErr(e)
	}
	return 0
}

func (p *Process) sysSymlink(a *[6]uint64) uint64 { return p.symlink(a[0], atFDCWD, a[1]) }
func (p *Process) sysSymlinkat(a *[6]uint64) uint64 {
	return p.symlink(a[0], int32(a[1]), a[2])
}

// link gives the file at the guest path oldAddr (relative to oldDir; its
// symbolic link followed with AT_SYMLINK_FOLLOW) the new name at newAddr
// (relative to newDir): a hard link, in the overlay. A file of the view
// below a writable tree is copied up first, as for writing (the two names
// are then one file, as they are on the host); one elsewhere is on
// another file system (EXDEV). A directory cannot be linked (EPERM);
// AT_EMPTY_PATH needs a capability the guest lacks, so an empty path is
// ENOENT, as from Linux 6.1. A descriptor's path (/proc/self/fd/N,
// /dev/fd/N) followed is its open file, which may have no name: an
// O_TMPFILE file gets one so (ENOENT for a file removed while open).
func (p *Process) link(oldDir int32, oldAddr uint64, newDir int32, newAddr, flags uint64) uint64 {
	const atSymlinkFollow, atEmptyPath = 0x400, 0x1000
	if flags&^uint64(atSymlinkFollow|atEmptyPath) != 0 {
		return sysErr(eINVAL)
	}
	oldAbs, e := p.guestPath(oldDir, oldAddr)
	if e != 0 {
		return sysErr(e)
	}
	var old ovEntry
	if fd, ok := fdPath(oldAbs); ok {
		if old, e = p.linkedFD(fd, flags&atSymlinkFollow != 0); e != 0 {
			return sysErr(e)
		}
	} else if old, e = p.lookup(oldAbs, flags&atSymlinkFollow != 0); e != 0 {
		return sysErr(e)
	}
	path, e := p.newName(newDir, newAddr)
	switch {
	case e != 0:
		return sysErr(e)
	case old.isDir():
		return sysErr(ePERM)
	case old.node != nil && old.node.nlink == 0 && !old.node.linkable:
		return sysErr(eNOENT) // removed while open
	case old.node == nil && !p.ov.writable(old.path):
		return sysErr(eXDEV)
	case old.node == nil:
		if old.node, e = p.copyUp(old); e != 0 {
			return sysErr(e)
		}
	}
	old.node.nlink++
	if e := p.put(path, old.node); e != 0 {
		old.node.nlink--
		return sysErr(e)
	}
	old.node.linkable = false
	p.touch(old.node, touchChange)
	p.entriesChanged(path)
	return 0
}

// linkedFD is what link links for descriptor fd's path (/proc/self/fd/N)
// with AT_SYMLINK_FOLLOW (follow) or without it: the path is a symbolic
// link of /proc, another file system (EXDEV), which leads to the open
// file; a file of the overlay is linked as the node itself (with or
// without names), one of the view by its path; pipes, devices, memfds and
// anonymous inodes are on file systems of their own (EXDEV).
func (p *Process) linkedFD(fd int, follow bool) (ovEntry, int) {
	f := p.fds[fd]
	switch {
	case f == nil:
		return ovEntry{}, eNOENT
	case !follow:
		return ovEntry{}, eXDEV
	case f.kind == fileDir:
		return ovEntry{path: f.path, node: f.node}, 0 // EPERM: a directory
	case f.kind != fileRegular, f.node != nil && strings.HasPrefix(f.path, "/memfd:"):
		return ovEntry{}, eXDEV
	case f.node != nil:
		return ovEntry{path: f.path, node: f.node}, 0
	}
	return p.lookup(f.path, true)
}

func (p *Process) sysLink(a *[6]uint64) uint64 { return p.link(atFDCWD, a[0], atFDCWD, a[1], 0) }
func (p *Process) sysLinkat(a *[6]uint64) uint64 {
	return p.link(int32(a[0]), a[1], int32(a[2]), a[3], a[4])
}

// renameat2's flags (include/uapi/linux/fs.h); RENAME_WHITEOUT (4) is
// not emulated.
const (
	renameNoreplace = 1
	renameExchange  = 2
)

// rename moves oldAbs to newAbs, or exchanges them (renameat2's
// RENAME_NOREPLACE and RENAME_EXCHANGE in flags; RENAME_WHITEOUT, which
// leaves a device node only overlayfs uses, is EINVAL).
func (p *Process) rename(oldAbs, newAbs string, flags uint64) uint64 {
	if flags&^(renameNoreplace|renameExchange) != 0 || flags == renameNoreplace|renameExchange {
		return sysErr(eINVAL)
	}
	from, e := p.parentOf(oldAbs)
	if e == 0 {
		var to string
		if to, e = p.parentOf(newAbs); e == 0 {
			if flags&renameExchange != 0 {
				return p.exchange(from, to)
			}
			return p.move(from, to, flags&renameNoreplace != 0)
		}
	}
	if _, le := p.lookup(oldAbs, false); le != 0 {
		return sysErr(le)
	}
	return sysErr(e)
}

// move renames the resolved path from to the resolved path to, both in
// writable trees.
func (p *Process) move(from, to string, noReplace bool) uint64 {
	src, e := p.lookup(from, false)
	if e != 0 {
		return sysErr(e)
	}
	if from == to {
		return 0
	}
	srcDir := src.isDir()
	if srcDir {
		switch {
		case p.ov.isRootOrAbove(from):
			return sysErr(eBUSY)
		case strings.HasPrefix(to, from+"/"):
			return sysErr(eINVAL)
		case src.merged():
			return sysErr(eXDEV) // its contents are (partly) the host's
		case filepath.Dir(from) != filepath.Dir(to) && !p.entryAllows(src, 2):
			return sysErr(eACCES) // its ".." entry changes
		}
	}
	if dst, e := p.lookup(to, false); e == 0 {
		switch {
		case noReplace:
			return sysErr(eEXIST)
		case dst.node != nil && dst.node == src.node,
			dst.node == nil && src.node == nil && dst.vf.fi != nil && src.vf.fi != nil && os.SameFile(dst.vf.fi, src.vf.fi):
			return 0 // two links to one file: rename does nothing
		case dst.isDir() && !srcDir:
			return sysErr(eISDIR)
		case !dst.isDir() && srcDir:
			return sysErr(eNOTDIR)
		case dst.isDir() && p.ov.isRootOrAbove(to):
			return sysErr(eBUSY)
		case dst.isDir() && len(p.children(dst)) > 0:
			return sysErr(eNOTEMPTY)
		}
		if dst.node != nil || dst.vf.fi != nil {
			p.unname(to) // to's directories: put below makes them
		}
	}
	if e := p.materialize(from); e != 0 {
		return sysErr(e)
	}
	n, e := p.copyUp(src)
	if e != 0 {
		return sysErr(e)
	}
	if e := p.put(to, n); e != 0 {
		return sysErr(e)
	}
	if srcDir {
		for path, c := range p.ov.nodes {
			if strings.HasPrefix(path, from+"/") {
				p.ov.delNode(path)
				p.ov.setNode(to+path[len(from):], c)
			}
		}
		// The descriptors of the directory and of what is below it, and
		// the working directory, follow it, as on Linux (where they
		// refer to the inodes): a dirfd's relative paths and ".." are
		// taken from where it is now. (A path once renamed no longer has
		// the prefix from: each open file is moved once, however many
		// descriptors share it.)
		for _, f := range p.fds {
			if f.path == from || strings.HasPrefix(f.path, from+"/") {
				f.path = to + f.path[len(from):]
			}
		}
		if p.cwd == from || strings.HasPrefix(p.cwd, from+"/") {
			p.cwd = to + p.cwd[len(from):]
		}
	} else {
		// A file's descriptors name it where it is now
		// (/proc/self/fd), as Linux's name the inode's dentry.
		for _, f := range p.fds {
			if f.path == from && f.kind == fileRegular {
				f.path = to
			}
		}
	}
	p.dropName(from)
	p.touch(n, touchChange)
	p.entriesChanged(from)
	p.entriesChanged(to)
	return 0
}

// exchange swaps the resolved paths from and to (RENAME_EXCHANGE), both in
// writable trees and both existing, as Linux's vfs_rename does: either
// may be a directory, neither may contain the other; what is below a
// directory, the descriptors open on it and the working directory go with
// it.
func (p *Process) exchange(from, to string) uint64 {
	src, e := p.lookup(from, false)
	if e != 0 {
		return sysErr(e)
	}
	dst, e := p.lookup(to, false)
	if e != 0 {
		return sysErr(e)
	}
	switch {
	case from == to, src.node != nil && src.node == dst.node,
		src.node == nil && dst.node == nil && src.vf.fi != nil && dst.vf.fi != nil && os.SameFile(src.vf.fi, dst.vf.fi):
		return 0 // one file: nothing to do
	case strings.HasPrefix(to, from+"/"), strings.HasPrefix(from, to+"/"):
		return sysErr(eINVAL) // one inside the other
	}
	for _, x := range []struct {
		path string
		ent  ovEntry
	}{{from, src}, {to, dst}} {
		if !x.ent.isDir() {
			continue
		}
		switch {
		case p.ov.isRootOrAbove(x.path):
			return sysErr(eBUSY)
		case x.ent.merged():
			return sysErr(eXDEV) // its contents are (partly) the host's
		case filepath.Dir(from) != filepath.Dir(to) && !p.entryAllows(x.ent, 2):
			return sysErr(eACCES) // its ".." entry changes
		}
	}
	for _, path := range []string{from, to} {
		if e := p.materialize(path); e != 0 {
			return sysErr(e)
		}
	}
	a, e := p.copyUp(src)
	if e != 0 {
		return sysErr(e)
	}
	b, e := p.copyUp(dst)
	if e != 0 {
		return sysErr(e)
	}
	// What is below each directory moves under the other name.
	swap := func(path string) (string, bool) {
		switch {
		case path == from || strings.HasPrefix(path, from+"/"):
			return to + path[len(from):], true
		case path == to || strings.HasPrefix(path, to+"/"):
			return from + path[len(to):], true
		}
		return path, false
	}
	moved := map[string]*oNode{}
	for path, n := range p.ov.nodes {
		if np, ok := swap(path); ok && path != from && path != to {
			moved[np] = n
		}
	}
	for path := range moved {
		old, _ := swap(path)
		p.ov.delNode(old)
	}
	p.ov.delNode(from)
	p.ov.delNode(to)
	p.ov.setNode(from, b)
	p.ov.setNode(to, a)
	for path, n := range moved {
		p.ov.setNode(path, n)
	}
	for _, f := range p.fds {
		if np, ok := swap(f.path); ok {
			f.path = np
		}
	}
	if np, ok := swap(p.cwd); ok {
		p.cwd = np
	}
	p.touch(a, touchChange)
	p.touch(b, touchChange)
	p.entriesChanged(from)
	p.entriesChanged(to)
	return 0
}

func (p *Process) sysRename(a *[6]uint64) uint64 {
	fd := uint64(0xffffffffffffff9c) // AT_FDCWD as a register holds it
	return p.sysRenameat2(&[6]uint64{fd, a[0], fd, a[1], 0})
}

// slashedNonDir checks the names of a rename: one with a trailing slash
// must be a directory, or the source is not (ENOTDIR).
func (p *Process) slashedNonDir(oldDirfd int32, oldAddr uint64, newDirfd int32, newAddr uint64) int {
	oldRaw, e := p.cstring(oldAddr)
	if e != 0 {
		return e
	}
	newRaw, e := p.cstring(newAddr)
	if e != 0 {
		return e
	}
	if oldRaw != "" && newRaw != "" && (lastDots(oldRaw) != "" || lastDots(newRaw) != "") {
		// A last component "." or ".." (LAST_DOT, LAST_DOTDOT), once the
		// directories of both names were found: "missing/.." is ENOENT.
		for _, n := range []struct {
			dirfd int32
			raw   string
		}{{oldDirfd, oldRaw}, {newDirfd, newRaw}} {
			abs, e := p.resolve(n.dirfd, n.raw)
			if e == 0 {
				e = p.lastDir(n.raw, abs)
			}
			if e != 0 {
				return e
			}
		}
		return eBUSY
	}
	if !trailingSlash(oldRaw) && !trailingSlash(newRaw) {
		return 0
	}
	abs, e := p.resolve(oldDirfd, oldRaw)
	if e != 0 {
		return e
	}
	if ent, e := p.lookup(abs, false); e == 0 && !ent.isDir() {
		return eNOTDIR
	}
	return 0
}

func (p *Process) sysRenameat2(a *[6]uint64) uint64 {
	if e := p.slashedNonDir(int32(a[0]), a[1], int32(a[2]), a[3]); e != 0 {
		return sysErr(e)
	}
	oldAbs, e := p.guestPath(int32(a[0]), a[1])
	if e != 0 {
		return sysErr(e)
	}
	newAbs, e := p.guestPath(int32(a[2]), a[3])
	if e != 0 {
		return sysErr(e)
	}
	return p.rename(oldAbs, newAbs, a[4])
}

func (p *Process) sysRenameat(a *[6]uint64) uint64 {
	return p.sysRenameat2(&[6]uint64{a[0], a[1], a[2], a[3], 0})
}

// chmod sets the permission bits of what abs names.
func (p *Process) chmod(abs string, follow bool, mode uint64) uint64 {
	ent, e := p.lookup(abs, follow)
	if e != 0 {
		return sysErr(e)
	}
	if ent.node != nil && ent.node.kind == nodeLink {
		return sysErr(eOPNOTSUPP) // fchmodat2(AT_SYMLINK_NOFOLLOW) on a link
	}
	if ent.node != nil && !p.ov.writable(ent.path) {
		return sysErr(eROFS) // a directory above a writable tree
	}
	n, e := p.copyUp(ent)
	if e != 0 {
		return sysErr(e)
	}
	n.mode = uint32(mode) & 0o7777
	p.touch(n, touchChange)
	return 0
}

func (p *Process) sysChmod(a *[6]uint64) uint64 {
	abs, e := p.guestPath(atFDCWD, a[0])
	if e != 0 {
		return sysErr(e)
	}
	return p.chmod(abs, true, a[1])
}

// sysFchmodat is Linux's fchmodat, which has three arguments: no flags
// (glibc's fchmodat passes flags only to fchmodat2), whatever the fourth
// register holds.
func (p *Process) sysFchmodat(a *[6]uint64) uint64 {
	return p.sysFchmodat2(&[6]uint64{a[0], a[1], a[2], 0})
}

// sysFchmodat2 is fchmodat with flags: AT_SYMLINK_NOFOLLOW.
func (p *Process) sysFchmodat2(a *[6]uint64) uint64 {
	if a[3]&^atSymlinkNofollow != 0 {
		return sysErr(eINVAL)
	}
	abs, e := p.guestPath(int32(a[0]), a[1])
	if e != 0 {
		return sysErr(e)
	}
	return p.chmod(abs, a[3]&atSymlinkNofollow == 0, a[2])
}

// utimes sets the access and modification times of what abs names (or of
// node n, when abs is ""), as utimensat does: t holds the two struct
// timespec, or is nil for now; UTIME_NOW and UTIME_OMIT in a tv_nsec mean
// now and unchanged. Times are kept for the overlay's nodes; the view's
// files are read-only (EROFS), fds 0-2 and signalfds have none to keep.
func (p *Process) utimes(n *oNode, abs string, follow bool, t *[2]timespec) uint64 {
	if n == nil {
		ent, e := p.lookup(abs, follow)
		if e != 0 {
			return sysErr(e)
		}
		if ent.node != nil && !p.ov.writable(ent.path) {
			return sysErr(eROFS) // a directory above a writable tree
		}
		if n, e = p.copyUp(ent); e != 0 {
			return sysErr(e)
		}
	}
	now := p.stamp()
	for i := range 2 { // atime, mtime
		switch {
		case t == nil || t[i].nsec == utimeNow:
			n.times[i] = now
		case t[i].nsec != utimeOmit:
			n.times[i] = t[i]
		}
	}
	n.times[2] = now // setting times changes the inode
	return 0
}

// UTIME_NOW and UTIME_OMIT, in a tv_nsec given to utimensat.
const (
	utimeNow  = 1<<30 - 1
	utimeOmit = 1<<30 - 2
)

// sysUtimensat is utimensat(dirfd, path, times, flags): flags
// AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH; a NULL path is the file dirfd
// refers to (futimens).
func (p *Process) sysUtimensat(a *[6]uint64) uint64 {
	var t *[2]timespec
	if a[2] != 0 {
		b, ok := p.readGuest(a[2], 32)
		if !ok {
			return sysErr(eFAULT)
		}
		t = new([2]timespec)
		for i := range t {
			t[i] = timespec{int64(binary.LittleEndian.Uint64(b[16*i:])), int64(binary.LittleEndian.Uint64(b[16*i+8:]))}
		}
		if t[0].nsec == utimeOmit && t[1].nsec == utimeOmit {
			return 0 // nothing to change: not even checked, as Linux
		}
		for i := range t {
			if ns := t[i].nsec; ns != utimeNow && ns != utimeOmit && (ns < 0 || ns >= 1e9) {
				return sysErr(eINVAL)
			}
		}
	}
	flags := a[3]
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return sysErr(eINVAL)
	}
	dirfd := int32(a[0])
	if a[1] == 0 && dirfd != atFDCWD {
		if flags != 0 {
			return sysErr(eINVAL) // futimens has no flags
		}
		return p.futimens(dirfd, t)
	}
	if a[1] == 0 {
		return sysErr(eFAULT)
	}
	if flags&atEmptyPath != 0 {
		if path, e := p.cstring(a[1]); e == 0 && path == "" {
			if dirfd == atFDCWD {
				if p.cwd == "" {
					return sysErr(eNOENT)
				}
				return p.utimes(nil, p.cwd, true, t)
			}
			return p.futimens(dirfd, t)
		}
	}
	abs, e := p.guestPath(dirfd, a[1])
	if e != 0 {
		return sysErr(e)
	}
	return p.utimes(nil, abs, flags&atSymlinkNofollow == 0, t)
}

// futimens sets the times of the file fd refers to.
func (p *Process) futimens(fd int32, t *[2]timespec) uint64 {
	f := p.fds[int(fd)]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.node != nil && f.kind == fileDir && !p.ov.writable(f.path):
		return sysErr(eROFS) // a directory above a writable tree
	case f.node != nil:
		return p.utimes(f.node, "", false, t)
	case f.kind == fileRegular || f.kind == fileDir:
		return p.utimes(nil, f.path, true, t)
	}
	return 0 // a pipe or signalfd: its times are not kept
}

// chown checks a change of owner to uid and gid (-1: unchanged) of what
// abs names (or of the open file f): the guest owns every file and is in
// no group but its own, so only its own ids are allowed (EPERM, as Linux
// for a user without CAP_CHOWN), and nothing changes; the view's files
// are read-only (EROFS).
func (p *Process) chown(f *openFile, abs string, follow bool, uid, gid uint64) uint64 {
	path, node := abs, (*oNode)(nil)
	switch {
	case f == nil:
		ent, e := p.lookup(abs, follow)
		if e != 0 {
			return sysErr(e)
		}
		path, node = ent.path, ent.node
	case f.kind == fileRegular, f.kind == fileDir:
		path, node = f.path, f.node
	default:
		path = "" // a pipe or a signalfd
	}
	if path != "" && !p.ov.writable(path) {
		return sysErr(eROFS)
	}
	if u := uint32(uid); u != ^uint32(0) && u != guestUID {
		return sysErr(ePERM)
	}
	if g := uint32(gid); g != ^uint32(0) && g != guestGID {
		return sysErr(ePERM)
	}
	p.touch(node, touchChange) // even unchanged, as Linux's chown_common
	dropSetID(node)
	return 0
}

func (p *Process) sysFchown(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	return p.chown(f, "", false, a[1], a[2])
}

// sysFchownat is fchownat(dirfd, path, uid, gid, flags): flags
// AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH.
func (p *Process) sysFchownat(a *[6]uint64) uint64 {
	flags := a[4]
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return sysErr(eINVAL)
	}
	dirfd := int32(a[0])
	if flags&atEmptyPath != 0 {
		if path, e := p.cstring(a[1]); e == 0 && path == "" && dirfd != atFDCWD {
			return p.sysFchown(&[6]uint64{uint64(dirfd), a[2], a[3]})
		}
	}
	abs, e := p.guestPath(dirfd, a[1])
	if e != 0 {
		return sysErr(e)
	}
	return p.chown(nil, abs, flags&atSymlinkNofollow == 0, a[2], a[3])
}

func (p *Process) sysChown(a *[6]uint64) uint64 {
	abs, e := p.guestPath(atFDCWD, a[0])
	if e != 0 {
		return sysErr(e)
	}
	return p.chown(nil, abs, true, a[1], a[2])
}

func (p *Process) sysLchown(a *[6]uint64) uint64 {
	abs, e := p.guestPath(atFDCWD, a[0])
	if e != 0 {
		return sysErr(e)
	}
	return p.chown(nil, abs, false, a[1], a[2])
}

// sysFadvise64 accepts advice about a file's use (there is no page cache
// to act on): EBADF for no descriptor, ESPIPE for a pipe (fds 0-2 are
// pipes), EINVAL for unknown advice or a negative length.
func (p *Process) sysFadvise64(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == fileStdin, f.kind == fileStdout, f.kind == fileStderr, f.kind == filePipe:
		return sysErr(eSPIPE)
	case int64(a[2]) < 0 || uint32(a[3]) > 5: // an int: POSIX_FADV_NORMAL ... NOREUSE
		return sysErr(eINVAL)
	}
	return 0
}

// sysUmask sets the file mode creation mask and returns the old one.
func (p *Process) sysUmask(a *[6]uint64) uint64 {
	old := p.ov.umask
	p.ov.umask = uint32(a[0]) & 0o777
	return uint64(old)
}

func (p *Process) sysFchmod(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.node != nil && f.kind == fileDir && !p.ov.writable(f.path):
		return sysErr(eROFS) // a directory above a writable tree
	case f.node != nil:
		f.node.mode = uint32(a[1]) & 0o7777
		p.touch(f.node, touchChange)
		return 0
	case f.kind == fileRegular:
		return p.chmod(f.path, true, a[1])
	}
	return sysErr(eROFS)
}

// sysGetdents64 lists an overlay directory: linux_dirent64 records
// (d_ino, d_off, d_reclen, d_type, the name and its NUL, padded to 8
// bytes), "." and ".." first, then the names in order.
func (p *Process) sysGetdents64(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind != fileDir:
		return sysErr(eNOTDIR)
	}
	if f.proc != nil && (f.off == 0 || f.names == nil) {
		// A made directory is listed as it is now (a thread's once it has
		// exited: ENOENT, as Linux's).
		n, ok := p.procFile(f.path, true)
		if !ok {
			return sysErr(eNOENT)
		}
		f.names = append([]string{".", ".."}, n.list()...)
	} else if f.off == 0 || f.names == nil {
		if _, e := p.lookup(f.path, true); e == eNOENT || f.node != nil && f.node.nlink == 0 {
			return sysErr(eNOENT) // removed since it was opened (iterate_dir's IS_DEADDIR)
		}
		f.names = append([]string{".", ".."}, p.children(ovEntry{path: f.path, node: f.node})...)
	}
	p.accessed(f.node) // a listing reads the directory
	var out []byte
	for ; f.off < int64(len(f.names)); f.off++ {
		name := f.names[f.off]
		reclen := (19 + len(name) + 1 + 7) &^ 7
		if uint64(len(out)+reclen) > a[2] {
			break
		}
		var ino uint64
		typ := byte(4) // DT_DIR
		switch {
		case name == ".":
			ino = f.ino
		case name == ".." && f.proc != nil && f.path != "/proc":
			ino = p.procEntryStat(filepath.Dir(f.path)).ino
		case name == "..":
			ino = p.entryStat(p.dirEntry(filepath.Dir(f.path))).ino
		default:
			var st statInfo
			if f.proc != nil {
				st = p.procEntryStat(filepath.Join(f.path, name))
			} else {
				st = p.entryStat(p.dirEntry(filepath.Join(f.path, name)))
			}
			ino = st.ino
			switch st.mode & 0o170000 {
			case 0o100000:
				typ = 8 // DT_REG
			case 0o120000:
				typ = 10 // DT_LNK
			case 0o040000:
			case 0o010000:
				typ = 1 // DT_FIFO
			case 0o020000:
				typ = 2 // DT_CHR
			case 0o060000:
				typ = 6 // DT_BLK
			case 0o140000:
				typ = 12 // DT_SOCK
			default:
				typ = 0 // DT_UNKNOWN
			}
		}
		rec := make([]byte, reclen)
		binary.LittleEndian.PutUint64(rec, ino)
		binary.LittleEndian.PutUint64(rec[8:], uint64(f.off+1))
		binary.LittleEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = typ
		copy(rec[19:], name)
		out = append(out, rec...)
	}
	if len(out) == 0 && f.off < int64(len(f.names)) {
		return sysErr(eINVAL) // the buffer is too small for one entry
	}
	if !p.writeGuest(a[1], out) {
		return sysErr(eFAULT)
	}
	return uint64(len(out))
}

// dirEntry looks up a name listed in a directory, without following it.
func (p *Process) dirEntry(path string) ovEntry {
	ent, _ := p.lookup(path, false)
	return ent
}

// sysUtime, sysUtimes and sysFutimesat are utimensat's older forms
// (x86-64 has them): utime(path, struct utimbuf *) in whole seconds,
// utimes(path, struct timeval[2]) and futimesat(dirfd, path, struct
// timeval[2]), whose NULL path is the file dirfd refers to. NULL times
// mean now.
func (p *Process) sysUtime(a *[6]uint64) uint64 {
	var t *[2]timespec
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 16)
		if !ok {
			return sysErr(eFAULT)
		}
		t = &[2]timespec{{sec: int64(binary.LittleEndian.Uint64(b))}, {sec: int64(binary.LittleEndian.Uint64(b[8:]))}}
	}
	return p.utimesAt(atFDCWD, a[0], t)
}

func (p *Process) sysUtimes(a *[6]uint64) uint64 {
	t, e := p.timevals(a[1])
	if e != 0 {
		return sysErr(e)
	}
	return p.utimesAt(atFDCWD, a[0], t)
}

func (p *Process) sysFutimesat(a *[6]uint64) uint64 {
	t, e := p.timevals(a[2])
	if e != 0 {
		return sysErr(e)
	}
	return p.utimesAt(int32(a[0]), a[1], t)
}

// timevals reads the two struct timeval at addr as times for utimes (nil
// for a NULL addr): microseconds out of range are EINVAL.
func (p *Process) timevals(addr uint64) (*[2]timespec, int) {
	if addr == 0 {
		return nil, 0
	}
	b, ok := p.readGuest(addr, 32)
	if !ok {
		return nil, eFAULT
	}
	var t [2]timespec
	for i := range t {
		sec, usec := int64(binary.LittleEndian.Uint64(b[16*i:])), int64(binary.LittleEndian.Uint64(b[16*i+8:]))
		if usec < 0 || usec >= 1e6 {
			return nil, eINVAL
		}
		t[i] = timespec{sec, usec * 1000}
	}
	return &t, 0
}

// utimesAt sets the times of the file path names relative to dirfd, or of
// dirfd's file for a NULL path, following symbolic links.
func (p *Process) utimesAt(dirfd int32, path uint64, t *[2]timespec) uint64 {
	if path == 0 {
		if dirfd == atFDCWD {
			return sysErr(eFAULT)
		}
		return p.futimens(dirfd, t)
	}
	abs, e := p.guestPath(dirfd, path)
	if e != 0 {
		return sysErr(e)
	}
	return p.utimes(nil, abs, true, t)
}

// fallocate modes (include/uapi/linux/falloc.h).
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
	fallocZeroRange = 0x10
)

// sysFallocate is fallocate(fd, mode, offset, len) on a file of the
// overlay: mode 0 makes the file at least offset+len long (the new bytes
// zero) and allocates the range, as the blocks Linux reserves, against the
// memory cap (ENOSPC); FALLOC_FL_KEEP_SIZE allocates only what lies within
// the file (nothing is ever out of space but for the memory cap);
// FALLOC_FL_ZERO_RANGE zeroes the range and allocates it,
// FALLOC_FL_PUNCH_HOLE (with KEEP_SIZE, as Linux requires) zeroes it and
// gives back the memory of what it covers whole. The other modes
// (collapse, insert, unshare a range) are EOPNOTSUPP, as on file systems
// without them.
func (p *Process) sysFallocate(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	mode, off, n := a[1], int64(a[2]), int64(a[3])
	// In the order of Linux's checks (vfs_fallocate).
	switch {
	case f == nil:
		return sysErr(eBADF)
	case off < 0 || n <= 0:
		return sysErr(eINVAL)
	case mode&fallocPunchHole != 0 && (mode&fallocKeepSize == 0 || mode&fallocZeroRange != 0):
		return sysErr(eOPNOTSUPP)
	case f.kind != fileDir && f.flags&oACCMODE == 0:
		return sysErr(eBADF)
	case f.kind == fileDir:
		return sysErr(eISDIR)
	case f.kind == filePipe, f.kind == fileStdin, f.kind == fileStdout, f.kind == fileStderr:
		return sysErr(eSPIPE) // the standard streams are streams here (lseek: ESPIPE)
	case f.kind != fileRegular || f.node == nil:
		return sysErr(eNODEV) // an anonymous inode: signalfd, epoll, eventfd, timerfd
	case off > math.MaxInt64-n, off+n > maxFileSize:
		return sysErr(eFBIG)
	case mode&^(fallocKeepSize|fallocPunchHole|fallocZeroRange) != 0:
		return sysErr(eOPNOTSUPP)
	}
	nd, end := f.node, off+n
	size := nd.data.Len()
	newSize := size
	if mode&fallocKeepSize == 0 {
		newSize = max(size, end)
	}
	// The range within the file's new size: punched out, or allocated
	// (zeroed first for ZERO_RANGE), as the blocks Linux reserves: what it
	// takes counts against the memory cap (ENOSPC).
	lo, hi := min(off, newSize), min(end, newSize)
	switch {
	case mode&fallocPunchHole != 0:
		dropSetID(nd)
		p.zeroRange(nd, lo, hi)
	case mode&fallocZeroRange != 0:
		dropSetID(nd)
		if e := p.change(nd, newSize, lo, hi, func(piece []byte, _ int64) bool {
			clear(piece)
			return true
		}); e != 0 {
			return sysErr(e)
		}
	default:
		if e := p.change(nd, newSize, lo, hi, func([]byte, int64) bool { return true }); e != 0 {
			return sysErr(e)
		}
	}
	p.touch(nd, touchModify|touchChange) // every fallocate, as ext4's
	return 0
}
