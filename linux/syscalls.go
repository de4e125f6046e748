//go:build cgo

package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// System calls of the Linux user-mode layer. Each call the guest makes is
// looked up by name (zsysnum_x86_64.go and zsysnum_aarch64.go, generated
// from the kernel's uapi headers, map numbers to names) in handlers.
// Every call is one of:
//
//   - emulated: the guest sees what Linux would do, within the sandbox;
//   - ENOSYS: not emulated, but glibc copes with ENOSYS: rseq, statx,
//     membarrier (notImplemented, with the reasons);
//   - stop: anything else ends the run with StopUnsupported, naming the
//     call's number and name, the PC and its symbol (exec, fork, clone,
//     sockets, file writes... deliberately, and whatever no corpus program
//     needs).
//
// Emulated calls, and their limits:
//
//	read readv pread64       fd 0 (Config.Stdin, else EOF) and opened files
//	write writev             fds 1 and 2 only (Config.Stdout/Stderr); others EBADF
//	openat open              read-only, paths in Config.ReadAllow and, for
//	                         a dynamically linked program (or with
//	                         Config.Sysroot), files in the sysroot, resolved
//	                         as in a chroot (dynamic.go); the file is read
//	                         into memory at open: others ENOENT, writing or
//	                         creating EROFS; each host file has its own inode
//	close lseek fcntl        fds 0-2 and opened files (fcntl: F_GETFD/SETFD/GETFL/SETFL,
//	dup dup2 dup3            F_DUPFD/F_DUPFD_CLOEXEC); duplicates share the file offset
//	fstat newfstatat stat lstat
//	                         fds 0-2 are pipes (S_IFIFO), opened files regular files
//	access faccessat faccessat2  allowed and sysroot files exist (read-only), others ENOENT
//	ioctl                    ENOTTY: the guest has no terminal (glibc then
//	                         buffers stdout fully, as for a pipe)
//	readlink readlinkat      /proc/self/exe (the program's absolute path), links
//	                         in the sysroot; others ENOENT
//	getcwd                   the host's working directory
//	brk mmap munmap mprotect mremap madvise
//	                         anonymous memory, and private copies of opened
//	                         files (MAP_FIXED replaces what was there; mapping
//	                         an ELF file's first page registers it as an
//	                         Object, as ld.so does for each library);
//	                         everything counts against Config.MaxMem
//	                         (exceeding it stops the run with StopMemory)
//	exit exit_group          end the run (StopExited)
//	arch_prctl               x86-64 ARCH_SET_FS/GET_FS/SET_GS/GET_GS; others EINVAL
//	set_tid_address set_robust_list  recorded; one thread, id 4242
//	getpid gettid getppid getpgid getpgrp getsid getuid geteuid getgid getegid
//	prlimit64 getrlimit setrlimit  RLIMIT_STACK 8 MiB, NOFILE 1024, others unlimited; new limits ignored
//	getrandom                fixed-seed ChaCha8 bytes (reproducible)
//	uname                    Linux 6.1.0, node "sframesim"
//	clock_gettime clock_getres gettimeofday time nanosleep clock_nanosleep
//	                         a fake clock: 2025-01-01 UTC (monotonic: 1000 s)
//	                         plus 1 ns per executed instruction plus time slept;
//	                         sleeping only advances it
//	futex                    WAIT fails with EAGAIN if the word changed, times
//	                         out at once with a timeout, and otherwise stops
//	                         the run (StopDeadlock: nobody could wake it); WAKE
//	                         wakes nobody
//	rt_sigaction rt_sigprocmask sigaltstack  recorded, never delivered
//	kill tkill tgkill        on itself: signal 0 and ignored or blocked signals
//	                         do nothing; a signal whose default action
//	                         terminates ends the run (StopSignaled, as
//	                         abort() does); one with a handler stops it
//	                         (StopUnsupported: no signal delivery); others ESRCH
//	sched_getaffinity sched_yield getcpu  one CPU
//
// Memory passed to a call must be mapped, and writable where the kernel
// would write, else EFAULT.
//
// The corpus programs (static glibc of bookworm, trixie and sid: startup,
// stdio, C++ exceptions; seen with strace and qemu-aarch64 -strace) use
// brk, arch_prctl, set_tid_address, set_robust_list, rseq, prlimit64,
// getrandom, uname, readlink(at) of /proc/self/exe, mprotect (RELRO),
// futex wake, fstat or newfstatat of fd 1, ioctl TCGETS(2), write and
// exit_group. Dynamically linked ones (ld.so of bookworm, trixie and sid)
// add openat, read, pread64, fstat/newfstatat, mmap of files, mprotect,
// munmap, close and access.

