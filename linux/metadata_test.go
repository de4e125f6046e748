//go:build cgo

package linux

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
)

// statTime returns the access and modification times of path
// (newfstatat, following links): seconds and nanoseconds.
func (g *guest) statTime(path string) [2]timespec {
	g.t.Helper()
	if r := g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, 0); r != 0 {
		g.t.Fatalf("newfstatat %s = %d", path, r)
	}
	b := readGuestBytes(g.t, g.p, g.buf, 104)
	le := binary.LittleEndian
	return [2]timespec{
		{int64(le.Uint64(b[72:])), int64(le.Uint64(b[80:]))},
		{int64(le.Uint64(b[88:])), int64(le.Uint64(b[96:]))},
	}
}

// readOnlyHostFile returns a host file outside the overlay's writable
// trees (/tmp and the working directory), for --allow-read.
func readOnlyHostFile(t *testing.T) string {
	const f = "/etc/passwd"
	if _, err := os.Stat(f); err != nil {
		t.Fatal(err)
	}
	return f
}

// putTimes writes two struct timespec at g.buf+8192.
func (g *guest) putTimes(t [2]timespec) uint64 {
	b := make([]byte, 0, 32)
	for _, x := range t {
		b = binary.LittleEndian.AppendUint64(b, uint64(x.sec))
		b = binary.LittleEndian.AppendUint64(b, uint64(x.nsec))
	}
	if err := g.p.Engine.WriteMem(g.buf+8192, b); err != nil {
		g.t.Fatal(err)
	}
	return g.buf + 8192
}

// TestUtimensat: times set on the overlay's files show in stat, with
// UTIME_NOW (the fake clock) and UTIME_OMIT, through a path, a
// descriptor (futimens) and AT_EMPTY_PATH; the view's files are
// read-only; bad arguments fail as on Linux.
func TestUtimensat(t *testing.T) {
	host := readOnlyHostFile(t)
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{host}})
			fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			if fd < 0 {
				t.Fatalf("open = %d", fd)
			}
			if got := g.statTime("/tmp/f"); got != [2]timespec{{epoch, 0}, {epoch, 0}} {
				t.Errorf("new file: %v, want the fake clock's start", got)
			}
			set := [2]timespec{{1_600_000_000, 5}, {1_700_000_000, 999_999_999}}
			expect(t, "utimensat", g.call("utimensat", atFDCWD64, g.path(2, "/tmp/f"), g.putTimes(set), 0), 0)
			if got := g.statTime("/tmp/f"); got != set {
				t.Errorf("after utimensat: %v, want %v", got, set)
			}
			// futimens: the access time now, the modification time kept.
			expect(t, "futimens", g.call("utimensat", uint64(fd), 0, g.putTimes([2]timespec{{0, utimeNow}, {7, utimeOmit}}), 0), 0)
			now, _ := g.p.now(0)
			got := g.statTime("/tmp/f")
			if got[1] != set[1] || got[0].sec < epoch || got[0].sec*1e9+got[0].nsec > now {
				t.Errorf("after UTIME_NOW/UTIME_OMIT: %v (now %d ns)", got, now)
			}
			// NULL times: both now.
			expect(t, "AT_EMPTY_PATH", g.call("utimensat", uint64(fd), g.path(2, ""), 0, atEmptyPath), 0)
			if got := g.statTime("/tmp/f"); got[1] == set[1] {
				t.Errorf("NULL times left mtime %v", got[1])
			}
			expect(t, "both UTIME_OMIT, no such file", g.call("utimensat", atFDCWD64, g.path(2, "/tmp/none"), g.putTimes([2]timespec{{0, utimeOmit}, {0, utimeOmit}}), 0), 0)
			expect(t, "no such file", g.call("utimensat", atFDCWD64, g.path(2, "/tmp/none"), 0, 0), -eNOENT)
			expect(t, "a file of the view", g.call("utimensat", atFDCWD64, g.path(2, host), 0, 0), -eROFS)
			expect(t, "tv_nsec out of range", g.call("utimensat", atFDCWD64, g.path(2, "/tmp/f"), g.putTimes([2]timespec{{0, 1e9}, {0, 0}}), 0), -eINVAL)
			expect(t, "unknown flags", g.call("utimensat", atFDCWD64, g.path(2, "/tmp/f"), 0, 1), -eINVAL)
			expect(t, "NULL path at AT_FDCWD", g.call("utimensat", atFDCWD64, 0, 0, 0), -eFAULT)
			expect(t, "bad descriptor", g.call("utimensat", 77, 0, 0, 0), -eBADF)
			expect(t, "NULL path with flags", g.call("utimensat", uint64(fd), 0, 0, atSymlinkNofollow), -eINVAL)
			expect(t, "both UTIME_OMIT, bad flags", g.call("utimensat", uint64(fd), 0, g.putTimes([2]timespec{{0, utimeOmit}, {0, utimeOmit}}), 1), 0)
			expect(t, "stdout", g.call("utimensat", 1, 0, 0, 0), 0)
		})
	}
}

