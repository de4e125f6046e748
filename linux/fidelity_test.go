//go:build cgo

package linux

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSmallFidelity: answers found different from Linux's by running the
// same calls natively (SEEK_DATA and SEEK_HOLE, F_GETPIPE_SZ and
// F_SETPIPE_SZ, close_range's CLOSE_RANGE_CLOEXEC, F_SETFL O_NONBLOCK on
// a regular file, a blocked signal whose action is to ignore it).
func TestSmallFidelity(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			expect(t, "write", g.write(fd, "abc"), 3)
			expect(t, "SEEK_DATA", g.call("lseek", uint64(fd), 0, 3), 0)
			expect(t, "SEEK_HOLE", g.call("lseek", uint64(fd), 1, 4), 3)
			expect(t, "SEEK_DATA at the end", g.call("lseek", uint64(fd), 3, 3), -eNXIO)
			expect(t, "SEEK_HOLE past the end", g.call("lseek", uint64(fd), 5, 4), -eNXIO)
			expect(t, "F_SETFL O_NONBLOCK", g.call("fcntl", uint64(fd), 4, oNONBLOCK), 0)
			if fl := g.call("fcntl", uint64(fd), 3); fl&oNONBLOCK == 0 {
				t.Errorf("F_GETFL after O_NONBLOCK: %#o", fl)
			}
			expect(t, "F_GETPIPE_SZ of a file", g.call("fcntl", uint64(fd), 1032), -eBADF)
			expect(t, "access, a bad mode", g.call("faccessat", atFDCWD64, g.path(2, "/tmp/f"), 99), -eINVAL)
			expect(t, "newfstatat, a bad flag", g.call("newfstatat", atFDCWD64, g.path(2, "/tmp/f"), g.buf, 4), -eINVAL)
			expect(t, "madvise, a bad advice", g.call("madvise", g.buf&^4095, 4096, 999), -eINVAL)
			expect(t, "getrandom, a bad flag", g.call("getrandom", g.buf, 4, 99), -eINVAL)
			expect(t, "getrandom, RANDOM|INSECURE", g.call("getrandom", g.buf, 4, 6), -eINVAL)
			// More than any machine's RAM: ENOMEM, as Linux's heuristic
			// overcommit gives malloc(2 TiB), not a stop.
			expect(t, "mmap of 2 TiB", g.call("mmap", 0, 2<<40, 3, 0x22, ^uint64(0), 0), -eNOMEM)
			if g.p.exit != nil {
				t.Errorf("the run stopped: %v", g.p.exit)
			}
			brk := g.call("brk", 0)
			expect(t, "brk 2 TiB up", g.call("brk", uint64(brk)+2<<40), brk)
			expect(t, "kill init", g.call("kill", 1, 0), -ePERM)
			expect(t, "clock_getres COARSE", g.call("clock_getres", 6, g.buf), 0)
			if res := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+8, 8)); res != 4_000_000 {
				t.Errorf("MONOTONIC_COARSE resolution %d ns, want a 4 ms tick", res)
			}
			expect(t, "umask", g.call("umask", 0o22), 0o22)
			expect(t, "mkdir with set-id bits", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/sd"), 0o7777), 0)
			if mode, _, _ := g.stat("/tmp/sd", false); mode != 0o41755 {
				t.Errorf("mkdir 07777: mode %#o, want 041755", mode)
			}
			expect(t, "munmap beyond TASK_SIZE", g.call("munmap", 0, 1<<62), -eINVAL)
			// writev stops at the first bad iovec, after what it wrote.
			iov := make([]byte, 32)
			binary.LittleEndian.PutUint64(iov, g.buf+256)
			binary.LittleEndian.PutUint64(iov[8:], 2)
			binary.LittleEndian.PutUint64(iov[16:], 8)
			binary.LittleEndian.PutUint64(iov[24:], 4)
			if err := g.p.Engine.WriteMem(g.buf+512, iov); err != nil {
				t.Fatal(err)
			}
			expect(t, "writev, a bad second iovec", g.call("writev", uint64(fd), g.buf+512, 2), 2)
			binary.LittleEndian.PutUint64(iov, 8)
			if err := g.p.Engine.WriteMem(g.buf+512, iov); err != nil {
				t.Fatal(err)
			}
			expect(t, "writev, a bad first iovec", g.call("writev", uint64(fd), g.buf+512, 2), -eFAULT)
			// getcwd of a removed directory.
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/gone"), 0o755), 0)
			expect(t, "chdir", g.call("chdir", g.path(2, "/tmp/gone")), 0)
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/gone"), 0x200), 0)
			expect(t, "getcwd of a removed directory", g.call("getcwd", g.buf, 4096), -eNOENT)
			expect(t, "chdir back", g.call("chdir", g.path(2, "/tmp")), 0)
			// A directory's position is getdents64's d_off.
			dir := g.open("/tmp", gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "lseek dir SEEK_CUR", g.call("lseek", uint64(dir), 0, 1), 0)
			expect(t, "getdents64", min(g.call("getdents64", uint64(dir), g.buf, 4096), 1), 1)
			end := g.call("lseek", uint64(dir), 0, 1)
			expect(t, "seek back to 1", g.call("lseek", uint64(dir), 1, 0), 1)
			expect(t, "SEEK_END on a directory", g.call("lseek", uint64(dir), 0, 2), -eINVAL)
			if end < 2 {
				t.Errorf("position after a listing: %d", end)
			}

			expect(t, "pipe2", g.call("pipe2", g.buf, 0), 0)
			ends := readGuestBytes(t, g.p, g.buf, 8)
			r, w := uint64(binary.LittleEndian.Uint32(ends)), uint64(binary.LittleEndian.Uint32(ends[4:]))
			expect(t, "F_GETPIPE_SZ", g.call("fcntl", r, 1032), 65536)
			expect(t, "fsync of a pipe", g.call("fsync", r), -eINVAL)
			expect(t, "F_SETPIPE_SZ 5000", g.call("fcntl", w, 1031, 5000), 8192)
			expect(t, "F_GETPIPE_SZ after", g.call("fcntl", r, 1032), 8192)
			expect(t, "F_SETPIPE_SZ past pipe-max-size", g.call("fcntl", w, 1031, 2<<20), -ePERM)
			expect(t, "nonblocking", g.call("fcntl", w, 4, oNONBLOCK), 0)
			big := make([]byte, 10000)
			if err := g.p.Engine.WriteMem(g.buf, big); err != nil {
				t.Fatal(err)
			}
			expect(t, "a write fills the smaller pipe", g.call("write", w, g.buf, 10000), 8192)
			expect(t, "F_SETPIPE_SZ below what it holds", g.call("fcntl", w, 1031, 4096), -eBUSY)

			expect(t, "close_range CLOEXEC", g.call("close_range", uint64(fd), uint64(fd), 4), 0)
			expect(t, "  flag", g.call("fcntl", uint64(fd), 1), 1)
			expect(t, "dup2 onto itself", g.call("dup2", uint64(fd), uint64(fd)), fd)
			expect(t, "  flag kept", g.call("fcntl", uint64(fd), 1), 1)
			expect(t, "FIONCLEX", g.call("ioctl", uint64(fd), 0x5450, 0), 0)
			expect(t, "  flag cleared", g.call("fcntl", uint64(fd), 1), 0)
			expect(t, "FIOCLEX", g.call("ioctl", uint64(fd), 0x5451, 0), 0)
			expect(t, "  flag set", g.call("fcntl", uint64(fd), 1), 1)
			// MADV_DONTNEED drops private anonymous pages, not shared ones.
			for _, c := range []struct {
				flags uint64
				want  byte
			}{{0x22, 0}, {0x21, 7}} { // MAP_PRIVATE, MAP_SHARED | MAP_ANONYMOUS
				m := g.call("mmap", 0, 4096, 3, c.flags, ^uint64(0), 0)
				if m < 0 {
					t.Fatalf("mmap %#x = %d", c.flags, m)
				}
				if err := g.p.Engine.WriteMem(uint64(m), []byte{7}); err != nil {
					t.Fatal(err)
				}
				expect(t, "MADV_DONTNEED", g.call("madvise", uint64(m), 4096, 4), 0)
				if b := readGuestBytes(t, g.p, uint64(m), 1); b[0] != c.want {
					t.Errorf("flags %#x: after MADV_DONTNEED %d, want %d", c.flags, b[0], c.want)
				}
			}
			expect(t, "  still open", g.call("fcntl", uint64(fd), 3)&3, 2)

			// SIGUSR1 ignored but blocked: it stays pending.
			act := make([]byte, 32)
			binary.LittleEndian.PutUint64(act, sigIGN)
			if err := g.p.Engine.WriteMem(g.buf, act); err != nil {
				t.Fatal(err)
			}
			expect(t, "SIG_IGN", g.call("rt_sigaction", 10, g.buf, 0, 8), 0)
			binary.LittleEndian.PutUint64(act, 1<<9)
			if err := g.p.Engine.WriteMem(g.buf+64, act[:8]); err != nil {
				t.Fatal(err)
			}
			expect(t, "block", g.call("rt_sigprocmask", 0, g.buf+64, 0, 8), 0)
			expect(t, "kill", g.call("kill", guestPID, 10), 0)
			expect(t, "sigpending", g.call("rt_sigpending", g.buf+128, 8), 0)
			if set := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+128, 8)); set&(1<<9) == 0 {
				t.Errorf("pending %#x: the blocked, ignored SIGUSR1 was dropped", set)
			}
		})
	}
}

