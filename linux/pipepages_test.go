//go:build cgo

package linux

import (
	"encoding/binary"
	"testing"
)

// TestPipePages: a pipe holds its bytes in pages as Linux's does, and is
// full when every page of its capacity is taken: the answers are what
// the same calls gave natively (/tmp programs run on Linux 6.1 and
// under qemu-aarch64 alike).
func TestPipePages(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			expect(t, "pipe2", g.call("pipe2", g.buf, oNONBLOCK), 0)
			ends := readGuestBytes(t, g.p, g.buf, 8)
			r, w := uint64(binary.LittleEndian.Uint32(ends)), uint64(binary.LittleEndian.Uint32(ends[4:]))
			data := g.buf + 4096
			if err := g.p.Engine.WriteMem(data, make([]byte, 70000)); err != nil {
				t.Fatal(err)
			}
			fill := func(chunk uint64) (total int64) {
				for {
					k := g.call("write", w, data, chunk)
					if k < 0 {
						return total
					}
					total += k
					if k < int64(chunk) {
						return total
					}
				}
			}
			drain := func() {
				for g.call("read", r, data, 70000) > 0 {
				}
			}
			pollout := func() bool {
				pfd := make([]byte, 8)
				binary.LittleEndian.PutUint32(pfd, uint32(w))
				binary.LittleEndian.PutUint16(pfd[4:], pollOut)
				if err := g.p.Engine.WriteMem(g.buf+2048, pfd); err != nil {
					t.Fatal(err)
				}
				g.call("ppoll", g.buf+2048, 1, g.buf+2100, 0, 8) // a zero timeout below
				return binary.LittleEndian.Uint16(readGuestBytes(t, g.p, g.buf+2054, 2))&pollOut != 0
			}
			if err := g.p.Engine.WriteMem(g.buf+2100, make([]byte, 16)); err != nil {
				t.Fatal(err)
			}
			expect(t, "writes of 1000 bytes: four a page", fill(1000), 64000)
			g.call("read", r, data, 1000)
			if pollout() {
				t.Errorf("POLLOUT with every page taken")
			}
			g.call("read", r, data, 3000)
			if !pollout() {
				t.Errorf("no POLLOUT once a page was read whole")
			}
			expect(t, "1000 bytes into the free page", g.call("write", w, data, 1000), 1000)
			expect(t, "96 merged into it", g.call("write", w, data, 96), 96)
			expect(t, "1 merged into it", g.call("write", w, data, 1), 1)
			drain()
			expect(t, "writes of 1 byte", fill(1), 65536)
			drain()
			expect(t, "writes of 4097 bytes", fill(4097), 45066)
			drain()
			expect(t, "5000 bytes: two pages", g.call("write", w, data, 5000), 5000)
			expect(t, "3000 merged into the second", g.call("write", w, data, 3000), 3000)
			expect(t, "FIONREAD", g.call("ioctl", r, 0x541b, g.buf+2200), 0)
			expect(t, "its count", int64(binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf+2200, 4))), 8000)
			expect(t, "pages of 4096 in the rest", fill(4096), 57344)
			drain()
			expect(t, "5000 bytes", g.call("write", w, data, 5000), 5000)
			expect(t, "F_SETPIPE_SZ of one page with two taken", g.call("fcntl", w, 1031, 4096), -eBUSY)
			g.call("read", r, data, 4096)
			expect(t, "F_SETPIPE_SZ of one page with one taken", g.call("fcntl", w, 1031, 4096), 4096)
			if pollout() {
				t.Errorf("POLLOUT in a full one-page pipe")
			}
			expect(t, "100 merged", g.call("write", w, data, 100), 100)
			expect(t, "4000 do not fit", g.call("write", w, data, 4000), -eAGAIN)
		})
	}
}