// TestChownFadviseGroupsSysinfo: chown only to the guest's own ids;
// fadvise64 on files but not pipes; no supplementary groups; sysinfo
// from the memory cap.
func TestChownFadviseGroupsSysinfo(t *testing.T) {
	host := readOnlyHostFile(t)
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{host}, MaxMem: 256 << 20})
			fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			if fd < 0 {
				t.Fatalf("open = %d", fd)
			}
			const none = 1<<32 - 1 // -1: unchanged
			expect(t, "fchown to itself", g.call("fchown", uint64(fd), guestUID, guestGID), 0)
			expect(t, "fchown unchanged", g.call("fchown", uint64(fd), none, none), 0)
			expect(t, "fchown to root", g.call("fchown", uint64(fd), 0, none), -ePERM)
			expect(t, "fchown to another group", g.call("fchown", uint64(fd), none, 27), -ePERM)
			expect(t, "fchownat", g.call("fchownat", atFDCWD64, g.path(2, "/tmp/f"), guestUID, none, 0), 0)
			expect(t, "fchownat, no such file", g.call("fchownat", atFDCWD64, g.path(2, "/tmp/none"), guestUID, none, 0), -eNOENT)
			expect(t, "fchownat, a file of the view", g.call("fchownat", atFDCWD64, g.path(2, host), guestUID, none, 0), -eROFS)
			expect(t, "fchownat, unknown flags", g.call("fchownat", atFDCWD64, g.path(2, "/tmp/f"), guestUID, none, 1), -eINVAL)
			expect(t, "fchown, bad descriptor", g.call("fchown", 77, guestUID, none), -eBADF)

			expect(t, "fadvise64", g.call("fadvise64", uint64(fd), 0, 0, 2), 0)
			expect(t, "fadvise64 on stdin", g.call("fadvise64", 0, 0, 0, 2), -eSPIPE)
			expect(t, "fadvise64, unknown advice", g.call("fadvise64", uint64(fd), 0, 0, 6), -eINVAL)
			expect(t, "fadvise64, advice an int", g.call("fadvise64", uint64(fd), 0, 0, 1<<32|2), 0)
			expect(t, "fadvise64, bad descriptor", g.call("fadvise64", 77, 0, 0, 0), -eBADF)

			expect(t, "getgroups", g.call("getgroups", 0, 0), 0)
			expect(t, "getgroups(-1)", g.call("getgroups", 1<<32-1, g.buf), -eINVAL)

			expect(t, "sysinfo", g.call("sysinfo", g.buf), 0)
			b := readGuestBytes(t, g.p, g.buf, 112)
			le := binary.LittleEndian
			total, free := le.Uint64(b[32:]), le.Uint64(b[40:])
			if up := le.Uint64(b[0:]); up < 1000 || total != 256<<20 || free == 0 || free >= total || le.Uint16(b[80:]) != 1 || le.Uint32(b[104:]) != 1 {
				t.Errorf("sysinfo: uptime %d, totalram %d, freeram %d, procs %d, mem_unit %d", up, total, free, le.Uint16(b[80:]), le.Uint32(b[104:]))
			}
			expect(t, "sysinfo, bad address", g.call("sysinfo", 8), -eFAULT)
		})
	}
}