// TestRlimits: setrlimit and prlimit64 set limits as Linux checks them
// (EFAULT, EINVAL for cur > max, EPERM to raise a hard limit), getrlimit
// reports them, and a lowered RLIMIT_NOFILE bounds the descriptors.
func TestRlimits(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			put := func(cur, max uint64) uint64 {
				b := make([]byte, 16)
				binary.LittleEndian.PutUint64(b, cur)
				binary.LittleEndian.PutUint64(b[8:], max)
				if err := g.p.Engine.WriteMem(g.buf, b); err != nil {
					t.Fatal(err)
				}
				return g.buf
			}
			expect(t, "bad pointer", g.call("prlimit64", 0, 7, 8, 0), -eFAULT)
			expect(t, "cur above max", g.call("prlimit64", 0, 7, put(20, 10), 0), -eINVAL)
			expect(t, "raise the hard limit", g.call("prlimit64", 0, 7, put(10, 2048), 0), -ePERM)
			expect(t, "lower NOFILE", g.call("prlimit64", 0, 7, put(8, 8), g.buf+64), 0)
			if old := readGuestBytes(t, g.p, g.buf+64, 16); binary.LittleEndian.Uint64(old) != fdLimit {
				t.Errorf("old limit %d, want %d", binary.LittleEndian.Uint64(old), fdLimit)
			}
			expect(t, "getrlimit", g.call("prlimit64", 0, 7, 0, g.buf+64), 0)
			if cur := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+64, 8)); cur != 8 {
				t.Errorf("NOFILE now %d, want 8", cur)
			}
			n := 0
			for g.open("/tmp", gRDONLY|g.p.abi.oDirectory, 0) >= 0 {
				n++
			}
			expect(t, "descriptors opened up to the limit", int64(n), 5) // 3 to 7
			expect(t, "EMFILE", g.open("/tmp", gRDONLY|g.p.abi.oDirectory, 0), -eMFILE)
			expect(t, "dup2 beyond it", g.call("dup2", 0, 9), -eBADF)
			expect(t, "F_DUPFD beyond it", g.call("fcntl", 0, 0, 9), -eINVAL)
			expect(t, "raise back to the hard limit", g.call("prlimit64", 0, 7, put(8, 8), 0), 0)
			expect(t, "setrlimit without a struct", g.call("setrlimit", 7, 0), -eFAULT)
		})
	}
}

