package cfi

import (
	"errors"
	"fmt"

	"github.com/sframesim/sframesim/sframe"
)

// DW_CFA opcodes [DWARF5 7.24, GNU and AArch64 extensions].
const (
	cfaAdvanceLoc       = 0x40 // high 2 bits; delta in the low 6
	cfaOffset           = 0x80 // high 2 bits; register in the low 6
	cfaRestore          = 0xc0 // high 2 bits; register in the low 6
	cfaNop              = 0x00
	cfaSetLoc           = 0x01
	cfaAdvanceLoc1      = 0x02
	cfaAdvanceLoc2      = 0x03
	cfaAdvanceLoc4      = 0x04
	cfaOffsetExtended   = 0x05
	cfaRestoreExtended  = 0x06
	cfaUndefined        = 0x07
	cfaSameValue        = 0x08
	cfaRegister         = 0x09
	cfaRememberState    = 0x0a
	cfaRestoreState     = 0x0b
	cfaDefCFA           = 0x0c
	cfaDefCFARegister   = 0x0d
	cfaDefCFAOffset     = 0x0e
	cfaDefCFAExpression = 0x0f
	cfaExpression       = 0x10
	cfaOffsetExtendedSF = 0x11
	cfaDefCFASF         = 0x12
	cfaDefCFAOffsetSF   = 0x13
	cfaValOffset        = 0x14
	cfaValOffsetSF      = 0x15
	cfaValExpression    = 0x16
	cfaMIPSAdvanceLoc8  = 0x1d
	cfaNegateRAStateWPC = 0x2c // DW_CFA_AARCH64_negate_ra_state_with_pc
	cfaNegateRAState    = 0x2d // DW_CFA_AARCH64_negate_ra_state = DW_CFA_GNU_window_save
	cfaGNUArgsSize      = 0x2e
	cfaGNUNegOffsetExt  = 0x2f
)

// state is the row being built: the columns sframesim tracks.
type state struct {
	cfa, ra, fp Col
	signed      bool
}

// maxRememberDepth bounds DW_CFA_remember_state nesting.
const maxRememberDepth = 64

