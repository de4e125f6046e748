//go:build cgo

package linux

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestPermissions: the overlay's permission bits are enforced as Linux
// enforces them for a process that owns the files and has no capability
// (the guest: uid 1000). Each errno is what the same call gave natively,
// run as uid 1000 (setpriv) on ext4.
func TestPermissions(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			at := func(s string) uint64 { return g.path(2, s) }
			at2 := func(s string) uint64 { return g.path(3, s) }
			stat := func(s string) int64 { return g.call("newfstatat", atFDCWD64, at(s), g.buf, 0) }
			chmod := func(s string, mode uint64) {
				t.Helper()
				expect(t, "chmod "+s, g.call("fchmodat", atFDCWD64, at(s), mode), 0)
			}
			closed := func(fd int64) int64 {
				if fd >= 0 {
					g.call("close", uint64(fd))
					return 0
				}
				return fd
			}
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, at("/tmp/p"), 0o755), 0)
			expect(t, "chdir", g.call("chdir", at("/tmp/p")), 0)
			expect(t, "create 0444 for writing", closed(g.open("ro", oCREAT|gRDWR, 0o444)), 0)
			expect(t, "0444 for reading", closed(g.open("ro", gRDONLY, 0)), 0)
			expect(t, "0444 for writing", g.open("ro", gWRONLY, 0), -eACCES)
			expect(t, "0444 O_RDWR", g.open("ro", gRDWR, 0), -eACCES)
			expect(t, "0444 O_TRUNC", g.open("ro", gRDONLY|oTRUNC, 0), -eACCES)
			expect(t, "truncate 0444", g.call("truncate", at("ro"), 0), -eACCES)
			expect(t, "access W_OK", g.call("faccessat", atFDCWD64, at("ro"), 2), -eACCES)
			expect(t, "access R_OK", g.call("faccessat", atFDCWD64, at("ro"), 4), 0)
			expect(t, "create f", closed(g.open("f", oCREAT|gRDWR, 0o644)), 0)
			chmod("f", 0o200)
			expect(t, "0200 for reading", g.open("f", gRDONLY, 0), -eACCES)
			expect(t, "0200 for writing", closed(g.open("f", gWRONLY, 0)), 0)
			expect(t, "0200 O_PATH", closed(g.open("f", oPATH, 0)), 0)
			expect(t, "0200 stat", stat("f"), 0)
			chmod("f", 0o644)

			expect(t, "mkdir d", g.call("mkdirat", atFDCWD64, at("d"), 0o755), 0)
			expect(t, "create d/x", closed(g.open("d/x", oCREAT|gWRONLY, 0o644)), 0)
			chmod("d", 0o555)
			expect(t, "read-only directory: create", g.open("d/y", oCREAT|gWRONLY, 0o644), -eACCES)
			expect(t, "read-only directory: O_EXCL of a name it has", g.open("d/x", oCREAT|oEXCL|gWRONLY, 0o644), -eEXIST)
			expect(t, "read-only directory: its file for writing", closed(g.open("d/x", gRDWR, 0)), 0)
			expect(t, "read-only directory: unlink", g.call("unlinkat", atFDCWD64, at("d/x"), 0), -eACCES)
			expect(t, "read-only directory: unlink of no file", g.call("unlinkat", atFDCWD64, at("d/none"), 0), -eNOENT)
			expect(t, "read-only directory: mkdir", g.call("mkdirat", atFDCWD64, at("d/sub"), 0o755), -eACCES)
			expect(t, "read-only directory: mkdir of a name it has", g.call("mkdirat", atFDCWD64, at("d/x"), 0o755), -eEXIST)
			expect(t, "read-only directory: rename out", g.call("renameat", atFDCWD64, at("d/x"), atFDCWD64, at2("x2")), -eACCES)
			expect(t, "read-only directory: rename in", g.call("renameat", atFDCWD64, at("f"), atFDCWD64, at2("d/f")), -eACCES)
			expect(t, "read-only directory: symlink", g.call("symlinkat", at("x"), atFDCWD64, at2("d/l")), -eACCES)
			expect(t, "read-only directory: link", g.call("linkat", atFDCWD64, at("f"), atFDCWD64, at2("d/h"), 0), -eACCES)
			expect(t, "read-only directory: O_TMPFILE", g.open("d", oTMPFILE|gRDWR, 0o600), -eACCES)
			expect(t, "access W_OK of the directory", g.call("faccessat", atFDCWD64, at("d"), 2), -eACCES)

			chmod("d", 0o666)
			expect(t, "no search: stat below", stat("d/x"), -eACCES)
			expect(t, "no search: open below", g.open("d/x", gRDONLY, 0), -eACCES)
			expect(t, "no search: stat of no file below", stat("d/none"), -eACCES)
			expect(t, "no search: chdir", g.call("chdir", at("d")), -eACCES)
			expect(t, "no search: list", closed(g.open("d", gRDONLY|g.p.abi.oDirectory, 0)), 0)
			expect(t, "no search: unlink below", g.call("unlinkat", atFDCWD64, at("d/x"), 0), -eACCES)
			expect(t, "access X_OK of the directory", g.call("faccessat", atFDCWD64, at("d"), 1), -eACCES)

			chmod("d", 0o333)
			expect(t, "no read: list", g.open("d", gRDONLY|g.p.abi.oDirectory, 0), -eACCES)
			expect(t, "no read: stat below", stat("d/x"), 0)
			expect(t, "no read: chdir", g.call("chdir", at("d")), 0)
			expect(t, "chdir back", g.call("chdir", at("..")), 0)
			chmod("d", 0o755)

			expect(t, "mkdir m", g.call("mkdirat", atFDCWD64, at("m"), 0o755), 0)
			expect(t, "mkdir m/sub 0555", g.call("mkdirat", atFDCWD64, at("m/sub"), 0o555), 0)
			expect(t, "rename a read-only directory elsewhere", g.call("renameat", atFDCWD64, at("m/sub"), atFDCWD64, at2("sub2")), -eACCES)
			expect(t, "rename a read-only directory in place", g.call("renameat", atFDCWD64, at("m/sub"), atFDCWD64, at2("m/sub3")), 0)
			chmod(".", 0o555)
			expect(t, "read-only working directory: create", g.open("new", oCREAT|gWRONLY, 0o644), -eACCES)
			expect(t, "read-only working directory: write a file in it", closed(g.open("f", gWRONLY, 0)), 0)
			chmod(".", 0o755)
			expect(t, "execve of a 0644 file", g.call("execve", at("f"), 0, 0), -eACCES)

			// Writing, truncating or chowning a set-ID file clears the
			// bits, as for a process without CAP_FSETID.
			for _, c := range []struct {
				what string
				do   func()
			}{
				{"write", func() { fd := g.open("s", gWRONLY, 0); g.write(fd, "x"); g.call("close", uint64(fd)) }},
				{"truncate", func() { g.call("truncate", at("s"), 3) }},
				{"chown unchanged", func() { g.call("fchownat", atFDCWD64, at("s"), 1<<32-1, 1<<32-1, 0) }},
			} {
				expect(t, "create s", closed(g.open("s", oCREAT|gWRONLY, 0o644)), 0)
				chmod("s", 0o6755)
				c.do()
				if mode, _, _ := g.stat("s", false); mode != 0o100755 {
					t.Errorf("%s of a 06755 file: mode %#o, want 0100755", c.what, mode)
				}
			}
			chmod("s", 0o6745)
			g.call("truncate", at("s"), 1)
			if mode, _, _ := g.stat("s", false); mode != 0o102745 {
				t.Errorf("truncate of a 06745 file: mode %#o, want 0102745 (no group execute: set-group-ID kept)", mode)
			}

			// A descriptor's path is opened anew with the same checks.
			ro := g.open("ro", gRDONLY, 0)
			expect(t, "reopen of a 0444 file for writing", g.open("/proc/self/fd/"+strconv.Itoa(int(ro)), gRDWR, 0), -eACCES)
			expect(t, "reopen of it for reading", closed(g.open("/proc/self/fd/"+strconv.Itoa(int(ro)), gRDONLY, 0)), 0)
			// faccessat2's flags: AT_EMPTY_PATH (the descriptor's file),
			// AT_SYMLINK_NOFOLLOW (a link itself), AT_EACCESS; others EINVAL.
			expect(t, "faccessat2 AT_EMPTY_PATH R_OK", g.call("faccessat2", uint64(ro), at(""), 4, atEmptyPath), 0)
			expect(t, "faccessat2 AT_EMPTY_PATH W_OK", g.call("faccessat2", uint64(ro), at(""), 2, atEmptyPath|0x200), -eACCES)
			expect(t, "faccessat2 AT_EMPTY_PATH X_OK", g.call("faccessat2", uint64(ro), at(""), 1, atEmptyPath), -eACCES)
			expect(t, "symlink to nothing", g.call("symlinkat", at("none"), atFDCWD64, at2("dangling")), 0)
			expect(t, "faccessat2 of a dangling link, not followed", g.call("faccessat2", atFDCWD64, at("dangling"), 0, atSymlinkNofollow), 0)
			expect(t, "faccessat2 of a dangling link", g.call("faccessat2", atFDCWD64, at("dangling"), 0, 0), -eNOENT)
			expect(t, "faccessat2, an unknown flag", g.call("faccessat2", atFDCWD64, at("f"), 0, 0x8000), -eINVAL)
		})
	}
}

