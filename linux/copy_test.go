//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// hostFile writes a host file, host.txt, with contents into a new
// temporary directory (below /tmp: a writable tree of the guest's).
func hostFile(t *testing.T, contents string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "host.txt")
	if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// TestCopyFileRange: copy_file_range copies between files of the overlay
// (with the files' offsets or the guest's, which it advances), and
// answers as Linux 6.1 does otherwise: EXDEV from a file of the view
// (another file system), EINVAL for flags, pipes and the standard streams
// and overlapping ranges, EISDIR, EBADF for the wrong access modes and
// O_APPEND, 0 at the end of the input.
func TestCopyFileRange(t *testing.T) {
	dir, host := hostFile(t, "from the host\n")
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir}})
			expect(t, "create src", g.open("/tmp/src", oCREAT|gRDWR, 0o644), 3)
			expect(t, "write src", g.write(3, "0123456789"), 10)
			expect(t, "create dst", g.open("/tmp/dst", oCREAT|gRDWR, 0o644), 4)
			expect(t, "lseek src", g.call("lseek", 3, 2, seekSet), 2)
			// With the files' offsets: src's advances from 2, dst's from 0.
			expect(t, "copy 5", g.call("copy_file_range", 3, 0, 4, 0, 5, 0), 5)
			expect(t, "src offset", g.call("lseek", 3, 0, 1), 7)
			expect(t, "dst offset", g.call("lseek", 4, 0, 1), 5)
			// Past the end of the input: what there is, then 0.
			expect(t, "copy to the end", g.call("copy_file_range", 3, 0, 4, 0, 100, 0), 3)
			expect(t, "copy at the end", g.call("copy_file_range", 3, 0, 4, 0, 100, 0), 0)
			if got := g.pread(4, 0, 100); got != "23456789" {
				t.Errorf("dst %q, want 23456789", got)
			}
			// With the guest's offsets, which advance; the files' stay.
			offs := g.buf + 1024
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:], 0)
			binary.LittleEndian.PutUint64(b[8:], 20)
			if err := g.p.Engine.WriteMem(offs, b[:]); err != nil {
				t.Fatal(err)
			}
			expect(t, "copy at offsets", g.call("copy_file_range", 3, offs, 4, offs+8, 4, 0), 4)
			got := readGuestBytes(t, g.p, offs, 16)
			if in, out := binary.LittleEndian.Uint64(got), binary.LittleEndian.Uint64(got[8:]); in != 4 || out != 24 {
				t.Errorf("offsets after: %d, %d; want 4, 24", in, out)
			}
			expect(t, "src offset unchanged", g.call("lseek", 3, 0, 1), 10)
			if got := g.pread(4, 0, 100); got != "23456789"+"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"+"0123" {
				t.Errorf("dst %q", got)
			}
			// Within one file, not overlapping: fine; overlapping: EINVAL.
			binary.LittleEndian.PutUint64(b[:], 0)
			binary.LittleEndian.PutUint64(b[8:], 5)
			if err := g.p.Engine.WriteMem(offs, b[:]); err != nil {
				t.Fatal(err)
			}
			expect(t, "overlapping", g.call("copy_file_range", 3, offs, 3, offs+8, 6, 0), -eINVAL)
			expect(t, "within one file", g.call("copy_file_range", 3, offs, 3, offs+8, 5, 0), 5)
			if got := g.pread(3, 0, 100); got != "0123401234" {
				t.Errorf("src %q, want 0123401234", got)
			}
			// A file of the view is on another file system.
			hostFD := g.open(host, gRDONLY, 0)
			expect(t, "open host file", hostFD, 5)
			expect(t, "from the view", g.call("copy_file_range", 5, 0, 4, 0, 4, 0), -eXDEV)
			expect(t, "to the view", g.call("copy_file_range", 3, 0, 5, 0, 4, 0), -eBADF) // read-only
			// The errors Linux checks first.
			expect(t, "flags", g.call("copy_file_range", 3, 0, 4, 0, 4, 1), -eINVAL)
			expect(t, "bad fd", g.call("copy_file_range", 99, 0, 4, 0, 4, 0), -eBADF)
			expect(t, "from stdout", g.call("copy_file_range", 1, 0, 4, 0, 4, 0), -eBADF)
			expect(t, "to stdout", g.call("copy_file_range", 3, 0, 1, 0, 4, 0), -eINVAL)
			expect(t, "from stdin", g.call("copy_file_range", 0, 0, 4, 0, 4, 0), -eINVAL)
			expect(t, "bad offset pointer", g.call("copy_file_range", 3, 8, 4, 0, 4, 0), -eFAULT)
			expect(t, "open /tmp", g.open("/tmp", gRDONLY|g.p.abi.oDirectory, 0), 6)
			expect(t, "from a directory", g.call("copy_file_range", 6, 0, 4, 0, 4, 0), -eISDIR)
			expect(t, "open dst O_APPEND", g.open("/tmp/dst", gWRONLY|oAPPEND, 0), 7)
			expect(t, "to O_APPEND", g.call("copy_file_range", 3, 0, 7, 0, 4, 0), -eBADF)
			expect(t, "from write-only", g.call("copy_file_range", 7, 0, 4, 0, 4, 0), -eBADF)
		})
	}
}

