//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// The overlay's tests call the system call handlers directly on an idle
// process (idleProcess), with arguments in guest memory.

func init() {
	// fd = openat(AT_FDCWD, "/tmp/t", O_CREAT|O_RDWR|O_TRUNC, 0644);
	// write(fd, "wrote\n", 6); lseek(fd, 0, SEEK_SET); n = read(fd, sp-64, 64);
	// write(1, sp-64, n); exit_group(0)
	testCode["tmpfile"] = map[*arch.Arch]string{
		// mov edi,-100; lea rsi,[rip+path]; mov edx,0x242; mov r10d,0x1a4;
		// mov eax,257; syscall; mov ebx,eax; mov edi,ebx; lea rsi,[rip+msg];
		// mov edx,6; mov eax,1; syscall; mov edi,ebx; xor esi,esi; xor edx,edx;
		// mov eax,8; syscall; sub rsp,64; mov edi,ebx; mov rsi,rsp; mov edx,64;
		// xor eax,eax; syscall; mov edx,eax; mov edi,1; mov rsi,rsp; mov eax,1;
		// syscall; xor edi,edi; mov eax,231; syscall;
		// path: .asciz "/tmp/t"; msg: .ascii "wrote\n"
		arch.AMD64: "bf9cffffff488d3562000000ba4202000041baa4010000b8010100000f0589c389df488d354c000000ba06000000b8010000000f0589df31f631d2b8080000000f054883ec4089df4889e6ba4000000031c00f0589c2bf010000004889e6b8010000000f0531ffb8e70000000f052f746d702f740077726f74650a",
		// mov x0,#-100; adr x1,path; mov x2,#0x242; mov x3,#0x1a4; mov x8,#56;
		// svc #0; mov x19,x0; adr x1,msg; mov x2,#6; mov x8,#64; svc #0;
		// mov x0,x19; mov x1,#0; mov x2,#0; mov x8,#62; svc #0; sub sp,sp,#64;
		// mov x0,x19; mov x1,sp; mov x2,#64; mov x8,#63; svc #0; mov x2,x0;
		// mov x0,#1; mov x1,sp; mov x8,#64; svc #0; mov x0,#0; mov x8,#94; svc #0;
		// path: .asciz "/tmp/t"; msg: .ascii "wrote\n"
		arch.ARM64: "600c8092a1030010424880d2833480d2080780d2010000d4f30300aa01030070c20080d2080880d2010000d4e00313aa010080d2020080d2c80780d2010000d4ff0301d1e00313aae1030091020880d2e80780d2010000d4e20300aa200080d2e1030091080880d2010000d4000080d2c80b80d2010000d42f746d702f740077726f74650a",
	}
}

// TestOverlayGuest runs a program that writes a file in /tmp and reads it
// back to its standard output.
func TestOverlayGuest(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			path, _ := testELF(t, a, elf.ET_EXEC, "tmpfile")
			var out bytes.Buffer
			_, x := runTest(t, path, Config{Stdout: &out})
			if x.Reason != StopExited || x.Status != 0 || out.String() != "wrote\n" {
				t.Errorf("exit %+v, stdout %q; want status 0, \"wrote\\n\"", x, out.String())
			}
		})
	}
}

// guest is a process and where its arguments go in guest memory.
type guest struct {
	t    *testing.T
	p    *Process
	strs uint64 // paths
	buf  uint64 // data
}

const (
	gRDONLY = 0
	gWRONLY = 1
	gRDWR   = 2
	seekSet = 0
)

func newGuest(t *testing.T, a *arch.Arch, cfg Config) *guest {
	p := idleProcess(t, a, cfg)
	return &guest{t: t, p: p, strs: scratch(p), buf: scratch(p) + 64<<10}
}

// path puts s into guest memory (one of 8 slots, by n).
func (g *guest) path(n int, s string) uint64 {
	return putString(g.t, g.p, g.strs+uint64(n)*4096, s)
}

func (g *guest) call(name string, args ...uint64) int64 { return call(g.p, name, args...) }

func (g *guest) open(path string, flags, mode uint64) int64 {
	return g.call("openat", atFDCWD64, g.path(0, path), flags, mode)
}

func (g *guest) write(fd int64, s string) int64 {
	if err := g.p.Engine.WriteMem(g.buf, []byte(s)); err != nil {
		g.t.Fatal(err)
	}
	return g.call("write", uint64(fd), g.buf, uint64(len(s)))
}

// pread reads up to n bytes of fd at off.
func (g *guest) pread(fd int64, off, n uint64) string {
	g.t.Helper()
	k := g.call("pread64", uint64(fd), g.buf, n, off)
	if k < 0 {
		g.t.Fatalf("pread64(%d) = %d", fd, k)
	}
	return string(readGuestBytes(g.t, g.p, g.buf, uint64(k)))
}

// stat returns the st_mode, st_size and st_ino of path (or -errno in
// mode).
func (g *guest) stat(path string, follow bool) (mode int64, size, ino uint64) {
	flags := uint64(0)
	if !follow {
		flags = atSymlinkNofollow
	}
	if r := g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, flags); r != 0 {
		return r, 0, 0
	}
	b := readGuestBytes(g.t, g.p, g.buf, 64)
	le := binary.LittleEndian
	if g.p.abi == abiFor(arch.AMD64) {
		return int64(le.Uint32(b[24:])), le.Uint64(b[48:]), le.Uint64(b[8:])
	}
	return int64(le.Uint32(b[16:])), le.Uint64(b[48:]), le.Uint64(b[8:])
}

// names lists the directory path with getdents64.
func (g *guest) names(path string) []string {
	g.t.Helper()
	fd := g.open(path, gRDONLY|g.p.abi.oDirectory, 0)
	if fd < 0 {
		g.t.Fatalf("open %s = %d", path, fd)
	}
	defer g.call("close", uint64(fd))
	var names []string
	for {
		n := g.call("getdents64", uint64(fd), g.buf, 100) // small: several calls
		if n < 0 {
			g.t.Fatalf("getdents64 = %d", n)
		}
		if n == 0 {
			return names
		}
		b := readGuestBytes(g.t, g.p, g.buf, uint64(n))
		for len(b) > 0 {
			reclen := binary.LittleEndian.Uint16(b[16:])
			name, _, _ := strings.Cut(string(b[19:reclen]), "\x00")
			names = append(names, name)
			b = b[reclen:]
		}
	}
}