// Linux errno values (the same on x86-64 and AArch64).
const (
	ePERM        = 1
	eNOENT       = 2
	eSRCH        = 3
	eIO          = 5
	eBADF        = 9
	eAGAIN       = 11
	eNOMEM       = 12
	eACCES       = 13
	eFAULT       = 14
	eEXIST       = 17
	eNOTDIR      = 20
	eISDIR       = 21
	eINVAL       = 22
	eNOTTY       = 25
	eSPIPE       = 29
	eROFS        = 30
	eRANGE       = 34
	eNAMETOOLONG = 36
	eNOSYS       = 38
	eTIMEDOUT    = 110
)

// sysErr returns -errno as a system call result.
func sysErr(errno int) uint64 { return uint64(-int64(errno)) }

// notImplemented lists the calls answered with ENOSYS, and why that is enough.
var notImplemented = map[string]string{
	"rseq":       "glibc then runs without restartable sequences",
	"statx":      "glibc's stat family uses newfstatat/fstat on 64-bit targets",
	"membarrier": "only needed with several threads",
}

type handler func(p *Process, a *[6]uint64) uint64

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"read": (*Process).sysRead, "readv": (*Process).sysReadv, "pread64": (*Process).sysPread64,
		"write": (*Process).sysWrite, "writev": (*Process).sysWritev,
		"openat": (*Process).sysOpenat, "open": (*Process).sysOpen, "close": (*Process).sysClose,
		"dup": (*Process).sysDup, "dup2": (*Process).sysDup2, "dup3": (*Process).sysDup3,
		"lseek": (*Process).sysLseek, "fcntl": (*Process).sysFcntl, "ioctl": (*Process).sysIoctl,
		"fstat": (*Process).sysFstat, "newfstatat": (*Process).sysNewfstatat,
		"stat": (*Process).sysStat, "lstat": (*Process).sysLstat,
		"access": (*Process).sysAccess, "faccessat": (*Process).sysFaccessat, "faccessat2": (*Process).sysFaccessat,
		"readlink": (*Process).sysReadlink, "readlinkat": (*Process).sysReadlinkat, "getcwd": (*Process).sysGetcwd,
		"brk": (*Process).sysBrk, "mmap": (*Process).sysMmap, "munmap": (*Process).sysMunmap,
		"mprotect": (*Process).sysMprotect, "mremap": (*Process).sysMremap, "madvise": (*Process).sysMadvise,
		"exit": (*Process).sysExit, "exit_group": (*Process).sysExit,
		"arch_prctl":      (*Process).sysArchPrctl,
		"set_tid_address": constResult(guestPID), "set_robust_list": (*Process).sysSetRobustList,
		"getpid": constResult(guestPID), "gettid": constResult(guestPID), "getppid": constResult(1),
		"getpgid": constResult(guestPID), "getpgrp": constResult(guestPID), "getsid": constResult(guestPID),
		"getuid": constResult(guestUID), "geteuid": constResult(guestUID), "getgid": constResult(guestGID), "getegid": constResult(guestGID),
		"prlimit64": (*Process).sysPrlimit64, "getrlimit": (*Process).sysGetrlimit, "setrlimit": constResult(0),
		"getrandom": (*Process).sysGetrandom, "uname": (*Process).sysUname,
		"clock_gettime": (*Process).sysClockGettime, "clock_getres": (*Process).sysClockGetres,
		"gettimeofday": (*Process).sysGettimeofday, "time": (*Process).sysTime,
		"nanosleep": (*Process).sysNanosleep, "clock_nanosleep": (*Process).sysClockNanosleep,
		"futex":        (*Process).sysFutex,
		"rt_sigaction": (*Process).sysRtSigaction, "rt_sigprocmask": (*Process).sysRtSigprocmask,
		"sigaltstack": (*Process).sysSigaltstack,
		"kill":        (*Process).sysKill, "tkill": (*Process).sysTkill, "tgkill": (*Process).sysTgkill,
		"sched_getaffinity": (*Process).sysSchedGetaffinity, "sched_yield": constResult(0), "getcpu": (*Process).sysGetcpu,
	}
	for name := range notImplemented {
		handlers[name] = constResult(sysErr(eNOSYS))
	}
}

// constResult is a handler returning v.
func constResult(v uint64) handler { return func(*Process, *[6]uint64) uint64 { return v } }

//go:generate go run ./internal/mksysnum -deb=$LINUX_LIBC_DEV

// SyscallName returns the Linux name of system call nr on arch, or "".
func SyscallName(arch *arch.Arch, nr uint64) string {
	abi := abiFor(arch)
	if abi == nil {
		return ""
	}
	return abi.name(nr)
}

func (a *sysABI) name(nr uint64) string {
	if nr < uint64(len(a.names)) {
		return a.names[nr]
	}
	return ""
}