// TestProcSelf: /proc/self/maps lists the mappings (the program's by its
// path, the stack), status and cmdline are made from what the layer knows,
// and they are read-only.
func TestProcSelf(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Args: []string{"prog", "arg"}})
			read := func(path string) string {
				t.Helper()
				fd := g.open(path, gRDONLY, 0)
				if fd < 0 {
					t.Fatalf("open %s = %d", path, fd)
				}
				n := g.call("read", uint64(fd), g.buf, 60000)
				if n < 0 {
					t.Fatalf("read %s = %d", path, n)
				}
				return string(readGuestBytes(t, g.p, g.buf, uint64(n)))
			}
			maps := read("/proc/self/maps")
			if !strings.Contains(maps, " rw-p 00000000 00:00 0") || !strings.Contains(maps, "[stack]\n") || !strings.Contains(maps, absPath(g.p.Path)+"\n") {
				t.Errorf("maps:\n%s", maps)
			}
			// Each segment of the program's file shows its page's file
			// offset, as Linux maps it (before, all were 00000000).
			f, err := elf.Open(g.p.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, ph := range f.Progs {
				if ph.Type != elf.PT_LOAD || ph.Filesz == 0 {
					continue
				}
				if off := fmt.Sprintf(" %08x ", pageDown(ph.Off)); !strings.Contains(maps, off) {
					t.Errorf("no mapping at offset%sof the program (PT_LOAD at %#x):\n%s", off, ph.Vaddr, maps)
				}
			}
			if got := read("/proc/self/cmdline"); got != "prog\x00arg\x00" {
				t.Errorf("cmdline %q", got)
			}
			if got := read("/proc/4242/status"); !strings.Contains(got, "\nThreads:\t1\n") || !strings.Contains(got, "\nUid:\t1000\t") {
				t.Errorf("status:\n%s", got)
			}
			expect(t, "write", g.open("/proc/self/status", gWRONLY, 0), -eACCES)
			expect(t, "not made", g.open("/proc/self/mounts", gRDONLY, 0), -eNOENT)
			if mode, _, _ := g.stat("/proc/self/maps", true); mode != 0o100444 {
				t.Errorf("stat maps: %#o", mode)
			}
			if got := read("/etc/passwd"); !strings.Contains(got, "\nuser:x:1000:1000:") {
				t.Errorf("made /etc/passwd %q", got)
			}
			if got := read("/etc/group"); !strings.Contains(got, "\nuser:x:1000:") {
				t.Errorf("made /etc/group %q", got)
			}
			// Named, the host's is the one seen.
			h := newGuest(t, a, Config{ReadAllow: []string{"/etc/passwd"}})
			host, err := os.ReadFile("/etc/passwd")
			if err != nil {
				t.Fatal(err)
			}
			fd := h.open("/etc/passwd", gRDONLY, 0)
			if n := h.call("read", uint64(fd), h.buf, 60000); n != int64(min(len(host), 60000)) {
				t.Errorf("read of the named /etc/passwd: %d bytes, the host's has %d", n, len(host))
			}
		})
	}
}

