package cfi

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// ErrNoCFI is returned by Load for a file with neither .eh_frame nor
// .debug_frame.
var ErrNoCFI = errors.New("no .eh_frame or .debug_frame section")

// maxSectionSize bounds how much of a CFI section is read.
const maxSectionSize = 1 << 30

// Load reads and evaluates the CFI of an executable or shared object:
// .eh_frame and .debug_frame (a file may have both). Entries that cannot
// be read are skipped and listed in Table.Errs; an error is returned only
// when the file has no CFI or its architecture is not supported.
func Load(f *elf.File) (*Table, error) {
	a := arch.ForMachine(f.Machine)
	if a == nil {
		return nil, fmt.Errorf("unsupported machine %v", f.Machine)
	}
	if f.Type == elf.ET_REL {
		return nil, errors.New("a relocatable object: its CFI needs relocations, which are not applied")
	}
	t := &Table{Arch: a, order: f.ByteOrder}
	found := false
	for _, sec := range []struct {
		name string
		kind Section
	}{{".eh_frame", EHFrame}, {".debug_frame", DebugFrame}} {
		s := f.Section(sec.name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			continue
		}
		if s.Size > maxSectionSize {
			t.Errs = append(t.Errs, fmt.Errorf("%s: size %#x is implausibly large", sec.name, s.Size))
			continue
		}
		data, err := s.Data() // decompresses a compressed .debug_frame
		if err != nil {
			t.Errs = append(t.Errs, fmt.Errorf("%s: %w", sec.name, err))
			continue
		}
		found = true
		t.parse(data, s.Addr, sec.kind, f.ByteOrder)
	}
	if !found {
		return nil, ErrNoCFI
	}
	t.index()
	return t, nil
}

// Parse evaluates the CFI in data, the contents of a .eh_frame or
// .debug_frame section whose first byte is at address addr, for the
// architecture a.
func Parse(data []byte, addr uint64, kind Section, a *arch.Arch, order binary.ByteOrder) *Table {
	t := &Table{Arch: a, order: order}
	t.parse(data, addr, kind, order)
	t.index()
	return t
}

// A cie is a parsed common information entry.
type cie struct {
	off          int64
	version      uint8
	augmentation string
	codeAlign    uint64
	dataAlign    int64
	raReg        sframe.Reg
	ptrEnc       uint8 // 'R'
	signal       bool  // 'S'
	hasAugData   bool  // 'z'
	lsdaEnc      uint8 // 'L': the encoding of the FDE's LSDA pointer (peOmit: none)
	ptrSize      int
	order        binary.ByteOrder
	initial      []byte
	err          error
	// init is the state after the initial instructions.
	init   state
	inited bool
}

