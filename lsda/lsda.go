// Package lsda reads the language-specific data area of an FDE (its CIE's
// 'L' augmentation): the call-site table of GCC's C++ personality
// routine, __gxx_personality_v0, in .gcc_except_table. Each call site is
// a range of code whose calls may throw, with the landing pad control
// enters when an exception passes through one of them.
//
// The layout is libgcc's (unwind-pe.h, and parse_lsda_header in
// libstdc++'s eh_personality.cc; also the Itanium C++ ABI's exception
// handling tables):
//
//	u8   LPStart encoding; LPStart (that encoding) unless omitted
//	u8   TType encoding; uleb128 offset of the type table's end unless omitted
//	u8   call-site encoding
//	uleb128 length of the call-site table
//	call sites: start, length, landing pad (call-site encoding), action (uleb128)
//	action table, type table
//
// A call site's start is relative to the function's start, its landing
// pad to LPStart (by default the function's start); a landing pad of 0
// means none (the exception goes on to the caller).
package lsda

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// Pointer encodings [LSB 5.0 10.5 "DWARF Exception Header Encoding"].
const (
	EncAbsptr   = 0x00
	EncULEB128  = 0x01
	EncUdata2   = 0x02
	EncUdata4   = 0x03
	EncUdata8   = 0x04
	EncSLEB128  = 0x09
	EncSdata2   = 0x0a
	EncSdata4   = 0x0b
	EncSdata8   = 0x0c
	EncPCRel    = 0x10
	EncIndirect = 0x80
	EncOmit     = 0xff
)

// A Table is one LSDA.
type Table struct {
	Addr uint64 // address of its first byte
	// LPStart is the base of the landing pads: the function's start
	// unless the header gives another.
	LPStart uint64
	// TTypeEnc is the encoding of the type table's entries (EncOmit: no
	// type table); TTypeEnd the address of the table's end (0 without).
	TTypeEnc uint8
	TTypeEnd uint64
	// CallSiteEnc is the encoding of the call-site table's fields: GCC
	// emits EncULEB128 when the assembler has .uleb128, else EncUdata4.
	CallSiteEnc uint8
	CallSites   []CallSite
	// Actions is the address of the action table (right after the
	// call-site table).
	Actions uint64
}

// A CallSite is one entry of the call-site table, with absolute
// addresses.
type CallSite struct {
	Start, End uint64 // the code range [Start, End)
	// LandingPad is where control enters when an exception passes a call
	// in the range; 0: none.
	LandingPad uint64
	// Action is 0 for a cleanup only, else 1 + the offset of the first
	// action record in the action table.
	Action uint64
}

// ErrTruncated: the table runs past the end of the data.
var ErrTruncated = errors.New("truncated LSDA")

// Parse reads the LSDA at the start of data, whose first byte is at
// address addr, for the function starting at funcStart; ptrSize is the
// size of an absolute pointer (4 or 8). data may extend past the table
// (the rest of .gcc_except_table).
func Parse(data []byte, addr, funcStart uint64, ptrSize int, order binary.ByteOrder) (*Table, error) {
	r := &reader{data: data, addr: addr, order: order, ptrSize: ptrSize}
	t := &Table{Addr: addr, LPStart: funcStart, TTypeEnc: EncOmit}
	lpEnc := r.u8()
	if lpEnc != EncOmit {
		t.LPStart = r.encoded(lpEnc)
	}
	t.TTypeEnc = r.u8()
	if t.TTypeEnc != EncOmit {
		off := r.uleb()
		t.TTypeEnd = r.pc() + off
	}
	t.CallSiteEnc = r.u8()
	n := r.uleb()
	if r.err != nil {
		return nil, fmt.Errorf("LSDA at %#x: header: %w", addr, r.err)
	}
	if t.CallSiteEnc == EncOmit {
		return nil, fmt.Errorf("LSDA at %#x: call-site encoding omitted", addr)
	}
	if n > uint64(r.left()) {
		return nil, fmt.Errorf("LSDA at %#x: call-site table of %d bytes: %w", addr, n, ErrTruncated)
	}
	end := r.off + int(n)
	cs := &reader{data: data[:end], off: r.off, addr: addr, order: order, ptrSize: ptrSize}
	for cs.off < end {
		start := cs.encoded(t.CallSiteEnc)
		length := cs.encoded(t.CallSiteEnc)
		lp := cs.encoded(t.CallSiteEnc)
		action := cs.uleb()
		if cs.err != nil {
			return nil, fmt.Errorf("LSDA at %#x: call site %d: %w", addr, len(t.CallSites), cs.err)
		}
		c := CallSite{Start: funcStart + start, Action: action}
		c.End = c.Start + length
		if c.End < c.Start {
			return nil, fmt.Errorf("LSDA at %#x: call site %d: range [%#x, +%#x) wraps around", addr, len(t.CallSites), c.Start, length)
		}
		if lp != 0 {
			c.LandingPad = t.LPStart + lp
		}
		t.CallSites = append(t.CallSites, c)
	}
	t.Actions = addr + uint64(end)
	return t, nil
}

