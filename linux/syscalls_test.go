//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestSyscallNames checks the generated tables (zsysnum_*.go) against
// numbers known from the kernel's syscall tables.
func TestSyscallNames(t *testing.T) {
	for _, c := range []struct {
		a    *arch.Arch
		nr   uint64
		name string
	}{
		{arch.AMD64, 0, "read"}, {arch.AMD64, 59, "execve"}, {arch.AMD64, 231, "exit_group"},
		{arch.AMD64, 158, "arch_prctl"}, {arch.AMD64, 334, "rseq"}, {arch.AMD64, 435, "clone3"},
		{arch.AMD64, 462, "mseal"}, {arch.AMD64, 1000, ""},
		{arch.ARM64, 63, "read"}, {arch.ARM64, 221, "execve"}, {arch.ARM64, 94, "exit_group"},
		{arch.ARM64, 79, "newfstatat"}, {arch.ARM64, 293, "rseq"}, {arch.ARM64, 435, "clone3"},
		{arch.ARM64, 462, "mseal"}, {arch.ARM64, 1000, ""},
		// __NR_arch_specific_syscall, where an architecture's own calls
		// would start: arm64 has none.
		{arch.ARM64, 244, ""},
	} {
		if got := SyscallName(c.a, c.nr); got != c.name {
			t.Errorf("%s %d: %q, want %q", c.a.Name, c.nr, got, c.name)
		}
	}
}

// amd64Only are the handled calls AArch64 does not have: x86-64's own
// arch_prctl, and the older calls the generic table leaves out.
var amd64Only = map[string]bool{
	"arch_prctl": true, "access": true, "dup2": true, "getpgrp": true, "lstat": true,
	"open": true, "readlink": true, "stat": true, "time": true,
	"creat": true, "mkdir": true, "mknod": true, "rmdir": true, "unlink": true, "symlink": true, "link": true,
	"rename": true, "chmod": true, "chown": true, "lchown": true,
	"pipe": true, "select": true, "signalfd": true, "poll": true, "alarm": true, "pause": true,
	"epoll_create": true, "epoll_wait": true, "eventfd": true, "inotify_init": true,
	"utime": true, "utimes": true, "futimesat": true,
}

// TestHandlersHaveNumbers checks that every call the dispatcher handles has
// a number in the generated tables, so a handler is never unreachable.
func TestHandlersHaveNumbers(t *testing.T) {
	for _, c := range []struct {
		a    *arch.Arch
		skip map[string]bool
	}{{arch.AMD64, nil}, {arch.ARM64, amd64Only}} {
		have := map[string]bool{}
		for _, name := range abiFor(c.a).names {
			have[name] = true
		}
		for name := range handlers {
			switch {
			case !have[name] && !c.skip[name]:
				t.Errorf("%s: handler %q has no system call number", c.a.Name, name)
			case have[name] && c.skip[name]:
				t.Errorf("%s: %q is listed as x86-64 only, but has a number", c.a.Name, name)
			}
		}
		for name := range c.skip {
			if handlers[name] == nil {
				t.Errorf("%s: %q is listed as x86-64 only, but has no handler", c.a.Name, name)
			}
		}
	}
}

// TestENOSYS: the calls glibc and gnulib cope without are answered with
// ENOSYS instead of stopping the run: statx, rseq, membarrier; and features a kernel may lack, which their callers probe
// for: inotify, io_uring, openat2, pidfd_open, futex_waitv, Landlock,
// memfd_secret, NUMA memory policies.
func TestENOSYS(t *testing.T) {
	g := newGuest(t, arch.AMD64, Config{})
	for _, name := range []string{"statx", "rseq", "membarrier",
		"inotify_init", "inotify_init1", "io_uring_setup", "openat2", "pidfd_open", "futex_waitv", "landlock_create_ruleset", "memfd_secret",
		"get_mempolicy", "set_mempolicy", "mbind", "migrate_pages", "move_pages", "set_mempolicy_home_node"} {
		if handlers[name] == nil {
			t.Errorf("%s: no handler: the run would stop", name)
			continue
		}
		expect(t, name, g.call(name, 0, g.buf), -eNOSYS)
	}
}

