//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// testdata/timerfd-x86_64 and timerfd-aarch64 are testdata/src/timerfd.c,
// built with
//
//	$ARCH-linux-gnu-gcc -O2 -static -pthread -Wa,--gsframe -o timerfd-$ARCH src/timerfd.c
//
// (gcc 12, glibc 2.36 of Debian bookworm, binutils 2.40), and
// testdata/timerfd-want.txt is what it prints, the same on x86-64 run
// natively (Linux 6.1 on the host) and on AArch64 under qemu-aarch64 7.2.

// TestTimerfd runs timerfd.c with several quanta: the host's output, and
// the same instruction count on a second run.
func TestTimerfd(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "timerfd-want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range threadArches {
		for _, q := range []uint64{0, 1000, 37} {
			t.Run(fmt.Sprintf("%s/quantum=%d", a, q), func(t *testing.T) {
				run := func() (string, *Exit) {
					out, x, p := runGuest(t, filepath.Join("testdata", "timerfd-"+a), Config{Quantum: q, MaxInsns: 50_000_000})
					p.Close()
					return out, x
				}
				out, x := run()
				if x.Reason != StopExited || x.Status != 0 || out != string(want) {
					t.Fatalf("exit %v (%s)\noutput:\n%s\nwant:\n%s", x.Reason, x, out, want)
				}
				if out2, x2 := run(); out2 != out || x2.Insns != x.Insns {
					t.Errorf("second run: %d instructions, %d before", x2.Insns, x.Insns)
				}
			})
		}
	}
}

// TestTimerfdCalls checks what the program cannot: the _ALARM clocks
// (EPERM without CAP_WAKE_ALARM, which the host's root has), the order of
// the errors, an EFAULT that still takes the expirations, and
// timerfd_gettime of a periodic timer that fired, which starts it again
// with the periods it missed kept for the read; and the calls of a
// stream that an anonymous inode answers otherwise.
func TestTimerfdCalls(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "REALTIME_ALARM", g.call("timerfd_create", 8, 0), -ePERM)
			expect(t, "BOOTTIME_ALARM", g.call("timerfd_create", 9, 0), -ePERM)
			expect(t, "CLOCK_TAI", g.call("timerfd_create", 11, 0), -eINVAL)
			fd := g.call("timerfd_create", 1, oNONBLOCK)
			if fd < 0 {
				t.Fatalf("timerfd_create = %d", fd)
			}
			spec := func(interval, value int64) uint64 {
				if err := g.p.Engine.WriteMem(g.buf, itimerspec(interval, value)); err != nil {
					t.Fatal(err)
				}
				return g.buf
			}
			expect(t, "bad new value before a bad descriptor", g.call("timerfd_settime", 99, 0, 8), -eFAULT)
			expect(t, "bad flags before a bad descriptor", g.call("timerfd_settime", 99, 8, spec(0, 1)), -eINVAL)
			// A bad old-value address: the new setting takes effect all
			// the same.
			expect(t, "bad old value", g.call("timerfd_settime", uint64(fd), 0, spec(1000, 1000), 8), -eFAULT)
			g.p.sleep += 5500 // 5.5 periods
			expect(t, "gettime", g.call("timerfd_gettime", uint64(fd), g.buf), 0)
			b := readGuestBytes(t, g.p, g.buf, 32)
			if iv, v := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[24:]); iv != 1000 || v != 500 {
				t.Errorf("gettime after 5.5 periods: interval %d ns, value %d ns, want 1000 and 500", iv, v)
			}
			expect(t, "read into a bad buffer", g.call("read", uint64(fd), 8, 8), -eFAULT)
			expect(t, "then nothing to read", g.call("read", uint64(fd), g.buf, 8), -eAGAIN)
			g.p.sleep += 2000
			expect(t, "read", g.call("read", uint64(fd), g.buf, 8), 8)
			if n := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf, 8)); n != 2 {
				t.Errorf("expirations after two more periods: %d, want 2", n)
			}
			// readv: its first non-empty iovec is the buffer.
			iov := make([]byte, 48)
			binary.LittleEndian.PutUint64(iov[16:], g.buf+256)
			binary.LittleEndian.PutUint64(iov[24:], 16)
			if err := g.p.Engine.WriteMem(g.buf+128, iov); err != nil {
				t.Fatal(err)
			}
			expect(t, "readv, nothing yet", g.call("readv", uint64(fd), g.buf+128, 3), -eAGAIN)
			g.p.sleep += 1000
			expect(t, "readv", g.call("readv", uint64(fd), g.buf+128, 3), 8)
			if n := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+256, 8)); n != 1 {
				t.Errorf("readv: %d expirations, want 1", n)
			}
			// An anonymous inode: no pread (ESPIPE), lseek does nothing
			// (noop_llseek), no write.
			expect(t, "pread", g.call("pread64", uint64(fd), g.buf, 8, 0), -eSPIPE)
			expect(t, "lseek", g.call("lseek", uint64(fd), 100, 0), 0)
			expect(t, "write", g.call("write", uint64(fd), g.buf, 8), -eINVAL)
			expect(t, "writev", g.call("writev", uint64(fd), g.buf, 1), -eINVAL)
			expect(t, "fallocate", g.call("fallocate", uint64(fd), 0, 0, 1), -eNODEV)
			expect(t, "not a timerfd", g.call("timerfd_gettime", 1, g.buf), -eINVAL)
			expect(t, "closed", g.call("close", uint64(fd)), 0)
			expect(t, "gettime of a closed one", g.call("timerfd_gettime", uint64(fd), g.buf), -eBADF)
		})
	}
}