func TestOverlayFiles(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			excl := uint64(oCREAT | oEXCL)

			// Create, write, read back through the shared offset.
			expect(t, "create", g.open("/tmp/a", excl|gRDWR, 0o666), 3)
			expect(t, "create again with O_EXCL", g.open("/tmp/a", excl|gRDWR, 0o666), -eEXIST)
			expect(t, "write", g.write(3, "hello"), 5)
			expect(t, "dup", g.call("dup", 3), 4)
			expect(t, "write through the dup", g.write(4, "!"), 1)
			expect(t, "lseek", g.call("lseek", 3, 0, seekSet), 0)
			expect(t, "read", g.call("read", 3, g.buf, 100), 6)
			if got := string(readGuestBytes(t, g.p, g.buf, 6)); got != "hello!" {
				t.Errorf("read %q, want hello!", got)
			}
			mode, size, ino := g.stat("/tmp/a", true)
			expect(t, "st_mode", mode, 0o100644) // 0666 less the umask
			expect(t, "st_size", int64(size), 6)

			// O_APPEND writes at the end whatever the offset.
			expect(t, "open O_APPEND", g.open("/tmp/a", gWRONLY|oAPPEND, 0), 5)
			expect(t, "lseek", g.call("lseek", 5, 0, seekSet), 0)
			expect(t, "append", g.write(5, "X"), 1)
			expect(t, "read a write-only fd", g.call("read", 5, g.buf, 1), -eBADF)
			putString(t, g.p, g.buf, "J")
			expect(t, "pwrite64", g.call("pwrite64", 3, g.buf, 1, 0), 1)
			if got := g.pread(3, 0, 100); got != "Jello!X" {
				t.Errorf("contents %q, want Jello!X", got)
			}

			// Truncation, both ways, and O_TRUNC.
			expect(t, "ftruncate", g.call("ftruncate", 3, 2), 0)
			expect(t, "ftruncate longer", g.call("ftruncate", 3, 4), 0)
			if got := g.pread(3, 0, 100); got != "Je\x00\x00" {
				t.Errorf("contents %q, want Je\\0\\0", got)
			}
			expect(t, "ftruncate read-only", g.call("ftruncate", 0, 0), -eINVAL)
			expect(t, "open O_TRUNC", g.open("/tmp/a", gRDONLY|oTRUNC, 0), 6)
			if _, size, _ := g.stat("/tmp/a", true); size != 0 {
				t.Errorf("size after O_TRUNC %d", size)
			}
			expect(t, "write", g.write(3, "data"), 4)

			// A private mapping reads the current contents.
			const protRead = 1
			addr := g.call("mmap", 0, 4096, protRead, mapPrivate, 3, 0)
			if addr < 0 {
				t.Fatalf("mmap = %d", addr)
			}
			if got := readGuestBytes(t, g.p, uint64(addr), 10); !bytes.Equal(got, []byte("\x00\x00\x00\x00\x00\x00data")) {
				t.Errorf("mapped %q", got)
			}

			// Rename keeps the inode; unlink of an open file keeps it
			// readable and writable through its descriptor.
			expect(t, "renameat", g.call("renameat", atFDCWD64, g.path(2, "/tmp/a"), atFDCWD64, g.path(3, "/tmp/b")), 0)
			if mode, _, _ := g.stat("/tmp/a", true); mode != -eNOENT {
				t.Errorf("old name: stat = %d", mode)
			}
			if _, _, ino2 := g.stat("/tmp/b", true); ino2 != ino {
				t.Errorf("inode %d after rename, want %d", ino2, ino)
			}
			expect(t, "unlinkat", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/b"), 0), 0)
			if mode, _, _ := g.stat("/tmp/b", true); mode != -eNOENT {
				t.Errorf("unlinked: stat = %d", mode)
			}
			expect(t, "write unlinked", g.write(4, "!"), 1)
			if got := g.pread(3, 6, 100); got != "data!" {
				t.Errorf("unlinked file reads %q", got)
			}

			// Directories.
			expect(t, "mkdirat", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o777), 0)
			expect(t, "mkdirat again", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o777), -eEXIST)
			if mode, _, _ := g.stat("/tmp/d", true); mode != 0o040755 {
				t.Errorf("directory mode %o", mode)
			}
			expect(t, "create in it", g.open("/tmp/d/f", oCREAT|gRDWR, 0o600), 7)
			expect(t, "create below a file", g.open("/tmp/d/f/g", oCREAT|gWRONLY, 0o600), -eNOTDIR)
			expect(t, "rmdir non-empty", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d"), 0x200), -eNOTEMPTY)
			expect(t, "unlink a directory", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d"), 0), -eISDIR)
			expect(t, "rename directory", g.call("renameat", atFDCWD64, g.path(2, "/tmp/d"), atFDCWD64, g.path(3, "/tmp/e")), 0)
			if got := g.pread(7, 0, 1); got != "" {
				t.Errorf("moved file reads %q", got)
			}
			if mode, _, _ := g.stat("/tmp/e/f", true); mode != 0o100600 {
				t.Errorf("moved file: stat = %o", mode)
			}
			expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/e/f"), 0), 0)
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/e"), 0x200), 0)
			expect(t, "rmdir again", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/e"), 0x200), -eNOENT)
			expect(t, "rmdir /tmp", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp"), 0x200), -eBUSY)

			// Links and modes.
			expect(t, "symlinkat", g.call("symlinkat", g.path(2, "c"), atFDCWD64, g.path(3, "/tmp/l")), 0)
			expect(t, "readlinkat", g.call("readlinkat", atFDCWD64, g.path(2, "/tmp/l"), g.buf, 100), 1)
			expect(t, "create through the link", g.open("/tmp/l", oCREAT|gWRONLY, 0o644), 8)
			expect(t, "O_EXCL on the link", g.open("/tmp/l", excl|gWRONLY, 0o644), -eEXIST)
			if mode, _, _ := g.stat("/tmp/c", true); mode != 0o100644 {
				t.Errorf("link target: stat = %o", mode)
			}
			if mode, size, _ := g.stat("/tmp/l", false); mode != 0o120777 || size != 1 {
				t.Errorf("link: mode %o size %d", mode, size)
			}
			// fchmodat has no flags argument: a fourth register left
			// over (glibc 2.36's AArch64 chmod) is ignored.
			expect(t, "fchmodat", g.call("fchmodat", atFDCWD64, g.path(2, "/tmp/l"), 0o751, 0xdead), 0)
			expect(t, "fchmodat2 AT_SYMLINK_NOFOLLOW on a link", g.call("fchmodat2", atFDCWD64, g.path(2, "/tmp/l"), 0o751, atSymlinkNofollow), -eOPNOTSUPP)
			expect(t, "fchmodat2 with unknown flags", g.call("fchmodat2", atFDCWD64, g.path(2, "/tmp/l"), 0o751, 1), -eINVAL)
			if mode, _, _ := g.stat("/tmp/c", true); mode != 0o100751 {
				t.Errorf("after chmod: mode %o", mode)
			}
			expect(t, "fsync", g.call("fsync", 8), 0)
			expect(t, "O_TMPFILE", g.open("/tmp", oTMPFILE|g.p.abi.oDirectory|gRDWR, 0o600), 9)
			expect(t, "write the unnamed file", g.write(9, "tmp"), 3)
			if got := g.pread(9, 0, 10); got != "tmp" {
				t.Errorf("O_TMPFILE file reads %q", got)
			}
			expect(t, "O_TMPFILE read-only", g.open("/tmp", oTMPFILE|g.p.abi.oDirectory, 0o600), -eINVAL)
			expect(t, "O_TMPFILE in /", g.open("/", oTMPFILE|g.p.abi.oDirectory|gRDWR, 0o600), -eROFS)
			// Not the directories on the way to the program's or the
			// working directory (a checkout under /tmp, t.TempDir()).
			got := slices.DeleteFunc(g.names("/tmp"), func(s string) bool {
				for _, root := range g.p.ov.roots[1:] {
					if strings.HasPrefix(root, "/tmp/"+s+"/") || root == "/tmp/"+s {
						return true
					}
				}
				return strings.HasPrefix(s, "Test")
			})
			if want := []string{".", "..", "c", "l"}; !reflect.DeepEqual(got, want) {
				t.Errorf("/tmp lists %q, want %q", got, want)
			}

			// Outside the writable trees nothing changes.
			expect(t, "create in /usr", g.open("/usr/x", oCREAT|gWRONLY, 0o644), -eROFS)
			// A directory above the working directory, outside /tmp (none
			// when the checkout itself is under /tmp).
			for d := filepath.Dir(g.p.ov.roots[len(g.p.ov.roots)-1]); d != "/"; d = filepath.Dir(d) {
				if d == "/tmp" || strings.HasPrefix(d, "/tmp/") {
					continue
				}
				fd := g.open(d, gRDONLY|g.p.abi.oDirectory, 0)
				expect(t, "fchmod above the working directory", g.call("fchmod", uint64(fd), 0o777), -eROFS)
				break
			}
			expect(t, "mkdir in /usr", g.call("mkdirat", atFDCWD64, g.path(2, "/x"), 0o777), -eROFS)
			expect(t, "create in a missing directory", g.open("/tmp/none/x", oCREAT|gWRONLY, 0o644), -eNOENT)
		})
	}
}