// syscall handles the system call the guest just made: it runs inside the
// engine's syscall (x86-64) or interrupt (AArch64) hook.
func (p *Process) syscall() {
	defer func() {
		if r := recover(); r != nil {
			p.lastErr = fmt.Errorf("emu: panic in system call handler: %v", r)
			p.stop(StopFault, 0, fmt.Sprint("internal error: ", r))
		}
	}()
	var v [7]uint64
	if err := p.Engine.ReadRegs(p.abi.sysRegs[:], v[:]); err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
		return
	}
	pc, err := p.Engine.PC()
	if err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
		return
	}
	p.sysPC = p.abi.insnPC(pc)
	nr, args := v[0], [6]uint64(v[1:])
	name := p.abi.name(nr)
	h := handlers[name]
	if h == nil || (name == "arch_prctl" && p.Arch != arch.AMD64) {
		if name == "" {
			name = "unknown"
		}
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call %d (%s)", nr, name))
		return
	}
	ret := h(p, &args)
	if p.exit != nil {
		return
	}
	if err := p.Engine.SetReg(p.abi.ret, ret); err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
	}
}

// sysStop ends the run at the current system call instruction.
func (p *Process) sysStop(reason StopReason, status int, detail string) {
	p.stopAt(reason, status, p.sysPC, detail)
}

// memCap ends the run because a mapping would exceed the memory cap.
func (p *Process) memCap(what string, size uint64) uint64 {
	p.sysStop(StopMemory, 0, fmt.Sprintf("guest memory cap of %d bytes reached: %s of %d bytes with %d mapped", p.vm.max, what, size, p.vm.total))
	return sysErr(eNOMEM)
}

// Guest memory access for system calls.

// mapped reports whether the guest may read [addr, addr+n).
func (p *Process) mapped(addr, n uint64) bool { return p.accessible(addr, n, emu.ProtRead) }

// writable reports whether the guest may write [addr, addr+n).
func (p *Process) writable(addr, n uint64) bool { return p.accessible(addr, n, emu.ProtWrite) }

func (p *Process) accessible(addr, n uint64, need emu.Prot) bool {
	if n == 0 {
		return true
	}
	return addr+n >= addr && p.vm.allows(addr, addr+n, need)
}

func (p *Process) readGuest(addr, n uint64) ([]byte, bool) {
	if !p.mapped(addr, n) {
		return nil, false
	}
	b := make([]byte, n)
	if err := p.Engine.ReadMem(addr, b); err != nil {
		return nil, false
	}
	return b, true
}

func (p *Process) writeGuest(addr uint64, b []byte) bool {
	if !p.writable(addr, uint64(len(b))) {
		return false
	}
	return p.Engine.WriteMem(addr, b) == nil
}

func (p *Process) put64(addr uint64, vals ...uint64) bool {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return p.writeGuest(addr, b)
}

// cstring reads a NUL-terminated string of at most 4096 bytes (PATH_MAX).
func (p *Process) cstring(addr uint64) (string, int) {
	var sb strings.Builder
	var b [1]byte
	for sb.Len() < 4096 {
		if !p.mapped(addr, 1) || p.Engine.ReadMem(addr, b[:]) != nil {
			return "", eFAULT
		}
		if b[0] == 0 {
			return sb.String(), 0
		}
		sb.WriteByte(b[0])
		addr++
	}
	return "", eNAMETOOLONG
}

// Files.

type fileKind int

const (
	fileStdin fileKind = iota
	fileStdout
	fileStderr
	fileRegular
)

// openFile is an open file descriptor: one of the standard streams, or a
// snapshot of an allowed host file.
type openFile struct {
	kind fileKind
	path string // as the guest named it (absolute)
	host string // the host file read
	data []byte
	off  int64
	ino  uint64
}

func (p *Process) initFiles() error {
	p.allow = map[string]bool{}
	for _, a := range p.cfg.ReadAllow {
		abs, err := filepath.Abs(a)
		if err != nil {
			return fmt.Errorf("allow-read %s: %w", a, err)
		}
		p.allow[abs] = true
	}
	p.fds = map[int]*openFile{0: {kind: fileStdin, ino: 1}, 1: {kind: fileStdout, ino: 2}, 2: {kind: fileStderr, ino: 3}}
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
	host, e := p.hostPath(abs, true)
	if e != 0 {
		if flags&oCREAT != 0 {
			return sysErr(eROFS)
		}
		return sysErr(e)
	}
	if flags&oACCMODE != 0 || flags&(oCREAT|oTRUNC) != 0 {
		return sysErr(eROFS)
	}
	data, err := os.ReadFile(host)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		return sysErr(eNOENT)
	case errors.Is(err, fs.ErrPermission):
		return sysErr(eACCES)
	case errors.Is(err, syscall.EISDIR):
		return sysErr(eISDIR)
	default:
		return sysErr(eIO)
	}
	if flags&p.abi.oDirectory != 0 {
		return sysErr(eNOTDIR)
	}
	fd := 0
	for p.fds[fd] != nil {
		fd++
	}
	p.fds[fd] = &openFile{kind: fileRegular, path: abs, host: host, data: data, ino: p.inode(host)}
	return uint64(fd)
}

func (p *Process) sysOpenat(a *[6]uint64) uint64 { return p.open(int32(a[0]), a[1], a[2]) }
func (p *Process) sysOpen(a *[6]uint64) uint64   { return p.open(atFDCWD, a[0], a[1]) }

