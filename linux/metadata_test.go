//go:build cgo

package linux

import (
	"encoding/binary"
	"os"
	"testing"
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