// TestExecve: execve answers what is wrong with the file as Linux does
// (a program trying PATH's directories goes on), and stops the run, named,
// at a file it would run.
func TestExecve(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "missing", g.call("execve", g.path(2, "/usr/local/bin/nothing"), 0, 0), -eNOENT)
			expect(t, "a directory", g.call("execve", g.path(2, "/tmp"), 0, 0), -eACCES)
			expect(t, "create", g.call("close", uint64(g.open("/tmp/x", oCREAT|gWRONLY, 0o644))), 0)
			expect(t, "not executable", g.call("execve", g.path(2, "/tmp/x"), 0, 0), -eACCES)
			expect(t, "under a file", g.call("execve", g.path(2, "/tmp/x/y"), 0, 0), -eNOTDIR)
			expect(t, "execveat, bad flags", g.call("execveat", atFDCWD64, g.path(2, "/tmp/x"), 0, 0, 1), -eINVAL)
			if g.p.exit != nil {
				t.Fatalf("stopped early: %v", g.p.exit)
			}
			expect(t, "chmod", g.call("fchmodat", atFDCWD64, g.path(2, "/tmp/x"), 0o755), 0)
			expect(t, "empty: no binary format", g.call("execve", g.path(2, "/tmp/x"), 0, 0), -eNOEXEC)
			fd := g.open("/tmp/x", gWRONLY, 0)
			expect(t, "write a script", g.write(fd, "#!/bin/sh\n"), 10)
			g.call("execve", g.path(2, "/tmp/x"), 0, 0)
			if x := g.p.exit; x == nil || x.Reason != StopUnsupported || !strings.Contains(x.Detail, "execve of /tmp/x") {
				t.Errorf("execve of an executable: %v, want a stop naming it", x)
			}
		})
	}
}

