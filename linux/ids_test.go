//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestIdsAndScheduling: ids, children, priorities, scheduling and memory
// locks answer as Linux does for an unprivileged process that leads its
// session, has no children and runs alone on one CPU.
func TestIdsAndScheduling(t *testing.T) {
	const none = ^uint64(0) // -1: unchanged
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			for _, c := range []struct {
				name string
				args []uint64
				want int64
			}{
				{"setuid", []uint64{guestUID}, 0},
				{"setuid", []uint64{0}, -ePERM},
				{"setuid", []uint64{none}, -eINVAL},
				{"setgid", []uint64{guestGID}, 0},
				{"setreuid", []uint64{none, guestUID}, 0},
				{"setreuid", []uint64{guestUID, 0}, -ePERM},
				{"setresuid", []uint64{none, none, none}, 0},
				{"setresgid", []uint64{guestGID, guestGID, 5}, -ePERM},
				{"setgroups", []uint64{0, 0}, -ePERM},
				{"setgroups", []uint64{70000, 0}, -eINVAL},
				{"setsid", nil, -ePERM},
				{"setpgid", []uint64{0, 0}, -ePERM},
				{"setpgid", []uint64{7, 0}, -eSRCH},
				{"wait4", []uint64{none, 0, 1, 0}, -eCHILD},
				{"wait4", []uint64{none, 0, 0x100, 0}, -eINVAL},
				{"waitid", []uint64{0, 0, g.buf, 4, 0}, -eCHILD},
				{"waitid", []uint64{0, 0, g.buf, 1, 0}, -eINVAL}, // no WEXITED, WSTOPPED or WCONTINUED
				{"waitid", []uint64{9, 0, g.buf, 4, 0}, -eINVAL},
				{"getpriority", []uint64{0, 0}, 20},
				{"setpriority", []uint64{0, 0, 5}, 0},
				{"getpriority", []uint64{0, guestPID}, 15},
				{"setpriority", []uint64{0, 0, 2}, -eACCES}, // lower: needs CAP_SYS_NICE
				{"setpriority", []uint64{0, 0, 40}, 0},      // clamped to 19
				{"getpriority", []uint64{1, 0}, 1},
				{"getpriority", []uint64{2, guestUID}, 1},
				{"getpriority", []uint64{2, 0x1234}, -eSRCH},
				{"getpriority", []uint64{3, 0}, -eINVAL},
				{"sched_getscheduler", []uint64{0}, schedOther},
				{"sched_getscheduler", []uint64{99}, -eSRCH},
				{"sched_get_priority_max", []uint64{schedFIFO}, 99},
				{"sched_get_priority_min", []uint64{schedRR}, 1},
				{"sched_get_priority_max", []uint64{schedOther}, 0},
				{"sched_get_priority_max", []uint64{4}, -eINVAL},
				{"sched_getparam", []uint64{0, g.buf}, 0},
				{"mlock", []uint64{g.buf, 4096}, 0},
				{"mlock", []uint64{g.buf, 16 << 20}, -eNOMEM},
				{"mlock", []uint64{0x1000, 4096}, -eNOMEM}, // not mapped
				{"munlock", []uint64{g.buf, 4096}, 0},
				{"mlockall", []uint64{2}, 0},       // MCL_FUTURE
				{"mlockall", []uint64{1}, -eNOMEM}, // MCL_CURRENT: the 8 MiB stack alone reaches the limit
				{"mlockall", []uint64{4}, -eINVAL},
				{"munlockall", nil, 0},
				{"sched_getaffinity", []uint64{guestPID, 8, g.buf}, 8},
				{"sched_getaffinity", []uint64{99, 8, g.buf}, -eSRCH},
			} {
				expect(t, c.name, g.call(c.name, c.args...), c.want)
			}
			// sched_setscheduler with a struct sched_param.
			put := func(prio uint32) uint64 {
				var b [4]byte
				binary.LittleEndian.PutUint32(b[:], prio)
				if err := g.p.Engine.WriteMem(g.buf, b[:]); err != nil {
					t.Fatal(err)
				}
				return g.buf
			}
			expect(t, "SCHED_BATCH", g.call("sched_setscheduler", 0, schedBatch, put(0)), 0)
			expect(t, "policy after", g.call("sched_getscheduler", 0), schedBatch)
			expect(t, "SCHED_BATCH priority 1", g.call("sched_setscheduler", 0, schedBatch, put(1)), -eINVAL)
			expect(t, "SCHED_FIFO", g.call("sched_setscheduler", 0, schedFIFO, put(10)), -ePERM)
			expect(t, "SCHED_FIFO priority 0", g.call("sched_setscheduler", 0, schedFIFO, put(0)), -eINVAL)
			expect(t, "sched_setparam", g.call("sched_setparam", 0, put(0)), 0)
			expect(t, "no param", g.call("sched_setscheduler", 0, schedOther, 0), -eINVAL)
			// Affinity: the one CPU.
			expect(t, "affinity CPU 0", g.call("sched_setaffinity", 0, 8, put(1)), 0)
			expect(t, "affinity CPU 1 only", g.call("sched_setaffinity", 0, 8, put(2)), -eINVAL)
			// getresuid.
			expect(t, "getresuid", g.call("getresuid", g.buf, g.buf+4, g.buf+8), 0)
			b := readGuestBytes(t, g.p, g.buf, 12)
			for i := 0; i < 3; i++ {
				if v := binary.LittleEndian.Uint32(b[4*i:]); v != guestUID {
					t.Errorf("getresuid id %d = %d", i, v)
				}
			}
			expect(t, "getresgid to unmapped memory", g.call("getresgid", 8, g.buf, g.buf), -eFAULT)
		})
	}
}

