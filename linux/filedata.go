//go:build cgo

package linux

import (
	"bytes"
	"io"
	"slices"
)

// fileData is the contents of an overlay file, in chunks of fileChunk
// bytes (the last one shorter), so that a growing file never has its
// contents copied whole: a contiguous buffer grown by appending held the
// old and the new copy at once, and the garbage collector let the old ones
// pile up to the size of the live heap, so a guest filling a /tmp file up
// to the memory cap took twice the cap or more of host memory. The first
// chunk grows as a file's contents would (small files stay small); the
// others are allocated whole. A nil chunk holds zeros (a file extended by
// ftruncate or a write past its end takes memory where it is written):
// what the contents take of host memory (footprint) counts the chunks that
// hold data, not the holes, so a sparse file costs what was written to it
// and a slot per chunk of its size.
//
// The zero value is an empty file.
type fileData struct {
	chunks [][]byte
	size   int64
	alloc  int64 // chunks that are not nil
}

// chunkSlot is what each chunk of a file's size takes besides its data,
// hole or not: its slice header.
const chunkSlot = 24

// footprint returns the host memory the contents take: footprintAfter
// with nothing changed.
func (d *fileData) footprint() int64 { return d.footprintAfter(d.size, 0, 0) }

// footprintAfter returns the host memory the contents would take after a
// resize to size and a write to [lo, hi) (within size; lo == hi: none): a
// slot per chunk, and each chunk that holds data (the last one only up to
// the end of the file). It looks only at the chunks the resize drops and
// those the write touches.
func (d *fileData) footprintAfter(size, lo, hi int64) int64 {
	n := (size + fileChunk - 1) / fileChunk
	have := int64(len(d.chunks))
	alloc := d.alloc
	for k := n; k < have; k++ {
		if d.chunks[k] != nil {
			alloc-- // dropped by a shrink
		}
	}
	written := func(k int64) bool { return lo < hi && lo/fileChunk <= k && k <= (hi-1)/fileChunk }
	if lo < hi {
		for k := lo / fileChunk; k <= (hi-1)/fileChunk; k++ {
			if k >= have || d.chunks[k] == nil {
				alloc++
			}
		}
	}
	fp := chunkSlot*n + alloc*fileChunk
	if last := n - 1; last >= 0 && (last < have && d.chunks[last] != nil || written(last)) {
		fp -= fileChunk - (size - last*fileChunk) // the last chunk ends with the file
	}
	return fp
}

// allocated returns how many bytes of the file hold data: its holes
// excluded (what st_blocks counts).
func (d *fileData) allocated() int64 {
	return d.footprint() - chunkSlot*int64(len(d.chunks))
}

// seekData returns the first offset at or after off (within the file)
// that holds data, -1 if there is none: SEEK_DATA, holes being whole
// chunks.
func (d *fileData) seekData(off int64) int64 {
	for k := off / fileChunk; k < int64(len(d.chunks)); k++ {
		if d.chunks[k] != nil {
			return max(off, k*fileChunk)
		}
	}
	return -1
}

// seekHole returns the first offset at or after off (within the file)
// in a hole, the file's end if there is none (SEEK_HOLE: the end is a
// hole).
func (d *fileData) seekHole(off int64) int64 {
	for k := off / fileChunk; k < int64(len(d.chunks)); k++ {
		if d.chunks[k] == nil {
			return max(off, k*fileChunk)
		}
	}
	return d.size
}

// zeroRange makes [lo, hi) (within the file) read as zeros: the chunks it
// covers whole become holes, the others that hold data are cleared there.
func (d *fileData) zeroRange(lo, hi int64) {
	for at := lo; at < hi; {
		k, off := at/fileChunk, at%fileChunk
		n := min(hi-at, fileChunk-off)
		switch c := d.chunks[k]; {
		case c == nil:
		case off == 0 && n == d.chunkLen(k):
			d.chunks[k] = nil
			d.alloc--
		default:
			clear(c[off : off+n])
		}
		at += n
	}
}

// fileChunk is the size of a file's chunks.
const fileChunk = 1 << 20

// zeroChunk stands for a nil chunk in what each hands out (read-only).
var zeroChunk = make([]byte, fileChunk)

// readFileData reads up to size bytes of r into a file (fewer if r ends
// sooner).
func readFileData(r io.Reader, size int64) (fileData, error) {
	var d fileData
	d.resize(size)
	var got int64
	var err error
	d.eachMut(0, size, func(piece []byte, at int64) bool {
		var n int
		n, err = io.ReadFull(r, piece)
		got += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
			return false
		}
		return err == nil
	})
	if err != nil {
		return fileData{}, err
	}
	d.resize(got)
	return d, nil
}

// Len returns the file's size.
func (d *fileData) Len() int64 { return d.size }