// dup makes newfd (or, if newfd < 0, the lowest free fd) share oldfd's
// open file.
func (p *Process) dup(oldfd, newfd int) uint64 {
	f := p.fds[oldfd]
	if f == nil || newfd >= 1024 {
		return sysErr(eBADF)
	}
	if newfd < 0 {
		for newfd = 0; p.fds[newfd] != nil; newfd++ {
		}
	}
	p.fds[newfd] = f
	return uint64(newfd)
}

func (p *Process) sysDup(a *[6]uint64) uint64 { return p.dup(int(int32(a[0])), -1) }

func (p *Process) sysDup2(a *[6]uint64) uint64 {
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
	fd := int(int32(a[0]))
	if p.fds[fd] == nil {
		return sysErr(eBADF)
	}
	delete(p.fds, fd)
	return 0
}

// readFD reads up to n bytes from fd (at off, or the file offset if off < 0).
func (p *Process) readFD(fd int, n uint64, off int64) ([]byte, int) {
	f := p.fds[fd]
	if f == nil || f.kind == fileStdout || f.kind == fileStderr {
		return nil, eBADF
	}
	n = min(n, 1<<24)
	if f.kind == fileStdin {
		if off >= 0 {
			return nil, eSPIPE
		}
		if p.cfg.Stdin == nil || n == 0 {
			return nil, 0
		}
		b := make([]byte, n)
		k, err := p.cfg.Stdin.Read(b)
		if err != nil && err != io.EOF && k == 0 {
			return nil, eIO
		}
		return b[:k], 0
	}
	at := off
	if at < 0 {
		at = f.off
	}
	if at >= int64(len(f.data)) {
		return nil, 0
	}
	b := f.data[at:min(int64(len(f.data)), at+int64(n))]
	if off < 0 {
		f.off += int64(len(b))
	}
	return b, 0
}

func (p *Process) sysRead(a *[6]uint64) uint64 {
	if !p.writable(a[1], a[2]) {
		return sysErr(eFAULT)
	}
	b, e := p.readFD(int(int32(a[0])), a[2], -1)
	if e != 0 {
		return sysErr(e)
	}
	p.writeGuest(a[1], b)
	return uint64(len(b))
}

func (p *Process) sysPread64(a *[6]uint64) uint64 {
	if int64(a[3]) < 0 {
		return sysErr(eINVAL)
	}
	if !p.writable(a[1], a[2]) {
		return sysErr(eFAULT)
	}
	b, e := p.readFD(int(int32(a[0])), a[2], int64(a[3]))
	if e != 0 {
		return sysErr(e)
	}
	p.writeGuest(a[1], b)
	return uint64(len(b))
}

// iovecs reads an iovec array.
func (p *Process) iovecs(addr, n uint64) ([][2]uint64, int) {
	if n > 1024 {
		return nil, eINVAL
	}
	raw, ok := p.readGuest(addr, 16*n)
	if !ok {
		return nil, eFAULT
	}
	v := make([][2]uint64, n)
	for i := range v {
		v[i] = [2]uint64{binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])}
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
		b, e := p.readFD(int(int32(a[0])), v[1], -1)
		if e != 0 {
			if total > 0 {
				break
			}
			return sysErr(e)
		}
		p.writeGuest(v[0], b)
		total += uint64(len(b))
		if uint64(len(b)) < v[1] {
			break
		}
	}
	return total
}

func (p *Process) writeFD(fd int, b []byte) uint64 {
	f := p.fds[fd]
	var w io.Writer
	switch {
	case f == nil:
		return sysErr(eBADF)
	case f.kind == fileStdout:
		w = p.cfg.Stdout
	case f.kind == fileStderr:
		w = p.cfg.Stderr
	default:
		return sysErr(eBADF) // fd 0 and opened files are read-only
	}
	n, err := w.Write(b)
	if err != nil && n == 0 {
		return sysErr(eIO)
	}
	return uint64(n)
}

func (p *Process) sysWrite(a *[6]uint64) uint64 {
	if p.fds[int(int32(a[0]))] == nil {
		return sysErr(eBADF)
	}
	b, ok := p.readGuest(a[1], min(a[2], 1<<30))
	if !ok {
		return sysErr(eFAULT)
	}
	return p.writeFD(int(int32(a[0])), b)
}

func (p *Process) sysWritev(a *[6]uint64) uint64 {
	if p.fds[int(int32(a[0]))] == nil {
		return sysErr(eBADF)
	}
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return sysErr(e)
	}
	var buf []byte
	for _, v := range iov {
		b, ok := p.readGuest(v[0], v[1])
		if !ok {
			return sysErr(eFAULT)
		}
		buf = append(buf, b...)
	}
	return p.writeFD(int(int32(a[0])), buf)
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
		off += int64(len(f.data))
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
		min := int(int32(a[2]))
		if min < 0 || min >= 1024 {
			return sysErr(eINVAL)
		}
		for p.fds[min] != nil {
			min++
		}
		return p.dup(int(int32(a[0])), min)
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
		n := int64(len(f.data))
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

