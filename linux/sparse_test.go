//go:build cgo

package linux

import (
	"encoding/binary"
	"testing"
)

// TestSparseFiles: what a file of the overlay counts against the memory
// cap is what was written to it, not its size, as on Linux, where
// `truncate -s 2G` takes no space: a 2 GiB file made by ftruncate under a
// 64 MiB cap is fine, a byte written far into it takes its chunk, reads
// of the rest are zeros, and SEEK_DATA, SEEK_HOLE and st_blocks show the
// holes; fallocate reserves what it covers (ENOSPC past
// the cap), PUNCH_HOLE gives it back; a write that does not fit is short,
// then ENOSPC; truncating gives everything back. No file grows past
// ext4's largest size (EFBIG, short writes), as natively.
func TestSparseFiles(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			g.p.vm.max = g.p.vm.total + g.p.vm.held + 64<<20
			held := func() int64 { return int64(g.p.vm.held) }
			fd := g.open("/tmp/sparse", oCREAT|gRDWR, 0o644)
			start := held()
			expect(t, "ftruncate to 2 GiB", g.call("ftruncate", uint64(fd), 2<<30), 0)
			if got := held() - start; got > 64<<10 {
				t.Errorf("a 2 GiB hole takes %d bytes", got)
			}
			expect(t, "lseek to the end", g.call("lseek", uint64(fd), 0, 2), 2<<30)
			if err := g.p.Engine.WriteMem(g.buf, []byte("x")); err != nil {
				t.Fatal(err)
			}
			before := held()
			expect(t, "pwrite at 1 GiB", g.call("pwrite64", uint64(fd), g.buf, 1, 1<<30), 1)
			if got := held() - before; got != fileChunk {
				t.Errorf("a byte written into the hole takes %d bytes, want a chunk", got)
			}
			if got := g.pread(fd, 1<<30-1, 3); got != "\x00x\x00" {
				t.Errorf("read around it: %q", got)
			}
			// The holes show, at the chunks' grain, as tmpfs shows them
			// at its pages': SEEK_DATA, SEEK_HOLE, st_blocks.
			const seekData, seekHole = 3, 4
			expect(t, "SEEK_DATA from 0", g.call("lseek", uint64(fd), 0, seekData), 1<<30)
			expect(t, "SEEK_HOLE from 0", g.call("lseek", uint64(fd), 0, seekHole), 0)
			expect(t, "SEEK_HOLE in the data", g.call("lseek", uint64(fd), 1<<30+5, seekHole), 1<<30+fileChunk)
			expect(t, "SEEK_DATA in the data", g.call("lseek", uint64(fd), 1<<30+5, seekData), 1<<30+5)
			expect(t, "SEEK_DATA past the data", g.call("lseek", uint64(fd), 1<<30+fileChunk, seekData), -eNXIO)
			expect(t, "SEEK_HOLE at the end", g.call("lseek", uint64(fd), 2<<30, seekHole), -eNXIO)
			expect(t, "fstat", g.call("fstat", uint64(fd), g.buf), 0)
			if blocks := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+64, 8)); blocks != fileChunk/512 {
				t.Errorf("st_blocks %d, want the chunk's %d", blocks, fileChunk/512)
			}
			expect(t, "fallocate 1 GiB", g.call("fallocate", uint64(fd), 0, 0, 1<<30), -eNOSPC)
			expect(t, "fallocate 8 MiB", g.call("fallocate", uint64(fd), 0, 16<<20, 8<<20), 0)
			if got := held() - before; got != 9*fileChunk {
				t.Errorf("8 MiB reserved: %d bytes taken, want 9 chunks", got)
			}
			expect(t, "PUNCH_HOLE", g.call("fallocate", uint64(fd), fallocPunchHole|fallocKeepSize, 16<<20, 8<<20), 0)
			if got := held() - before; got != fileChunk {
				t.Errorf("the reservation punched out: %d bytes taken, want a chunk", got)
			}
			// 4 MiB at a time from offset 0: short once the cap is reached,
			// then ENOSPC.
			buf := g.call("mmap", 0, 4<<20, 3, 0x22, ^uint64(0), 0)
			if buf < 0 {
				t.Fatalf("mmap = %d", buf)
			}
			var off int64
			for {
				w := g.call("pwrite64", uint64(fd), uint64(buf), 4<<20, uint64(off))
				if w <= 0 {
					t.Fatalf("pwrite64 at %d = %d before a short write", off, w)
				}
				off += w
				if w < 4<<20 {
					break
				}
			}
			if off < 32<<20 || off > 64<<20 {
				t.Errorf("%d bytes written before the cap", off)
			}
			expect(t, "then full", g.call("pwrite64", uint64(fd), uint64(buf), 4<<20, uint64(off)), -eNOSPC)
			expect(t, "ftruncate to 0", g.call("ftruncate", uint64(fd), 0), 0)
			if got := held(); got != start {
				t.Errorf("after truncating: %d bytes held, %d at the start", got, start)
			}

			// ext4's largest file, 16 TiB less a block, as natively: its
			// slots alone (384 MiB) do not fit under this cap.
			expect(t, "ftruncate past the largest size", g.call("ftruncate", uint64(fd), maxFileSize+1), -eFBIG)
			expect(t, "ftruncate to the largest size", g.call("ftruncate", uint64(fd), maxFileSize), -eNOSPC)
			expect(t, "pwrite at the largest size", g.call("pwrite64", uint64(fd), g.buf, 3, maxFileSize), -eFBIG)
			expect(t, "pwrite across it", g.call("pwrite64", uint64(fd), g.buf, 3, maxFileSize-2), -eNOSPC)
			expect(t, "pwrite at the largest offset", g.call("pwrite64", uint64(fd), g.buf, 1, 1<<63-2), -eFBIG)
			expect(t, "pwrite past it", g.call("pwrite64", uint64(fd), g.buf, 2, 1<<63-1), -eINVAL)
			expect(t, "fallocate past it", g.call("fallocate", uint64(fd), fallocKeepSize, maxFileSize-10, 11), -eFBIG)
			expect(t, "lseek to it", g.call("lseek", uint64(fd), maxFileSize, 0), maxFileSize)
			expect(t, "lseek past it", g.call("lseek", uint64(fd), maxFileSize+1, 0), -eINVAL)
			// A file grown large and shrunk keeps about the slots counted.
			expect(t, "ftruncate to 32 GiB", g.call("ftruncate", uint64(fd), 32<<30), 0)
			expect(t, "and back to 1 MiB", g.call("ftruncate", uint64(fd), 1<<20), 0)
			if c := cap(g.p.fds[int(fd)].node.data.chunks); c > 32 {
				t.Errorf("a 1 MiB file keeps %d slots", c)
			}
		})
	}
}
