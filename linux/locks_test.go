//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestRecordLocks: fcntl's POSIX record locks are granted at once (the
// guest is a process alone: nothing can conflict), F_GETLK reports no lock
// in the way, and the arguments are checked as Linux checks them. This is
// what SQLite's unix VFS needs to open a database.
func TestRecordLocks(t *testing.T) {
	const fGetlk, fSetlk, fSetlkw, fOfdSetlk = 5, 6, 7, 37
	const rd, wr, un = 0, 1, 2
	for _, a := range arch.All {
		t.Run(a.Name, func(t *testing.T) {
			p := idleProcess(t, a, Config{})
			buf := scratch(p)
			path := putString(t, p, buf+256, "/tmp/locked.db")
			expect(t, "open O_RDWR|O_CREAT", call(p, "openat", atFDCWD64, path, oRDWR|oCREAT, 0o644), 3)
			expect(t, "open O_RDONLY", call(p, "openat", atFDCWD64, path, 0), 4)
			expect(t, "open O_WRONLY", call(p, "openat", atFDCWD64, path, oWRONLY), 5)
			flock := func(typ, whence int16, start, length int64) uint64 {
				b := make([]byte, 32)
				binary.LittleEndian.PutUint16(b[0:], uint16(typ))
				binary.LittleEndian.PutUint16(b[2:], uint16(whence))
				binary.LittleEndian.PutUint64(b[8:], uint64(start))
				binary.LittleEndian.PutUint64(b[16:], uint64(length))
				binary.LittleEndian.PutUint32(b[24:], 77)
				if err := p.Engine.WriteMem(buf, b); err != nil {
					t.Fatal(err)
				}
				return buf
			}
			for _, tt := range []struct {
				what          string
				fd, cmd       uint64
				typ, whence   int16
				start, length int64
				want          int64
			}{
				// SQLite's sequence on opening a database: shared, pending, reserved
				{"read lock", 3, fSetlk, rd, 0, 1 << 30, 1, 0},
				{"write lock", 3, fSetlk, wr, 0, 1<<30 + 1, 1, 0},
				{"wait for a write lock", 3, fSetlkw, wr, 0, 1<<30 + 2, 510, 0},
				{"unlock all", 3, fSetlk, un, 0, 0, 0, 0},
				{"read lock, read-only fd", 4, fSetlk, rd, 0, 0, 0, 0},
				{"write lock, read-only fd", 4, fSetlk, wr, 0, 0, 0, -eBADF},
				{"read lock, write-only fd", 5, fSetlk, rd, 0, 0, 0, -eBADF},
				{"write lock, write-only fd", 5, fSetlkw, wr, 0, 0, 0, 0},
				{"unlock, write-only fd", 5, fSetlk, un, 0, 0, 0, 0},
				{"write lock on stdout", 1, fSetlk, wr, 0, 0, 0, 0},
				{"read lock on stdout", 1, fSetlk, rd, 0, 0, 0, -eBADF},
				{"bad type", 3, fSetlk, 3, 0, 0, 0, -eINVAL},
				{"bad whence", 3, fSetlk, rd, 3, 0, 0, -eINVAL},
				{"negative start", 3, fSetlk, rd, 0, -1, 0, -eINVAL},
				{"negative length reaching below 0", 3, fSetlk, rd, 0, 5, -6, -eINVAL},
				{"negative length", 3, fSetlk, rd, 0, 5, -5, 0},
				{"from the end of the empty file", 3, fSetlk, rd, 2, -1, 0, -eINVAL},
				{"F_GETLK of F_UNLCK", 3, fGetlk, un, 0, 0, 0, -eINVAL},
				{"open file description lock", 3, fOfdSetlk, rd, 0, 0, 0, -eINVAL},
				{"closed fd", 9, fSetlk, rd, 0, 0, 0, -eBADF},
			} {
				expect(t, tt.what, call(p, "fcntl", tt.fd, tt.cmd, flock(tt.typ, tt.whence, tt.start, tt.length)), tt.want)
			}
			// F_GETLK: nothing in the way, so l_type becomes F_UNLCK and the
			// rest stays.
			for _, typ := range []int16{rd, wr} {
				addr := flock(typ, 0, 100, 10)
				expect(t, fmt.Sprintf("F_GETLK %d", typ), call(p, "fcntl", 3, fGetlk, addr), 0)
				got := readGuestBytes(t, p, addr, 32)
				if binary.LittleEndian.Uint16(got[0:]) != un || binary.LittleEndian.Uint64(got[8:]) != 100 ||
					binary.LittleEndian.Uint64(got[16:]) != 10 || binary.LittleEndian.Uint32(got[24:]) != 77 {
					t.Errorf("F_GETLK %d: struct flock % x", typ, got)
				}
			}
			expect(t, "unmapped struct flock", call(p, "fcntl", 3, fSetlk, 8), -eFAULT)
			expect(t, "F_GETLK, unmapped struct flock", call(p, "fcntl", 3, fGetlk, 8), -eFAULT)
		})
	}
}