// TestOpenPath: an O_PATH descriptor names the file without opening it:
// fstat, fchdir, a dirfd, F_GETFL and dup work; reads, writes, mmap,
// lseek and most fcntl commands are EBADF; a symbolic link opens itself
// with O_NOFOLLOW.
func TestOpenPath(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "create", g.call("close", uint64(g.open("/tmp/f", oCREAT|gWRONLY, 0o200))), 0) // write-only: O_PATH needs no read
			expect(t, "symlink", g.call("symlinkat", g.path(2, "f"), atFDCWD64, g.path(3, "/tmp/sl")), 0)
			fd := g.open("/tmp/f", oPATH, 0)
			if fd < 0 {
				t.Fatalf("open O_PATH = %d", fd)
			}
			expect(t, "read", g.call("read", uint64(fd), g.buf, 1), -eBADF)
			expect(t, "write", g.call("write", uint64(fd), g.buf, 1), -eBADF)
			expect(t, "lseek", g.call("lseek", uint64(fd), 0, 0), -eBADF)
			expect(t, "mmap", g.call("mmap", 0, 4096, 1, 2, uint64(fd), 0), -eBADF)
			expect(t, "F_SETFL", g.call("fcntl", uint64(fd), 4, 0), -eBADF)
			if fl := g.call("fcntl", uint64(fd), 3); fl&oPATH == 0 {
				t.Errorf("F_GETFL %#o lacks O_PATH", fl)
			}
			expect(t, "fstat", g.call("fstat", uint64(fd), g.buf), 0)
			if d := g.call("dup", uint64(fd)); d < 0 {
				t.Errorf("dup = %d", d)
			}
			link := g.open("/tmp/sl", oPATH|g.p.abi.oNofollow(), 0)
			if link < 0 {
				t.Fatalf("open a link O_PATH|O_NOFOLLOW = %d", link)
			}
			expect(t, "fstat of the link", g.call("fstat", uint64(link), g.buf), 0)
			expect(t, "readlinkat of it with an empty path", g.call("readlinkat", uint64(link), g.path(2, ""), g.buf+512, 64), 1)
			expect(t, "readlinkat of no link with an empty path", g.call("readlinkat", atFDCWD64, g.path(2, ""), g.buf+512, 64), -eNOENT)
			off := 24
			if a.Name == "aarch64" {
				off = 16
			}
			if mode := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+uint64(off), 4)); mode&0o170000 != 0o120000 {
				t.Errorf("fstat of an O_PATH link: mode %#o", mode)
			}
			dir := g.open("/tmp", oPATH|g.p.abi.oDirectory, 0)
			if f := g.call("openat", uint64(dir), g.path(2, "f"), gWRONLY, 0); f < 0 {
				t.Errorf("open a file at an O_PATH dirfd = %d", f)
			}
			expect(t, "getdents64", g.call("getdents64", uint64(dir), g.buf, 4096), -eBADF)
			expect(t, "fchdir", g.call("fchdir", uint64(dir)), 0)
		})
	}
}

// TestPathEdgesMore: rename of a name ending in . or .. is EBUSY, unlink
// of a link to a directory with a trailing slash ENOTDIR (the link is no
// directory), a directory removed while open is ENOENT to getdents64 (Linux's IS_DEADDIR), /dev/tty is
// ENXIO (no controlling terminal), and the made /etc/passwd has nobody.
func TestPathEdgesMore(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o755), 0)
			expect(t, "rename d/.", g.call("renameat", atFDCWD64, g.path(2, "/tmp/d/."), atFDCWD64, g.path(3, "/tmp/x")), -eBUSY)
			expect(t, "rename onto d/..", g.call("renameat", atFDCWD64, g.path(2, "/tmp/d"), atFDCWD64, g.path(3, "/tmp/d/..")), -eBUSY)
			expect(t, "symlink", g.call("symlinkat", g.path(2, "d"), atFDCWD64, g.path(3, "/tmp/sd")), 0)
			expect(t, "unlink sd/", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/sd/"), 0), -eNOTDIR)
			dir := g.open("/tmp/d", gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "rmdir while open", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d"), 0x200), 0)
			expect(t, "getdents64 of a removed directory", g.call("getdents64", uint64(dir), g.buf, 4096), -eNOENT)
			expect(t, "/dev/tty", g.open("/dev/tty", gRDWR, 0), -eNXIO)
			fd := g.open("/etc/passwd", gRDONLY, 0)
			n := g.call("read", uint64(fd), g.buf, 4096)
			if got := string(readGuestBytes(t, g.p, g.buf, uint64(max(n, 0)))); !strings.Contains(got, "\nnobody:x:65534:65534:") {
				t.Errorf("made /etc/passwd: %q", got)
			}
			expect(t, "RLIMIT_CORE", g.call("prlimit64", 0, 4, 0, g.buf), 0)
			if cur := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf, 8)); cur != 0 {
				t.Errorf("RLIMIT_CORE soft %d, want 0", cur)
			}
		})
	}
}
