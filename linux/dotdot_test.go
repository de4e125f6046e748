//go:build cgo

package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A path's ".." is taken physically, as Linux does: from the directory
// the components before it name, their symbolic links followed, and only
// if they name a directory; a call that makes or removes a name ending in
// "." or ".." first finds the directory before it, as for any other name.
// The answers below are what Linux gave for the same calls, run natively
// on x86-64 and (qemu-aarch64) AArch64.

// dotDotTree makes below dir, with mkdir, file and link (the guest's
// calls or the host's), directories a/b/c, d and chain, files f and
// a/b/x, and links: link -> a/b/c, alink -> dir/a/b/c, l3 -> link/../x
// (a/b/x: ".." after a link in a target), loop -> loop/../x, and a chain
// of 41 links chain/l41 -> l40 -> ... -> l1 -> ../a/b/c.
func dotDotTree(t *testing.T, dir string, mkdir func(string), file func(string), link func(target, name string)) {
	t.Helper()
	for _, d := range []string{"a", "a/b", "a/b/c", "d", "chain"} {
		mkdir(dir + "/" + d)
	}
	for _, f := range []string{"f", "a/b/x"} {
		file(dir + "/" + f)
	}
	link("a/b/c", dir+"/link")
	link(dir+"/a/b/c", dir+"/alink")
	link("link/../x", dir+"/l3")
	link("loop/../x", dir+"/loop")
	link("../a/b/c", dir+"/chain/l1")
	for i := 2; i <= 41; i++ {
		link("l"+strconv.Itoa(i-1), dir+"/chain/l"+strconv.Itoa(i))
	}
}

// dotDotStats checks stat of paths with ".." relative to the working
// directory, the tree dotDotTree made: 0o040000 a directory, 0o100000 a
// file, else the negated errno.
func dotDotStats(t *testing.T, g *guest) {
	t.Helper()
	for _, c := range []struct {
		path string
		want int64
	}{
		{"f/..", -eNOTDIR},
		{"missing/..", -eNOENT},
		{"f/../f", -eNOTDIR},
		{"missing/../f", -eNOENT},
		{"a/b/x/..", -eNOTDIR},
		{"link/..", 0o040000},
		{"link/../x", 0o100000},  // a/b/x: link's target's parent
		{"alink/../x", 0o100000}, // the same, an absolute target
		{"link/../../b/x", 0o100000},
		{"l3", 0o100000},             // a target with ".." after a link
		{"chain/l40/../x", 0o100000}, // 40 links are followed
		{"chain/l41/..", -eLOOP},     // 41 are not
		{"loop", -eLOOP},
	} {
		mode, _, _ := g.stat(c.path, true)
		if mode > 0 {
			mode &= 0o170000
		}
		if mode != c.want {
			t.Errorf("stat %s = %#o, want %#o", c.path, mode, c.want)
		}
	}
}

// cwd returns the guest's working directory (getcwd).
func (g *guest) cwd() string {
	g.t.Helper()
	n := g.call("getcwd", g.buf, 4096)
	if n <= 0 {
		g.t.Fatalf("getcwd = %d", n)
	}
	return string(readGuestBytes(g.t, g.p, g.buf, uint64(n-1)))
}

// chdirTo changes the working directory to path and checks getcwd then.
func (g *guest) chdirTo(path, want string) {
	g.t.Helper()
	if r := g.call("chdir", g.path(0, path)); r != 0 {
		g.t.Errorf("chdir %s = %d", path, r)
		return
	}
	if got := g.cwd(); got != want {
		g.t.Errorf("getcwd after chdir %s: %q, want %q", path, got, want)
	}
}

