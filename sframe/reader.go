package sframe

import "encoding/binary"

// reader reads fixed-width fields of one section at absolute offsets. Reads
// past the end return zero and record the first failure, so a record can be
// read field by field and checked once [style: one sticky-error cursor].
type reader struct {
	data  []byte
	order binary.ByteOrder
	// bad is the offset of the first read that did not fit, or -1.
	bad int64
}

func newReader(data []byte, order binary.ByteOrder) *reader {
	return &reader{data: data, order: order, bad: -1}
}

// fits reports whether n bytes at off lie inside the data.
func (r *reader) fits(off int64, n int) bool {
	return off >= 0 && n >= 0 && off <= int64(len(r.data)) && int64(n) <= int64(len(r.data))-off
}

func (r *reader) fail(off int64) {
	if r.bad < 0 {
		r.bad = off
	}
}

func (r *reader) u8(off int64) uint8 {
	if !r.fits(off, 1) {
		r.fail(off)
		return 0
	}
	return r.data[off]
}

func (r *reader) u16(off int64) uint16 {
	if !r.fits(off, 2) {
		r.fail(off)
		return 0
	}
	return r.order.Uint16(r.data[off:])
}

func (r *reader) u32(off int64) uint32 {
	if !r.fits(off, 4) {
		r.fail(off)
		return 0
	}
	return r.order.Uint32(r.data[off:])
}

func (r *reader) u64(off int64) uint64 {
	if !r.fits(off, 8) {
		r.fail(off)
		return 0
	}
	return r.order.Uint64(r.data[off:])
}

// uN reads an unsigned field of 1, 2 or 4 bytes.
func (r *reader) uN(off int64, n int) uint32 {
	switch n {
	case 1:
		return uint32(r.u8(off))
	case 2:
		return uint32(r.u16(off))
	default:
		return r.u32(off)
	}
}

// sN reads a signed field of 1, 2 or 4 bytes, sign-extended.
func (r *reader) sN(off int64, n int) int32 {
	switch n {
	case 1:
		return int32(int8(r.u8(off)))
	case 2:
		return int32(int16(r.u16(off)))
	default:
		return int32(r.u32(off))
	}
}
