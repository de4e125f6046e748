//go:build cgo

package linux

import (
	"strconv"
	"testing"
)

// TestDescriptorPathsLead: a descriptor's path (/proc/self/fd/N,
// /dev/fd/N) leads to the open file for every call that follows links,
// as Linux's path walk follows /proc's links, and on below an open
// directory. glibc's fchmodat(AT_SYMLINK_NOFOLLOW), which cp -r uses on
// each directory it makes, opens the file O_PATH and chmods
// /proc/self/fd/N: before, that was ENOENT, which glibc turned into
// EOPNOTSUPP and cp into "setting permissions for 'dir': Operation not
// supported". The expected values are a C program's native output (ext4,
// uid 1000).
func TestDescriptorPathsLead(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			at := func(path string) uint64 { return g.path(0, path) }
			fdp := func(fd int64, rest string) string { return "/proc/self/fd/" + strconv.Itoa(int(fd)) + rest }
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, at("/tmp/d"), 0o755), 0)
			expect(t, "a file in it", b2i64(g.open("/tmp/d/in", oCREAT|gWRONLY, 0o644) >= 0), 1)
			dir := g.open("/tmp/d", gRDONLY|g.p.abi.oDirectory, 0)
			f := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			expect(t, "unlink", g.call("unlinkat", atFDCWD64, at("/tmp/f"), 0), 0)

			// glibc's lchmod of a directory: O_PATH|O_NOFOLLOW, then chmod
			// through /proc.
			p := g.call("openat", atFDCWD64, at("/tmp/d"), oPATH|g.p.abi.oNofollow(), 0)
			expect(t, "chmod of an O_PATH descriptor's path", g.call("fchmodat", atFDCWD64, at(fdp(p, "")), 0o700), 0)
			if mode, _, _ := g.stat("/tmp/d", true); mode != 0o40700 {
				t.Errorf("the directory's mode %#o, want 0700", mode)
			}
			expect(t, "chmod of a removed file's path", g.call("fchmodat", atFDCWD64, at(fdp(f, "")), 0o600), 0)
			expect(t, "truncate through it", g.call("truncate", at(fdp(f, "")), 100), 0)
			expect(t, "its size", g.call("lseek", uint64(f), 0, 2), 100)
			expect(t, "stat below a directory's path", g.call("newfstatat", atFDCWD64, at(fdp(dir, "/in")), g.buf, 0), 0)
			expect(t, "access below it", g.call("faccessat", atFDCWD64, at(fdp(dir, "/in")), 4), 0)
			expect(t, "and back up through ..", g.call("newfstatat", atFDCWD64, at(fdp(dir, "/../d/in")), g.buf, 0), 0)
			expect(t, "chmod below /dev/fd/N", g.call("fchmodat", atFDCWD64, at("/dev/fd/"+strconv.Itoa(int(dir))+"/in"), 0o600), 0)
			if mode, _, _ := g.stat("/tmp/d/in", true); mode != 0o100600 {
				t.Errorf("the file's mode %#o, want 0600", mode)
			}
			expect(t, "below a file's path", g.call("newfstatat", atFDCWD64, at(fdp(f, "/x")), g.buf, 0), -eNOTDIR)
			expect(t, "a closed descriptor", g.call("fchmodat", atFDCWD64, at(fdp(99, "")), 0o600), -eNOENT)
			expect(t, "utimensat through it", g.call("utimensat", atFDCWD64, at(fdp(dir, "")), 0, 0), 0)
			expect(t, "mkdir below it", g.call("mkdirat", atFDCWD64, at(fdp(dir, "/new")), 0o755), 0)
			if mode, _, _ := g.stat("/tmp/d/new", true); mode != 0o40755 {
				t.Errorf("the new directory: mode %#o", mode)
			}
		})
	}
}