// statPath stats an allowed file (reading it).
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
	host, e := p.hostPath(abs, flags&atSymlinkNofollow == 0)
	if e != 0 {
		return sysErr(e)
	}
	fi, err := os.Lstat(host)
	if err != nil {
		return sysErr(eNOENT)
	}
	st := (&openFile{kind: fileRegular, ino: p.inode(host)}).stat()
	st.size = fi.Size()
	st.blocks = (st.size + 511) / 512
	switch {
	case fi.IsDir():
		st.mode = 0o040555
	case fi.Mode()&fs.ModeSymlink != 0:
		st.mode = 0o120777
	}
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
	if _, e := p.hostPath(abs, true); e != 0 {
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
		host, e := p.hostPath(abs, false)
		if e != 0 {
			return sysErr(e)
		}
		t, err := os.Readlink(host)
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

// Memory.

// mmapMin is the lowest address mmap hands out (vm.mmap_min_addr).
const mmapMin = 0x10000

func (p *Process) sysBrk(a *[6]uint64) uint64 {
	want := a[0]
	if want < p.brkStart || want > p.abi.stackTop-stackSize {
		return p.brk
	}
	oldTop, newTop := pageUp(p.brk), pageUp(want)
	switch {
	case newTop > oldTop:
		if !p.vm.free(oldTop, newTop) {
			return p.brk
		}
		if err := p.vm.mmap(oldTop, newTop, emu.ProtRead|emu.ProtWrite, "[heap]"); err != nil {
			if errors.Is(err, errMemCap) {
				p.memCap("brk", newTop-oldTop)
			}
			return p.brk
		}
	case newTop < oldTop:
		if err := p.vm.munmap(newTop, oldTop); err != nil {
			return p.brk
		}
	}
	p.brk = want
	return want
}

// mmap flags shared by both targets.
const (
	mapShared         = 0x01
	mapPrivate        = 0x02
	mapSharedValidate = 0x03
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapFixedNoreplace = 0x100000
)

func (p *Process) sysMmap(a *[6]uint64) uint64 {
	addr, length, prot, flags, fd, off := a[0], a[1], a[2], a[3], int(int32(a[4])), a[5]
	size := pageUp(length)
	switch {
	case length == 0 || off%emu.PageSize != 0:
		return sysErr(eINVAL)
	case size < length || size > p.abi.stackTop:
		return sysErr(eNOMEM)
	}
	switch flags & 0xf {
	case mapShared, mapPrivate, mapSharedValidate:
	default:
		return sysErr(eINVAL)
	}
	var data []byte
	name := "[anon]"
	if flags&mapAnonymous == 0 {
		f := p.fds[fd]
		if f == nil {
			return sysErr(eBADF)
		}
		if f.kind != fileRegular {
			return sysErr(eACCES)
		}
		if flags&0xf != mapPrivate && prot&2 != 0 {
			return sysErr(eACCES) // the file is read-only
		}
		if off < uint64(len(f.data)) {
			data = f.data[off:min(uint64(len(f.data)), off+length)]
		}
		name = f.path
	}
	var start uint64
	if flags&(mapFixed|mapFixedNoreplace) != 0 {
		if addr%emu.PageSize != 0 || addr+size < addr || addr+size > p.abi.stackTop {
			return sysErr(eINVAL)
		}
		if flags&mapFixedNoreplace != 0 && !p.vm.free(addr, addr+size) {
			return sysErr(eEXIST)
		}
		start = addr
	} else {
		if hint := pageDown(addr); hint >= mmapMin && hint+size > hint && hint+size <= p.abi.mmapTop && p.vm.free(hint, hint+size) {
			start = hint
		} else if start = p.vm.findFree(size, max(pageUp(p.brk), mmapMin), p.abi.mmapTop); start == 0 {
			return sysErr(eNOMEM)
		}
	}
	if err := p.vm.mmap(start, start+size, protFromLinux(prot), name); err != nil {
		if errors.Is(err, errMemCap) {
			return p.memCap("mmap", size)
		}
		return sysErr(eNOMEM)
	}
	if len(data) > 0 {
		p.Engine.WriteMem(start, data)
	}
	if f := p.fds[fd]; flags&mapAnonymous == 0 && off == 0 && f != nil {
		p.mappedFile(f, start)
	}
	return start
}

func (p *Process) sysMunmap(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	if addr%emu.PageSize != 0 || size == 0 || addr+size < addr {
		return sysErr(eINVAL)
	}
	if err := p.vm.munmap(addr, addr+size); err != nil {
		return sysErr(eINVAL)
	}
	return 0
}

// protIgnored are PROT_* bits accepted and ignored: PROT_BTI and
// PROT_MTE (AArch64).
const protIgnored = 0x10 | 0x20

func (p *Process) sysMprotect(a *[6]uint64) uint64 {
	addr, size, prot := a[0], pageUp(a[1]), a[2]
	if addr%emu.PageSize != 0 || addr+size < addr || prot&^(7|protIgnored) != 0 {
		return sysErr(eINVAL)
	}
	if size == 0 {
		return 0
	}
	if err := p.vm.protect(addr, addr+size, protFromLinux(prot)); err != nil {
		return sysErr(eNOMEM)
	}
	return 0
}

func (p *Process) sysMremap(a *[6]uint64) uint64 {
	const mayMove, fixed = 1, 2
	old, oldSize, newSize, flags, newAddr := a[0], pageUp(a[1]), pageUp(a[2]), a[3], a[4]
	if old%emu.PageSize != 0 || newSize == 0 || flags&^(mayMove|fixed) != 0 || (flags&fixed != 0 && flags&mayMove == 0) {
		return sysErr(eINVAL)
	}
	if oldSize == 0 || !p.vm.covered(old, old+oldSize) {
		return sysErr(eFAULT)
	}
	var prot emu.Prot
	for _, v := range p.vm.vmas {
		if v.start <= old && old < v.end {
			prot = v.prot
		}
	}
	move := func(dst uint64) uint64 {
		data := make([]byte, min(oldSize, newSize))
		p.Engine.ReadMem(old, data)
		if err := p.vm.munmap(old, old+oldSize); err != nil {
			return sysErr(eINVAL)
		}
		if err := p.vm.mmap(dst, dst+newSize, prot, "[anon]"); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize)
			}
			return sysErr(eNOMEM)
		}
		p.Engine.WriteMem(dst, data)
		return dst
	}
	if flags&fixed != 0 {
		if newAddr%emu.PageSize != 0 || newAddr+newSize > p.abi.stackTop || (newAddr < old+oldSize && old < newAddr+newSize) {
			return sysErr(eINVAL)
		}
		return move(newAddr)
	}
	switch {
	case newSize <= oldSize:
		p.vm.munmap(old+newSize, old+oldSize)
		return old
	case old+newSize <= p.abi.mmapTop && p.vm.free(old+oldSize, old+newSize):
		if err := p.vm.mmap(old+oldSize, old+newSize, prot, "[anon]"); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize-oldSize)
			}
			return sysErr(eNOMEM)
		}
		return old
	case flags&mayMove != 0:
		dst := p.vm.findFree(newSize, max(pageUp(p.brk), mmapMin), p.abi.mmapTop)
		if dst == 0 {
			return sysErr(eNOMEM)
		}
		return move(dst)
	}
	return sysErr(eNOMEM)
}

