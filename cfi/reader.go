package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errTruncated is the reader's sticky error: a read ran past the end.
var errTruncated = errors.New("truncated")

// A reader is a sticky-error byte cursor over one CIE, FDE or CFA
// program: reads after a failure return zero, and the caller checks err
// once per record.
type reader struct {
	data  []byte
	off   int
	order binary.ByteOrder
	err   error
}

func (r *reader) left() int { return len(r.data) - r.off }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > r.left() {
		r.fail(errTruncated)
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return r.order.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return r.order.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return r.order.Uint64(b)
}

// uleb reads an unsigned LEB128 number [DWARF5 7.6]; bits beyond 64 are
// an error.
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift >= 64 && b&0x7f != 0 || shift == 63 && b&0x7e != 0 {
			r.fail(errors.New("LEB128 number overflows 64 bits"))
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number.
func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift > 70 {
			r.fail(errors.New("LEB128 number overflows 64 bits"))
			return 0
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() string {
	for i := r.off; i < len(r.data); i++ {
		if r.data[i] == 0 {
			s := string(r.data[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.fail(errTruncated)
	return ""
}

// Pointer encodings of .eh_frame [LSB 5.0 10.5 "DWARF Exception Header
// Encoding"].
const (
	peAbsptr   = 0x00
	peULEB128  = 0x01
	peUdata2   = 0x02
	peUdata4   = 0x03
	peUdata8   = 0x04
	peSLEB128  = 0x09
	peSdata2   = 0x0a
	peSdata4   = 0x0b
	peSdata8   = 0x0c
	pePCRel    = 0x10
	peOmit     = 0xff
	peIndirect = 0x80
)

// encoded reads a pointer in encoding enc; addr is the address of the
// byte at the cursor (for pc-relative values), ptrSize the size of
// absptr. Only absolute and pc-relative values occur in the CFI of
// executables and shared objects; the others are errors.
func (r *reader) encoded(enc uint8, addr uint64, ptrSize int) uint64 {
	if enc == peOmit {
		return 0
	}
	var v uint64
	switch enc & 0x0f {
	case peAbsptr:
		if ptrSize == 4 {
			v = uint64(r.u32())
		} else {
			v = r.u64()
		}
	case peULEB128:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peUdata8, peSdata8:
		v = r.u64()
	case peSLEB128:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	default:
		r.fail(fmt.Errorf("unknown pointer encoding %#x", enc))
		return 0
	}
	switch enc & 0x70 {
	case 0:
	case pePCRel:
		v += addr
	default:
		r.fail(fmt.Errorf("unsupported pointer encoding %#x (only absolute and pc-relative)", enc))
		return 0
	}
	return v
}