// TestReservedMemory: address space reserved PROT_NONE (Go's runtime
// reserves more than a gigabyte at start, glibc 64 MiB per malloc arena)
// does not count against the memory cap until mprotect makes it
// accessible; the guest cannot write to it before (EFAULT from the
// system calls, as Linux gives); making more accessible than the cap
// allows stops the run as mapping as much does.
func TestReservedMemory(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{MaxMem: 64 << 20})
			const protRW, mapPrivAnon, mapNoReserve = 3, 0x22, 0x4000
			before := g.p.vm.used()
			r := g.call("mmap", 0, 4<<30, 0, mapPrivAnon|mapNoReserve, 1<<32-1, 0)
			if r < 0 || g.p.vm.used() != before {
				t.Fatalf("mmap of 4 GiB PROT_NONE with a 64 MiB cap = %d, in use %d -> %d", r, before, g.p.vm.used())
			}
			at := uint64(r)
			expect(t, "getrandom into the reservation", g.call("getrandom", at, 16, 0), -eFAULT)
			expect(t, "mprotect 1 MiB of it read-write", g.call("mprotect", at, 1<<20, protRW), 0)
			if got := g.p.vm.used() - before; got != 1<<20 {
				t.Errorf("in use after the mprotect: %d more, want %d", got, 1<<20)
			}
			expect(t, "getrandom into the accessible part", g.call("getrandom", at, 16, 0), 16)
			expect(t, "mprotect it back to PROT_NONE", g.call("mprotect", at, 1<<20, 0), 0)
			if g.p.vm.used() != before {
				t.Errorf("in use after taking the access away: %d, want %d", g.p.vm.used(), before)
			}
			expect(t, "munmap the reservation", g.call("munmap", at, 4<<30), 0)
			r = g.call("mmap", 0, 1<<30, 0, mapPrivAnon, 1<<32-1, 0)
			if r < 0 {
				t.Fatalf("mmap of 1 GiB PROT_NONE = %d", r)
			}
			expect(t, "mprotect 128 MiB of it read-write", g.call("mprotect", uint64(r), 128<<20, protRW), -eNOMEM)
			if x := g.p.Exited(); x == nil || x.Reason != StopMemory || !strings.Contains(x.Detail, "guest memory cap of 67108864 bytes reached: mprotect of 134217728 bytes") {
				t.Errorf("mprotect past the cap: %+v, want the run stopped at the cap", x)
			}
		})
	}
}

// TestOverlayMemoryCap fills the overlay up to the memory cap: the write
// that crosses it is short, the next one ENOSPC; removing the file gives
// the memory back.
func TestOverlayMemoryCap(t *testing.T) {
	g := newGuest(t, arch.AMD64, Config{})
	g.p.vm.max = g.p.vm.total + g.p.vm.held + 100_000
	expect(t, "create", g.open("/tmp/big", oCREAT|gWRONLY, 0o644), 3)
	chunk := strings.Repeat("x", 30_000)
	var total int64
	for range 3 {
		expect(t, "write", g.write(3, chunk), 30_000)
		total += 30_000
	}
	n := g.write(3, chunk)
	if n <= 0 || n >= 30_000 {
		t.Fatalf("write crossing the cap = %d, want a short write", n)
	}
	expect(t, "write at the cap", g.write(3, chunk), -eNOSPC)
	expect(t, "create at the cap", g.open("/tmp/other", oCREAT|gWRONLY, 0o644), -eNOSPC)
	expect(t, "ftruncate beyond the cap", g.call("ftruncate", 3, 1<<20), -eNOSPC)
	expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/big"), 0), 0)
	expect(t, "still open: still full", g.open("/tmp/other", oCREAT|gWRONLY, 0o644), -eNOSPC)
	expect(t, "close", g.call("close", 3), 0)
	expect(t, "create after close", g.open("/tmp/other", oCREAT|gWRONLY, 0o644), 3)
	expect(t, "write after close", g.write(3, chunk), 30_000)
}