func (p *Process) sysMadvise(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	if addr%emu.PageSize != 0 || addr+size < addr {
		return sysErr(eINVAL)
	}
	if !p.vm.covered(addr, addr+size) {
		return sysErr(eNOMEM)
	}
	if a[2] == 4 { // MADV_DONTNEED: private anonymous pages read as zero again
		p.vm.zero(addr, addr+size)
	}
	return 0
}

// Process.

func (p *Process) sysExit(a *[6]uint64) uint64 {
	status := int(a[0] & 0xff)
	p.sysStop(StopExited, status, fmt.Sprintf("exited with status %d", status))
	return 0
}

func (p *Process) sysSetRobustList(a *[6]uint64) uint64 {
	if a[1] != 24 {
		return sysErr(eINVAL)
	}
	return 0
}

func (p *Process) rlimit(res uint64) (cur, max uint64) {
	const inf = ^uint64(0)
	switch res {
	case 3: // RLIMIT_STACK
		return stackSize, inf
	case 7: // RLIMIT_NOFILE
		return 1024, 4096
	}
	return inf, inf
}

func (p *Process) sysPrlimit64(a *[6]uint64) uint64 {
	if a[0] != 0 && a[0] != guestPID {
		return sysErr(eSRCH)
	}
	if a[1] >= 16 {
		return sysErr(eINVAL)
	}
	if a[3] != 0 {
		cur, max := p.rlimit(a[1])
		if !p.put64(a[3], cur, max) {
			return sysErr(eFAULT)
		}
	}
	return 0
}

func (p *Process) sysGetrlimit(a *[6]uint64) uint64 {
	return p.sysPrlimit64(&[6]uint64{0, a[0], 0, a[1]})
}

func (p *Process) sysGetrandom(a *[6]uint64) uint64 {
	n := min(a[1], 1<<25)
	if !p.writable(a[0], n) {
		return sysErr(eFAULT)
	}
	p.writeGuest(a[0], p.rng.bytes(int(n)))
	return n
}

func (p *Process) sysUname(a *[6]uint64) uint64 {
	var b [6 * 65]byte
	for i, s := range []string{"Linux", "sframesim", "6.1.0-sframesim", "#1 SMP PREEMPT_DYNAMIC", p.abi.machine, "(none)"} {
		copy(b[65*i:65*i+64], s)
	}
	if !p.writeGuest(a[0], b[:]) {
		return sysErr(eFAULT)
	}
	return 0
}

