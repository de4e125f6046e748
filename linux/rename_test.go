//go:build cgo

package linux

import (
	"strconv"
	"testing"
)

// TestRenameExchange: renameat2's RENAME_EXCHANGE swaps two names, files
// or directories alike, with what is below a directory, its descriptors
// and the working directory following it, and answers as Linux 6.1 (ext4,
// as uid 1000: the expected values are a C program's native output) where
// it cannot: a missing name, a directory inside the other, flags it does
// not combine with, a name with a trailing slash that is not a directory,
// a directory without write permission moving to another parent. A
// file's descriptors follow it, there and in a plain rename.
func TestRenameExchange(t *testing.T) {
	const noreplace, exchange, whiteout = 1, 2, 4
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			rx := func(from, to string, flags uint64) int64 {
				return g.call("renameat2", atFDCWD64, g.path(0, from), atFDCWD64, g.path(1, to), flags)
			}
			mkdir := func(path string, mode uint64) {
				t.Helper()
				expect(t, "mkdir "+path, g.call("mkdirat", atFDCWD64, g.path(2, path), mode), 0)
			}
			put := func(path, s string) {
				t.Helper()
				fd := g.open(path, oCREAT|gWRONLY, 0o644)
				expect(t, "write "+path, g.write(fd, s), int64(len(s)))
				expect(t, "close", g.call("close", uint64(fd)), 0)
			}
			read := func(path string) string {
				t.Helper()
				fd := g.open(path, gRDONLY, 0)
				if fd < 0 {
					t.Fatalf("open %s = %d", path, fd)
				}
				defer g.call("close", uint64(fd))
				return g.pread(fd, 0, 64)
			}
			links := func(path string) int64 {
				t.Helper()
				if r := g.call("newfstatat", atFDCWD64, g.path(2, path), g.buf, 0); r != 0 {
					t.Fatalf("stat %s = %d", path, r)
				}
				return int64(g.fdNlinkAt())
			}
			mkdir("/tmp/x", 0o755)
			g.chdirTo("/tmp/x", "/tmp/x")
			mkdir("A", 0o755)
			mkdir("B", 0o755)
			mkdir("A/d", 0o755)
			put("A/d/in", "inside")
			put("B/f", "eff")
			put("a", "one")
			put("b", "two")

			expect(t, "two files", rx("a", "b", exchange), 0)
			if got := read("a") + " " + read("b"); got != "two one" {
				t.Errorf("after the exchange: a, b hold %q", got)
			}
			expect(t, "a name with itself", rx("a", "a", exchange), 0)
			expect(t, "link", g.call("linkat", atFDCWD64, g.path(0, "a"), atFDCWD64, g.path(1, "a2"), 0), 0)
			expect(t, "two links to one file", rx("a", "a2", exchange), 0)
			expect(t, "a missing new name", rx("a", "nosuch", exchange), -eNOENT)
			expect(t, "a missing old name", rx("nosuch", "a", exchange), -eNOENT)
			expect(t, "EXCHANGE|NOREPLACE", rx("a", "b", exchange|noreplace), -eINVAL)
			expect(t, "EXCHANGE|WHITEOUT", rx("a", "b", exchange|whiteout), -eINVAL)
			expect(t, "an unknown flag", rx("a", "b", 8), -eINVAL)
			expect(t, "a file named with a slash", rx("a", "b/", exchange), -eNOTDIR)
			expect(t, "a directory with one inside it", rx("A", "A/d", exchange), -eINVAL)
			expect(t, "a directory with the one it is in", rx("A/d", "A", exchange), -eINVAL)

			dfd := g.open("A/d", gRDONLY|g.p.abi.oDirectory, 0)
			g.chdirTo("A/d", "/tmp/x/A/d")
			expect(t, "A's links", links("/tmp/x/A"), 3)
			expect(t, "B's links", links("/tmp/x/B"), 2)
			expect(t, "a directory and a file in other directories", rx("/tmp/x/A/d", "/tmp/x/B/f", exchange), 0)
			if got := read("/tmp/x/A/d") + " " + read("/tmp/x/B/f/in"); got != "eff inside" {
				t.Errorf("after the exchange: A/d, B/f/in hold %q", got)
			}
			expect(t, "A's links after", links("/tmp/x/A"), 2)
			expect(t, "B's links after", links("/tmp/x/B"), 3)
			if got := g.cwd(); got != "/tmp/x/B/f" {
				t.Errorf("the working directory is %q, want where it went", got)
			}
			if fd := g.call("openat", uint64(dfd), g.path(0, "in"), gRDONLY, 0); fd < 0 {
				t.Errorf("openat of the moved directory's descriptor = %d", fd)
			}
			if got := g.readlink("/proc/self/fd/" + strconv.Itoa(int(dfd))); got != "/tmp/x/B/f" {
				t.Errorf("its descriptor names %q", got)
			}

			g.chdirTo("/tmp/x", "/tmp/x")
			mkdir("C", 0o755)
			mkdir("C/e", 0o555)
			mkdir("D", 0o755)
			put("D/g", "gee")
			expect(t, "an unwritable directory to another parent", rx("C/e", "D/g", exchange), -eACCES)
			expect(t, "the same, named second", rx("D/g", "C/e", exchange), -eACCES)
			expect(t, "a missing name beside it", rx("C/e", "C/g2", exchange), -eNOENT)
			put("C/h", "h")
			expect(t, "within its parent", rx("C/e", "C/h", exchange), 0)
			expect(t, "the directory at its new name", links("C/h"), 2)

			// A file's descriptors name it where it went (/proc/self/fd),
			// by rename and by exchange.
			p, q := g.open("p", oCREAT|gRDWR, 0o644), g.open("q", oCREAT|gRDWR, 0o644)
			expect(t, "rename p", g.call("renameat", atFDCWD64, g.path(0, "p"), atFDCWD64, g.path(1, "z"), 0), 0)
			expect(t, "exchange z and q", rx("z", "q", exchange), 0)
			for fd, want := range map[int64]string{p: "/tmp/x/q", q: "/tmp/x/z"} {
				if got := g.readlink("/proc/self/fd/" + strconv.Itoa(int(fd))); got != want {
					t.Errorf("descriptor %d names %q, want %q", fd, got, want)
				}
			}
		})
	}
}