// TestOverlayCheckpoint restores the overlay of a checkpoint: contents,
// names, offsets, and the memory counted; restoring twice gives the same.
func TestOverlayCheckpoint(t *testing.T) {
	g := newGuest(t, arch.ARM64, Config{})
	s := NewSession(g.p)
	expect(t, "create", g.open("/tmp/f", oCREAT|gRDWR, 0o644), 3)
	expect(t, "write", g.write(3, "one"), 3)
	held := g.p.vm.held
	c, err := s.Checkpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		expect(t, "pwrite", g.call("pwrite64", 3, g.buf, 3, 0), 3)
		expect(t, "write more", g.write(3, strings.Repeat("two", 1000)), 3000)
		expect(t, "create another", g.open("/tmp/g", oCREAT|gRDWR, 0o644), 4)
		expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/f"), 0), 0)
		if err := s.Restore(c); err != nil {
			t.Fatal(err)
		}
		if got := g.pread(3, 0, 100); got != "one" {
			t.Errorf("restored contents %q", got)
		}
		expect(t, "restored offset", g.call("lseek", 3, 0, 1), 3)
		if mode, _, _ := g.stat("/tmp/f", true); mode != 0o100644 {
			t.Errorf("restored file: stat = %d", mode)
		}
		if mode, _, _ := g.stat("/tmp/g", true); mode != -eNOENT {
			t.Errorf("file made after the checkpoint: stat = %d", mode)
		}
		if g.p.vm.held != held {
			t.Errorf("held %d after restore, want %d", g.p.vm.held, held)
		}
	}
}

// snapshotTree records every file below dir: type, permissions, size,
// modification time and contents (or link target).
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		var content []byte
		switch {
		case fi.Mode().IsRegular():
			content, err = os.ReadFile(path)
		case fi.Mode()&fs.ModeSymlink != 0:
			var s string
			s, err = os.Readlink(path)
			content = []byte(s)
		}
		m[path] = fi.Mode().String() + " " + fi.ModTime().String() + " " + string(content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOverlayHostUnchanged runs a guest whose working directory is a host
// directory with files the user named: it writes, renames and deletes
// them and makes new ones; the guest sees its changes, the host directory
// is unchanged.
func TestOverlayHostUnchanged(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep, gone := filepath.Join(dir, "keep"), filepath.Join(dir, "sub", "gone")
	for _, f := range []string{keep, gone} {
		if err := os.WriteFile(f, []byte("host "+filepath.Base(f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("keep", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	before := snapshotTree(t, dir)
	t.Chdir(dir)
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		g := newGuest(t, a, Config{ReadAllow: []string{keep, gone, filepath.Join(dir, "link")}})
		if got, want := g.names("."), []string{".", "..", "keep", "link", "sub"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s lists %q, want %q", dir, got, want)
		}
		expect(t, "open keep for writing", g.open("keep", gRDWR, 0), 3)
		if got := g.pread(3, 0, 100); got != "host keep" {
			t.Errorf("copied up: %q", got)
		}
		expect(t, "write", g.write(3, "guest"), 5)
		expect(t, "rename", g.call("renameat", atFDCWD64, g.path(2, "keep"), atFDCWD64, g.path(3, "moved")), 0)
		expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "sub/gone"), 0), 0)
		expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, "sub"), 0x200), 0)
		expect(t, "create", g.open(filepath.Join(dir, "new"), oCREAT|gWRONLY, 0o644), 4)
		expect(t, "write new", g.write(4, "new"), 3)
		expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "newdir"), 0o755), 0)
		expect(t, "symlink", g.call("symlinkat", g.path(2, "moved"), atFDCWD64, g.path(3, "newdir/l")), 0)
		expect(t, "chmod", g.call("fchmodat", atFDCWD64, g.path(2, "moved"), 0o600, 0), 0)
		expect(t, "truncate through the new link", g.call("truncate", g.path(2, "newdir/l"), 3), -eNOENT)
		expect(t, "rename the link", g.call("renameat", atFDCWD64, g.path(2, "link"), atFDCWD64, g.path(3, "link2")), 0)
		expect(t, "getcwd", g.call("getcwd", g.buf, 4096), int64(len(dir)+1))

		if got := g.pread(3, 0, 100); got != "guestkeep" {
			t.Errorf("written: %q", got)
		}
		if mode, _, _ := g.stat("keep", true); mode != -eNOENT {
			t.Errorf("renamed away: stat = %d", mode)
		}
		if mode, size, _ := g.stat("moved", true); mode != 0o100600 || size != 9 {
			t.Errorf("moved: mode %o size %d", mode, size)
		}
		if mode, _, _ := g.stat("sub", true); mode != -eNOENT {
			t.Errorf("removed directory: stat = %d", mode)
		}
		if got, want := g.names("."), []string{".", "..", "link2", "moved", "new", "newdir"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s lists %q, want %q", dir, got, want)
		}
	}
	if after := snapshotTree(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("the host directory changed:\nbefore %q\nafter  %q", before, after)
	}
}

// TestOverlayUmask: umask returns the old mask (022 at start) and the new
// one applies to the files and directories made after it, also across a
// checkpoint's copy of the overlay.
func TestOverlayUmask(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "umask", g.call("umask", 0o077), 0o022)
			expect(t, "create", g.open("/tmp/f", oCREAT|gWRONLY, 0o666), 3)
			if mode, _, _ := g.stat("/tmp/f", true); mode != 0o100600 {
				t.Errorf("file mode %o, want 100600", mode)
			}
			expect(t, "mkdirat", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o777), 0)
			if mode, _, _ := g.stat("/tmp/d", true); mode != 0o040700 {
				t.Errorf("directory mode %o, want 40700", mode)
			}
			expect(t, "umask with other bits", g.call("umask", 0o7027), 0o077)
			if c, _, _ := g.p.ov.clone(nil, nil); c.umask != 0o027 {
				t.Errorf("a copy of the overlay has umask %o, want 27", c.umask)
			}
			expect(t, "umask again", g.call("umask", 0o022), 0o027)
		})
	}
}