// fdNlinkAt returns the link count of the struct stat at g.buf.
func (g *guest) fdNlinkAt() uint64 {
	b := readGuestBytes(g.t, g.p, g.buf, 24)
	if g.p.abi == abiFor(arch.AMD64) {
		return binary.LittleEndian.Uint64(b[16:])
	}
	return uint64(binary.LittleEndian.Uint32(b[20:]))
}

// fdNlink returns the link count fstat gives for fd.
func (g *guest) fdNlink(fd int64) uint64 {
	g.t.Helper()
	if r := g.call("fstat", uint64(fd), g.buf); r != 0 {
		g.t.Fatalf("fstat %d = %d", fd, r)
	}
	b := readGuestBytes(g.t, g.p, g.buf, 24)
	if g.p.abi == abiFor(arch.AMD64) {
		return binary.LittleEndian.Uint64(b[16:])
	}
	return uint64(binary.LittleEndian.Uint32(b[20:]))
}

// TestLinkDescriptor: linkat of a descriptor's path (/proc/self/fd/N)
// names the open file, as Linux 6.1 does: an O_TMPFILE file gets its
// name so, one removed while open or made with O_EXCL cannot get one;
// link counts of files without names are 0; a subdirectory of a
// set-group-ID directory inherits the bit. Natively checked as uid 1000.
func TestLinkDescriptor(t *testing.T) {
	const follow = 0x400 // AT_SYMLINK_FOLLOW
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			fdp := func(fd int64) uint64 { return g.path(2, "/proc/self/fd/"+strconv.Itoa(int(fd))) }
			link := func(from uint64, to string, flags uint64) int64 {
				return g.call("linkat", atFDCWD64, from, atFDCWD64, g.path(3, to), flags)
			}
			tmp := g.open("/tmp", oTMPFILE|gRDWR, 0o600)
			g.write(tmp, "hi")
			expect(t, "O_TMPFILE's links", int64(g.fdNlink(tmp)), 0)
			expect(t, "linkat, not followed", link(fdp(tmp), "/tmp/n0", 0), -eXDEV)
			expect(t, "linkat, followed", link(fdp(tmp), "/tmp/named", follow), 0)
			expect(t, "links after", int64(g.fdNlink(tmp)), 1)
			expect(t, "linkat again", link(fdp(tmp), "/tmp/named2", follow), 0)
			expect(t, "links after two", int64(g.fdNlink(tmp)), 2)
			if got := g.pread(g.open("/tmp/named", gRDONLY, 0), 0, 8); got != "hi" {
				t.Errorf("the named file holds %q, want hi", got)
			}
			expect(t, "AT_EMPTY_PATH (a capability in 6.1)", g.call("linkat", uint64(tmp), g.path(2, ""), atFDCWD64, g.path(3, "/tmp/n3"), atEmptyPath), -eNOENT)
			excl := g.open("/tmp", oTMPFILE|oEXCL|gRDWR, 0o600)
			expect(t, "linkat of an O_EXCL O_TMPFILE", link(fdp(excl), "/tmp/ex", follow), -eNOENT)
			del := g.open("/tmp/del", oCREAT|gRDWR, 0o644)
			expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/del"), 0), 0)
			expect(t, "links of a file removed while open", int64(g.fdNlink(del)), 0)
			expect(t, "linkat of it", link(fdp(del), "/tmp/undel", follow), -eNOENT)
			expect(t, "linkat of it onto a name that exists", link(fdp(del), "/tmp/named", follow), -eEXIST)
			mfd := g.call("memfd_create", g.path(2, "m"), 0)
			expect(t, "memfd's links", int64(g.fdNlink(mfd)), 0)
			expect(t, "linkat of a memfd", link(fdp(mfd), "/tmp/mem", follow), -eXDEV)
			h := g.open("/tmp/h", oCREAT|gRDWR, 0o644)
			expect(t, "linkat of a named file's descriptor", link(fdp(h), "/tmp/h2", follow), 0)
			expect(t, "its links", int64(g.fdNlink(h)), 2)
			expect(t, "linkat of no descriptor", link(g.path(2, "/proc/self/fd/77"), "/tmp/x", follow), -eNOENT)
			pfd := g.call("pipe2", g.buf+1024, 0)
			expect(t, "pipe2", pfd, 0)
			expect(t, "linkat of a pipe", link(g.path(2, "/dev/fd/"+strconv.Itoa(int(binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+1024, 4))))), "/tmp/p", follow), -eXDEV)

			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/sg"), 0o755), 0)
			expect(t, "chmod g+s", g.call("fchmodat", atFDCWD64, g.path(2, "/tmp/sg"), 0o2755), 0)
			expect(t, "mkdir below", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/sg/sub"), 0o755), 0)
			if mode, _, _ := g.stat("/tmp/sg/sub", false); mode != 0o42755 {
				t.Errorf("a subdirectory of a set-group-ID directory: mode %#o, want 042755", mode)
			}
			dir := g.open("/tmp/sg/sub", gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/sg/sub"), 0x200), 0)
			expect(t, "links of a removed directory", int64(g.fdNlink(dir)), 0)
		})
	}
}