// Time.

// epoch is the fake wall clock's start: 2025-01-01 00:00:00 UTC.
const epoch = 1735689600

// now returns clock clk in nanoseconds, or false for an unknown clock.
func (p *Process) now(clk uint64) (int64, bool) {
	t := int64(p.Engine.Executed()) + int64(p.sleep)
	switch clk {
	case 0, 5, 8, 11: // REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI
		return epoch*1e9 + t, true
	case 1, 4, 6, 7, 9: // MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME, BOOTTIME_ALARM
		return 1000e9 + t, true
	case 2, 3: // PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID
		return int64(p.Engine.Executed()), true
	}
	return 0, false
}

func (p *Process) sysClockGettime(a *[6]uint64) uint64 {
	t, ok := p.now(a[0])
	if !ok {
		return sysErr(eINVAL)
	}
	if !p.put64(a[1], uint64(t/1e9), uint64(t%1e9)) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysClockGetres(a *[6]uint64) uint64 {
	if _, ok := p.now(a[0]); !ok {
		return sysErr(eINVAL)
	}
	if a[1] != 0 && !p.put64(a[1], 0, 1) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysGettimeofday(a *[6]uint64) uint64 {
	t, _ := p.now(0)
	if a[0] != 0 && !p.put64(a[0], uint64(t/1e9), uint64(t%1e9/1e3)) {
		return sysErr(eFAULT)
	}
	if a[1] != 0 && !p.put64(a[1], 0) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysTime(a *[6]uint64) uint64 {
	t, _ := p.now(0)
	if a[0] != 0 && !p.put64(a[0], uint64(t/1e9)) {
		return sysErr(eFAULT)
	}
	return uint64(t / 1e9)
}

// timespec reads a struct timespec as a duration.
func (p *Process) timespec(addr uint64) (time.Duration, int) {
	b, ok := p.readGuest(addr, 16)
	if !ok {
		return 0, eFAULT
	}
	s, ns := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if s < 0 || ns < 0 || ns >= 1e9 {
		return 0, eINVAL
	}
	return time.Duration(s)*time.Second + time.Duration(ns), 0
}

func (p *Process) sysNanosleep(a *[6]uint64) uint64 {
	d, e := p.timespec(a[0])
	if e != 0 {
		return sysErr(e)
	}
	p.sleep += d
	return 0
}

func (p *Process) sysClockNanosleep(a *[6]uint64) uint64 {
	now, ok := p.now(a[0])
	if !ok || a[0] == 2 || a[0] == 3 {
		return sysErr(eINVAL)
	}
	d, e := p.timespec(a[2])
	if e != 0 {
		return sysErr(e)
	}
	if a[1]&1 != 0 { // TIMER_ABSTIME
		d = max(0, d-time.Duration(now))
	}
	p.sleep += d
	return 0
}

func (p *Process) sysFutex(a *[6]uint64) uint64 {
	const (
		futexWait, futexWake, futexWakeOp, futexWaitBitset, futexWakeBitset = 0, 1, 5, 9, 10
	)
	switch op := a[1] & 0x7f; op {
	case futexWake, futexWakeBitset, futexWakeOp:
		return 0
	case futexWait, futexWaitBitset:
		b, ok := p.readGuest(a[0], 4)
		if !ok {
			return sysErr(eFAULT)
		}
		if binary.LittleEndian.Uint32(b) != uint32(a[2]) {
			return sysErr(eAGAIN)
		}
		if a[3] != 0 {
			return sysErr(eTIMEDOUT)
		}
		p.sysStop(StopDeadlock, 0, fmt.Sprintf("deadlock: futex wait on %#x with no other thread to wake it", a[0]))
		return 0
	default:
		return sysErr(eNOSYS)
	}
}

// Signals: actions and the mask are recorded; nothing is ever delivered.

type sigState struct {
	act  [65][32]byte // struct sigaction per signal (handler, flags, restorer, mask)
	mask uint64
	alt  [24]byte // stack_t
}

var signalNames = map[int]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns "SIGABRT" for 6, and so on ("signal N" if unnamed).
func SignalName(sig int) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}

func (p *Process) sysRtSigaction(a *[6]uint64) uint64 {
	sig := a[0]
	if sig < 1 || sig > 64 || a[3] != 8 || (a[1] != 0 && (sig == 9 || sig == 19)) {
		return sysErr(eINVAL)
	}
	var act []byte
	if a[1] != 0 {
		var ok bool
		if act, ok = p.readGuest(a[1], 32); !ok {
			return sysErr(eFAULT)
		}
	}
	if a[2] != 0 && !p.writeGuest(a[2], p.sig.act[sig][:]) {
		return sysErr(eFAULT)
	}
	copy(p.sig.act[sig][:], act)
	return 0
}

func (p *Process) sysRtSigprocmask(a *[6]uint64) uint64 {
	if a[3] != 8 {
		return sysErr(eINVAL)
	}
	old := p.sig.mask
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 8)
		if !ok {
			return sysErr(eFAULT)
		}
		set := binary.LittleEndian.Uint64(b) &^ (1<<(9-1) | 1<<(19-1))
		switch a[0] {
		case 0: // SIG_BLOCK
			p.sig.mask |= set
		case 1: // SIG_UNBLOCK
			p.sig.mask &^= set
		case 2: // SIG_SETMASK
			p.sig.mask = set
		default:
			return sysErr(eINVAL)
		}
	}
	if a[2] != 0 && !p.put64(a[2], old) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysSigaltstack(a *[6]uint64) uint64 {
	if a[1] != 0 {
		old := p.sig.alt
		if old == [24]byte{} {
			binary.LittleEndian.PutUint32(old[8:], 2) // SS_DISABLE
		}
		if !p.writeGuest(a[1], old[:]) {
			return sysErr(eFAULT)
		}
	}
	if a[0] != 0 {
		b, ok := p.readGuest(a[0], 24)
		if !ok {
			return sysErr(eFAULT)
		}
		copy(p.sig.alt[:], b)
	}
	return 0
}

// signal sends sig to the guest itself.
func (p *Process) signal(sig uint64) uint64 {
	if sig > 64 {
		return sysErr(eINVAL)
	}
	if sig == 0 {
		return 0
	}
	handler := binary.LittleEndian.Uint64(p.sig.act[sig][:])
	name := SignalName(int(sig))
	switch {
	case sig == 9 || sig == 19:
	case handler == 1: // SIG_IGN
		return 0
	case p.sig.mask&(1<<(sig-1)) != 0:
		return 0 // blocked: stays pending forever
	case handler != 0:
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("%s sent to itself has a handler at %#x%s: signal delivery is not emulated", name, handler, p.symbolSuffix(handler)))
		return 0
	}
	switch sig {
	case 17, 18, 23, 28: // SIGCHLD, SIGCONT, SIGURG, SIGWINCH: ignored by default
		return 0
	case 19, 20, 21, 22: // stop signals
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("%s would stop the process: job control is not emulated", name))
		return 0
	}
	p.sysStop(StopSignaled, 128+int(sig), fmt.Sprintf("killed by signal %d (%s)", sig, name))
	return 0
}