// TestOverlaySharedMapping: a MAP_SHARED mapping of a file open for
// reading and writing is coherent with the file at system calls: stores
// into it read back through pread, pwrite shows in it, two mappings see
// each other's stores, and munmap keeps what was stored; a read-only
// descriptor cannot be mapped shared and writable. msync checks its
// arguments.
func TestOverlaySharedMapping(t *testing.T) {
	const protRW = 3
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			// sys is a system call as the guest makes it: with the
			// shared mappings synchronised around it.
			sys := func(name string, args ...uint64) int64 {
				g.p.syncSharedIn()
				defer g.p.syncSharedOut()
				return g.call(name, args...)
			}
			store := func(addr uint64, s string) {
				if err := g.p.Engine.WriteMem(addr, []byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			pread := func(fd int64, n uint64) string {
				k := sys("pread64", uint64(fd), g.buf, n, 0)
				return string(readGuestBytes(t, g.p, g.buf, uint64(max(k, 0))))
			}
			expect(t, "create", g.open("/tmp/m", oCREAT|gRDWR, 0o644), 3)
			expect(t, "write", g.write(3, "0123456789"), 10)
			m1 := sys("mmap", 0, 4096, protRW, mapShared, 3, 0)
			m2 := sys("mmap", 0, 4096, protRW, mapShared, 3, 0)
			if m1 < 0 || m2 < 0 {
				t.Fatalf("mmap = %d, %d", m1, m2)
			}
			store(uint64(m1), "ab")
			if got := pread(3, 20); got != "ab23456789" {
				t.Errorf("after stores to the map, the file reads %q", got)
			}
			if got := string(readGuestBytes(t, g.p, uint64(m2), 10)); got != "ab23456789" {
				t.Errorf("the other mapping shows %q", got)
			}
			putString(t, g.p, g.buf, "XY")
			expect(t, "pwrite64", sys("pwrite64", 3, g.buf, 2, 5), 2)
			if got := string(readGuestBytes(t, g.p, uint64(m1), 10)); got != "ab234XY789" {
				t.Errorf("after pwrite64, the map shows %q", got)
			}
			store(uint64(m1)+9, "!")
			store(uint64(m2), "Q")
			if got := pread(3, 20); got != "Qb234XY78!" {
				t.Errorf("after stores to both maps, the file reads %q", got)
			}
			expect(t, "msync", sys("msync", uint64(m1), 4096, 4), 0)
			expect(t, "msync unaligned", sys("msync", uint64(m1)+1, 10, 4), -eINVAL)
			expect(t, "msync MS_ASYNC|MS_SYNC", sys("msync", uint64(m1), 10, 5), -eINVAL)
			store(uint64(m2)+1, "R")
			expect(t, "munmap", sys("munmap", uint64(m2), 4096), 0)
			expect(t, "msync unmapped", sys("msync", uint64(m2), 4096, 4), -eNOMEM)
			if got := pread(3, 20); got != "QR234XY78!" {
				t.Errorf("after munmap, the file reads %q", got)
			}
			// The file did not grow: the page's bytes past its end are
			// the mapping's own.
			store(uint64(m1)+100, "z")
			if got := pread(3, 200); got != "QR234XY78!" {
				t.Errorf("after a store past the end, the file reads %q", got)
			}
			// A checkpoint's copy: its mapping refers to its own node.
			c, _, vmas := g.p.ov.clone(nil, g.p.vm.vmas)
			for _, v := range vmas {
				if v.node != nil && v.node != c.nodes["/tmp/m"] {
					t.Errorf("a copied mapping refers to a node not in the copied overlay")
				}
			}

			expect(t, "open read-only", g.open("/tmp/m", gRDONLY, 0), 4)
			expect(t, "shared writable of a read-only fd", sys("mmap", 0, 4096, protRW, mapShared, 4, 0), -eACCES)
			m3 := sys("mmap", 0, 4096, 1, mapShared, 4, 0)
			if m3 < 0 {
				t.Fatalf("shared read-only mmap = %d", m3)
			}
			if got := string(readGuestBytes(t, g.p, uint64(m3), 10)); got != "QR234XY78!" {
				t.Errorf("a read-only shared mapping shows %q", got)
			}
		})
	}
}

// TestChdir: chdir and fchdir move the guest's working directory, not the
// host's: getcwd and relative paths follow it; a file, a missing path and
// a directory without search permission are refused as Linux refuses them.
func TestChdir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"f", "sub/g"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("host "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir("/")
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			cwd := func() string {
				t.Helper()
				n := g.call("getcwd", g.buf, 4096)
				if n <= 0 {
					t.Fatalf("getcwd = %d", n)
				}
				return string(readGuestBytes(t, g.p, g.buf, uint64(n-1)))
			}
			chdir := func(path string) int64 { return g.call("chdir", g.path(0, path)) }
			if got := cwd(); got != "/" {
				t.Errorf("getcwd %q at the start, want the host's, /", got)
			}
			expect(t, "chdir dir", chdir(dir), 0)
			if got := cwd(); got != dir {
				t.Errorf("getcwd %q, want %q", got, dir)
			}
			if got, want := g.names("."), []string{".", "..", "f", "sub"}; !reflect.DeepEqual(got, want) {
				t.Errorf(". lists %q, want %q", got, want)
			}
			expect(t, "chdir sub", chdir("sub"), 0)
			if mode, size, _ := g.stat("g", true); mode != 0o100644 || size != 10 { // in /tmp: writable
				t.Errorf("stat g: mode %o size %d", mode, size)
			}
			expect(t, "chdir ..", chdir(".."), 0)
			if got := cwd(); got != dir {
				t.Errorf("getcwd %q after .., want %q", got, dir)
			}
			expect(t, "chdir to a file", chdir("f"), -eNOTDIR)
			expect(t, "chdir to nothing", chdir("missing"), -eNOENT)
			expect(t, "chdir to an empty path", chdir(""), -eNOENT)
			if got := cwd(); got != dir {
				t.Errorf("getcwd %q after failed chdirs, want %q", got, dir)
			}

			expect(t, "chdir /tmp", chdir("/tmp"), 0)
			// utimensat(AT_FDCWD, "", times, AT_EMPTY_PATH) sets the
			// working directory's times, not /'s.
			expect(t, "mkdir touched", g.call("mkdirat", atFDCWD64, g.path(1, "touched"), 0o755), 0)
			expect(t, "chdir touched", chdir("touched"), 0)
			times := make([]byte, 32)
			binary.LittleEndian.PutUint64(times, 1000)      // atime
			binary.LittleEndian.PutUint64(times[16:], 2000) // mtime
			if err := g.p.Engine.WriteMem(g.buf, times); err != nil {
				t.Fatal(err)
			}
			expect(t, "utimensat of the working directory", g.call("utimensat", atFDCWD64, g.path(1, ""), g.buf, atEmptyPath), 0)
			mtime := func(path string) uint64 {
				t.Helper()
				expect(t, "stat "+path, g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, 0), 0)
				return binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf, 96)[88:])
			}
			if got := mtime("/tmp/touched"); got != 2000 {
				t.Errorf("the working directory's mtime %d, want 2000", got)
			}
			if got := mtime("/"); got == 2000 {
				t.Error("utimensat of the working directory set /'s times")
			}
			expect(t, "chdir /tmp again", chdir("/tmp"), 0)
			fd := g.open("new", oCREAT|gWRONLY, 0o644)
			expect(t, "write", g.write(fd, "x"), 1)
			if mode, size, _ := g.stat("/tmp/new", true); mode != 0o100644 || size != 1 {
				t.Errorf("/tmp/new, made as new: mode %o size %d", mode, size)
			}
			expect(t, "mkdir locked", g.call("mkdirat", atFDCWD64, g.path(1, "locked"), 0), 0)
			expect(t, "chdir locked", chdir("locked"), -eACCES)

			sub := g.open(filepath.Join(dir, "sub"), gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "fchdir sub", g.call("fchdir", uint64(sub)), 0)
			if got := cwd(); got != filepath.Join(dir, "sub") {
				t.Errorf("getcwd %q after fchdir, want %q", got, filepath.Join(dir, "sub"))
			}
			expect(t, "fchdir a file", g.call("fchdir", uint64(fd)), -eNOTDIR)
			expect(t, "fchdir a closed descriptor", g.call("fchdir", 99), -eBADF)

			// A checkpoint (the TUI's step back) keeps it.
			s := NewSession(g.p)
			c, err := s.Checkpoint(nil)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, "chdir /", chdir("/"), 0)
			if err := s.Restore(c); err != nil {
				t.Fatal(err)
			}
			if got := cwd(); got != filepath.Join(dir, "sub") {
				t.Errorf("getcwd %q after a restore, want %q", got, filepath.Join(dir, "sub"))
			}
		})
	}
	if wd, _ := os.Getwd(); wd != "/" {
		t.Errorf("the host's working directory moved to %s", wd)
	}
}