// TestOlderUtimes: utime, utimes and futimesat (x86-64 only) set the
// times utimensat does, in seconds and microseconds.
func TestOlderUtimes(t *testing.T) {
	g := newGuest(t, arch.AMD64, Config{})
	fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
	if fd < 0 {
		t.Fatalf("open = %d", fd)
	}
	le := binary.LittleEndian
	put := func(v ...uint64) uint64 {
		var b []byte
		for _, x := range v {
			b = le.AppendUint64(b, x)
		}
		if err := g.p.Engine.WriteMem(g.buf+8192, b); err != nil {
			t.Fatal(err)
		}
		return g.buf + 8192
	}
	expect(t, "utime", g.call("utime", g.path(2, "/tmp/f"), put(1_600_000_000, 1_600_000_001)), 0)
	if got, want := g.statTime("/tmp/f"), [2]timespec{{1_600_000_000, 0}, {1_600_000_001, 0}}; got != want {
		t.Errorf("after utime: %v, want %v", got, want)
	}
	expect(t, "utimes", g.call("utimes", g.path(2, "/tmp/f"), put(1_700_000_000, 5, 1_700_000_001, 999_999)), 0)
	if got, want := g.statTime("/tmp/f"), [2]timespec{{1_700_000_000, 5000}, {1_700_000_001, 999_999_000}}; got != want {
		t.Errorf("after utimes: %v, want %v", got, want)
	}
	expect(t, "futimesat of the descriptor", g.call("futimesat", uint64(fd), 0, put(7, 0, 8, 0)), 0)
	if got, want := g.statTime("/tmp/f"), [2]timespec{{7, 0}, {8, 0}}; got != want {
		t.Errorf("after futimesat: %v, want %v", got, want)
	}
	expect(t, "futimesat at a directory", g.call("futimesat", uint64(g.open("/tmp", 0, 0)), g.path(2, "f"), put(9, 0, 10, 0)), 0)
	if got, want := g.statTime("/tmp/f"), [2]timespec{{9, 0}, {10, 0}}; got != want {
		t.Errorf("after futimesat: %v, want %v", got, want)
	}
	expect(t, "utime now", g.call("utime", g.path(2, "/tmp/f"), 0), 0)
	if got := g.statTime("/tmp/f"); got[0].sec < epoch || got[1].sec < epoch {
		t.Errorf("utime(NULL) gave %v, want now (after %d)", got, epoch)
	}
	expect(t, "utimes, microseconds out of range", g.call("utimes", g.path(2, "/tmp/f"), put(1, 1_000_000, 1, 0)), -eINVAL)
	expect(t, "utimes, negative microseconds", g.call("utimes", g.path(2, "/tmp/f"), put(1, 0, 1, 1<<64-1)), -eINVAL)
	expect(t, "utime, no such file", g.call("utime", g.path(2, "/tmp/none"), 0), -eNOENT)
	expect(t, "utime, NULL path", g.call("utime", 0, 0), -eFAULT)
	expect(t, "utimes, bad times", g.call("utimes", g.path(2, "/tmp/f"), 8), -eFAULT)
	expect(t, "futimesat, bad descriptor", g.call("futimesat", 77, 0, 0), -eBADF)
}