// TestDotDotOverlay: ".." in the overlay's files (what the guest made
// below /tmp).
func TestDotDotOverlay(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			const dir = "/tmp/dd"
			expect(t, "mkdir "+dir, g.call("mkdirat", atFDCWD64, g.path(2, dir), 0o755), 0)
			dotDotTree(t, dir,
				func(d string) { expect(t, "mkdir "+d, g.call("mkdirat", atFDCWD64, g.path(2, d), 0o755), 0) },
				func(f string) { expect(t, "create "+f, g.call("close", uint64(g.open(f, oCREAT|gWRONLY, 0o644))), 0) },
				func(target, name string) {
					expect(t, "symlink "+name, g.call("symlinkat", g.path(2, target), atFDCWD64, g.path(3, name)), 0)
				})
			g.chdirTo(dir, dir)
			dotDotStats(t, g)

			_, _, root := g.stat("/", true)
			if mode, _, ino := g.stat("/..", true); mode < 0 || ino != root {
				t.Errorf("stat /.. = %#o, inode %d; want /'s, %d", mode, ino, root)
			}
			expect(t, "open f/..", g.open("f/..", gRDONLY, 0), -eNOTDIR)
			expect(t, "access missing/../f", g.call("faccessat", atFDCWD64, g.path(2, "missing/../f"), 0), -eNOENT)
			if mode, _, _ := g.stat("/dev/null/..", true); mode != -eNOTDIR {
				t.Errorf("stat /dev/null/.. = %d, want ENOTDIR", mode)
			}

			// A last component "..", then ".": the calls' own answers
			// (EEXIST, ENOTEMPTY, EISDIR, EBUSY...) once the directories
			// of the names were found.
			at := func(name, path string, args ...uint64) int64 {
				return g.call(name, append([]uint64{atFDCWD64, g.path(2, path)}, args...)...)
			}
			rename := func(from, to string) int64 {
				return g.call("renameat", atFDCWD64, g.path(2, from), atFDCWD64, g.path(3, to))
			}
			for _, c := range []struct {
				what      string
				got, want int64
			}{
				{"mkdir d/..", at("mkdirat", "d/..", 0o755), -eEXIST},
				{"mkdir missing/..", at("mkdirat", "missing/..", 0o755), -eNOENT},
				{"mkdir f/..", at("mkdirat", "f/..", 0o755), -eNOTDIR},
				{"rmdir d/..", at("unlinkat", "d/..", 0x200), -eNOTEMPTY},
				{"rmdir missing/..", at("unlinkat", "missing/..", 0x200), -eNOENT},
				{"rmdir f/..", at("unlinkat", "f/..", 0x200), -eNOTDIR},
				{"unlink d/..", at("unlinkat", "d/..", 0), -eISDIR},
				{"unlink missing/..", at("unlinkat", "missing/..", 0), -eNOENT},
				{"unlink f/..", at("unlinkat", "f/..", 0), -eNOTDIR},
				{"rename d/..", rename("d/..", "z"), -eBUSY},
				{"rename missing/..", rename("missing/..", "z"), -eNOENT},
				{"rename f/..", rename("f/..", "z"), -eNOTDIR},
				{"rename onto missing/..", rename("d", "missing/.."), -eNOENT},
				{"rename d/.. to missing/x", rename("d/..", "missing/x"), -eNOENT},
				{"rename missing/x to d/..", rename("missing/x", "d/.."), -eNOENT},
				{"mkdir link/../y", at("mkdirat", "link/../y", 0o755), 0},
				{"symlink d/..", g.call("symlinkat", g.path(3, "x"), atFDCWD64, g.path(2, "d/..")), -eEXIST},
				// The directory before a last "." must be found too,
				// which the cleaned path no longer tells.
				{"rmdir f/.", at("unlinkat", "f/.", 0x200), -eNOTDIR},
				{"rmdir missing/.", at("unlinkat", "missing/.", 0x200), -eNOENT},
				{"rmdir d/.", at("unlinkat", "d/.", 0x200), -eINVAL},
				{"unlink f/.", at("unlinkat", "f/.", 0), -eNOTDIR},
				{"unlink missing/.", at("unlinkat", "missing/.", 0), -eNOENT},
				{"unlink d/.", at("unlinkat", "d/.", 0), -eISDIR},
				{"mkdir f/.", at("mkdirat", "f/.", 0o755), -eNOTDIR},
				{"mkdir missing/.", at("mkdirat", "missing/.", 0o755), -eNOENT},
				{"mkdir d/.", at("mkdirat", "d/.", 0o755), -eEXIST},
				{"symlink missing/.", g.call("symlinkat", g.path(3, "x"), atFDCWD64, g.path(2, "missing/.")), -eNOENT},
				{"link f missing/.", g.call("linkat", atFDCWD64, g.path(3, "f"), atFDCWD64, g.path(2, "missing/."), 0), -eNOENT},
				{"rename f/.", rename("f/.", "z"), -eNOTDIR},
				{"rename missing/.", rename("missing/.", "z"), -eNOENT},
				{"rename d/.", rename("d/.", "z"), -eBUSY},
				{"create missing/.", g.open("missing/.", oCREAT|gWRONLY, 0o644), -eNOENT},
				{"create missing/new/", g.open("missing/new/", oCREAT|gWRONLY, 0o644), -eNOENT},
				{"create new/", g.open("new/", oCREAT|gWRONLY, 0o644), -eISDIR},
			} {
				expect(t, c.what, c.got, c.want)
			}
			if mode, _, _ := g.stat("a/b/y", false); mode&0o170000 != 0o040000 {
				t.Errorf("mkdir link/../y made no a/b/y: stat %#o", mode)
			}
			for _, d := range []string{"d", "f"} {
				if mode, _, _ := g.stat(d, false); mode < 0 {
					t.Errorf("%s is gone: %d", d, mode)
				}
			}
			for _, d := range []string{"missing", "z"} {
				if mode, _, _ := g.stat(d, false); mode != -eNOENT {
					t.Errorf("%s was made: stat %#o", d, mode)
				}
			}

			g.chdirTo("link/..", dir+"/a/b")
			g.chdirTo(dir+"/link", dir+"/a/b/c") // getcwd gives the link's target
			g.chdirTo("..", dir+"/a/b")
			g.chdirTo(dir+"/alink/../../..", dir)
			g.chdirTo("/..", "/")
			g.chdirTo(dir, dir)

			// A descriptor of a directory opened through a link is its
			// target: /proc/self/fd, fchdir and its ".." say so.
			fd := g.open("link", gRDONLY|g.p.abi.oDirectory, 0)
			if fd < 0 {
				t.Fatalf("open link = %d", fd)
			}
			expect(t, "faccessat(link, ../x)", g.call("faccessat", uint64(fd), g.path(2, "../x"), 0), 0)
			fdPath := fmt.Sprintf("/proc/self/fd/%d", fd)
			n := g.call("readlinkat", atFDCWD64, g.path(2, fdPath), g.buf, 4096)
			if got := string(readGuestBytes(t, g.p, g.buf, uint64(max(n, 0)))); got != dir+"/a/b/c" {
				t.Errorf("readlink %s = %q, want %s/a/b/c", fdPath, got, dir)
			}
			if mode, _, _ := g.stat(fdPath+"/../x", true); mode&0o170000 != 0o100000 {
				t.Errorf("stat %s/../x = %#o, want a file", fdPath, mode)
			}
			expect(t, "fchdir", g.call("fchdir", uint64(fd)), 0)
			if got := g.cwd(); got != dir+"/a/b/c" {
				t.Errorf("getcwd after fchdir %q, want %s/a/b/c", got, dir)
			}
			g.chdirTo(dir, dir)

			// A directory renamed while open: its descriptor follows it.
			for _, d := range []string{"r1", "r1/s", "r2"} {
				expect(t, "mkdir "+d, at("mkdirat", d, 0o755), 0)
			}
			expect(t, "create r2/marker", g.call("close", uint64(g.open("r2/marker", oCREAT|gWRONLY, 0o644))), 0)
			s := g.open("r1/s", gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "rename r1/s r2/s", rename("r1/s", "r2/s"), 0)
			expect(t, "faccessat(s, ../marker)", g.call("faccessat", uint64(s), g.path(2, "../marker"), 0), 0)
			expect(t, "faccessat(s, .)", g.call("faccessat", uint64(s), g.path(2, "."), 0), 0)

			// The working directory renamed, then removed: ".." is the
			// directory that held it.
			g.chdirTo("r2/s", dir+"/r2/s")
			expect(t, "rename r2 r3", rename(dir+"/r2", dir+"/r3"), 0)
			if got := g.cwd(); got != dir+"/r3/s" {
				t.Errorf("getcwd after renaming a directory above it: %q, want %s/r3/s", got, dir)
			}
			expect(t, "rmdir the working directory", at("unlinkat", "../s", 0x200), 0)
			if mode, _, _ := g.stat("../marker", true); mode&0o170000 != 0o100000 {
				t.Errorf("stat ../marker from a removed directory = %#o, want a file", mode)
			}
		})
	}
}