// TestFlockConflicts: flock locks belong to open file descriptions and
// conflict between two of one file, also within one process, as on
// Linux (the expected answers are what the same calls gave natively): a
// shared lock beside shared locks, an exclusive one alone; a change
// drops the old lock first; dup shares the lock and the last close drops
// it; a blocking flock waits until the holder lets go.
func TestFlockConflicts(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			fa := uint64(g.open("/tmp/l", oCREAT|gRDWR, 0o644))
			fb := uint64(g.open("/tmp/l", gRDWR, 0))
			fc := uint64(g.open("/tmp/l", gRDONLY, 0))
			other := uint64(g.open("/tmp/other", oCREAT|gRDWR, 0o644))
			expect(t, "A shared", g.call("flock", fa, lockSH), 0)
			expect(t, "B shared", g.call("flock", fb, lockSH|lockNB), 0)
			expect(t, "C exclusive", g.call("flock", fc, lockEX|lockNB), -eAGAIN)
			expect(t, "another file exclusive", g.call("flock", other, lockEX|lockNB), 0)
			expect(t, "A to exclusive while B shares", g.call("flock", fa, lockEX|lockNB), -eAGAIN)
			expect(t, "C exclusive: A dropped its lock, B holds", g.call("flock", fc, lockEX|lockNB), -eAGAIN)
			expect(t, "B unlocks", g.call("flock", fb, lockUN), 0)
			expect(t, "C exclusive", g.call("flock", fc, lockEX|lockNB), 0)
			expect(t, "A shared while C holds", g.call("flock", fa, lockSH|lockNB), -eAGAIN)
			d := uint64(g.call("dup", fc))
			expect(t, "the dup's lock is C's", g.call("flock", d, lockEX|lockNB), 0)
			expect(t, "close C", g.call("close", fc), 0)
			expect(t, "A shared while the dup holds", g.call("flock", fa, lockSH|lockNB), -eAGAIN)
			expect(t, "close the dup", g.call("close", d), 0)
			expect(t, "A shared once all are closed", g.call("flock", fa, lockSH|lockNB), 0)

			// A blocking exclusive lock waits for A's, and gets it once
			// A's descriptor is closed.
			expect(t, "B blocks", g.call("flock", fb, lockEX), 0)
			th := g.p.thr.cur
			if th.state != blocked || th.resume != resumeFlock || !strings.Contains(th.why, "flock of /tmp/l") {
				t.Fatalf("B's flock: state %v, resume %v, why %q; want blocked in flock", th.state, th.resume, th.why)
			}
			if g.p.resumed(th) || th.state != blocked {
				t.Errorf("B's flock went on while A holds its lock")
			}
			g.p.closeFD(int(fa))
			if th.state == blocked {
				t.Errorf("closing A's lock did not wake B")
			}
			if !g.p.resumed(th) || th.ret != 0 || g.p.fds[int(fb)].flock != lockEX {
				t.Errorf("B after A's close: ret %d, lock %d; want 0 and exclusive", int64(th.ret), g.p.fds[int(fb)].flock)
			}
		})
	}
}
