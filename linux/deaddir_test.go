//go:build cgo

package linux

import (
	"strconv"
	"testing"
)

// TestRemovedDirectoryBase: a directory removed while it is the working
// directory or open as a descriptor is still what "." names there, as on
// Linux 6.1 (the expected values are a C program's native output, ext4,
// uid 1000): it can be opened, stated (no links), changed into and have
// its mode and times set; ".." is the directory it was in; every other
// name in it is ENOENT, made or looked up, even once a new directory has
// its old name; getcwd is ENOENT and /proc/self/cwd and fd/N say
// "(deleted)". A
// checkpoint keeps it (the TUI's step back).
func TestRemovedDirectoryBase(t *testing.T) {
	const removeDir = 0x200 // AT_REMOVEDIR
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			s := NewSession(g.p)
			stat := func(dirfd uint64, path string) (int64, uint64) {
				t.Helper()
				r := g.call("newfstatat", dirfd, g.path(1, path), g.buf, 0)
				if r != 0 {
					return r, 0
				}
				return 0, g.fdNlinkAt()
			}
			at := func(path string) uint64 { return g.path(0, path) }
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, at("/tmp/d"), 0o755), 0)
			expect(t, "mkdir sub", g.call("mkdirat", atFDCWD64, at("/tmp/d/sub"), 0o755), 0)
			dfd := g.open("/tmp/d/sub", gRDONLY|g.p.abi.oDirectory, 0)
			g.chdirTo("/tmp/d/sub", "/tmp/d/sub")
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, at("/tmp/d/sub"), removeDir), 0)

			if r, n := stat(atFDCWD64, "."); r != 0 || n != 0 {
				t.Errorf("stat . = %d, %d links; want 0, 0", r, n)
			}
			if r, n := stat(uint64(dfd), "./."); r != 0 || n != 0 {
				t.Errorf("fstatat(dfd, ./.) = %d, %d links; want 0, 0", r, n)
			}
			expect(t, "stat of the path", g.call("newfstatat", atFDCWD64, at("/tmp/d/sub"), g.buf, 0), -eNOENT)
			if fd := g.call("openat", atFDCWD64, at("."), gRDONLY|g.p.abi.oDirectory, 0); fd < 0 {
				t.Errorf("open . = %d", fd)
			} else {
				expect(t, "getdents64 of it", g.call("getdents64", uint64(fd), g.buf, 4096), -eNOENT)
				expect(t, "fchdir to it", g.call("fchdir", uint64(fd)), 0)
			}
			expect(t, "access .", g.call("faccessat", atFDCWD64, at("."), 2), 0)
			expect(t, "chmod .", g.call("fchmodat", atFDCWD64, at("."), 0o700), 0)
			if mode, _, _ := g.stat(".", true); mode != 0o40700 {
				t.Errorf("mode after chmod: %#o", mode)
			}
			expect(t, "utimensat .", g.call("utimensat", atFDCWD64, at("."), 0, 0), 0)
			expect(t, "chdir .", g.call("chdir", at(".")), 0)
			expect(t, "open .. ", b2i64(g.call("openat", atFDCWD64, at(".."), gRDONLY, 0) >= 0), 1)
			if r, n := stat(atFDCWD64, ".."); r != 0 || n != 2 {
				t.Errorf("stat .. = %d, %d links; want 0, 2", r, n)
			}
			expect(t, "../sub", g.call("openat", atFDCWD64, at("../sub"), gRDONLY, 0), -eNOENT)
			expect(t, "mkdir .", g.call("mkdirat", atFDCWD64, at("."), 0o755), -eEXIST)
			expect(t, "rmdir .", g.call("unlinkat", atFDCWD64, at("."), removeDir), -eINVAL)
			expect(t, "open . O_CREAT", g.call("openat", atFDCWD64, at("."), gRDONLY|oCREAT, 0o644), -eISDIR)
			expect(t, "make a file in it", g.call("openat", uint64(dfd), at("y"), gWRONLY|oCREAT, 0o644), -eNOENT)
			expect(t, "make a directory in it", g.call("mkdirat", atFDCWD64, at("x"), 0o755), -eNOENT)
			expect(t, "a link in it", g.call("symlinkat", at("x"), atFDCWD64, g.path(1, "l")), -eNOENT)
			expect(t, "getcwd", g.call("getcwd", g.buf, 4096), -eNOENT)
			if got := g.readlink("/proc/self/cwd"); got != "/tmp/d/sub (deleted)" {
				t.Errorf("/proc/self/cwd -> %q", got)
			}
			if got := g.readlink("/proc/self/fd/" + strconv.Itoa(int(dfd))); got != "/tmp/d/sub (deleted)" {
				t.Errorf("/proc/self/fd/%d -> %q", dfd, got)
			}

			// A new directory of the old name is another one.
			expect(t, "mkdir again", g.call("mkdirat", atFDCWD64, at("/tmp/d/sub"), 0o755), 0)
			if mode, _, _ := g.stat(".", true); mode != 0o40700 {
				t.Errorf(". after a new directory took its name: mode %#o, want the removed one's", mode)
			}
			expect(t, "still nothing made in it", g.call("mkdirat", atFDCWD64, at("x"), 0o755), -eNOENT)
			expect(t, "getcwd still", g.call("getcwd", g.buf, 4096), -eNOENT)

			c, err := s.Checkpoint(nil)
			if err != nil {
				t.Fatal(err)
			}
			g.chdirTo("/tmp", "/tmp")
			if err := s.Restore(c); err != nil {
				t.Fatal(err)
			}
			if r, n := stat(atFDCWD64, "."); r != 0 || n != 0 {
				t.Errorf("restored: stat . = %d, %d links; want the removed directory", r, n)
			}
			g.chdirTo("..", "/tmp/d")
		})
	}
}