// Read reads the LSDA at address addr of the ELF file f (in the section
// that holds it: .gcc_except_table) for the function starting at
// funcStart.
func Read(f *elf.File, addr, funcStart uint64) (*Table, error) {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr || addr-s.Addr >= s.Size {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("LSDA at %#x: %s: %w", addr, s.Name, err)
		}
		ptrSize := 8
		if f.Class == elf.ELFCLASS32 {
			ptrSize = 4
		}
		off := addr - s.Addr
		return Parse(data[off:], addr, funcStart, ptrSize, f.ByteOrder)
	}
	return nil, fmt.Errorf("LSDA at %#x: in no section of the file", addr)
}

// reader reads the table's fields; the first error sticks.
type reader struct {
	data    []byte
	off     int
	addr    uint64 // address of data[0]
	order   binary.ByteOrder
	ptrSize int
	err     error
}

func (r *reader) left() int { return len(r.data) - r.off }

func (r *reader) pc() uint64 { return r.addr + uint64(r.off) }

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.left() {
		r.err = ErrTruncated
		r.off = len(r.data)
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.take(1)
		if b == nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b[0]&0x7f) << shift
		}
		if b[0]&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		b := r.take(1)
		if b == nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b[0]&0x7f) << shift
		}
		shift += 7
		if b[0]&0x80 == 0 {
			if shift < 64 && b[0]&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// encoded reads a value in pointer encoding enc. Only absolute and
// pc-relative values occur in a linked file's LSDA; the others (and
// indirect ones) are errors.
func (r *reader) encoded(enc uint8) uint64 {
	if r.err != nil {
		return 0
	}
	at := r.pc()
	var v uint64
	switch enc & 0x0f {
	case EncAbsptr:
		if r.ptrSize == 4 {
			if b := r.take(4); b != nil {
				v = uint64(r.order.Uint32(b))
			}
		} else if b := r.take(8); b != nil {
			v = r.order.Uint64(b)
		}
	case EncULEB128:
		v = r.uleb()
	case EncUdata2:
		if b := r.take(2); b != nil {
			v = uint64(r.order.Uint16(b))
		}
	case EncUdata4:
		if b := r.take(4); b != nil {
			v = uint64(r.order.Uint32(b))
		}
	case EncUdata8, EncSdata8:
		if b := r.take(8); b != nil {
			v = r.order.Uint64(b)
		}
	case EncSLEB128:
		v = uint64(r.sleb())
	case EncSdata2:
		if b := r.take(2); b != nil {
			v = uint64(int64(int16(r.order.Uint16(b))))
		}
	case EncSdata4:
		if b := r.take(4); b != nil {
			v = uint64(int64(int32(r.order.Uint32(b))))
		}
	default:
		r.fail(fmt.Errorf("unknown pointer encoding %#x", enc))
		return 0
	}
	switch {
	case enc&EncIndirect != 0:
		r.fail(fmt.Errorf("indirect pointer encoding %#x", enc))
		return 0
	case enc&0x70 == 0:
	case enc&0x70 == EncPCRel:
		v += at
	default:
		r.fail(fmt.Errorf("unsupported pointer encoding %#x (only absolute and pc-relative)", enc))
		return 0
	}
	return v
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