// TestIoctl: the ioctls Linux has for every file and for pipes (FIOCLEX,
// FIONCLEX, FIONBIO, FIONREAD) work as there; the rest, terminal ones
// included, are ENOTTY, also on the standard streams.
func TestIoctl(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	const tcgets = 0x5401
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			arg := g.buf + 4096 // an int
			ioctl := func(fd int64, cmd, argp uint64) int64 { return g.call("ioctl", uint64(fd), cmd, argp) }
			nread := func(what string, fd int64, want int32) {
				t.Helper()
				expect(t, "FIONREAD "+what, ioctl(fd, ioFIONREAD, arg), 0)
				if got := int32(binary.LittleEndian.Uint32(readGuestBytes(t, g.p, arg, 4))); got != want {
					t.Errorf("FIONREAD %s: %d bytes, want %d", what, got, want)
				}
			}
			setInt := func(v uint32) {
				t.Helper()
				if err := g.p.Engine.WriteMem(arg, binary.LittleEndian.AppendUint32(nil, v)); err != nil {
					t.Fatal(err)
				}
			}
			fds := g.buf + 8192
			expect(t, "pipe2", g.call("pipe2", fds, 0), 0)
			b := readGuestBytes(t, g.p, fds, 8)
			r, w := int64(binary.LittleEndian.Uint32(b)), int64(binary.LittleEndian.Uint32(b[4:]))
			nread("empty pipe", r, 0)
			expect(t, "write", g.write(w, "hello"), 5)
			nread("pipe, read end", r, 5)
			nread("pipe, write end", w, 5)
			expect(t, "read 2", g.call("read", uint64(r), g.buf, 2), 2)
			nread("pipe after a read", r, 3)
			expect(t, "read 3", g.call("read", uint64(r), g.buf, 3), 3)
			setInt(1)
			expect(t, "FIONBIO on", ioctl(r, ioFIONBIO, arg), 0)
			expect(t, "F_GETFL after FIONBIO on", g.call("fcntl", uint64(r), 3)&oNONBLOCK, oNONBLOCK)
			expect(t, "read of an empty nonblocking pipe", g.call("read", uint64(r), g.buf, 1), -eAGAIN)
			setInt(0)
			expect(t, "FIONBIO off", ioctl(r, ioFIONBIO, arg), 0)
			expect(t, "F_GETFL after FIONBIO off", g.call("fcntl", uint64(r), 3)&oNONBLOCK, 0)
			expect(t, "FIONBIO, bad pointer", ioctl(r, ioFIONBIO, 8), -eFAULT)
			expect(t, "FIOCLEX", ioctl(r, ioFIOCLEX, 0), 0)
			expect(t, "FIONCLEX", ioctl(w, ioFIONCLEX, 0), 0)

			fd := g.open(file, gRDONLY, 0)
			if fd < 0 {
				t.Fatalf("open: %d", fd)
			}
			nread("file at 0", fd, 10)
			expect(t, "read 4", g.call("read", uint64(fd), g.buf, 4), 4)
			nread("file at 4", fd, 6)
			expect(t, "lseek past the end", g.call("lseek", uint64(fd), 12, seekSet), 12)
			nread("file past its end", fd, -2)
			expect(t, "FIONREAD, bad pointer", ioctl(fd, ioFIONREAD, 8), -eFAULT)
			over := g.open(filepath.Join(dir, "new"), oCREAT|gRDWR, 0o644)
			expect(t, "write new", g.write(over, "abc"), 3)
			expect(t, "lseek new", g.call("lseek", uint64(over), 1, seekSet), 1)
			nread("overlay file", over, 2)

			d := g.open(dir, gRDONLY|g.p.abi.oDirectory, 0)
			expect(t, "FIONREAD directory", ioctl(d, ioFIONREAD, arg), -eNOTTY)
			for fd := int64(0); fd < 3; fd++ {
				expect(t, fmt.Sprintf("TCGETS %d", fd), ioctl(fd, tcgets, g.buf), -eNOTTY)
				expect(t, fmt.Sprintf("FIONREAD %d", fd), ioctl(fd, ioFIONREAD, arg), -eNOTTY)
			}
			expect(t, "TCGETS pipe", ioctl(r, tcgets, g.buf), -eNOTTY)
			expect(t, "bad descriptor", ioctl(99, ioFIONREAD, arg), -eBADF)
			expect(t, "command's upper bits ignored", ioctl(fd, 1<<32|ioFIONREAD, arg), 0)
		})
	}
}