// run executes a CFA program from state st (the CIE's initial
// instructions when f is nil, else an FDE's program from its CIE's
// state); emit is called at each advance with the row's address.
func (t *Table) run(c *cie, f *FDE, prog []byte, emit func(loc uint64, st *state)) (state, error) {
	// The row being built and the remembered ones live in t: a local
	// the closures below and emit see would escape to the heap, once per
	// program.
	st := &t.runState
	*st = c.init
	if f == nil {
		*st = state{} // the CIE starts from nothing
	}
	r := &reader{data: prog, order: c.order}
	var loc uint64
	if f != nil {
		loc = f.Start
	}
	stack := t.runStack[:0]
	defer func() { t.runStack = stack[:0] }()
	fp := t.Arch.FP
	set := func(reg uint64, col Col) {
		switch {
		case reg == uint64(uint16(c.raReg)):
			st.ra = col
		case reg == uint64(uint16(fp)):
			st.fp = col
		}
	}
	restore := func(reg uint64) {
		switch {
		case reg == uint64(uint16(c.raReg)):
			st.ra = c.init.ra
		case reg == uint64(uint16(fp)):
			st.fp = c.init.fp
		}
	}
	regNum := func(v uint64) sframe.Reg {
		if v > 0x7fff {
			r.fail(fmt.Errorf("register number %d out of range", v))
			return 0
		}
		return sframe.Reg(v)
	}
	advance := func(delta uint64) {
		if f == nil {
			return // an advance in a CIE's initial instructions has no row to end
		}
		if emit != nil {
			emit(loc, st)
		}
		loc += delta * c.codeAlign
	}
	for r.left() > 0 && r.err == nil {
		at := r.off
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			advance(uint64(op & 0x3f))
			continue
		case cfaOffset:
			set(uint64(op&0x3f), Col{Kind: ColOffset, Off: int64(r.uleb()) * c.dataAlign})
			continue
		case cfaRestore:
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			enc := c.ptrEnc
			if f != nil && f.Section == DebugFrame {
				enc = peAbsptr
			}
			v := r.encoded(enc, 0, c.ptrSize)
			if f != nil && enc&0x70 != 0 {
				r.fail(errors.New("DW_CFA_set_loc with a pc-relative encoding"))
			}
			if f != nil && r.err == nil {
				if v < loc {
					r.fail(fmt.Errorf("DW_CFA_set_loc %#x goes back from %#x", v, loc))
					break
				}
				if emit != nil {
					emit(loc, st)
				}
				loc = v
			}
		case cfaAdvanceLoc1:
			advance(uint64(r.u8()))
		case cfaAdvanceLoc2:
			advance(uint64(r.u16()))
		case cfaAdvanceLoc4:
			advance(uint64(r.u32()))
		case cfaMIPSAdvanceLoc8:
			advance(r.u64())
		case cfaOffsetExtended:
			reg := r.uleb()
			set(reg, Col{Kind: ColOffset, Off: int64(r.uleb()) * c.dataAlign})
		case cfaOffsetExtendedSF:
			reg := r.uleb()
			set(reg, Col{Kind: ColOffset, Off: r.sleb() * c.dataAlign})
		case cfaGNUNegOffsetExt:
			reg := r.uleb()
			set(reg, Col{Kind: ColOffset, Off: -int64(r.uleb()) * c.dataAlign})
		case cfaValOffset:
			reg := r.uleb()
			set(reg, Col{Kind: ColValOffset, Off: int64(r.uleb()) * c.dataAlign})
		case cfaValOffsetSF:
			reg := r.uleb()
			set(reg, Col{Kind: ColValOffset, Off: r.sleb() * c.dataAlign})
		case cfaRestoreExtended:
			restore(r.uleb())
		case cfaUndefined:
			set(r.uleb(), Col{Kind: ColUndefined})
		case cfaSameValue:
			set(r.uleb(), Col{Kind: ColSame})
		case cfaRegister:
			reg := r.uleb()
			set(reg, Col{Kind: ColRegister, Reg: regNum(r.uleb())})
		case cfaRememberState:
			if len(stack) == maxRememberDepth {
				r.fail(fmt.Errorf("DW_CFA_remember_state nested deeper than %d", maxRememberDepth))
				break
			}
			stack = append(stack, *st)
		case cfaRestoreState:
			if len(stack) == 0 {
				r.fail(errors.New("DW_CFA_restore_state without DW_CFA_remember_state"))
				break
			}
			// The CFA is part of the remembered row [DWARF5 6.4.2.4].
			*st = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case cfaDefCFA:
			reg := regNum(r.uleb())
			st.cfa = Col{Kind: ColCFAReg, Reg: reg, Off: int64(r.uleb())}
		case cfaDefCFASF:
			reg := regNum(r.uleb())
			st.cfa = Col{Kind: ColCFAReg, Reg: reg, Off: r.sleb() * c.dataAlign}
		case cfaDefCFARegister:
			reg := regNum(r.uleb())
			if st.cfa.Kind != ColCFAReg {
				r.fail(errors.New("DW_CFA_def_cfa_register while the CFA is not register+offset"))
				break
			}
			st.cfa.Reg = reg
		case cfaDefCFAOffset:
			off := int64(r.uleb())
			if st.cfa.Kind != ColCFAReg {
				r.fail(errors.New("DW_CFA_def_cfa_offset while the CFA is not register+offset"))
				break
			}
			st.cfa.Off = off
		case cfaDefCFAOffsetSF:
			off := r.sleb() * c.dataAlign
			if st.cfa.Kind != ColCFAReg {
				r.fail(errors.New("DW_CFA_def_cfa_offset_sf while the CFA is not register+offset"))
				break
			}
			st.cfa.Off = off
		case cfaDefCFAExpression:
			n := r.uleb()
			if n > uint64(r.left()) {
				r.fail(errTruncated)
				break
			}
			st.cfa = Col{Kind: ColCFAExpression, Expr: r.bytes(int(n))}
		case cfaExpression, cfaValExpression:
			reg := r.uleb()
			n := r.uleb()
			if n > uint64(r.left()) {
				r.fail(errTruncated)
				break
			}
			kind := ColExpression
			if op == cfaValExpression {
				kind = ColValExpression
			}
			set(reg, Col{Kind: kind, Expr: r.bytes(int(n))})
		case cfaGNUArgsSize:
			r.uleb()
		case cfaNegateRAState:
			if t.Arch.PACMask == 0 { // AArch64 only
				r.fail(fmt.Errorf("opcode %#x (DW_CFA_GNU_window_save) on %s", op, t.Arch.Name))
				break
			}
			st.signed = !st.signed
		case cfaNegateRAStateWPC:
			r.fail(errors.New("DW_CFA_AARCH64_negate_ra_state_with_pc is not supported"))
		default:
			r.fail(fmt.Errorf("unknown opcode %#x", op))
		}
		if r.err != nil && r.err == errTruncated {
			r.err = fmt.Errorf("instruction at program offset %d: %w", at, errTruncated)
		} else if r.err != nil {
			r.err = fmt.Errorf("instruction at program offset %d: %w", at, r.err)
		}
	}
	if f != nil && r.err == nil && emit != nil {
		emit(loc, st)
	}
	if r.err != nil {
		return *st, &progError{loc: loc, err: r.err}
	}
	return *st, nil
}

// progError is a CFA program that stopped at loc.
type progError struct {
	loc uint64
	err error
}

func (e *progError) Error() string { return fmt.Sprintf("CFA program stops at %#x: %v", e.loc, e.err) }
func (e *progError) Unwrap() error { return e.err }

// rows evaluates an FDE's program into its rows, kept in t.rowBuf (the
// rows of many small FDEs share one allocation); when the program stops
// early, errAt is where (the last row holds only up to it).
func (t *Table) rows(c *cie, f *FDE, prog []byte) (rows []Row, errAt uint64, err error) {
	if cap(t.rowBuf)-len(t.rowBuf) < 16 {
		t.rowBuf = make([]Row, 0, 256) // the FDEs evaluated so far keep the old one
	}
	start := len(t.rowBuf)
	buf, errAt, err := t.evalInto(c, f, prog, t.rowBuf)
	if cap(buf) != cap(t.rowBuf) {
		// The rows outgrew the buffer: append moved them (and the rows
		// before them, which keep their old copies) to a new one.
		buf = buf[start:]
		t.rowBuf = buf[len(buf):]
		return buf[:len(buf):len(buf)], errAt, err
	}
	t.rowBuf = buf
	n := len(buf)
	return buf[start:n:n], errAt, err
}

// evalInto evaluates an FDE's program, appending its rows to buf.
func (t *Table) evalInto(c *cie, f *FDE, prog []byte, buf []Row) (rows []Row, errAt uint64, err error) {
	start := len(buf)
	emit := func(loc uint64, st *state) {
		if loc >= f.End {
			return
		}
		row := Row{Addr: loc, CFA: st.cfa, RA: st.ra, FP: st.fp, SignedRA: st.signed}
		if n := len(buf); n > start && buf[n-1].Addr == loc {
			buf[n-1] = row // several advances of 0, or an empty advance
			return
		}
		buf = append(buf, row)
	}
	_, err = t.run(c, f, prog, emit)
	if pe, ok := err.(*progError); ok {
		errAt = pe.loc
	}
	return buf, errAt, err
}
