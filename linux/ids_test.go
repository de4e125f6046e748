//go:build cgo

package linux

import (
	"encoding/binary"
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