// TestStatBlocks: st_blocks counts whole 4 KiB blocks, as ext4 and tmpfs
// give them for files without holes, for host files, overlay files and
// directories, and none for a short symbolic link; never the host's own
// count, which depends on its file system.
func TestStatBlocks(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"empty": 0, "one": 1, "page": 4096, "more": 4097} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			blocks := func(path string) int64 {
				t.Helper()
				if r := g.call("newfstatat", atFDCWD64, g.path(1, path), g.buf, atSymlinkNofollow); r != 0 {
					t.Fatalf("newfstatat %s = %d", path, r)
				}
				// st_blocks: at 64 in both architectures' struct stat.
				return int64(binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+64, 8)))
			}
			for name, want := range map[string]int64{"empty": 0, "one": 8, "page": 8, "more": 16} {
				expect(t, "st_blocks of host file "+name, blocks(filepath.Join(dir, name)), want)
			}
			expect(t, "st_blocks of a directory", blocks(dir), 8)
			fd := g.open(filepath.Join(dir, "new"), oCREAT|gRDWR, 0o644)
			expect(t, "write", g.write(fd, strings.Repeat("x", 5000)), 5000)
			expect(t, "st_blocks of an overlay file", blocks(filepath.Join(dir, "new")), 16)
			expect(t, "symlink", g.call("symlinkat", g.path(2, "new"), atFDCWD64, g.path(3, filepath.Join(dir, "l"))), 0)
			expect(t, "st_blocks of a short symlink", blocks(filepath.Join(dir, "l")), 0)
			expect(t, "long symlink", g.call("symlinkat", g.path(2, strings.Repeat("y", 100)), atFDCWD64, g.path(3, filepath.Join(dir, "ll"))), 0)
			expect(t, "st_blocks of a long symlink", blocks(filepath.Join(dir, "ll")), 8)
		})
	}
}

// TestDeepDirectories: a directory dug one level at a time (mkdirat and
// openat from each descriptor to the next) goes as deep as an absolute
// name of PATH_MAX allows, then ENAMETOOLONG; every step costs about the
// same (files are found by their absolute names). The file system is the
// same on both architectures: x86-64 only.
func TestDeepDirectories(t *testing.T) {
	for _, a := range testArches[:1] {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			fd := g.open("/tmp", gRDONLY, 0)
			depth := 0
			for ; depth < 2000; depth++ {
				if r := g.call("mkdirat", uint64(fd), g.path(1, "dd"), 0o755); r != 0 {
					expect(t, "mkdirat past PATH_MAX", r, -eNAMETOOLONG)
					break
				}
				n := g.call("openat", uint64(fd), g.path(1, "dd/./"), gRDONLY, 0)
				if n < 0 {
					t.Fatalf("openat at depth %d = %d", depth, n)
				}
				g.call("close", uint64(fd))
				fd = n
			}
			if want := (pathMax - len("/tmp") + 2) / 3; depth != want-1 {
				t.Errorf("depth %d, want %d", depth, want-1)
			}
			if r := g.call("openat", uint64(fd), g.path(1, "../dd"), gRDONLY, 0); r < 0 {
				t.Errorf("openat of ../dd = %d", r)
			}
		})
	}
}

// TestWhiteoutBelowHostDirectories removes host files and directories
// deep in a named tree the guest had not written to (tar -x over an
// existing tree unlinks, then creates with O_EXCL): each is gone at
// once, to lookups and listings, and its name can be made anew. The
// whiteout once sat below directories lookup did not look into, and
// unlink answered 0 while the file stayed.
func TestWhiteoutBelowHostDirectories(t *testing.T) {
	dir := t.TempDir() // below /tmp: writable for the guest
	for _, f := range []string{"sub/deep/f", "sub/g", "other/x"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			gone := func(path string) {
				t.Helper()
				if mode, _, _ := g.stat(path, false); mode != -eNOENT {
					t.Errorf("stat %s after removing it = %d, want ENOENT", path, mode)
				}
			}
			f := dir + "/sub/deep/f"
			expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, f), 0), 0)
			gone(f)
			if names := g.names(dir + "/sub/deep"); len(names) != 2 { // . and ..
				t.Errorf("listing after unlink: %q", names)
			}
			fd := g.open(f, oCREAT|oEXCL|gWRONLY, 0o644)
			if fd < 0 {
				t.Fatalf("create with O_EXCL after unlink = %d", fd)
			}
			expect(t, "write", g.write(fd, "new"), 3)
			expect(t, "rename to another untouched directory", g.call("renameat", atFDCWD64, g.path(2, dir+"/sub/g"), atFDCWD64, g.path(3, dir+"/other/y")), 0)
			gone(dir + "/sub/g")
			if mode, size, _ := g.stat(dir+"/other/y", false); mode < 0 || size != 3 {
				t.Errorf("stat of the new name = %d, size %d", mode, size)
			}
			expect(t, "rmdir", g.call("unlinkat", atFDCWD64, g.path(2, dir+"/sub/empty"), 0x200), 0)
			gone(dir + "/sub/empty")
			if got := g.pread(g.open(f, gRDONLY, 0), 0, 10); got != "new" {
				t.Errorf("contents of the new file %q", got)
			}
		})
	}
}

// TestHostExecuteBits: a host file keeps its execute bits (read-only
// otherwise) in stat, fstat and access(X_OK), as a program looking for
// its tools (make's mkdir) sees them natively.
func TestHostExecuteBits(t *testing.T) {
	dir := t.TempDir()
	tool, data := filepath.Join(dir, "tool"), filepath.Join(dir, "data")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			for _, c := range []struct {
				path   string
				mode   int64
				access int64
			}{{tool, 0o100754, 0}, {data, 0o100644, -eACCES}} { // in /tmp: writable by the owner
				if mode, _, _ := g.stat(c.path, true); mode != c.mode {
					t.Errorf("stat %s: mode %#o, want %#o", c.path, mode, c.mode)
				}
				expect(t, "access X_OK "+c.path, g.call("faccessat", atFDCWD64, g.path(2, c.path), 1), c.access)
				fd := g.open(c.path, gRDONLY, 0)
				expect(t, "fstat", g.call("fstat", uint64(fd), g.buf), 0)
				off := 24
				if a == arch.ARM64 {
					off = 16
				}
				if mode := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+uint64(off), 4)); int64(mode) != c.mode {
					t.Errorf("fstat %s: mode %#o, want %#o", c.path, mode, c.mode)
				}
			}
		})
	}
}