// TestMknod: mknodat makes regular files, named pipes and sockets' names
// as Linux does for a process without CAP_MKNOD (a device is EPERM once
// the name is known new); a socket's name opens as ENXIO; opening a named
// pipe stops the run, named, as its ends are not emulated.
func TestMknod(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			mknod := func(path string, mode uint64) int64 {
				return g.call("mknodat", atFDCWD64, g.path(2, path), mode, 0x103)
			}
			expect(t, "mkfifo", mknod("/tmp/fifo", 0o010644), 0)
			expect(t, "mkfifo of a name in use", mknod("/tmp/fifo", 0o010644), -eEXIST)
			expect(t, "a regular file", mknod("/tmp/reg", 0o100644), 0)
			expect(t, "type 0: a regular file", mknod("/tmp/reg0", 0o644), 0)
			expect(t, "a socket's name", mknod("/tmp/sock", 0o140755), 0)
			expect(t, "a character device", mknod("/tmp/chr", 0o020644), -ePERM)
			expect(t, "a device at a name in use", mknod("/tmp/reg", 0o060644), -eEXIST)
			expect(t, "no such type", mknod("/tmp/bad", 0o070644), -eINVAL)
			expect(t, "below no directory", mknod("/tmp/none/x", 0o010644), -eNOENT)
			for path, want := range map[string]int64{"/tmp/fifo": 0o010644, "/tmp/reg": 0o100644, "/tmp/reg0": 0o100644, "/tmp/sock": 0o140755} {
				if mode, _, _ := g.stat(path, false); mode != want {
					t.Errorf("%s: mode %#o, want %#o", path, mode, want)
				}
			}
			expect(t, "no device was made", g.call("newfstatat", atFDCWD64, g.path(2, "/tmp/chr"), g.buf, 0), -eNOENT)
			expect(t, "open of a socket's name", g.open("/tmp/sock", gRDWR, 0), -eNXIO)
			if fd := g.open("/tmp/reg", gRDWR, 0); fd < 0 {
				t.Errorf("open of the regular file made by mknod: %d", fd)
			}
			if g.p.exit != nil {
				t.Fatalf("stopped before opening the named pipe: %v", g.p.exit)
			}
			g.open("/tmp/fifo", gRDONLY|oNONBLOCK, 0)
			if g.p.exit == nil || !strings.Contains(g.p.exit.Detail, "named pipe /tmp/fifo") || g.p.exit.Reason != StopUnsupported {
				t.Errorf("open of a named pipe: the run goes on (%v)", g.p.exit)
			}
		})
	}
}

