//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// System calls on files: open, read, write, stat, fcntl, ioctl, dup,
// access, readlink, getcwd.

type fileKind int

const (
	fileStdin fileKind = iota
	fileStdout
	fileStderr
	fileRegular
)

// openFile is an open file description: one of the standard streams, or
// an allowed host file (sf), read lazily, or contents held in data.
type openFile struct {
	kind fileKind
	path string // as the guest named it (absolute)
	host string // the host file read
	sf   *sharedFile
	data []byte // the contents, if not sf (and sf's once mapped as an ELF object)
	off  int64
	ino  uint64
}

// size returns the file's size.
func (f *openFile) size() int64 {
	if f.sf != nil {
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
	p.fds = map[int]*openFile{0: {kind: fileStdin, ino: 1}, 1: {kind: fileStdout, ino: 2}, 2: {kind: fileStderr, ino: 3}}
	p.syncFDs()
	return nil
}

const atFDCWD = -100

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

// resolve makes a guest path absolute (relative ones against dirfd).
func (p *Process) resolve(dirfd int32, path string) (string, int) {
	if path == "" {
		return "", eNOENT
	}
	if !filepath.IsAbs(path) {
		if dirfd != atFDCWD {
			if _, ok := p.fds[int(dirfd)]; ok {
				return "", eNOTDIR
			}
			return "", eBADF
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", eNOENT
		}
		return abs, 0
	}
	return filepath.Clean(path), 0
}

// O_* flags shared by both targets.
const (
	oACCMODE = 3
	oCREAT   = 0o100
	oTRUNC   = 0o1000
)

// guestPath reads a path argument and resolves it against dirfd.
func (p *Process) guestPath(dirfd int32, pathAddr uint64) (string, int) {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return "", e
	}
	return p.resolve(dirfd, path)
}