// TestSendfile: sendfile copies from a regular file (of the view or the
// overlay) to a file of the overlay or to the standard output, from the
// input's offset or the guest's, as Linux does.
func TestSendfile(t *testing.T) {
	dir, host := hostFile(t, "from the host\n")
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			var out bytes.Buffer
			g := newGuest(t, a, Config{ReadAllow: []string{dir}, Stdout: &out})
			expect(t, "open host file", g.open(host, gRDONLY, 0), 3)
			expect(t, "create dst", g.open("/tmp/dst", oCREAT|gRDWR, 0o644), 4)
			expect(t, "to a file", g.call("sendfile", 4, 3, 0, 5), 5)
			expect(t, "input offset", g.call("lseek", 3, 0, 1), 5)
			expect(t, "to stdout", g.call("sendfile", 1, 3, 0, 100), 9)
			expect(t, "at the end", g.call("sendfile", 1, 3, 0, 100), 0)
			if out.String() != "the host\n" {
				t.Errorf("stdout %q", out.String())
			}
			// The guest's offset: it advances, the file's stays.
			off := g.buf + 1024
			if err := g.p.Engine.WriteMem(off, []byte{9, 0, 0, 0, 0, 0, 0, 0}); err != nil {
				t.Fatal(err)
			}
			expect(t, "at an offset", g.call("sendfile", 4, 3, off, 4), 4)
			if got := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, off, 8)); got != 13 {
				t.Errorf("offset after: %d, want 13", got)
			}
			expect(t, "file offset unchanged", g.call("lseek", 3, 0, 1), 14)
			if got := g.pread(4, 0, 100); got != "from host" {
				t.Errorf("dst %q, want \"from host\"", got)
			}
			// From the overlay to the overlay.
			expect(t, "rewind dst", g.call("lseek", 4, 0, seekSet), 0)
			expect(t, "create copy", g.open("/tmp/copy", oCREAT|gWRONLY, 0o644), 5)
			expect(t, "overlay to overlay", g.call("sendfile", 5, 4, 0, 100), 9)
			expect(t, "open copy", g.open("/tmp/copy", gRDONLY, 0), 6)
			if got := g.pread(6, 0, 100); got != "from host" {
				t.Errorf("copy %q", got)
			}
			// The errors.
			expect(t, "bad in", g.call("sendfile", 4, 99, 0, 1), -eBADF)
			expect(t, "bad out", g.call("sendfile", 99, 3, 0, 1), -eBADF)
			expect(t, "to a read-only file", g.call("sendfile", 3, 4, 0, 1), -eBADF)
			expect(t, "from stdin", g.call("sendfile", 4, 0, 0, 1), -eINVAL)
			expect(t, "from stdin at an offset", g.call("sendfile", 4, 0, off, 1), -eSPIPE)
			expect(t, "bad offset pointer", g.call("sendfile", 4, 3, 8, 1), -eFAULT)
			expect(t, "open O_APPEND", g.open("/tmp/dst", gWRONLY|oAPPEND, 0), 7)
			expect(t, "to O_APPEND", g.call("sendfile", 7, 3, 0, 1), -eINVAL)
		})
	}
}