// TestHostModesInWritableTree: a host file or directory in a writable tree
// shows the owner's write bit (0644 with the host's execute bits, 0755),
// as it is writable there (writing copies it up, with that mode), the
// same whatever the host's bits were; outside, the view is read-only
// (0444, 0555). Before, stat showed 0444 (0555) while writes succeeded:
// busybox's [ -w f ], which looks at st_mode, was false.
func TestHostModesInWritableTree(t *testing.T) {
	dir := t.TempDir() // below /tmp: a writable tree
	for name, mode := range map[string]os.FileMode{"rw": 0o644, "ro": 0o444, "x": 0o750, "own": 0o600} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("data\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			for _, c := range []struct {
				name string
				mode int64
			}{{"rw", 0o100644}, {"ro", 0o100644}, {"x", 0o100754}, {"own", 0o100644}, {"d", 0o040755}} {
				if mode, _, _ := g.stat(dir+"/"+c.name, true); mode != c.mode {
					t.Errorf("%s: mode %o, want %o", c.name, mode, c.mode)
				}
			}
			access := func(name string, how uint64) int64 {
				return g.call("faccessat", atFDCWD64, g.path(2, dir+"/"+name), how)
			}
			expect(t, "W_OK", access("ro", 2), 0)
			expect(t, "R_OK", access("own", 4), 0)
			expect(t, "X_OK of an executable", access("x", 1), 0)
			expect(t, "X_OK of a file", access("rw", 1), -eACCES)
			expect(t, "W_OK of a directory", access("d", 2), 0)
			fd := g.open(dir+"/rw", gRDONLY, 0)
			expect(t, "open for reading", fd, 3)
			if r := g.call("fstat", uint64(fd), g.buf); r != 0 {
				t.Fatalf("fstat: %d", r)
			}
			off := 24
			if a == arch.ARM64 {
				off = 16
			}
			if m := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf, 64)[off:]); m != 0o100644 {
				t.Errorf("fstat: mode %o", m)
			}
			expect(t, "open for writing", g.open(dir+"/x", gWRONLY|oAPPEND, 0), 4)
			expect(t, "write", g.write(4, "more\n"), 5)
			if mode, _, _ := g.stat(dir+"/x", true); mode != 0o100754 {
				t.Errorf("x after writing: mode %o, want 100754", mode)
			}
			// Outside the writable trees, the view stays read-only.
			if mode, _, _ := g.stat("/etc/passwd", true); mode != 0o100444 {
				t.Errorf("/etc/passwd: mode %o", mode)
			}
		})
	}
}