// TestFallocate: fallocate grows a file of the overlay with zeros, keeps
// its size with FALLOC_FL_KEEP_SIZE, zeroes a range or punches a hole,
// and fails as Linux elsewhere.
func TestFallocate(t *testing.T) {
	host := readOnlyHostFile(t)
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{host}, MaxMem: 64 << 20})
			fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			if fd < 0 {
				t.Fatalf("open = %d", fd)
			}
			size := func() uint64 {
				_, n, _ := g.stat("/tmp/f", true)
				return n
			}
			expect(t, "write", g.write(fd, "abcdefgh"), 8)
			expect(t, "fallocate", g.call("fallocate", uint64(fd), 0, 4, 12), 0)
			if n := size(); n != 16 {
				t.Errorf("size after fallocate(4, 12) = %d, want 16", n)
			}
			if got := g.pread(fd, 0, 32); got != "abcdefgh\x00\x00\x00\x00\x00\x00\x00\x00" {
				t.Errorf("contents %q", got)
			}
			expect(t, "inside the file", g.call("fallocate", uint64(fd), 0, 0, 4), 0)
			expect(t, "KEEP_SIZE", g.call("fallocate", uint64(fd), fallocKeepSize, 0, 1<<20), 0)
			if n := size(); n != 16 {
				t.Errorf("size after KEEP_SIZE = %d, want 16", n)
			}
			expect(t, "PUNCH_HOLE|KEEP_SIZE", g.call("fallocate", uint64(fd), fallocPunchHole|fallocKeepSize, 1, 2), 0)
			expect(t, "ZERO_RANGE past the end", g.call("fallocate", uint64(fd), fallocZeroRange, 6, 14), 0)
			if got := g.pread(fd, 0, 32); got != "a\x00\x00defgh"[:6]+strings.Repeat("\x00", 14) {
				t.Errorf("contents after the hole and the zeroed range: %q", got)
			}
			expect(t, "PUNCH_HOLE without KEEP_SIZE", g.call("fallocate", uint64(fd), fallocPunchHole, 0, 1), -eOPNOTSUPP)
			expect(t, "COLLAPSE_RANGE", g.call("fallocate", uint64(fd), 0x08, 0, 4096), -eOPNOTSUPP)
			expect(t, "zero length", g.call("fallocate", uint64(fd), 0, 0, 0), -eINVAL)
			expect(t, "negative offset", g.call("fallocate", uint64(fd), 0, 1<<63, 1), -eINVAL)
			expect(t, "past the largest size", g.call("fallocate", uint64(fd), 0, 1<<62, 1<<62), -eFBIG)
			expect(t, "past the memory cap", g.call("fallocate", uint64(fd), 0, 0, 1<<30), -eNOSPC)
			expect(t, "bad descriptor", g.call("fallocate", 77, 0, 0, 1), -eBADF)
			ro := g.open(host, gRDONLY, 0)
			expect(t, "read-only descriptor", g.call("fallocate", uint64(ro), 0, 0, 1), -eBADF)
			expect(t, "directory", g.call("fallocate", uint64(g.open("/tmp", 0, 0)), 0, 0, 1), -eISDIR)
			expect(t, "pipe", g.call("pipe2", g.buf, 0), 0)
			w := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+4, 4))
			expect(t, "pipe", g.call("fallocate", uint64(w), 0, 0, 1), -eSPIPE)
			if n := size(); n != 20 {
				t.Errorf("size at the end = %d, want 20", n)
			}
		})
	}
}

// fileTimes returns the atime, mtime and ctime of path (newfstatat, not
// following a last link): the same offsets on both targets.
func (g *guest) fileTimes(path string) [3]timespec {
	g.t.Helper()
	if r := g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, atSymlinkNofollow); r != 0 {
		g.t.Fatalf("newfstatat %s = %d", path, r)
	}
	b := readGuestBytes(g.t, g.p, g.buf, 120)
	le := binary.LittleEndian
	var t [3]timespec
	for i := range t {
		t[i] = timespec{int64(le.Uint64(b[72+16*i:])), int64(le.Uint64(b[80+16*i:]))}
	}
	return t
}

