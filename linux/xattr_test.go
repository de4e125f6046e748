//go:build cgo

package linux

import (
	"encoding/binary"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestXattr: the guest's files have no extended attributes (an empty
// list, ENODATA), writes are refused as Linux refuses them on a read-only
// file system or a tmpfs without user attributes, and the path, name and
// descriptor errors come first, in Linux's order.
func TestXattr(t *testing.T) {
	dir, host := hostFile(t, "host\n")
	const outside = "/etc/passwd" // a file of the view outside the writable trees
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir, outside}})
			expect(t, "create", g.open("/tmp/a", oCREAT|gRDWR, 0o644), 3)
			tmp, view, user, trusted := g.path(0, "/tmp/a"), g.path(1, outside), g.path(2, "user.x"), g.path(3, "trusted.x")
			for _, v := range []string{"", "l"} {
				expect(t, v+"listxattr", g.call(v+"listxattr", tmp, g.buf, 100), 0)
				expect(t, v+"listxattr of the view", g.call(v+"listxattr", view, g.buf, 100), 0)
				expect(t, v+"getxattr", g.call(v+"getxattr", tmp, user, g.buf, 100), -eNODATA)
				expect(t, v+"setxattr", g.call(v+"setxattr", tmp, user, g.buf, 1, 0), -eOPNOTSUPP)
				expect(t, v+"setxattr trusted", g.call(v+"setxattr", tmp, trusted, g.buf, 1, 0), -ePERM)
				expect(t, v+"setxattr on the view", g.call(v+"setxattr", view, user, g.buf, 1, 0), -eROFS)
				expect(t, v+"setxattr below a writable tree", g.call(v+"setxattr", g.path(4, host), user, g.buf, 1, 0), -eOPNOTSUPP)
				expect(t, v+"removexattr", g.call(v+"removexattr", tmp, user), -eNODATA)
				expect(t, v+"removexattr on the view", g.call(v+"removexattr", view, user), -eROFS)
				expect(t, v+"listxattr of nothing", g.call(v+"listxattr", g.path(5, "/tmp/none"), g.buf, 100), -eNOENT)
				expect(t, v+"getxattr of an empty name", g.call(v+"getxattr", tmp, g.path(6, ""), g.buf, 100), -eRANGE)
				expect(t, v+"setxattr flags", g.call(v+"setxattr", tmp, user, g.buf, 1, 4), -eINVAL)
				expect(t, v+"setxattr too big", g.call(v+"setxattr", tmp, user, g.buf, 65537, 0), -eE2BIG)
			}
			expect(t, "flistxattr", g.call("flistxattr", 3, g.buf, 100), 0)
			expect(t, "fgetxattr", g.call("fgetxattr", 3, user, g.buf, 100), -eNODATA)
			expect(t, "fsetxattr", g.call("fsetxattr", 3, user, g.buf, 1, 0), -eOPNOTSUPP)
			expect(t, "fremovexattr", g.call("fremovexattr", 3, user), -eNODATA)
			expect(t, "flistxattr of a closed fd", g.call("flistxattr", 99, g.buf, 100), -eBADF)
		})
	}
}

// TestCPUTimes: times and getrusage give the CPU time the clocks give
// (the instructions executed), no children's, and EFAULT and EINVAL as
// Linux does.
func TestCPUTimes(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			ticks := g.call("times", g.buf)
			mono, _ := g.p.now(1)
			cpu, _ := g.p.now(2)
			if ticks != mono/1e7 {
				t.Errorf("times = %d, want the monotonic clock in ticks, %d", ticks, mono/1e7)
			}
			b := readGuestBytes(t, g.p, g.buf, 32)
			le := binary.LittleEndian
			if le.Uint64(b) != uint64(cpu)/1e7 || le.Uint64(b[8:]) != 0 || le.Uint64(b[16:]) != 0 || le.Uint64(b[24:]) != 0 {
				t.Errorf("tms %v, want utime %d and zeros", b, cpu/1e7)
			}
			expect(t, "times(NULL)", g.call("times", 0), ticks)
			expect(t, "times to unmapped memory", g.call("times", 8), -eFAULT)
			expect(t, "getrusage self", g.call("getrusage", 0, g.buf), 0)
			b = readGuestBytes(t, g.p, g.buf, 144)
			if sec, usec := le.Uint64(b), le.Uint64(b[8:]); sec*1e9+usec*1e3 != uint64(cpu)/1e3*1e3 || le.Uint64(b[32:]) == 0 {
				t.Errorf("rusage utime %d.%06d (cpu %d ns), maxrss %d", sec, usec, cpu, le.Uint64(b[32:]))
			}
			expect(t, "getrusage children", g.call("getrusage", ^uint64(0), g.buf), 0)
			// glibc on x86-64 sets only an int's 32 bits.
			expect(t, "getrusage children, 32 bits", g.call("getrusage", 0xffffffff, g.buf), 0)
			expect(t, "getpriority, high bits", g.call("getpriority", 1<<32, 0), 20)
			if b := readGuestBytes(t, g.p, g.buf, 144); string(b) != string(make([]byte, 144)) {
				t.Errorf("children's rusage %v, want zeros", b)
			}
			expect(t, "getrusage thread", g.call("getrusage", 1, g.buf), 0)
			expect(t, "getrusage who", g.call("getrusage", 2, g.buf), -eINVAL)
			expect(t, "getrusage to unmapped memory", g.call("getrusage", 0, 8), -eFAULT)
		})
	}
}

// TestMaxRSS: getrusage's ru_maxrss is the most memory the guest has held
// at once, not what it holds now: 8 MiB mapped, touched and unmapped
// again still count.
func TestMaxRSS(t *testing.T) {
	g := newGuest(t, arch.AMD64, Config{})
	maxrss := func() uint64 {
		expect(t, "getrusage", g.call("getrusage", 0, g.buf), 0)
		return binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+32, 8))
	}
	before := maxrss()
	const size = 8 << 20
	m := g.call("mmap", 0, size, 3, 0x22, 1<<64-1, 0)
	if m < 0 {
		t.Fatalf("mmap = %d", m)
	}
	expect(t, "munmap", g.call("munmap", uint64(m), size), 0)
	if after, now := maxrss(), g.p.vm.used()/1024; after < before+size/1024 || now >= after {
		t.Errorf("ru_maxrss %d KiB after 8 MiB mapped and unmapped (before %d, now held %d)", after, before, now)
	}
	// A file of the overlay written and removed counts too.
	peak := maxrss()
	fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
	expect(t, "ftruncate", g.call("ftruncate", uint64(fd), 2*size), 0)
	expect(t, "ftruncate to 0", g.call("ftruncate", uint64(fd), 0), 0)
	if got := maxrss(); got < 2*size/1024 || got < peak {
		t.Errorf("ru_maxrss %d KiB after a 16 MiB file was emptied (peak before %d)", got, peak)
	}
}