// TestCloseOnExec checks FD_CLOEXEC: set by the O_CLOEXEC (or
// MFD_CLOEXEC) of every call that makes a descriptor, by dup3 and
// F_DUPFD_CLOEXEC, clear after dup, dup2 and a close, changed by
// F_SETFD, and kept by a checkpoint.
func TestCloseOnExec(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			s := NewSession(g.p)
			getfd := func(fd int64) int64 { return g.call("fcntl", uint64(fd), 1) }
			fd := g.open("/tmp/f", oCREAT|gRDWR|oCLOEXEC, 0o644)
			expect(t, "open O_CLOEXEC", getfd(fd), 1)
			plain := g.open("/tmp/f", gRDONLY, 0)
			expect(t, "open", getfd(plain), 0)
			d := g.call("dup", uint64(fd))
			expect(t, "dup", getfd(d), 0)
			expect(t, "dup3 O_CLOEXEC", g.call("dup3", uint64(plain), 20, oCLOEXEC), 20)
			expect(t, "  flag", getfd(20), 1)
			expect(t, "dup2 over it", g.call("dup2", uint64(plain), 20), 20)
			expect(t, "  flag", getfd(20), 0)
			expect(t, "F_DUPFD_CLOEXEC", g.call("fcntl", uint64(plain), 1030, 30), 30)
			expect(t, "  flag", getfd(30), 1)
			expect(t, "F_SETFD 0", g.call("fcntl", 30, 2, 0), 0)
			expect(t, "  flag", getfd(30), 0)
			expect(t, "F_SETFD FD_CLOEXEC", g.call("fcntl", uint64(plain), 2, 1), 0)
			expect(t, "  flag", getfd(plain), 1)
			expect(t, "close", g.call("close", uint64(fd)), 0)
			expect(t, "reopened in its place", g.open("/tmp/f", gRDONLY, 0), fd)
			expect(t, "  flag", getfd(fd), 0)
			expect(t, "pipe2 O_CLOEXEC", g.call("pipe2", g.buf, oCLOEXEC), 0)
			ends := readGuestBytes(t, g.p, g.buf, 8)
			for _, e := range []uint32{binary.LittleEndian.Uint32(ends), binary.LittleEndian.Uint32(ends[4:])} {
				expect(t, "  pipe end's flag", getfd(int64(e)), 1)
			}
			for name, fd := range map[string]int64{
				"epoll_create1": g.call("epoll_create1", oCLOEXEC),
				"eventfd2":      g.call("eventfd2", 0, oCLOEXEC),
				"timerfd":       g.call("timerfd_create", 1, oCLOEXEC),
				"memfd_create":  g.call("memfd_create", g.path(3, "m"), 1),
				"signalfd4":     g.call("signalfd4", ^uint64(0), g.path(4, "\x01\x00\x00\x00\x00\x00\x00"), 8, oCLOEXEC),
			} {
				if fd < 0 {
					t.Errorf("%s = %d", name, fd)
					continue
				}
				expect(t, name, getfd(fd), 1)
			}
			c, err := s.Checkpoint(nil)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, "F_SETFD 0", g.call("fcntl", uint64(plain), 2, 0), 0)
			if err := s.Restore(c); err != nil {
				t.Fatal(err)
			}
			expect(t, "restored flag", getfd(plain), 1)
		})
	}
}

