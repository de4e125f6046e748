//go:build cgo

package linux

import (
	"errors"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"syscall"
	"time"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// The descriptor table and the host files behind it, with the host memory
// they may use bounded:
//
//   - descriptors: at most fdLimit, the lowest free one found in a bitmap;
//   - a host file opened by the guest (sharedFile) is open once however
//     many descriptors and mappings refer to it, and read lazily, in
//     ioChunk pieces, into the guest's buffers: nothing of it is held but
//     what the guest maps (guest memory) and, for an ELF file the guest
//     maps at offset 0, its contents once (for its symbols and SFrame
//     data), which count against Config.MaxMem;
//   - what the guest writes goes to Config.Stdout/Stderr in ioChunk pieces.

// fdLimit is the guest's descriptor limit (RLIMIT_NOFILE, soft and hard):
// open, dup, dup2, dup3 and fcntl(F_DUPFD) respect it as Linux does.
const fdLimit = 1024

// ioChunk is the largest piece of a read or write copied through host
// memory at once.
const ioChunk = 64 << 10

// maxRW is the most one read or write transfers (Linux's MAX_RW_COUNT).
const maxRW = 0x7ffff000

// fdSet is a bitmap of the descriptors in use below fdLimit.
type fdSet [fdLimit / 64]uint64

func (s *fdSet) set(fd int)   { s[fd/64] |= 1 << (fd % 64) }
func (s *fdSet) clear(fd int) { s[fd/64] &^= 1 << (fd % 64) }

// lowestFree returns the lowest clear bit at or above from, or -1.
func (s *fdSet) lowestFree(from int) int {
	for w := from / 64; w < len(s); w++ {
		free := ^s[w]
		if w == from/64 {
			free &^= 1<<(from%64) - 1
		}
		if free != 0 {
			return w*64 + bits.TrailingZeros64(free)
		}
	}
	return -1
}

func (s *fdSet) has(fd int) bool { return fd >= 0 && fd < fdLimit && s[fd/64]&(1<<(fd%64)) != 0 }

// withCloexec sets the close-on-exec flag (FD_CLOEXEC) of the descriptor
// a call returned, if on and the call succeeded; it returns ret.
func (p *Process) withCloexec(ret uint64, on bool) uint64 {
	if fd := int64(ret); on && fd >= 0 && fd < fdLimit {
		p.cloexec.set(int(fd))
	}
	return ret
}

// syncFDs rebuilds the bitmap from the table (after a checkpoint's table
// was restored).
func (p *Process) syncFDs() {
	p.fdUsed = fdSet{}
	for fd := range p.fds {
		if fd >= 0 && fd < fdLimit {
			p.fdUsed.set(fd)
		}
	}
}

// allocFD installs f at the lowest free descriptor at or above from:
// EMFILE when none is below fdLimit.
func (p *Process) allocFD(from int, f *openFile) (int, int) {
	for {
		fd := p.fdUsed.lowestFree(from)
		if fd < 0 || fd >= p.nofile() {
			return -1, eMFILE
		}
		if p.fds[fd] == nil {
			p.setFD(fd, f)
			return fd, 0
		}
		p.syncFDs() // the table changed behind the bitmap's back
		if p.fds[fd] != nil {
			return -1, eMFILE // cannot happen once in sync
		}
	}
}

// setFD makes fd (< fdLimit) refer to f, closing what it referred to;
// its close-on-exec flag is clear.
func (p *Process) setFD(fd int, f *openFile) {
	old := p.fds[fd]
	p.fds[fd] = f
	p.fdUsed.set(fd)
	p.cloexec.clear(fd)
	if old != nil && old != f {
		p.released(old.sf)
		p.releaseNode(old.node)
		if old.flock != 0 {
			p.flockChanged()
		}
		p.ofdRelease(old)
		if old.pipe != nil {
			old.pipe.rgen++ // maybe the last of its end
			old.pipe.wgen++
			p.pipeChanged(old.pipe.ino)
		}
		if old.kind == fileEventfd || old.kind == fileEpoll || old.kind == fileTimerfd {
			p.pollersChanged()
		}
	}
}

// closeFD closes fd; it reports whether fd was open.
func (p *Process) closeFD(fd int) bool {
	f := p.fds[fd]
	if f == nil {
		return false
	}
	delete(p.fds, fd)
	if fd >= 0 && fd < fdLimit {
		p.fdUsed.clear(fd)
		p.cloexec.clear(fd)
	}
	p.released(f.sf)
	p.releaseNode(f.node)
	if f.flock != 0 {
		p.flockChanged() // dropped if this was its last descriptor
	}
	p.ofdRelease(f)
	if f.pipe != nil {
		f.pipe.rgen++ // maybe the last of its end
		f.pipe.wgen++
		p.pipeChanged(f.pipe.ino)
	}
	if f.kind == fileEventfd || f.kind == fileEpoll || f.kind == fileTimerfd {
		p.pollersChanged() // an epoll instance may watch it
	}
	return true
}

// fileID tells host files apart: device and inode.
type fileID struct{ dev, ino uint64 }

// sharedFile is a regular host file the guest opened, shared by every
// open file description and mapping of it.
type sharedFile struct {
	host string // the host path it was opened by
	id   fileID
	size int64    // at the first open
	f    *os.File // nil once no descriptor or mapping refers to it
	// data is the whole file, read when the guest maps it as an ELF
	// object (mappedFile); counted in addrSpace.held.
	data []byte
	// objects counts the Objects made of it: each mapping of its first
	// page at another address makes one, up to maxObjectsPerFile.
	objects int
	// pinned: f stays open until the process closes (the caller's stdin,
	// which cannot be opened again by a name).
	pinned bool
}

// maxObjectsPerFile bounds the Objects (ELF structures and symbols, not
// counted against the memory cap) one file becomes: ld.so maps a library
// once, a guest mapping one file at thousands of addresses would make
// thousands.
const maxObjectsPerFile = 16

// openShared opens the regular host file vf for the guest, sharing one
// host descriptor per file. A directory is EISDIR (open makes a
// directory of the view a fileDir before it gets here); a device, FIFO or socket is refused with EACCES, as Linux
// refuses a device node on a file system mounted nodev and a sandbox's
// access policy (Landlock, an LSM) refuses what it does not allow: a FIFO
// would block, /dev/zero or /dev/random never end, and opening some
// devices has effects on the host.
func (p *Process) openShared(vf viewFile) (*sharedFile, int) {
	host := vf.host
	// Never blocks (O_NONBLOCK) and opens regular files only: a device or
	// a FIFO is refused before it is opened (hostfile).
	open := hostfile.OpenNoFollow // the view resolved the links itself
	if vf.follow {
		open = hostfile.Open
	}
	f, err := open(host)
	if err != nil {
		return nil, hostErrno(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, eIO
	}
	id := fileIDOf(fi)
	if sf := p.shared[id]; sf != nil {
		if sf.f == nil {
			sf.f = f
		} else {
			f.Close()
		}
		return sf, 0
	}
	if p.shared == nil {
		p.shared = map[fileID]*sharedFile{}
	}
	sf := &sharedFile{host: host, id: id, size: fi.Size(), f: f}
	p.shared[id] = sf
	return sf, 0
}

// stdinDevice returns fd 0 as the emulated device when Config.Stdin is
// one of the host's memory devices (a shell's `< /dev/null`), as natively
// a character device; nil otherwise.
func (p *Process) stdinDevice(fi os.FileInfo) *openFile {
	path, minor, ok := memDevice(fi)
	if !ok {
		return nil
	}
	return &openFile{kind: fileDevice, path: path, ino: p.inode("dev:" + path), minor: minor}
}

// unixFcntl is fcntl(fd, cmd) of the host.
func unixFcntl(fd uintptr, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// memDevice returns the path and minor number of the memory device (major
// 1) fi is, if devices.go emulates it (/dev/null, zero, full, random,
// urandom).
func memDevice(fi os.FileInfo) (string, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&os.ModeCharDevice == 0 {
		return "", 0, false
	}
	dev := uint64(st.Rdev) // Linux's dev_t: major in bits 8-19 and 32-43
	major, minor := dev>>8&0xfff|dev>>32&^uint64(0xfff), dev&0xff|dev>>12&^uint64(0xff)
	for path, m := range devMinor {
		if major == 1 && m == minor {
			return path, minor, true
		}
	}
	return "", 0, false
}

// stdinFile returns fd 0 as a regular file when Config.Stdin is an
// *os.File on one (a shell's `< FILE`): the guest can fstat it (its size),
// seek and pread it, as natively, from the offset the file had. It reads
// its own copy of the descriptor at its own offset: the caller's is left
// as it was, so a run from the start again (RunFast) reads the same.
func (p *Process) stdinFile() *openFile {
	in, ok := p.cfg.Stdin.(*os.File)
	if !ok || in == nil {
		return nil
	}
	fi, err := in.Stat()
	if err != nil {
		return nil
	}
	if f := p.stdinDevice(fi); f != nil {
		// Open as the host's descriptor is (a shell's < opens for
		// reading, <> and Python's DEVNULL for both).
		if fl, err := unixFcntl(in.Fd(), syscall.F_GETFL); err == nil {
			f.flags = uint64(fl) & oACCMODE
		}
		return f
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	off, err := in.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	fd, err := syscall.Dup(int(in.Fd()))
	if err != nil {
		return nil
	}
	syscall.CloseOnExec(fd)
	id := fileIDOf(fi)
	sf := p.shared[id]
	if sf == nil {
		if p.shared == nil {
			p.shared = map[fileID]*sharedFile{}
		}
		sf = &sharedFile{host: in.Name(), id: id, size: fi.Size()}
		p.shared[id] = sf
	}
	if sf.f != nil {
		sf.f.Close()
	}
	sf.f, sf.pinned = os.NewFile(uintptr(fd), in.Name()), true
	return &openFile{kind: fileRegular, path: "/dev/stdin", sf: sf, ino: 1, mode: statMode(fi), off: off}
}

// regularFile reports whether r is an *os.File on a regular file.
func regularFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// memDeviceFile reports whether r is a memory device the layer emulates
// (memDevice): fd 0 is that device then, and r is never read.
func memDeviceFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	_, _, ok = memDevice(fi)
	return ok
}

func fileIDOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), st.Ino}
	}
	return fileID{}
}

