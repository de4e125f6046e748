//go:build cgo

package linux

import (
	"bytes"
	"io"
)

// fileData is the contents of an overlay file, in chunks of fileChunk
// bytes (the last one shorter), so that a growing file never has its
// contents copied whole: a contiguous buffer grown by appending held the
// old and the new copy at once, and the garbage collector let the old ones
// pile up to the size of the live heap, so a guest filling a /tmp file up
// to the memory cap took twice the cap or more of host memory. The first
// chunk grows as a file's contents would (small files stay small); the
// others are allocated whole. A nil chunk holds zeros (a file extended by
// ftruncate or a write past its end takes memory where it is written).
//
// The zero value is an empty file.
type fileData struct {
	chunks [][]byte
	size   int64
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
		clear(d.chunks[n:])
		d.chunks = d.chunks[:n]
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
	for int64(len(d.chunks)) < n {
		d.chunks = append(d.chunks, nil) // holes
	}
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
	c := fileData{size: d.size, chunks: make([][]byte, len(d.chunks))}
	for k, ch := range d.chunks {
		if ch != nil {
			c.chunks[k] = append(make([]byte, 0, cap(ch)), ch...)
		}
	}
	return c
}
