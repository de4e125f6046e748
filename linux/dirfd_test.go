//go:build cgo

package linux

import "testing"

// TestDirfdRelative: the *at calls resolve a relative path against a
// directory descriptor (tar -C DIR, fts); a descriptor of something else
// is ENOTDIR, a closed one EBADF.
func TestDirfdRelative(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "mkdir /tmp/d", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o755), 0)
			d := g.open("/tmp/d", gRDONLY|g.p.abi.oDirectory, 0)
			if d < 0 {
				t.Fatalf("open /tmp/d = %d", d)
			}
			expect(t, "mkdirat(d, sub)", g.call("mkdirat", uint64(d), g.path(2, "sub"), 0o755), 0)
			f := g.call("openat", uint64(d), g.path(2, "sub/f"), oCREAT|gWRONLY, 0o644)
			if f < 0 {
				t.Fatalf("openat(d, sub/f) = %d", f)
			}
			expect(t, "write", g.write(f, "hi"), 2)
			if mode, size, _ := g.stat("/tmp/d/sub/f", true); mode != 0o100644 || size != 2 {
				t.Errorf("/tmp/d/sub/f: mode %o size %d", mode, size)
			}
			if r := g.call("openat", uint64(d), g.path(2, "../d/sub/f"), gRDONLY, 0); r < 0 {
				t.Errorf("openat(d, ../d/sub/f) = %d", r)
			}
			expect(t, "openat(file, x)", g.call("openat", uint64(f), g.path(2, "x"), gRDONLY, 0), -eNOTDIR)
			expect(t, "openat(77, x)", g.call("openat", 77, g.path(2, "x"), gRDONLY, 0), -eBADF)
		})
	}
}

// TestMincore: mapped pages are resident, unmapped memory is ENOMEM, an
// unaligned address EINVAL, an unwritable vector EFAULT.
func TestMincore(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			const protRW, mapPrivAnon = 3, 0x22
			m := g.call("mmap", 0, 3*4096, protRW, mapPrivAnon, 1<<32-1, 0)
			if m < 0 {
				t.Fatalf("mmap = %d", m)
			}
			expect(t, "munmap the middle page", g.call("munmap", uint64(m)+4096, 4096), 0)
			expect(t, "mincore of the first page", g.call("mincore", uint64(m), 100, g.buf), 0)
			if b := readGuestBytes(t, g.p, g.buf, 1); b[0] != 1 {
				t.Errorf("vec = %v, want resident", b)
			}
			expect(t, "mincore over the hole", g.call("mincore", uint64(m), 3*4096, g.buf), -eNOMEM)
			expect(t, "mincore unaligned", g.call("mincore", uint64(m)+1, 1, g.buf), -eINVAL)
			expect(t, "mincore, vec unwritable", g.call("mincore", uint64(m), 1, 8), -eFAULT)
			expect(t, "mincore of nothing", g.call("mincore", uint64(m)+4096, 0, g.buf), 0)
		})
	}
}