func (p *Process) sysKill(a *[6]uint64) uint64 {
	if pid := int32(a[0]); pid != guestPID && pid != 0 && pid != -guestPID {
		return sysErr(eSRCH)
	}
	return p.signal(a[1])
}

func (p *Process) sysTkill(a *[6]uint64) uint64 {
	if int32(a[0]) != guestPID {
		return sysErr(eSRCH)
	}
	return p.signal(a[1])
}

func (p *Process) sysTgkill(a *[6]uint64) uint64 {
	if int32(a[0]) != guestPID || int32(a[1]) != guestPID {
		return sysErr(eSRCH)
	}
	return p.signal(a[2])
}

func (p *Process) sysSchedGetaffinity(a *[6]uint64) uint64 {
	if a[0] != 0 && a[0] != guestPID {
		return sysErr(eSRCH)
	}
	if a[1] < 8 || a[1]%8 != 0 {
		return sysErr(eINVAL)
	}
	if !p.put64(a[2], 1) {
		return sysErr(eFAULT)
	}
	return 8
}

func (p *Process) sysGetcpu(a *[6]uint64) uint64 {
	for _, addr := range a[:2] {
		if addr != 0 && !p.writeGuest(addr, make([]byte, 4)) {
			return sysErr(eFAULT)
		}
	}
	return 0
}

func (p *Process) sysArchPrctl(a *[6]uint64) uint64 {
	return p.abi.archPrctl(p, a[0], a[1])
}

// sysABI is what the Linux layer needs to know about one target.
type sysABI struct {
	sysRegs    [7]emu.RegID // the system call number, then its six arguments
	ret        emu.RegID    // the result register
	names      []string     // system call names by number (zsysnum_*.go)
	machine    string       // uname's machine
	platform   string       // AT_PLATFORM
	hwcap      func() uint64
	hwcap2     uint64
	stackTop   uint64 // the stack's top: TASK_SIZE
	mmapTop    uint64 // mmap hands out addresses below this
	pieBase    uint64 // where a static PIE is loaded (ELF_ET_DYN_BASE)
	oDirectory uint64 // O_DIRECTORY, which differs
	// insnPC returns the address of the system call instruction, given the
	// PC the hook sees.
	insnPC func(pc uint64) uint64
	// stat encodes the target's struct stat.
	stat func(statInfo) []byte
	// start sets the entry registers and installs the hooks.
	start     func(p *Process) error
	archPrctl func(p *Process, code, addr uint64) uint64
}

func abiFor(a *arch.Arch) *sysABI {
	switch a {
	case arch.AMD64:
		return amd64
	case arch.ARM64:
		return arm64
	}
	return nil
}