// TestStdinRegularFile: a regular file as stdin (a shell's `< FILE`) is
// fd 0 as that file: fstat gives its size, reads start at the offset it
// had, lseek and pread work, and the caller's offset is left alone. A
// pipe stays a pipe.
func TestStdinRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			in, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if _, err := in.Seek(3, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			g := newGuest(t, a, Config{Stdin: in})
			expect(t, "fstat", g.call("fstat", 0, g.buf), 0)
			b := readGuestBytes(t, g.p, g.buf, 64)
			off := 24
			if a == arch.ARM64 {
				off = 16
			}
			if mode := binary.LittleEndian.Uint32(b[off:]); mode&0o170000 != 0o100000 {
				t.Errorf("fstat(0): mode %#o, want a regular file", mode)
			}
			if size := binary.LittleEndian.Uint64(b[48:]); size != 10 {
				t.Errorf("fstat(0): size %d, want 10", size)
			}
			expect(t, "read", g.call("read", 0, g.buf, 4), 4)
			if got := string(readGuestBytes(t, g.p, g.buf, 4)); got != "3456" {
				t.Errorf("read %q, want 3456 (from the offset stdin had)", got)
			}
			expect(t, "lseek SEEK_END", g.call("lseek", 0, ^uint64(1), 2), 8)
			expect(t, "pread", g.call("pread64", 0, g.buf, 3, 0), 3)
			if got := string(readGuestBytes(t, g.p, g.buf, 3)); got != "012" {
				t.Errorf("pread %q", got)
			}
			expect(t, "read at the end", g.call("read", 0, g.buf, 10), 2)
			if at, _ := in.Seek(0, io.SeekCurrent); at != 3 {
				t.Errorf("the caller's offset moved to %d", at)
			}
		})
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	g := newGuest(t, arch.AMD64, Config{Stdin: r})
	expect(t, "fstat of a pipe", g.call("fstat", 0, g.buf), 0)
	if mode := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+24, 4)); mode&0o170000 != 0o010000 {
		t.Errorf("fstat(0) of a pipe: mode %#o, want a FIFO", mode)
	}
}

// TestPathEdges: what Linux says of a name's last component and of a
// trailing slash (rmdir of "." and "..", a slashed name that is not a
// directory), O_CREAT on a directory, a name beyond NAME_MAX, and a
// rename between two links to one file (nothing happens).
func TestPathEdges(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "mkdir", g.call("mkdirat", atFDCWD64, g.path(2, "/tmp/d"), 0o755), 0)
			expect(t, "create", g.call("close", uint64(g.open("/tmp/f", oCREAT|gWRONLY, 0o644))), 0)
			expect(t, "rmdir d/.", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/."), 0x200), -eINVAL)
			expect(t, "rmdir d/..", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/.."), 0x200), -eNOTEMPTY)
			if mode, _, _ := g.stat("/tmp/d", false); mode < 0 {
				t.Errorf("d is gone: %d", mode)
			}
			if mode, _, _ := g.stat("/tmp/f/", false); mode != -eNOTDIR {
				t.Errorf("stat f/ = %d, want ENOTDIR", mode)
			}
			if mode, _, _ := g.stat("/tmp/d/", false); mode < 0 {
				t.Errorf("stat d/ = %d", mode)
			}
			expect(t, "open f/", g.open("/tmp/f/", gRDONLY, 0), -eNOTDIR)
			expect(t, "create new/", g.open("/tmp/new/", oCREAT|gWRONLY, 0o644), -eISDIR)
			expect(t, "unlink f/", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/f/"), 0), -eNOTDIR)
			expect(t, "unlink d/", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/d/"), 0), -eISDIR)
			expect(t, "rename f/", g.call("renameat", atFDCWD64, g.path(2, "/tmp/f/"), atFDCWD64, g.path(3, "/tmp/g")), -eNOTDIR)
			expect(t, "O_CREAT on a directory", g.open("/tmp/d", oCREAT|gRDONLY, 0o644), -eISDIR)
			expect(t, "a name beyond NAME_MAX", g.open("/tmp/"+strings.Repeat("n", 256), oCREAT|gWRONLY, 0o644), -eNAMETOOLONG)
			if fd := g.open("/tmp/"+strings.Repeat("n", 255), oCREAT|gWRONLY, 0o644); fd < 0 {
				t.Errorf("a name of NAME_MAX = %d", fd)
			}
			expect(t, "link", g.call("linkat", atFDCWD64, g.path(2, "/tmp/f"), atFDCWD64, g.path(3, "/tmp/h"), 0), 0)
			expect(t, "rename onto another link to it", g.call("renameat", atFDCWD64, g.path(2, "/tmp/f"), atFDCWD64, g.path(3, "/tmp/h")), 0)
			for _, n := range []string{"/tmp/f", "/tmp/h"} {
				if mode, _, _ := g.stat(n, false); mode < 0 {
					t.Errorf("%s after the rename: %d", n, mode)
				}
			}
		})
	}
}

// TestStdinDevice: a memory device as stdin (a shell's < /dev/null) is fd
// 0 as that device, as natively: fstat gives a character device, lseek
// succeeds (0), read gives what the device gives, and a write is EBADF
// when the host opened it for reading only, as a shell's < does. Before,
// fd 0 was a pipe (S_IFIFO, lseek ESPIPE).
func TestStdinDevice(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		for _, dev := range []string{"/dev/null", "/dev/zero"} {
			t.Run(a.Name+dev, func(t *testing.T) {
				in, err := os.Open(dev)
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				g := newGuest(t, a, Config{Stdin: in})
				expect(t, "fstat", g.call("fstat", 0, g.buf), 0)
				off := 24
				if a == arch.ARM64 {
					off = 16
				}
				if mode := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf, 64)[off:]); mode != 0o020666 {
					t.Errorf("fstat(0): mode %#o, want 020666", mode)
				}
				expect(t, "lseek", g.call("lseek", 0, 10, seekSet), 0)
				want := int64(0)
				if dev == "/dev/zero" {
					want = 5
				}
				expect(t, "read", g.call("read", 0, g.buf, 5), want)
				expect(t, "write", g.call("write", 0, g.buf, 1), -eBADF)
			})
		}
		// Open for reading and writing (<>, Python's DEVNULL), it is so
		// for the guest too.
		t.Run(a.Name+"/dev/null O_RDWR", func(t *testing.T) {
			in, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			g := newGuest(t, a, Config{Stdin: in})
			expect(t, "write", g.call("write", 0, g.buf, 1), 1)
			expect(t, "F_GETFL", g.call("fcntl", 0, 3), 2) // O_RDWR
		})
	}
}