// TestSendfileProc: sendfile from procfs's files of the machine copies
// what read gives (busybox's cat uses it: it printed nothing), from those
// of the process it is EINVAL, as on Linux (native: Linux 6.18, x86-64).
func TestSendfileProc(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			var out bytes.Buffer
			g := newGuest(t, a, Config{Stdout: &out})
			for _, name := range []string{"/proc/cpuinfo", "/proc/meminfo", "/proc/uptime", "/proc/loadavg", "/proc/stat", "/proc/vmstat", "/sys/devices/system/cpu/online"} {
				fd := g.open(name, gRDONLY, 0)
				want := g.pread(fd, 0, 1<<16)
				if len(want) == 0 {
					t.Fatalf("%s: read nothing", name)
				}
				out.Reset()
				expect(t, name, g.call("sendfile", 1, uint64(fd), 0, 1<<20), int64(len(want)))
				if out.String() != want {
					t.Errorf("%s: sendfile wrote %q, read gives %q", name, out.String(), want)
				}
				expect(t, name+" at the end", g.call("sendfile", 1, uint64(fd), 0, 1<<20), 0)
				g.call("close", uint64(fd))
			}
			for _, name := range []string{"/proc/self/maps", "/proc/self/stat", "/proc/self/status", "/proc/self/cmdline", "/proc/thread-self/comm"} {
				fd := g.open(name, gRDONLY, 0)
				expect(t, name, g.call("sendfile", 1, uint64(fd), 0, 1<<20), -eINVAL)
				g.call("close", uint64(fd))
			}
		})
	}
}