// file returns the host file, opened again if it was released (a
// checkpoint restored a descriptor of it): nil if it is no longer the
// same file.
func (sf *sharedFile) file() *os.File {
	if sf.f != nil {
		return sf.f
	}
	f, err := hostfile.Open(sf.host)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fileIDOf(fi) != sf.id {
		f.Close()
		return nil
	}
	sf.f = f
	return f
}

// released closes sf's host file once no descriptor or mapping refers to
// it (its data, if loaded, stays: the object it became keeps it).
func (p *Process) released(sf *sharedFile) {
	if sf == nil || sf.f == nil || sf.pinned {
		return
	}
	for _, f := range p.fds {
		if f.sf == sf {
			return
		}
	}
	for _, v := range p.vm.vmas {
		if v.file == sf {
			return
		}
	}
	sf.f.Close()
	sf.f = nil
}

// releaseCut releases the files of the mappings removed lately.
func (p *Process) releaseCut() {
	cut := p.vm.cutFiles
	p.vm.cutFiles = nil
	for _, sf := range cut {
		p.released(sf)
	}
}

// closeShared closes every host file (Process.Close).
func (p *Process) closeShared() {
	for _, sf := range p.shared {
		if sf.f != nil {
			sf.f.Close()
			sf.f = nil
		}
	}
}