// TestFileTimes: the overlay's files and directories get their times
// from the fake clock as ext4's get them from Linux's (relatime): which
// of atime, mtime and ctime each call moves, for the file and for its
// directory, is what the same calls moved natively (Linux 6.1, ext4).
func TestFileTimes(t *testing.T) {
	host := readOnlyHostFile(t)
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{host}})
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o755), 0)
			file := "/tmp/d/f"
			g.p.sleep += time.Millisecond
			fd := g.open(file, oCREAT|gRDWR, 0o644)
			if ts := g.fileTimes(file); ts[0] != ts[1] || ts[1] != ts[2] || ts[1] != g.fileTimes("/tmp/d")[1] || ts[1].sec != epoch || ts[1].nsec != 1e6 {
				t.Errorf("a new file's times %v and its directory's mtime %v: want all now", ts, g.fileTimes("/tmp/d")[1])
			}
			// moved reports which of the times of the file and of its
			// directory step moves: "amc/amc", '-' for one unchanged.
			moved := func(what string, step func()) string {
				t.Helper()
				f0, d0 := g.fileTimes(file), g.fileTimes("/tmp/d")
				g.p.sleep += time.Millisecond
				step()
				f1, d1 := g.fileTimes(file), g.fileTimes("/tmp/d")
				s := []byte("---/---")
				for i := range 3 {
					if f1[i] != f0[i] {
						s[i] = "amc"[i]
					}
					if d1[i] != d0[i] {
						s[4+i] = "amc"[i]
					}
				}
				return string(s)
			}
			for _, c := range []struct {
				what string
				step func()
				want string
			}{
				{"write", func() { g.write(fd, "hello") }, "-mc/---"},
				{"write of nothing", func() { g.write(fd, "") }, "---/---"},
				{"read", func() { g.pread(fd, 0, 5) }, "a--/---"},
				{"read again (relatime)", func() { g.pread(fd, 0, 5) }, "---/---"},
				{"ftruncate, same size", func() { g.call("ftruncate", uint64(fd), 5) }, "-mc/---"},
				{"fchmod", func() { g.call("fchmod", uint64(fd), 0o600) }, "--c/---"},
				{"fchown to itself", func() { g.call("fchown", uint64(fd), guestUID, guestGID) }, "--c/---"},
				{"O_TRUNC", func() { g.call("close", uint64(g.open(file, gRDWR|oTRUNC, 0))) }, "-mc/---"},
				{"O_TRUNC of an empty file", func() { g.call("close", uint64(g.open(file, gRDWR|oTRUNC, 0))) }, "-mc/---"},
				{"write 5", func() { g.call("pwrite64", uint64(fd), g.buf, 5, 0) }, "-mc/---"},
				{"copy_file_range from it", func() {
					dst := g.open("/tmp/dst", oCREAT|gWRONLY, 0o644)
					if err := g.p.Engine.WriteMem(g.buf+3000, make([]byte, 8)); err != nil { // off_in: 0
						t.Fatal(err)
					}
					g.call("copy_file_range", uint64(fd), g.buf+3000, uint64(dst), 0, 5, 0)
				}, "a--/---"},
				{"open, close", func() { g.call("close", uint64(g.open(file, gRDWR, 0))) }, "---/---"},
				{"fallocate", func() { g.call("fallocate", uint64(fd), 0, 0, 100) }, "-mc/---"},
				{"fallocate inside the file, KEEP_SIZE", func() { g.call("fallocate", uint64(fd), 1, 0, 10) }, "-mc/---"},
				{"mmap", func() { g.call("mmap", 0, 4096, 3, 1, uint64(fd), 0) }, "a--/---"},
				{"link", func() { g.call("linkat", atFDCWD64, g.path(2, file), atFDCWD64, g.path(3, "/tmp/d/l"), 0) }, "--c/-mc"},
				{"unlink of the other name", func() { g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/l"), 0) }, "--c/-mc"},
				{"symlink", func() { g.call("symlinkat", g.path(2, "f"), atFDCWD64, g.path(3, "/tmp/d/s")) }, "---/-mc"},
				{"mkdir", func() { g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d/sub"), 0o755) }, "---/-mc"},
				{"getdents64", func() {
					dir := g.open("/tmp/d", gRDONLY|g.p.abi.oDirectory, 0)
					g.call("getdents64", uint64(dir), g.buf+4096, 4096)
					g.call("close", uint64(dir))
				}, "---/a--"},
				{"rmdir", func() { g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/sub"), 0x200) }, "---/-mc"},
				{"utimensat now", func() { g.call("utimensat", atFDCWD64, g.path(2, file), 0, 0) }, "amc/---"},
				{"chmod of the directory", func() { g.call("fchmodat", atFDCWD64, g.path(2, "/tmp/d"), 0o700) }, "---/--c"},
				{"rename", func() {
					g.call("renameat", atFDCWD64, g.path(2, file), atFDCWD64, g.path(3, "/tmp/d/g"))
					file = "/tmp/d/g"
				}, "--c/-mc"},
			} {
				if got := moved(c.what, c.step); got != c.want {
					t.Errorf("%s: moved %s, want %s (file/directory)", c.what, got, c.want)
				}
			}
			// A host file keeps the fake clock's start.
			if ts := g.fileTimes(host); ts != epochTimes {
				t.Errorf("a host file's times %v, want the clock's start", ts)
			}
		})
	}
}