func (p *Process) open(dirfd int32, pathAddr, flags uint64) uint64 {
	abs, e := p.guestPath(dirfd, pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	vf, e := p.view.lookup(abs, true)
	if e != 0 {
		if flags&oCREAT != 0 {
			return sysErr(eROFS)
		}
		return sysErr(e)
	}
	if flags&oACCMODE != 0 || flags&(oCREAT|oTRUNC) != 0 {
		return sysErr(eROFS)
	}
	host := vf.host
	sf, e := p.openShared(vf) // regular files only (EISDIR, EACCES)
	if e != 0 {
		return sysErr(e)
	}
	if flags&p.abi.oDirectory != 0 {
		p.released(sf)
		return sysErr(eNOTDIR)
	}
	fd, e := p.allocFD(0, &openFile{kind: fileRegular, path: abs, host: host, sf: sf, ino: p.inode(host)})
	if e != 0 {
		p.released(sf)
		return sysErr(e)
	}
	return uint64(fd)
}

func (p *Process) sysOpenat(a *[6]uint64) uint64 { return p.open(int32(a[0]), a[1], a[2]) }
func (p *Process) sysOpen(a *[6]uint64) uint64   { return p.open(atFDCWD, a[0], a[1]) }

// dup makes newfd (or, if newfd < 0, the lowest free fd) share oldfd's
// open file: EBADF if oldfd is not open or newfd is beyond the descriptor
// limit, EMFILE if no descriptor is free.
func (p *Process) dup(oldfd, newfd int) uint64 {
	f := p.fds[oldfd]
	if f == nil || newfd >= fdLimit {
		return sysErr(eBADF)
	}
	if newfd < 0 {
		fd, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
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
	if a[0] == a[1] || a[2]&^0o2000000 != 0 { // only O_CLOEXEC
		return sysErr(eINVAL)
	}
	return p.sysDup2(a)
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
	if f == nil || f.kind == fileStdout || f.kind == fileStderr {
		return 0, eBADF
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
		k, err, stopped := p.hostIO(func() (int, error) { return p.cfg.Stdin.Read(b) })
		if stopped {
			return 0, eINTR
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
	if f.sf != nil {
		var e int
		if k, e = p.fileToGuest(f.sf, at, addr, n); e != 0 {
			return 0, e
		}
	} else if at < int64(len(f.data)) {
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
	if int64(a[3]) < 0 {
		return sysErr(eINVAL)
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

func (p *Process) sysReadv(a *[6]uint64) uint64 {
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	var total uint64
	for _, v := range iov {
		if !p.writable(v[0], v[1]) {
			return sysErr(eFAULT)
		}
		n, e := p.readInto(int(int32(a[0])), v[0], v[1], -1)
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
func (p *Process) writer(fd int) io.Writer {
	f := p.fds[fd]
	switch {
	case f == nil:
		return nil
	case f.kind == fileStdout:
		return p.cfg.Stdout
	case f.kind == fileStderr:
		return p.cfg.Stderr
	}
	return nil
}

// writeFrom writes the guest bytes [addr, addr+n) (mapped) to w in ioChunk
// pieces: nothing the guest writes is held beyond one piece. It returns
// how many were written, ok false if the first write failed.
func (p *Process) writeFrom(w io.Writer, addr, n uint64) (uint64, bool) {
	var done uint64
	for done < n {
		// A fresh buffer per piece would do too; the scratch buffer is
		// replaced if a stopped write still holds it.
		buf := p.scratchBuf()[:min(ioChunk, n-done)]
		if p.Engine.ReadMem(addr+done, buf) != nil {
			return done, done > 0
		}
		k, err, stopped := p.hostIO(func() (int, error) { return w.Write(buf) })
		if stopped {
			p.scratch = nil
			return done, done > 0
		}
		done += uint64(k)
		if err != nil || k < len(buf) {
			return done, done > 0
		}
	}
	return done, true
}

func (p *Process) sysWrite(a *[6]uint64) uint64 {
	if p.fds[int(int32(a[0]))] == nil {
		return sysErr(eBADF)
	}
	w := p.writer(int(int32(a[0])))
	if w == nil {
		return sysErr(eBADF)
	}
	n := min(a[2], maxRW)
	if !p.mapped(a[1], n) {
		return sysErr(eFAULT)
	}
	done, ok := p.writeFrom(w, a[1], n)
	if !ok && n > 0 {
		return p.writeErr()
	}
	return done
}

func (p *Process) sysWritev(a *[6]uint64) uint64 {
	if p.fds[int(int32(a[0]))] == nil {
		return sysErr(eBADF)
	}
	w := p.writer(int(int32(a[0])))
	if w == nil {
		return sysErr(eBADF)
	}
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	for _, v := range iov {
		if !p.mapped(v[0], v[1]) {
			return sysErr(eFAULT)
		}
	}
	var total uint64
	for _, v := range iov {
		done, ok := p.writeFrom(w, v[0], v[1])
		total += done
		if !ok && total == 0 && v[1] > 0 {
			return p.writeErr()
		}
		if done < v[1] {
			break
		}
	}
	return total
}

// writeErr is the result of a write that wrote nothing: EINTR if the run
// was stopped meanwhile, else EIO.
func (p *Process) writeErr() uint64 {
	if p.exit != nil {
		return sysErr(eINTR)
	}
	return sysErr(eIO)
}

func (p *Process) sysLseek(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	if f.kind != fileRegular {
		return sysErr(eSPIPE)
	}
	off := int64(a[1])
	switch a[2] {
	case 0: // SEEK_SET
	case 1: // SEEK_CUR
		off += f.off
	case 2: // SEEK_END
		off += f.size()
	default:
		return sysErr(eINVAL)
	}
	if off < 0 {
		return sysErr(eINVAL)
	}
	f.off = off
	return uint64(off)
}

func (p *Process) sysFcntl(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	switch a[1] {
	case 0, 1030: // F_DUPFD, F_DUPFD_CLOEXEC
		// The minimum is unsigned for the kernel.
		from := a[2] & 0xffffffff
		if from >= fdLimit {
			return sysErr(eINVAL)
		}
		fd, e := p.allocFD(int(from), f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
	case 1, 2, 4: // F_GETFD, F_SETFD, F_SETFL
		return 0
	case 3: // F_GETFL
		if f.kind == fileStdout || f.kind == fileStderr {
			return 1 // O_WRONLY
		}
		return 0
	}
	return sysErr(eINVAL)
}

func (p *Process) sysIoctl(a *[6]uint64) uint64 {
	if p.fds[int(int32(a[0]))] == nil {
		return sysErr(eBADF)
	}
	return sysErr(eNOTTY)
}

// statInfo is what the layer knows about a file, for the arch's struct stat.
type statInfo struct {
	dev, ino, nlink, rdev uint64
	mode, uid, gid        uint32
	size, blksize, blocks int64
}

func (f *openFile) stat() statInfo {
	if f.kind == fileRegular {
		n := f.size()
		return statInfo{dev: 0x801, ino: f.ino, nlink: 1, mode: 0o100444, uid: guestUID, gid: guestGID, size: n, blksize: 4096, blocks: (n + 511) / 512}
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
	return p.putStat(a[1], f.stat())
}

// statPath stats a file of the view.
func (p *Process) statPath(dirfd int32, pathAddr, buf uint64, flags uint64) uint64 {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	const atEmptyPath = 0x1000
	if path == "" && flags&atEmptyPath != 0 {
		return p.sysFstat(&[6]uint64{uint64(dirfd), buf})
	}
	abs, e := p.resolve(dirfd, path)
	if e != 0 {
		return sysErr(e)
	}
	const atSymlinkNofollow = 0x100
	vf, e := p.view.lookup(abs, flags&atSymlinkNofollow == 0)
	if e != 0 {
		return sysErr(e)
	}
	st := (&openFile{kind: fileRegular, ino: p.inode(vf.host)}).stat()
	st.size = vf.fi.Size()
	st.blocks = (st.size + 511) / 512
	st.mode = statMode(vf.fi)
	return p.putStat(buf, st)
}

func (p *Process) sysNewfstatat(a *[6]uint64) uint64 {
	return p.statPath(int32(a[0]), a[1], a[2], a[3])
}
func (p *Process) sysStat(a *[6]uint64) uint64  { return p.statPath(atFDCWD, a[0], a[1], 0) }
func (p *Process) sysLstat(a *[6]uint64) uint64 { return p.statPath(atFDCWD, a[0], a[1], 0x100) }

func (p *Process) access(dirfd int32, pathAddr, mode uint64) uint64 {
	abs, e := p.guestPath(dirfd, pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	if _, e := p.view.lookup(abs, true); e != 0 {
		return sysErr(e)
	}
	switch {
	case mode&2 != 0: // W_OK
		return sysErr(eROFS)
	case mode&1 != 0: // X_OK
		return sysErr(eACCES)
	}
	return 0
}

func (p *Process) sysAccess(a *[6]uint64) uint64    { return p.access(atFDCWD, a[0], a[1]) }
func (p *Process) sysFaccessat(a *[6]uint64) uint64 { return p.access(int32(a[0]), a[1], a[2]) }

func (p *Process) readlink(dirfd int32, pathAddr, buf, size uint64) uint64 {
	path, e := p.cstring(pathAddr)
	if e != 0 {
		return sysErr(e)
	}
	if int64(size) <= 0 {
		return sysErr(eINVAL)
	}
	var target string
	if path == "/proc/self/exe" || path == fmt.Sprintf("/proc/%d/exe", guestPID) {
		exe, err := filepath.Abs(p.Path)
		if err != nil {
			return sysErr(eNOENT)
		}
		target = exe
	} else {
		abs, e := p.resolve(dirfd, path)
		if e != 0 {
			return sysErr(e)
		}
		vf, e := p.view.lookup(abs, false)
		if e != 0 {
			return sysErr(e)
		}
		t, err := os.Readlink(vf.host)
		if err != nil {
			return sysErr(eINVAL) // not a symbolic link
		}
		target = t
	}
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
	wd, err := os.Getwd()
	if err != nil {
		return sysErr(eNOENT)
	}
	b := append([]byte(wd), 0)
	if uint64(len(b)) > a[1] {
		return sysErr(eRANGE)
	}
	if !p.writeGuest(a[0], b) {
		return sysErr(eFAULT)
	}
	return uint64(len(b))
}