// TestFdOps: close_range, flock, preadv, preadv2, pwritev2, readahead and
// sync_file_range on files of the overlay and on pipes.
func TestFdOps(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "create", g.open("/tmp/f", oCREAT|gRDWR, 0o644), 3)
			expect(t, "write", g.write(3, "0123456789"), 10)
			// Two iovecs of 3 and 4 bytes at buf+256, buf+512.
			iov := g.buf + 128
			var b [32]byte
			binary.LittleEndian.PutUint64(b[0:], g.buf+256)
			binary.LittleEndian.PutUint64(b[8:], 3)
			binary.LittleEndian.PutUint64(b[16:], g.buf+512)
			binary.LittleEndian.PutUint64(b[24:], 4)
			if err := g.p.Engine.WriteMem(iov, b[:]); err != nil {
				t.Fatal(err)
			}
			read := func() string {
				return string(readGuestBytes(t, g.p, g.buf+256, 3)) + string(readGuestBytes(t, g.p, g.buf+512, 4))
			}
			expect(t, "preadv at 2", g.call("preadv", 3, iov, 2, 2), 7)
			if got := read(); got != "2345678" {
				t.Errorf("preadv read %q", got)
			}
			expect(t, "offset unchanged", g.call("lseek", 3, 0, 1), 10)
			expect(t, "preadv2 at -1 (the offset)", g.call("preadv2", 3, iov, 2, none64, 0, 0), 0) // at the end
			expect(t, "lseek", g.call("lseek", 3, 1, seekSet), 1)
			expect(t, "preadv2 at -1 again", g.call("preadv2", 3, iov, 2, none64, 0, 0), 7)
			expect(t, "preadv2 RWF_NOWAIT", g.call("preadv2", 3, iov, 2, 0, 0, 8), -eOPNOTSUPP)
			expect(t, "preadv negative", g.call("preadv", 3, iov, 2, none64-1), -eINVAL)
			expect(t, "pwritev2 RWF_APPEND", g.call("pwritev2", 3, iov, 2, 0, 0, 16), 7)
			if got := g.pread(3, 0, 100); got != "0123456789"+"123"+"4567" {
				t.Errorf("after RWF_APPEND: %q", got)
			}
			expect(t, "pwritev2 at 0", g.call("pwritev2", 3, iov, 1, 0, 0, 0), 3)
			if got := g.pread(3, 0, 4); got != "1233" {
				t.Errorf("after pwritev2 at 0: %q", got)
			}
			expect(t, "pipe2", g.call("pipe2", g.buf+1024, 0), 0)
			fds := readGuestBytes(t, g.p, g.buf+1024, 8)
			rd := uint64(binary.LittleEndian.Uint32(fds))
			expect(t, "preadv of a pipe", g.call("preadv", rd, iov, 2, 0), -eSPIPE)
			expect(t, "readahead", g.call("readahead", 3, 0, 4096), 0)
			expect(t, "readahead of a pipe", g.call("readahead", rd, 0, 4096), -eINVAL)
			expect(t, "sync_file_range", g.call("sync_file_range", 3, 0, 0, 7), 0)
			expect(t, "sync_file_range flags", g.call("sync_file_range", 3, 0, 0, 8), -eINVAL)
			expect(t, "sync_file_range of a pipe", g.call("sync_file_range", rd, 0, 0, 0), -eSPIPE)
			expect(t, "flock", g.call("flock", 3, 2|4), 0)
			expect(t, "flock unlock", g.call("flock", 3, 8), 0)
			expect(t, "flock both", g.call("flock", 3, 3), -eINVAL)
			expect(t, "flock of a closed fd", g.call("flock", 99, 1), -eBADF)
			// close_range closes what is open in the range, from 3 on.
			expect(t, "close_range CLOEXEC", g.call("close_range", 3, none64, 4), 0)
			expect(t, "still open", g.call("lseek", 3, 0, seekSet), 0)
			expect(t, "close_range bad", g.call("close_range", 5, 4, 0), -eINVAL)
			expect(t, "close_range", g.call("close_range", 3, none64, 0), 0)
			expect(t, "closed", g.call("lseek", 3, 0, seekSet), -eBADF)
			expect(t, "stdout kept", g.call("fcntl", 1, 1), 0)
		})
	}
}

