//go:build cgo

package linux

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHostLinksThroughOverlay: a symbolic link of a named host tree in a
// writable tree (below /tmp) leads to its target as the guest changed
// it, as on Linux: what the guest appended to the target, made in a
// linked directory or removed there is what the link reaches; writing
// through the link writes the target, and the link stays a link. Before,
// the host's link was followed on the host, past the overlay.
func TestHostLinksThroughOverlay(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, data string }{{"f", "old\n"}, {"sub/g", "data"}} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f.name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("f", filepath.Join(dir, "lf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "lsub")); err != nil {
		t.Fatal(err)
	}
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			at := func(s string) string { return filepath.Join(dir, s) }
			fd := g.open(at("f"), gWRONLY|oAPPEND, 0)
			g.write(fd, "new\n")
			if got := g.pread(g.open(at("lf"), gRDONLY, 0), 0, 100); got != "old\nnew\n" {
				t.Errorf("read through the link after an append to its target: %q", got)
			}
			if _, size, _ := g.stat(at("lf"), true); size != 8 {
				t.Errorf("stat through the link: size %d, want 8", size)
			}
			expect(t, "create through a linked directory", b2i64(g.open(at("lsub/new"), oCREAT|gWRONLY, 0o644) >= 0), 1)
			if mode, _, _ := g.stat(at("sub/new"), true); mode < 0 {
				t.Errorf("the file made through the link is not in its target: %d", mode)
			}
			fd = g.open(at("lsub/g"), gWRONLY|oAPPEND, 0)
			g.write(fd, "+more")
			if got := g.pread(g.open(at("sub/g"), gRDONLY, 0), 0, 100); got != "data+more" {
				t.Errorf("the target after a write through the link: %q", got)
			}
			if mode, _, _ := g.stat(at("lsub"), false); mode&0o170000 != 0o120000 {
				t.Errorf("the link after writes through it: mode %#o, want a link", mode)
			}
			expect(t, "unlink the target", g.call("unlinkat", atFDCWD64, g.path(2, at("f")), 0), 0)
			expect(t, "open through the link to it", g.open(at("lf"), gRDONLY, 0), -eNOENT)
			expect(t, "unlink sub/g", g.call("unlinkat", atFDCWD64, g.path(2, at("sub/g")), 0), 0)
			expect(t, "unlink sub/new", g.call("unlinkat", atFDCWD64, g.path(2, at("sub/new")), 0), 0)
			expect(t, "rmdir sub", g.call("unlinkat", atFDCWD64, g.path(2, at("sub")), 0x200), 0)
			expect(t, "stat through the link to it", g.call("newfstatat", atFDCWD64, g.path(2, at("lsub")), g.buf, 0), -eNOENT)
			expect(t, "open below it", g.open(at("lsub/g"), gRDONLY, 0), -eNOENT)
		})
	}
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestDirLinks: a directory's link count is 2 and one per subdirectory,
// as on Linux, for the guest's directories and for host directories the
// guest changed (its own subdirectories, the host's it did not remove),
// by path and by descriptor.
func TestDirLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"h1", "h2"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			links := func(path string) int64 {
				t.Helper()
				if r := g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, 0); r != 0 {
					t.Fatalf("stat %s = %d", path, r)
				}
				return int64(g.fdNlinkAt())
			}
			mkdir := func(path string) { expect(t, "mkdir "+path, g.call("mkdirat", atFDCWD64, g.path(2, path), 0o755), 0) }
			mkdir("/tmp/d")
			expect(t, "an empty directory", links("/tmp/d"), 2)
			mkdir("/tmp/d/s1")
			mkdir("/tmp/d/s2")
			expect(t, "a file", int64(b2i(g.open("/tmp/d/f", oCREAT|gWRONLY, 0o644) >= 0)), 1)
			expect(t, "two subdirectories and a file", links("/tmp/d"), 4)
			expect(t, "rename one out", g.call("renameat", atFDCWD64, g.path(2, "/tmp/d/s2"), atFDCWD64, g.path(3, "/tmp/s2")), 0)
			expect(t, "after it moved out", links("/tmp/d"), 3)
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/s1"), 0x200), 0)
			expect(t, "after rmdir", links("/tmp/d"), 2)
			fd := g.open("/tmp/d", gRDONLY|g.p.abi.oDirectory, 0)
			mkdir("/tmp/d/s3")
			expect(t, "fstat", g.call("fstat", uint64(fd), g.buf), 0)
			expect(t, "by descriptor", int64(g.fdNlinkAt()), 3)

			expect(t, "a host directory", links(dir), 4)
			mkdir(dir + "/mine")
			expect(t, "with a subdirectory of the guest's", links(dir), 5)
			expect(t, "rmdir a host subdirectory", g.call("unlinkat", atFDCWD64, g.path(2, dir+"/h1"), 0x200), 0)
			expect(t, "after it", links(dir), 4)
		})
	}
}
