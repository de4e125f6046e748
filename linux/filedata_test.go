//go:build cgo

package linux

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestFileDataModel applies random resizes, writes, zeroed ranges and
// clones to a fileData and to a plain byte slice, around and across chunk
// boundaries, and compares every read, each's pieces and the sizes; and
// what footprintAfter foretold a resize or write would take with what the
// chunks take after it (slowFootprint).
func TestFileDataModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Offsets near the chunk boundaries and the ends.
	pick := func(size int64) int64 {
		switch r.IntN(4) {
		case 0:
			return r.Int64N(size + 1)
		case 1:
			k := r.Int64N(4)
			return max(0, k*fileChunk+r.Int64N(17)-8)
		case 2:
			return max(0, size+r.Int64N(33)-16)
		}
		return r.Int64N(4096)
	}
	for round := range 6 {
		var d fileData
		var model []byte
		var clones []fileData
		var cloneModels [][]byte
		for step := range 150 {
			foretold := int64(-1)
			switch op := r.IntN(11); {
			case op < 3: // resize
				size := min(pick(int64(len(model))), 3*fileChunk+100)
				foretold = d.footprintAfter(size, 0, 0)
				d.resize(size)
				if size < int64(len(model)) {
					model = model[:size:size]
				} else {
					model = append(model, make([]byte, size-int64(len(model)))...)
				}
			case op < 8: // write within the file
				if len(model) == 0 {
					continue
				}
				off := min(pick(int64(len(model))), int64(len(model))-1)
				n := 1 + r.Int64N(min(int64(len(model))-off, 3*fileChunk/2))
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				foretold = d.footprintAfter(d.Len(), off, off+n)
				d.writeAt(b, off)
				copy(model[off:], b)
			case op < 9: // a range zeroed: whole chunks become holes
				if len(model) == 0 {
					continue
				}
				off := min(pick(int64(len(model))), int64(len(model))-1)
				n := 1 + r.Int64N(min(int64(len(model))-off, 3*fileChunk/2))
				d.zeroRange(off, off+n)
				clear(model[off : off+n])
			case op < 10: // clone, then the copy must not change
				clones = append(clones, d.clone())
				cloneModels = append(cloneModels, bytes.Clone(model))
			default: // a file read whole
				d = fileDataOf(model)
			}
			if d.Len() != int64(len(model)) {
				t.Fatalf("round %d step %d: Len %d, want %d", round, step, d.Len(), len(model))
			}
			fp, alloc := slowFootprint(&d)
			if d.footprint() != fp || d.alloc != alloc || foretold >= 0 && foretold != fp {
				t.Fatalf("round %d step %d: footprint %d (foretold %d), %d chunks allocated; the chunks take %d, %d allocated",
					round, step, d.footprint(), foretold, d.alloc, fp, alloc)
			}
			check := func(what string, d *fileData, model []byte) {
				off := min(pick(int64(len(model))), int64(len(model)))
				b := make([]byte, r.IntN(2*fileChunk))
				n := d.readAt(b, off)
				want := max(0, min(len(b), len(model)-int(off)))
				if n != want || !bytes.Equal(b[:n], model[off:off+int64(n)]) {
					t.Fatalf("round %d step %d %s: readAt(%d bytes, %d) = %d bytes, want %d (or different)", round, step, what, len(b), off, n, want)
				}
				var got []byte
				d.each(0, d.Len(), func(piece []byte, at int64) bool {
					if at != int64(len(got)) {
						t.Fatalf("%s: piece at %d after %d bytes", what, at, len(got))
					}
					got = append(got, piece...)
					return true
				})
				if !bytes.Equal(got, model) {
					t.Fatalf("round %d step %d %s: each gives other contents", round, step, what)
				}
				if len(model) > 0 && !d.equal(0, model) {
					t.Fatalf("round %d step %d %s: equal is false on the same bytes", round, step, what)
				}
			}
			check("file", &d, model)
			for i := max(0, len(clones)-2); i < len(clones); i++ {
				check("clone", &clones[i], cloneModels[i])
			}
			if step == 149 {
				for i := range clones {
					check("clone", &clones[i], cloneModels[i])
				}
			}
		}
	}
}

// TestFileDataGrowth checks that a file grown by appending, as a guest
// writing a big file does, holds about its size: no chunk but the first
// is reallocated.
func TestFileDataGrowth(t *testing.T) {
	var d fileData
	b := make([]byte, 65536)
	for d.Len() < 64*fileChunk+12345 {
		off := d.Len()
		d.resize(off + int64(len(b)))
		d.writeAt(b, off)
	}
	var held int64
	for _, c := range d.chunks {
		held += int64(cap(c))
	}
	if held > d.Len()+fileChunk {
		t.Errorf("a %d-byte file holds %d bytes", d.Len(), held)
	}
}

// slowFootprint is what d's chunks take, counted one by one: a slot
// each, and the bytes of those that hold data; and how many do.
func slowFootprint(d *fileData) (fp, alloc int64) {
	for _, c := range d.chunks {
		fp += chunkSlot + int64(len(c))
		if c != nil {
			alloc++
		}
	}
	return fp, alloc
}

// TestFileDataSparse: a file grown by a resize is holes, which take a slot
// per chunk and nothing else; a byte written far into it takes its chunk;
// zeroing whole chunks gives them back.
func TestFileDataSparse(t *testing.T) {
	var d fileData
	const size = 2 << 30
	d.resize(size)
	if got, want := d.footprint(), int64(chunkSlot*size/fileChunk); got != want {
		t.Errorf("a %d-byte hole takes %d bytes, want %d (its slots)", size, got, want)
	}
	d.writeAt([]byte{7}, 1<<30)
	if got, want := d.footprint(), int64(chunkSlot*size/fileChunk+fileChunk); got != want {
		t.Errorf("with a byte written: %d bytes, want %d", got, want)
	}
	b := make([]byte, 3)
	if n := d.readAt(b, 1<<30-1); n != 3 || !bytes.Equal(b, []byte{0, 7, 0}) {
		t.Errorf("read around the byte: %d %v", n, b)
	}
	d.zeroRange(1<<30, 1<<30+fileChunk)
	if got, want := d.footprint(), int64(chunkSlot*size/fileChunk); got != want || d.alloc != 0 {
		t.Errorf("the chunk zeroed whole: %d bytes (%d chunks), want %d", got, d.alloc, want)
	}
}

// fileDataOf returns a file holding a copy of b.
func fileDataOf(b []byte) fileData {
	var d fileData
	d.resize(int64(len(b)))
	d.writeAt(b, 0)
	return d
}