// loadData reads the whole of sf into memory (once), counting it against
// the memory cap; it returns errMemCap if it does not fit.
func (p *Process) loadData(sf *sharedFile) error {
	if sf.data != nil || sf.size == 0 {
		return nil
	}
	if !p.vm.fitsMore(uint64(sf.size)) {
		return errMemCap
	}
	f := sf.file()
	if f == nil {
		return errors.New("file changed")
	}
	data := make([]byte, sf.size)
	n, err := f.ReadAt(data, 0)
	if err != nil && err != io.EOF {
		return err
	}
	sf.data = data[:n]
	p.vm.held += uint64(sf.size)
	return nil
}

// scratchBuf returns the process's ioChunk buffer for one copy.
func (p *Process) scratchBuf() []byte {
	if p.scratch == nil {
		p.scratch = make([]byte, ioChunk)
	}
	return p.scratch
}

// fileToGuest copies up to n bytes of sf from file offset off into guest
// memory at addr, in ioChunk pieces; it returns how many it copied (short
// at the end of the file) or an errno if nothing could be read.
func (p *Process) fileToGuest(sf *sharedFile, off int64, addr, n uint64) (uint64, int) {
	f := sf.file()
	if f == nil {
		return 0, eIO
	}
	buf := p.scratchBuf()
	var done uint64
	for done < n {
		k, err := f.ReadAt(buf[:min(uint64(len(buf)), n-done)], off+int64(done))
		if k > 0 {
			if p.Engine.WriteMem(addr+done, buf[:k]) != nil {
				break
			}
			done += uint64(k)
		}
		if err != nil {
			if err != io.EOF && done == 0 {
				return 0, eIO
			}
			break
		}
	}
	return done, 0
}

// hostIO runs fn, a read from or write to one of the caller's streams
// that is not a host file (see hostwait.go) and may block, on its own
// goroutine, and waits for it or for the run to be stopped (timeout,
// Interrupt, WaitLimits); end reports the latter as waitStopped (fn may
// then still be running, and owns its buffer). A signal from outside does
// not end this wait: such a stream is not the user's terminal or pipe.
func (p *Process) hostIO(fn func() (int, error)) (n int, end waitEnd, err error) {
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := fn()
		done <- result{n, err}
	}()
	tick := time.NewTicker(waitSlice)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.n, waitReady, r.err
		case <-p.stopCh:
			p.stopForSignal()
			return 0, waitStopped, nil
		case <-tick.C:
			if p.stopWaiting() {
				return 0, waitStopped, nil
			}
		}
	}
}