const none64 = ^uint64(0)

// TestMemfd: memfd_create makes a nameless file to write, read back and
// map, charged to the overlay, and refuses unknown flags.
func TestMemfd(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			fd := g.call("memfd_create", g.path(0, "jit"), 1)
			expect(t, "memfd_create", fd, 3)
			expect(t, "write", g.write(fd, "code"), 4)
			if got := g.pread(fd, 0, 10); got != "code" {
				t.Errorf("read back %q", got)
			}
			expect(t, "ftruncate", g.call("ftruncate", uint64(fd), 4096), 0)
			addr := g.call("mmap", 0, 4096, 1|2, 1, uint64(fd), 0) // PROT_READ|WRITE, MAP_SHARED
			if addr < 0 {
				t.Fatalf("mmap = %d", addr)
			}
			if got := string(readGuestBytes(t, g.p, uint64(addr), 4)); got != "code" {
				t.Errorf("mapped %q", got)
			}
			expect(t, "flags", g.call("memfd_create", g.path(0, "x"), 4), -eINVAL)
			expect(t, "unmapped name", g.call("memfd_create", 8, 0), -eFAULT)
		})
	}
}

// TestCapabilitiesAndPersonality: the guest has no capabilities and may
// only keep it so; personality is kept per thread, shows in uname where
// Linux shows it, and stops the run where it would change what is not
// emulated; the robust-futex list head is reported back; mlock2.
func TestCapabilitiesAndPersonality(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			le := binary.LittleEndian
			hdr, data := g.buf, g.buf+64
			header := func(version uint32, pid int32) {
				var b [8]byte
				le.PutUint32(b[:], version)
				le.PutUint32(b[4:], uint32(pid))
				if err := g.p.Engine.WriteMem(hdr, b[:]); err != nil {
					t.Fatal(err)
				}
			}
			fill := func(v byte) {
				if err := g.p.Engine.WriteMem(data, bytes.Repeat([]byte{v}, 24)); err != nil {
					t.Fatal(err)
				}
			}
			// capget: every set empty, 1 or 2 structs as the version says.
			header(capVersion3, 0)
			fill(0xff)
			expect(t, "capget v3", g.call("capget", hdr, data), 0)
			if b := readGuestBytes(t, g.p, data, 24); !bytes.Equal(b, make([]byte, 24)) {
				t.Errorf("capget v3 data % x, want zeros", b)
			}
			header(capVersion1, guestPID)
			fill(0xff)
			expect(t, "capget v1 of the process", g.call("capget", hdr, data), 0)
			if b := readGuestBytes(t, g.p, data, 24); !bytes.Equal(b[:12], make([]byte, 12)) || b[12] != 0xff {
				t.Errorf("capget v1 data % x, want 12 zeros and the rest untouched", b)
			}
			header(0x12345678, 0)
			expect(t, "capget, unknown version, no data: a probe", g.call("capget", hdr, 0), 0)
			if v := le.Uint32(readGuestBytes(t, g.p, hdr, 4)); v != capVersion3 {
				t.Errorf("probed version %#x, want %#x", v, capVersion3)
			}
			header(0x12345678, 0)
			expect(t, "capget, unknown version", g.call("capget", hdr, data), -eINVAL)
			header(capVersion3, -1)
			expect(t, "capget, negative pid", g.call("capget", hdr, data), -eINVAL)
			header(capVersion3, 4343)
			expect(t, "capget, no such process", g.call("capget", hdr, data), -eSRCH)
			header(capVersion3, 0)
			expect(t, "capget, bad data", g.call("capget", hdr, 8), -eFAULT)
			expect(t, "capget, bad header", g.call("capget", 8, data), -eFAULT)
			// capset: none stays none; adding any is EPERM.
			fill(0)
			expect(t, "capset to none", g.call("capset", hdr, data), 0)
			if err := g.p.Engine.WriteMem(data+16, []byte{1}); err != nil { // permitted of the second word
				t.Fatal(err)
			}
			expect(t, "capset adding one", g.call("capset", hdr, data), -ePERM)
			header(capVersion3, 4343)
			expect(t, "capset of another process", g.call("capset", hdr, data), -ePERM)

			// personality: the old one back; query; per thread in uname.
			machine := func() (string, string) {
				expect(t, "uname", g.call("uname", g.buf), 0)
				b := readGuestBytes(t, g.p, g.buf, 6*65)
				str := func(i int) string { return string(bytes.TrimRight(b[65*i:65*i+65], "\x00")) }
				return str(4), str(2)
			}
			m, r := machine()
			if r != kernelRelease {
				t.Errorf("release %q, want %q", r, kernelRelease)
			}
			expect(t, "personality query", g.call("personality", personalityQuery), 0)
			expect(t, "personality ADDR_NO_RANDOMIZE|UNAME26", g.call("personality", 0x0040000|uname26), 0)
			expect(t, "personality query", g.call("personality", 1<<32-1), 0x0040000|uname26)
			if m2, r2 := machine(); r2 != "2.6.61-sframesim" || m2 != m {
				t.Errorf("UNAME26: machine %q release %q, want %q 2.6.61-sframesim", m2, r2, m)
			}
			want32 := int64(0x0040000 | uname26)
			if a == arch.ARM64 {
				want32 = -eINVAL
			}
			expect(t, "personality PER_LINUX32", g.call("personality", perLinux32), want32)
			if m2, _ := machine(); a == arch.AMD64 && m2 != "i686" {
				t.Errorf("PER_LINUX32 machine %q, want i686", m2)
			}
			had := int64(g.p.thr.cur.persona)
			expect(t, "personality back to PER_LINUX", g.call("personality", 0), had)
			if m2, r2 := machine(); m2 != m || r2 != kernelRelease {
				t.Errorf("back to PER_LINUX: %q %q", m2, r2)
			}

			// get_robust_list: what set_robust_list registered.
			expect(t, "set_robust_list", g.call("set_robust_list", g.buf+4096, 24), 0)
			expect(t, "get_robust_list", g.call("get_robust_list", 0, g.buf, g.buf+8), 0)
			if b := readGuestBytes(t, g.p, g.buf, 16); le.Uint64(b) != g.buf+4096 || le.Uint64(b[8:]) != 24 {
				t.Errorf("get_robust_list: head %#x len %d", le.Uint64(b), le.Uint64(b[8:]))
			}
			expect(t, "get_robust_list of the process", g.call("get_robust_list", guestPID, g.buf, g.buf+8), 0)
			expect(t, "get_robust_list, no such thread", g.call("get_robust_list", 4343, g.buf, g.buf+8), -eSRCH)
			expect(t, "get_robust_list, bad pointer", g.call("get_robust_list", 0, 8, g.buf+8), -eFAULT)

			expect(t, "mlock2", g.call("mlock2", g.buf, 4096, 1), 0)
			expect(t, "mlock2, unknown flag", g.call("mlock2", g.buf, 4096, 2), -eINVAL)

			// Last: READ_IMPLIES_EXEC is not emulated, so the run stops.
			g.call("personality", readImpliesExec)
			if x := g.p.exit; x == nil || x.Reason != StopUnsupported || !strings.Contains(x.Detail, "personality(0x400000)") {
				t.Errorf("READ_IMPLIES_EXEC: exit %+v, want the run stopped as unsupported", x)
			}
		})
	}
}