// parse reads every entry of one section [DWARF5 6.4.1; LSB 5.0 10.6].
func (t *Table) parse(data []byte, addr uint64, kind Section, order binary.ByteOrder) {
	cies := map[int64]*cie{}
	ptrSize := t.Arch.PtrSize
	fail := func(off int64, format string, args ...any) {
		t.Errs = append(t.Errs, fmt.Errorf("%s at %#x: %s", kind, off, fmt.Sprintf(format, args...)))
	}
	t.FDEs = slices.Grow(t.FDEs, countEntries(data, order))
	for off := int64(0); off < int64(len(data)); {
		r := &reader{data: data, off: int(off), order: order}
		length := uint64(r.u32())
		idSize := 4
		if length == 0xffffffff {
			length = r.u64()
			idSize = 8 // 64-bit DWARF
		}
		if r.err != nil {
			fail(off, "entry length: %v", r.err)
			return
		}
		if length == 0 {
			if kind == EHFrame {
				return // the zero terminator
			}
			off = int64(r.off)
			continue
		}
		body := int64(r.off)
		if length > uint64(int64(len(data))-body) {
			fail(off, "entry of %d bytes runs past the end of the %d-byte section", length, len(data))
			return
		}
		next := body + int64(length)
		r.data = data[:next]
		idOff := int64(r.off)
		var id uint64
		if idSize == 8 && kind == DebugFrame {
			id = r.u64()
		} else {
			id = uint64(r.u32())
		}
		isCIE := id == 0 && kind == EHFrame || kind == DebugFrame && (idSize == 4 && id == 0xffffffff || idSize == 8 && id == ^uint64(0))
		switch {
		case r.err != nil:
			fail(off, "CIE id: %v", r.err)
		case isCIE:
			c := parseCIE(r, off, kind, ptrSize)
			cies[off] = c
			if c.err != nil {
				fail(off, "CIE: %v", c.err)
			}
		default:
			cieOff := int64(id)
			if kind == EHFrame {
				cieOff = idOff - int64(id) // relative to the CIE pointer field
			}
			c := cies[cieOff]
			if c == nil {
				// A CIE after its FDEs is legal in .debug_frame.
				c = t.cieAt(data, cieOff, kind, order, ptrSize)
				if c != nil {
					cies[cieOff] = c
				}
			}
			switch {
			case c == nil:
				fail(off, "FDE: no CIE at %#x", cieOff)
			case c.err != nil:
				fail(off, "FDE: its CIE at %#x could not be read", cieOff)
			default:
				fde, err := t.parseFDE(r, off, c, kind, addr)
				if err != nil {
					fail(off, "FDE: %v", err)
				} else {
					t.FDEs = append(t.FDEs, fde)
				}
			}
		}
		off = next
	}
}

// countEntries counts the entries (CIEs and FDEs) of a CFI section by
// their lengths, up to the first that cannot be read: room for its FDEs.
func countEntries(data []byte, order binary.ByteOrder) int {
	n := 0
	for off := uint64(0); off+4 <= uint64(len(data)); {
		length := uint64(order.Uint32(data[off:]))
		off += 4
		if length == 0xffffffff {
			if off+8 > uint64(len(data)) {
				break
			}
			length = order.Uint64(data[off:])
			off += 8
		}
		if length > uint64(len(data))-off {
			break
		}
		if length > 0 {
			n++
		}
		off += length
	}
	return n
}

// cieAt parses the CIE at section offset off, or returns nil.
func (t *Table) cieAt(data []byte, off int64, kind Section, order binary.ByteOrder, ptrSize int) *cie {
	if off < 0 || off >= int64(len(data)) {
		return nil
	}
	r := &reader{data: data, off: int(off), order: order}
	length := uint64(r.u32())
	idSize := 4
	if length == 0xffffffff {
		length = r.u64()
		idSize = 8
	}
	if r.err != nil || length == 0 || length > uint64(int64(len(data))-int64(r.off)) {
		return nil
	}
	r.data = data[:int64(r.off)+int64(length)]
	var id uint64
	if idSize == 8 {
		id = r.u64()
	} else {
		id = uint64(r.u32())
	}
	if kind != DebugFrame || id != 0xffffffff && id != ^uint64(0) {
		return nil
	}
	return parseCIE(r, off, kind, ptrSize)
}