// TestLink: link and linkat make a second name for a file of the overlay
// (one file: written through one name, read through the other; unlinking
// one keeps the other), copy a file of the view below a writable tree up
// first, and answer as Linux does otherwise.
func TestLink(t *testing.T) {
	dir, host := hostFile(t, "host\n") // below /tmp: a writable tree
	const outside = "/etc/passwd"      // a file of the view outside the writable trees
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{ReadAllow: []string{dir, outside}})
			expect(t, "create", g.open("/tmp/a", oCREAT|gRDWR, 0o644), 3)
			expect(t, "write", g.write(3, "one"), 3)
			expect(t, "linkat", g.call("linkat", atFDCWD64, g.path(2, "/tmp/a"), atFDCWD64, g.path(3, "/tmp/b"), 0), 0)
			_, _, inoA := g.stat("/tmp/a", true)
			if _, size, inoB := g.stat("/tmp/b", true); inoB != inoA || size != 3 {
				t.Errorf("b: inode %d size %d; a's inode %d", inoB, size, inoA)
			}
			expect(t, "open b", g.open("/tmp/b", gWRONLY|oAPPEND, 0), 4)
			expect(t, "write b", g.write(4, "+two"), 4)
			if got := g.pread(3, 0, 100); got != "one+two" {
				t.Errorf("a reads %q, want one+two", got)
			}
			expect(t, "unlink a", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/a"), 0), 0)
			expect(t, "open b again", g.open("/tmp/b", gRDONLY, 0), 5)
			if got := g.pread(5, 0, 100); got != "one+two" {
				t.Errorf("b reads %q after a's unlink", got)
			}
			// A file of the view below a writable tree: copied up, the two
			// names one file; the host's file untouched.
			expect(t, "link a view file", g.call("linkat", atFDCWD64, g.path(2, host), atFDCWD64, g.path(3, dir+"/second"), 0), 0)
			expect(t, "open the new name", g.open(dir+"/second", gWRONLY|oAPPEND, 0), 6)
			expect(t, "write it", g.write(6, "more\n"), 5)
			expect(t, "open the old name", g.open(host, gRDONLY, 0), 7)
			if got := g.pread(7, 0, 100); got != "host\nmore\n" {
				t.Errorf("old name reads %q", got)
			}
			if b, err := os.ReadFile(host); err != nil || string(b) != "host\n" {
				t.Errorf("host file: %q, %v", b, err)
			}
			// The errors.
			expect(t, "outside the writable trees", g.call("linkat", atFDCWD64, g.path(2, outside), atFDCWD64, g.path(3, "/tmp/p"), 0), -eXDEV)
			expect(t, "to an existing name", g.call("linkat", atFDCWD64, g.path(2, "/tmp/b"), atFDCWD64, g.path(3, "/tmp/b"), 0), -eEXIST)
			expect(t, "a directory", g.call("linkat", atFDCWD64, g.path(2, "/tmp"), atFDCWD64, g.path(3, "/tmp/d"), 0), -ePERM)
			expect(t, "missing", g.call("linkat", atFDCWD64, g.path(2, "/tmp/none"), atFDCWD64, g.path(3, "/tmp/n"), 0), -eNOENT)
			expect(t, "flags", g.call("linkat", atFDCWD64, g.path(2, "/tmp/b"), atFDCWD64, g.path(3, "/tmp/c"), 1), -eINVAL)
			expect(t, "empty path", g.call("linkat", 5, g.path(2, ""), atFDCWD64, g.path(3, "/tmp/c"), 0x1000), -eNOENT)
			expect(t, "read-only tree", g.call("linkat", atFDCWD64, g.path(2, "/tmp/b"), atFDCWD64, g.path(3, "/etc/c"), 0), -eROFS)
			if a == arch.AMD64 {
				expect(t, "link", g.call("link", g.path(2, "/tmp/b"), g.path(3, "/tmp/c")), 0)
			}
			expect(t, "syncfs", g.call("syncfs", 5), 0)
			expect(t, "syncfs of a closed fd", g.call("syncfs", 99), -eBADF)
			expect(t, "sync", g.call("sync"), 0)
		})
	}
}

// testdata/epoll-x86_64 and epoll-aarch64 are testdata/src/epoll.c, built
// as the threads program; their output is the same natively and under
// qemu-aarch64.
const epollOutput = `add again: -1 File exists
regular file: -1 Operation not permitted
delete what is not there: -1 Operation not permitted
nothing yet: 0
eventfd total 15, pipe bytes 15
semaphore 1
empty: -1 Resource temporarily unavailable
oneshot: 1 (data 7), then 0
after EPOLL_CTL_MOD: 1
`

// TestEpoll: a thread waiting in epoll_wait on an eventfd and a pipe that
// another thread writes sees everything it would natively, at every
// quantum, and two runs are the same.
func TestEpoll(t *testing.T) {
	for _, a := range threadArches {
		for _, q := range []uint64{0, 1000, 37} {
			t.Run(fmt.Sprintf("%s/quantum=%d", a, q), func(t *testing.T) {
				run := func() (string, *Exit) {
					out, x, p := runGuest(t, filepath.Join("testdata", "epoll-"+a), Config{Quantum: q, MaxInsns: 50_000_000})
					p.Close()
					return out, x
				}
				out, x := run()
				if x.Reason != StopExited || x.Status != 0 || out != epollOutput {
					t.Fatalf("exit %v (%s)\noutput:\n%s\nwant:\n%s", x.Reason, x, out, epollOutput)
				}
				if out2, x2 := run(); out2 != out || x2.Insns != x.Insns {
					t.Errorf("second run: %d instructions, %d before", x2.Insns, x.Insns)
				}
			})
		}
	}
}