// TestCString: strings read from guest memory end at their NUL, read
// piece by piece within pages: one ending at a page's last byte before an
// unmapped page is whole; one running into it is EFAULT; a path of 4096
// bytes without a NUL is ENAMETOOLONG; cstringMax stops after max bytes.
func TestCString(t *testing.T) {
	g := newGuest(t, arch.AMD64, Config{})
	base := uint64(g.call("mmap", 0, 2*4096, 3, 0x22, 1<<64-1, 0))
	if int64(base) < 0 {
		t.Fatalf("mmap = %d", int64(base))
	}
	expect(t, "munmap", g.call("munmap", base+4096, 4096), 0)
	put := func(addr uint64, b []byte) {
		if err := g.p.Engine.WriteMem(addr, b); err != nil {
			t.Fatal(err)
		}
	}
	long := bytes.Repeat([]byte{'a'}, 4096)
	put(base, long)
	put(base+4095, []byte{0})
	if s, e := g.p.cstring(base + 4000); e != 0 || s != string(long[:95]) {
		t.Errorf("string ending at the page's last byte: %q, %d", s, e)
	}
	put(base+4095, []byte{'b'})
	if _, e := g.p.cstring(base + 4000); e != eFAULT {
		t.Errorf("string running into an unmapped page: errno %d, want EFAULT", e)
	}
	if s, e := g.p.cstringMax(base+4000, 10); e != 0 || s != string(long[:10]) {
		t.Errorf("cstringMax: %q, %d", s, e)
	}
	big := uint64(g.call("mmap", 0, 3*4096, 3, 0x22, 1<<64-1, 0))
	put(big, bytes.Repeat([]byte{'c'}, 3*4096))
	if _, e := g.p.cstring(big + 100); e != eNAMETOOLONG {
		t.Errorf("4096 bytes without a NUL: errno %d, want ENAMETOOLONG", e)
	}
	put(big+100+4095, []byte{0})
	if s, e := g.p.cstring(big + 100); e != 0 || len(s) != 4095 {
		t.Errorf("4095 bytes and a NUL across pages: %d bytes, errno %d", len(s), e)
	}
	if _, e := g.p.cstring(8); e != eFAULT {
		t.Errorf("unmapped: errno %d, want EFAULT", e)
	}
}

// TestCapabilityCalls: the calls that need a capability the guest (uid
// 1000) lacks are EPERM, as natively (Debian 12 as uid 1000, with
// kernel.dmesg_restrict=1), after the checks Linux makes first: chroot's
// path (ENOENT, ENOTDIR), umount2's flags (EINVAL). Before, each stopped
// the run: busybox's dmesg, for one.
func TestCapabilityCalls(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			for _, name := range capDenied {
				expect(t, name, g.call(name, 0, 0, 0), -ePERM)
			}
			expect(t, "syslog READ_ALL", g.call("syslog", 3, g.buf, 64), -ePERM)
			expect(t, "chroot /", g.call("chroot", g.path(0, "/")), -ePERM)
			expect(t, "chroot /tmp", g.call("chroot", g.path(0, "/tmp")), -ePERM)
			expect(t, "chroot of a missing path", g.call("chroot", g.path(0, "/nonexistent")), -eNOENT)
			g.call("close", uint64(g.open("/tmp/f", oCREAT|gWRONLY, 0o644)))
			expect(t, "chroot of a file", g.call("chroot", g.path(0, "/tmp/f")), -eNOTDIR)
			expect(t, "chroot /proc", g.call("chroot", g.path(0, "/proc")), -ePERM)
			expect(t, "chroot /proc/self/maps", g.call("chroot", g.path(0, "/proc/self/maps")), -eNOTDIR)
			expect(t, "chroot /etc/passwd", g.call("chroot", g.path(0, "/etc/passwd")), -eNOTDIR)
			expect(t, "umount2", g.call("umount2", g.path(0, "/tmp"), 0), -ePERM)
			expect(t, "umount2 bad flags", g.call("umount2", g.path(0, "/tmp"), 0x100), -eINVAL)
			if g.p.exit != nil {
				t.Errorf("the run stopped: %v", g.p.exit)
			}
		})
	}
}