// TestDevices: /dev/null, zero, full and urandom, opened, read, written,
// stat'ed and mapped as Linux's; /dev/stdout and /proc/self/fd/N open the
// descriptor's file.
func TestDevices(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			null := g.open("/dev/null", gRDWR, 0)
			if null < 0 {
				t.Fatalf("open /dev/null = %d", null)
			}
			expect(t, "read null", g.call("read", uint64(null), g.buf, 16), 0)
			expect(t, "write null, a bad buffer", g.call("write", uint64(null), 8, 3), 3)
			expect(t, "pwrite null", g.call("pwrite64", uint64(null), g.buf, 5, 100), 5)
			expect(t, "lseek null", g.call("lseek", uint64(null), 100, 0), 0)
			expect(t, "epoll_ctl null", g.call("epoll_ctl", uint64(g.call("epoll_create1", 0)), 1, uint64(null), g.buf), -ePERM)
			expect(t, "mmap null", g.call("mmap", 0, 4096, 1, 2, uint64(null), 0), -eNODEV)
			mode, _, _ := g.stat("/dev/null", true)
			expect(t, "stat /dev/null mode", mode, 0o020666)
			expect(t, "access X_OK", g.call("faccessat", atFDCWD64, g.path(2, "/dev/null"), 1), -eACCES)
			expect(t, "O_CREAT|O_EXCL", g.open("/dev/null", oCREAT|oEXCL|gRDWR, 0o644), -eEXIST)
			zero := g.open("/dev/zero", gRDONLY, 0)
			if err := g.p.Engine.WriteMem(g.buf, []byte("xxxxxxxx")); err != nil {
				t.Fatal(err)
			}
			expect(t, "read zero", g.call("read", uint64(zero), g.buf, 8), 8)
			if b := readGuestBytes(t, g.p, g.buf, 8); string(b) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
				t.Errorf("read of /dev/zero: %q", b)
			}
			if m := g.call("mmap", 0, 8192, 3, 2, uint64(zero), 0); m < 0 {
				t.Errorf("mmap /dev/zero = %d", m)
			}
			expect(t, "write full", g.call("write", uint64(g.open("/dev/full", gWRONLY, 0)), g.buf, 1), -eNOSPC)
			expect(t, "read urandom", g.call("read", uint64(g.open("/dev/urandom", gRDONLY, 0)), g.buf, 32), 32)
			out := g.open("/dev/stdout", gWRONLY, 0)
			if out < 0 || g.p.fds[int(out)] != g.p.fds[1] {
				t.Errorf("open /dev/stdout = %d, not fd 1's file", out)
			}
			if fd := g.open(fmt.Sprintf("/proc/self/fd/%d", zero), gRDONLY, 0); fd < 0 || g.p.fds[int(fd)] != g.p.fds[int(zero)] {
				t.Errorf("open /proc/self/fd/%d = %d", zero, fd)
			}
			expect(t, "a closed descriptor", g.open("/dev/fd/99", gRDONLY, 0), -eNOENT)
			// A regular file is opened anew: its own offset and access.
			f := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			expect(t, "write", g.write(f, "hello"), 5)
			again := g.open(fmt.Sprintf("/proc/self/fd/%d", f), gRDONLY, 0)
			if again < 0 || g.p.fds[int(again)] == g.p.fds[int(f)] {
				t.Fatalf("reopen = %d, the same open file", again)
			}
			expect(t, "read from its own offset", g.call("read", uint64(again), g.buf, 16), 5)
			expect(t, "write to a read-only reopen", g.call("write", uint64(again), g.buf, 1), -eBADF)
			expect(t, "the first offset stays", g.call("lseek", uint64(f), 0, 1), 5)
		})
	}
}