// each calls fn with the pieces of [lo, hi) (within the file) in order,
// each with its file offset, until fn returns false. The pieces must not be
// modified (a piece of a hole is zeroChunk's).
func (d *fileData) each(lo, hi int64, fn func(piece []byte, at int64) bool) {
	for at := lo; at < hi; {
		k, off := at/fileChunk, at%fileChunk
		n := min(hi-at, fileChunk-off)
		c := d.chunks[k]
		var piece []byte
		if c == nil {
			piece = zeroChunk[:n]
		} else {
			piece = c[off : off+n]
		}
		if !fn(piece, at) {
			return
		}
		at += n
	}
}

// eachMut is each with pieces fn may write into (holes are allocated).
func (d *fileData) eachMut(lo, hi int64, fn func(piece []byte, at int64) bool) {
	for at := lo; at < hi; {
		k, off := at/fileChunk, at%fileChunk
		n := min(hi-at, fileChunk-off)
		if d.chunks[k] == nil {
			l := d.chunkLen(k)
			d.chunks[k] = make([]byte, l, growChunk(k, 0, l))
			d.alloc++
		}
		if !fn(d.chunks[k][off:off+n], at) {
			return
		}
		at += n
	}
}

// chunkLen is the length of chunk k at the file's size.
func (d *fileData) chunkLen(k int64) int64 {
	return min(fileChunk, d.size-k*fileChunk)
}

// readAt copies the file's bytes from off into b, as many as there are.
func (d *fileData) readAt(b []byte, off int64) int {
	if off >= d.size {
		return 0
	}
	hi := min(d.size, off+int64(len(b)))
	d.each(off, hi, func(piece []byte, at int64) bool {
		copy(b[at-off:], piece)
		return true
	})
	return int(hi - off)
}

// equal reports whether the file holds b at off (within the file).
func (d *fileData) equal(off int64, b []byte) bool {
	eq := true
	d.each(off, off+int64(len(b)), func(piece []byte, at int64) bool {
		eq = bytes.Equal(piece, b[at-off:at-off+int64(len(piece))])
		return eq
	})
	return eq
}

// bytes returns a copy of [lo, hi) (within the file).
func (d *fileData) bytes(lo, hi int64) []byte {
	b := make([]byte, hi-lo)
	d.readAt(b, lo)
	return b
}

// writeAt copies b into the file at off; the file must hold
// [off, off+len(b)).
func (d *fileData) writeAt(b []byte, off int64) {
	d.eachMut(off, off+int64(len(b)), func(piece []byte, at int64) bool {
		copy(piece, b[at-off:])
		return true
	})
}

// resize sets the file's size: what it grows by reads as zeros.
func (d *fileData) resize(size int64) {
	old := d.size
	if size == old {
		return
	}
	n := (size + fileChunk - 1) / fileChunk
	if size < old {
		for _, c := range d.chunks[n:] {
			if c != nil {
				d.alloc--
			}
		}
		clear(d.chunks[n:])
		d.chunks = d.chunks[:n]
		if int64(cap(d.chunks)) > 2*n+16 {
			// A file shrunk from a large size gives its slots back: what
			// it keeps is about what footprint counts.
			d.chunks = slices.Clip(slices.Clone(d.chunks))
		}
		d.size = size
		if n > 0 {
			if last := d.chunks[n-1]; last != nil {
				l := d.chunkLen(n - 1)
				clear(last[l:cap(last)]) // a later growth reads zeros
				d.chunks[n-1] = last[:l]
			}
		}
		if n == 0 {
			d.chunks = nil
		}
		return
	}
	d.size = size
	if k := int64(len(d.chunks)) - 1; k >= 0 && d.chunks[k] != nil {
		// The old last chunk grows to its new length.
		c, l := d.chunks[k], d.chunkLen(k)
		if int64(cap(c)) >= l {
			d.chunks[k] = c[:l] // past its old length it is zero
		} else {
			g := make([]byte, l, growChunk(k, int64(cap(c)), l))
			copy(g, c)
			d.chunks[k] = g
		}
	}
	if int64(cap(d.chunks)) < n {
		// Grown by at least a quarter, so that a file grown chunk by
		// chunk is not copied each time, and by no more than asked at
		// once, so that a large hole takes about the slots it is charged.
		c := make([][]byte, len(d.chunks), max(n, int64(cap(d.chunks))*5/4))
		copy(c, d.chunks)
		d.chunks = c
	}
	d.chunks = d.chunks[:n] // holes: the slots past the old length are nil
}

// growChunk returns the capacity chunk k gets when it must hold need
// bytes and holds have: the first chunk grows by half again (what
// appending would do), the others are made whole.
func growChunk(k, have, need int64) int64 {
	if k > 0 {
		return fileChunk
	}
	return min(fileChunk, max(need, have+have/2, 512))
}

// clone returns a copy of the file that shares nothing with it.
func (d *fileData) clone() fileData {
	c := fileData{size: d.size, chunks: make([][]byte, len(d.chunks)), alloc: d.alloc}
	for k, ch := range d.chunks {
		if ch != nil {
			c.chunks[k] = append(make([]byte, 0, cap(ch)), ch...)
		}
	}
	return c
}