// TestClockDiscipline: adjtimex and clock_adjtime read the state of a
// clock no NTP daemon disciplines (TIME_ERROR, STA_UNSYNC, the largest
// error, the fake clock's time), and setting it or the time is EPERM after
// Linux's checks; the values and errors are what a C program got natively
// as uid 1000 on an unsynchronized Linux 6.18, x86-64 and qemu-aarch64.
// Before, all four stopped the run.
func TestClockDiscipline(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			zero := make([]byte, 208)
			timex := func(modes uint32) uint64 {
				b := append([]byte(nil), zero...)
				binary.LittleEndian.PutUint32(b, modes)
				if err := g.p.Engine.WriteMem(g.buf, b); err != nil {
					t.Fatal(err)
				}
				return g.buf
			}
			expect(t, "adjtimex", g.call("adjtimex", timex(0)), 5)
			b := readGuestBytes(t, g.p, g.buf, 208)
			le := binary.LittleEndian
			now, _ := g.p.now(0)
			for _, c := range []struct {
				name string
				off  int
				want uint64
			}{{"maxerror", 24, 16_000_000}, {"esterror", 32, 16_000_000}, {"constant", 48, 2}, {"precision", 56, 1},
				{"tolerance", 64, 32_768_000}, {"tick", 88, 10000}, {"time", 72, uint64(now / 1e9)}} {
				if got := le.Uint64(b[c.off:]); got != c.want {
					t.Errorf("%s %d, want %d", c.name, got, c.want)
				}
			}
			if status := le.Uint32(b[40:]); status != 0x40 {
				t.Errorf("status %#x, want STA_UNSYNC", status)
			}
			expect(t, "ADJ_OFFSET_SS_READ", g.call("adjtimex", timex(0xa001)), 5)
			expect(t, "ADJ_FREQUENCY", g.call("adjtimex", timex(0x2)), -ePERM)
			expect(t, "ADJ_ADJTIME alone", g.call("adjtimex", timex(0x8000)), -eINVAL)
			expect(t, "clock_adjtime REALTIME", g.call("clock_adjtime", 0, timex(0)), 5)
			expect(t, "clock_adjtime MONOTONIC", g.call("clock_adjtime", 1, timex(0)), -eOPNOTSUPP)
			expect(t, "clock_adjtime 99", g.call("clock_adjtime", 99, timex(0)), -eINVAL)
			expect(t, "adjtimex bad address", g.call("adjtimex", 8), -eFAULT)
			ts := func(sec, frac int64) uint64 {
				var b [16]byte
				le.PutUint64(b[:], uint64(sec))
				le.PutUint64(b[8:], uint64(frac))
				if err := g.p.Engine.WriteMem(g.buf, b[:]); err != nil {
					t.Fatal(err)
				}
				return g.buf
			}
			expect(t, "clock_settime", g.call("clock_settime", 0, ts(1, 0)), -ePERM)
			expect(t, "clock_settime MONOTONIC", g.call("clock_settime", 1, ts(1, 0)), -eINVAL)
			expect(t, "clock_settime bad", g.call("clock_settime", 0, ts(1, 2e9)), -eINVAL)
			expect(t, "settimeofday", g.call("settimeofday", ts(1, 0), 0), -ePERM)
			expect(t, "settimeofday bad", g.call("settimeofday", ts(1, 2e6), 0), -eINVAL)
			if g.p.exit != nil {
				t.Errorf("the run stopped: %v", g.p.exit)
			}
		})
	}
}