// parseCIE reads a CIE's fields after its id [DWARF5 6.4.1; LSB 5.0
// 10.6.1.1].
func parseCIE(r *reader, off int64, kind Section, ptrSize int) *cie {
	c := &cie{off: off, ptrSize: ptrSize, ptrEnc: peAbsptr, lsdaEnc: peOmit, order: r.order}
	c.version = r.u8()
	switch {
	case r.err != nil:
	case kind == EHFrame && c.version != 1 && c.version != 3:
		c.err = fmt.Errorf("unknown .eh_frame CIE version %d", c.version)
		return c
	case kind == DebugFrame && c.version != 1 && c.version != 3 && c.version != 4:
		c.err = fmt.Errorf("unknown .debug_frame CIE version %d", c.version)
		return c
	}
	c.augmentation = r.cstring()
	if strings.Contains(c.augmentation, "eh") {
		c.err = fmt.Errorf("obsolete augmentation %q", c.augmentation)
		return c
	}
	if c.version == 4 {
		if as := r.u8(); as != 0 && r.err == nil {
			c.ptrSize = int(as)
		}
		if seg := r.u8(); seg != 0 && r.err == nil {
			c.err = fmt.Errorf("segment selectors (%d bytes) are not supported", seg)
			return c
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if c.version == 1 {
		c.raReg = sframe.Reg(r.u8())
	} else {
		c.raReg = sframe.Reg(r.uleb())
	}
	if strings.HasPrefix(c.augmentation, "z") {
		c.hasAugData = true
		n := r.uleb()
		if n > uint64(r.left()) {
			r.fail(errTruncated)
		}
		aug := &reader{data: r.bytes(int(n)), order: r.order}
	augs:
		for _, ch := range c.augmentation[1:] {
			switch ch {
			case 'R':
				c.ptrEnc = aug.u8()
			case 'L':
				c.lsdaEnc = aug.u8()
			case 'P':
				enc := aug.u8()
				aug.encoded(enc&^peIndirect, 0, c.ptrSize)
			case 'S':
				c.signal = true
			case 'B', 'G':
				// AArch64 PAuth B key, MTE tagged frames: no data.
			default:
				// Unknown letters: their data is covered by the 'z' length,
				// and the FDE pointer encoding is known if 'R' came first.
				break augs
			}
		}
		if aug.err != nil {
			c.err = fmt.Errorf("augmentation data of %q: %w", c.augmentation, aug.err)
			return c
		}
	} else if c.augmentation != "" {
		c.err = fmt.Errorf("augmentation %q without 'z': its data cannot be skipped", c.augmentation)
		return c
	}
	c.initial = r.data[r.off:]
	if r.err != nil {
		c.err = r.err
	}
	if c.codeAlign == 0 && c.err == nil {
		c.err = errors.New("code alignment factor 0")
	}
	return c
}

// parseFDE reads an FDE's fields after its CIE pointer; its program is
// evaluated on first use.
func (t *Table) parseFDE(r *reader, off int64, c *cie, kind Section, secAddr uint64) (FDE, error) {
	f := FDE{Section: kind, Off: off, CIEOff: c.off, Signal: c.signal, RAReg: c.raReg}
	enc := c.ptrEnc
	if kind == DebugFrame {
		enc = peAbsptr
	}
	f.Start = r.encoded(enc, secAddr+uint64(r.off), c.ptrSize)
	size := r.encoded(enc&0x0f, 0, c.ptrSize)
	if c.hasAugData {
		n := r.uleb()
		if n > uint64(r.left()) {
			r.fail(errTruncated)
		}
		augAddr := secAddr + uint64(r.off)
		aug := r.bytes(int(n))
		if c.lsdaEnc != peOmit && c.lsdaEnc&peIndirect == 0 && r.err == nil {
			// The LSDA pointer comes first [LSB 5.0 10.6.1.2]; one that
			// cannot be read leaves LSDA 0 and the FDE as it is.
			ar := &reader{data: aug, order: r.order}
			if p := ar.encoded(c.lsdaEnc, augAddr, c.ptrSize); ar.err == nil {
				f.LSDA = p
			}
		}
	}
	if r.err != nil {
		return f, r.err
	}
	f.End = f.Start + size
	if f.End < f.Start {
		return f, fmt.Errorf("range [%#x, +%#x) wraps around", f.Start, size)
	}
	if !c.inited {
		c.init, c.err = t.run(c, nil, c.initial, nil)
		c.inited = true
		if c.err != nil {
			return f, fmt.Errorf("CIE at %#x: initial instructions: %w", c.off, c.err)
		}
	}
	f.t, f.cie, f.prog = t, c, r.data[r.off:]
	return f, nil
}