// TestDotDotView: ".." in the view's files, host directories the user
// named, with the host's symbolic links; and through a link of the
// overlay to one.
func TestDotDotView(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir()) // getcwd gives it so
	if err != nil {
		t.Fatal(err)
	}
	dotDotTree(t, dir,
		func(d string) {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		func(f string) {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		func(target, name string) {
			if err := os.Symlink(target, name); err != nil {
				t.Fatal(err)
			}
		})
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			g.chdirTo(dir, dir)
			dotDotStats(t, g)
			g.chdirTo("link", dir+"/a/b/c")
			g.chdirTo("..", dir+"/a/b")
			g.chdirTo(dir+"/link/..", dir+"/a/b")
			g.chdirTo(dir, dir)
			fd := g.open("link", gRDONLY|g.p.abi.oDirectory, 0)
			if fd < 0 {
				t.Fatalf("open link = %d", fd)
			}
			expect(t, "faccessat(link, ../x)", g.call("faccessat", uint64(fd), g.path(2, "../x"), 0), 0)
			expect(t, "fchdir", g.call("fchdir", uint64(fd)), 0)
			if got := g.cwd(); got != dir+"/a/b/c" {
				t.Errorf("getcwd after fchdir %q, want %s/a/b/c", got, dir)
			}
			// A link the guest made, to a link of the host's.
			expect(t, "symlink", g.call("symlinkat", g.path(2, dir+"/link"), atFDCWD64, g.path(3, "/tmp/dd-ol")), 0)
			if mode, _, _ := g.stat("/tmp/dd-ol/../x", true); mode&0o170000 != 0o100000 {
				t.Errorf("stat /tmp/dd-ol/../x = %#o, want a file", mode)
			}
		})
	}
}