// TestStatfs: statfs and fstatfs describe the sandbox's file systems, the
// same on every machine: the overlay (/tmp) tmpfs of the memory cap's
// size, its free blocks what is left of the cap; the view's other files a
// read-only ext4 of no size; procfs, sysfs, devtmpfs, pipefs and the
// anonymous inodes'. Before, both were ENOSYS: busybox's stat -f and df,
// Python's os.statvfs and glibc's fpathconf(_PC_LINK_MAX) failed.
func TestStatfs(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{MaxMem: 64 << 20})
			read := func() fsInfo {
				b := readGuestBytes(t, g.p, g.buf, 120)
				le := binary.LittleEndian
				w := func(i int) uint64 { return le.Uint64(b[8*i:]) }
				if w(7) != 0 || w(9) != w(1) {
					t.Errorf("f_fsid %#x, f_frsize %d (f_bsize %d)", w(7), w(9), w(1))
				}
				return fsInfo{typ: w(0), bsize: w(1), blocks: w(2), bfree: w(3), bavail: w(4), files: w(5), ffree: w(6), namelen: w(8), flags: w(10)}
			}
			statfs := func(path string) fsInfo {
				t.Helper()
				expect(t, "statfs "+path, g.call("statfs", g.path(1, path), g.buf), 0)
				return read()
			}
			tmp := statfs("/tmp")
			if tmp.typ != tmpfsMagic || tmp.bsize != 4096 || tmp.blocks != 64<<20/4096 || tmp.bfree == 0 || tmp.bfree > tmp.blocks ||
				tmp.bavail != tmp.bfree || tmp.namelen != 255 || tmp.flags != stValid|stNosuid|stNodev|stRelatime {
				t.Errorf("/tmp: %+v", tmp)
			}
			fd := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			expect(t, "fallocate", g.call("fallocate", uint64(fd), 0, 0, 4<<20), 0)
			expect(t, "fstatfs", g.call("fstatfs", uint64(fd), g.buf), 0)
			if after := read(); after.typ != tmpfsMagic || after.bfree+1024 > tmp.bfree {
				t.Errorf("after 4 MiB written: %d free blocks, %d before", after.bfree, tmp.bfree)
			}
			for _, c := range []struct {
				path  string
				magic uint64
			}{{"/proc/self/maps", procMagic}, {"/proc", procMagic}, {"/sys/devices/system/cpu/online", sysfsMagic}, {"/dev/null", tmpfsMagic}} {
				if got := statfs(c.path); got.typ != c.magic || got.blocks != 0 {
					t.Errorf("%s: %+v", c.path, got)
				}
			}
			if got := statfs("/"); got.typ != ext4Magic || got.flags != stValid|stRdonly|stRelatime || got.blocks != 0 {
				t.Errorf("/, of the view: %+v", got)
			}
			expect(t, "fstatfs stdout", g.call("fstatfs", 1, g.buf), 0)
			if got := read(); got.typ != pipefsMagic {
				t.Errorf("stdout: %+v", got)
			}
			efd := g.call("eventfd2", 0, 0)
			expect(t, "fstatfs eventfd", g.call("fstatfs", uint64(efd), g.buf), 0)
			if got := read(); got.typ != anonInodeMagic {
				t.Errorf("eventfd: %+v", got)
			}
			expect(t, "missing", g.call("statfs", g.path(1, "/tmp/none"), g.buf), -eNOENT)
			expect(t, "bad buffer", g.call("statfs", g.path(1, "/tmp"), 8), -eFAULT)
			expect(t, "bad fd", g.call("fstatfs", 99, g.buf), -eBADF)
		})
	}
}
