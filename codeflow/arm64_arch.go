package codeflow

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/sframesim/sframesim/arch"
)

// AArch64 registers by DWARF number (AADWARF64 §4.1): x0–x30, sp 31.
const (
	a64FP = 29
	a64LR = 30
	a64SP = 31
)

var arm64Machine = &machine{
	arch: arch.ARM64,
	sp:   a64SP, fp: a64FP, lr: a64LR, raID: a64LR,
	entrySP: 0,
	redZone: 0, // AAPCS64 has none: a signal frame may go right below the SP
	// x0–x18 and the link register (AAPCS64 §6.1.1).
	callClobber: 1<<19 - 1 | 1<<a64LR,
	nGPR:        32,
	decode:      decodeARM64,
	padding:     paddingARM64,
}

// signExtend sign-extends the low bits of v.
func signExtend(v uint32, bits uint) int64 {
	s := 64 - bits
	return int64(uint64(v)<<s) >> s
}

// decodeARM64 turns one A64 instruction into ops [Arm ARM C4: the
// encodings below are matched by their fixed bits; everything else goes
// through x/arch for the registers it writes].
func decodeARM64(an *analysis, code []byte, pc uint64, d *dinsn) {
	if len(code) < 4 {
		d.len, d.flow = uint8(len(code)), flowBad
		return
	}
	d.len = 4
	w := binary.LittleEndian.Uint32(code)
	rd := int8(w & 31)
	rn := int8(w >> 5 & 31)
	sf := w>>31 != 0
	switch {
	// Branches [C4.1.65].
	case w&0xfc000000 == 0x14000000: // B
		d.flow, d.target = flowJump, pc+uint64(signExtend(w&0x3ffffff, 26)*4)
		return
	case w&0xfc000000 == 0x94000000: // BL
		d.flow, d.target = flowCall, pc+uint64(signExtend(w&0x3ffffff, 26)*4)
		an.addOp(d, op{kind: opClobberMask, imm: int64(an.m.callClobber)})
		return
	case w&0xff000010 == 0x54000000: // B.cond
		d.flow, d.target = flowCond, pc+uint64(signExtend(w>>5&0x7ffff, 19)*4)
		return
	case w&0x7e000000 == 0x34000000: // CBZ, CBNZ
		d.flow, d.target = flowCond, pc+uint64(signExtend(w>>5&0x7ffff, 19)*4)
		return
	case w&0x7e000000 == 0x36000000: // TBZ, TBNZ
		d.flow, d.target = flowCond, pc+uint64(signExtend(w>>5&0x3fff, 14)*4)
		return
	case w&0xffe0001f == 0xd4200000, w&0xffe0001f == 0xd4400000, w&0xffff0000 == 0: // BRK, HLT, UDF
		d.flow = flowStop
		return
	case w&0xffe0001f == 0xd4000001: // SVC
		an.clobber(d, 0)
		return
	case w&0xfffff01f == 0xd503201f: // hints
		switch w {
		case 0xd503233f, 0xd503231f: // PACIASP, PACIAZ
			an.addOp(d, op{kind: opSign, imm: 1})
		case 0xd503237f, 0xd503235f: // PACIBSP, PACIBZ
			an.addOp(d, op{kind: opSign, imm: 2})
		case 0xd50323bf, 0xd50323ff, 0xd503239f, 0xd50323df: // AUTIASP, AUTIBSP, AUTIAZ, AUTIBZ
			an.addOp(d, op{kind: opAuth})
		case 0xd50320ff: // XPACLRI
			an.addOp(d, op{kind: opStrip})
		case 0xd503211f, 0xd503215f, 0xd503219f, 0xd50321df: // PACIA1716, PACIB1716, AUTIA1716, AUTIB1716
			an.clobber(d, 17)
		}
		return
	}
	switch f, _ := arch.ARM64.Classify(code); f {
	case arch.FlowCall: // BLR and its authenticated forms
		d.flow = flowCall
		an.addOp(d, op{kind: opClobberMask, imm: int64(an.m.callClobber)})
		return
	case arch.FlowRet:
		d.flow = flowRet
		return
	case arch.FlowJump:
		d.flow = flowIndirect
		return
	}
	switch {
	case w&0x1f000000 == 0x10000000: // ADR, ADRP [C4.1.86]
		imm := signExtend(w>>5&0x7ffff<<2|w>>29&3, 21)
		if rd == 31 {
			return // the zero register
		}
		if w>>31 != 0 {
			an.addOp(d, op{kind: opConst, dst: rd, imm: int64(pc&^0xfff) + imm<<12})
		} else {
			an.addOp(d, op{kind: opConst, dst: rd, imm: int64(pc) + imm})
		}
		return
	case w>>23&0x3f == 0x22: // ADD/SUB (immediate) [C4.1.86]
		imm := int64(w >> 10 & 0xfff)
		if w>>22&1 != 0 {
			imm <<= 12
		}
		if w>>30&1 != 0 {
			imm = -imm
		}
		setFlags := w>>29&1 != 0
		if setFlags && rd == 31 {
			return // CMP, CMN
		}
		if !sf {
			an.clobber(d, rd)
			return
		}
		an.set(d, rd, rn, imm) // Rn 31 is the SP, and so is Rd without S
		return
	case w>>23&0x3f == 0x24: // logical (immediate)
		opc := w >> 29 & 3
		dst := rd
		if opc == 3 && rd == 31 {
			return // TST
		}
		if mask, ok := bitMask(w>>22&1, w>>16&63, w>>10&63, sf); ok && opc == 0 && sf && int64(mask) < 0 && -int64(mask)&(-int64(mask)-1) == 0 {
			an.addOp(d, op{kind: opAlign, dst: dst, src: rn, imm: -int64(mask)})
			return
		}
		an.clobber(d, dst) // AND/ORR/EOR write the SP for Rd 31
		return
	case w>>21&0xff == 0x59: // ADD/SUB (extended register)
		if w>>29&1 != 0 && rd == 31 {
			return // CMP, CMN
		}
		if rd == a64SP && w>>30&1 != 0 {
			// sub sp, sp, xN: alloca, a non-negative size.
			an.addOp(d, op{kind: opClobber, dst: a64SP, flags: fDown})
			return
		}
		an.clobber(d, rd)
		return
	case w&0xffe0ffe0 == 0xaa0003e0: // MOV Xd, Xm (ORR Xd, XZR, Xm)
		rm := int8(w >> 16 & 31)
		if rd == 31 {
			return
		}
		if rm == 31 {
			an.clobber(d, rd)
			return
		}
		an.set(d, rd, rm, 0)
		return
	case w>>27&7 == 5 && w>>23&7 != 0 && w>>23&7 <= 3: // load/store pair [C4.1.94]
		decodePair(an, d, w)
		return
	case w>>27&7 == 7 && w>>24&3 != 2 && w>>24&3 != 3: // load/store register
		if decodeLoadStore(an, d, w) {
			return
		}
	}
	if a64Fast && writesRdOnly(w) {
		// What x/arch would give, without decoding the operands
		// (TestFastDecodeARM64).
		if rd != 31 {
			an.clobber(d, rd)
		}
		return
	}
	decodeA64Generic(an, d, code)
}

// a64Fast enables writesRdOnly (off only to compare with x/arch in tests).
var a64Fast = true

// writesRdOnly reports whether w is a common integer instruction that
// writes only its Rd field's register, 31 meaning the zero register
// [Arm ARM C4.1.88, C4.1.89]: move wide, logical and add/sub (shifted
// register, but the flag-setting forms that write nothing: tst, cmp,
// cmn), madd/msub, bitfield — allocated encodings only.
func writesRdOnly(w uint32) bool {
	sf := w>>31 != 0
	rd := w & 31
	switch {
	case w>>23&0x3f == 0x25: // move wide: MOVN, MOVZ, MOVK
		return w>>29&3 != 1 && (sf || w>>22&2 == 0)
	case w>>24&0x1f == 0x0a: // logical (shifted register)
		return (sf || w>>15&1 == 0) && !(w>>29&3 == 3 && rd == 31)
	case w>>24&0x1f == 0x0b && w>>21&1 == 0: // add/sub (shifted register)
		return w>>22&3 != 3 && (sf || w>>15&1 == 0) && !(w>>29&1 != 0 && rd == 31)
	case w&0x7fe00000 == 0x1b000000: // MADD, MSUB
		return true
	case w>>23&0x3f == 0x26: // bitfield: SBFM, BFM, UBFM
		n := w>>22&1 != 0
		return w>>29&3 != 3 && n == sf && (sf || w>>21&1 == 0 && w>>15&1 == 0)
	}
	return false
}

// decodePair: STP/LDP/STNP/LDNP/LDPSW, GPR and SIMD, offset/pre/post.
func decodePair(an *analysis, d *dinsn, w uint32) {
	opc, v, mode, load := w>>30, w>>26&1 != 0, w>>23&7, w>>22&1 != 0
	rt, rt2, rn := int8(w&31), int8(w>>10&31), int8(w>>5&31)
	scale := int64(4)
	switch {
	case !v && opc == 2, v && opc == 1:
		scale = 8
	case v && opc == 2:
		scale = 16
	case !v && opc == 1 && !load: // STGP
		scale = 8
	}
	imm := signExtend(w>>15&0x7f, 7) * scale
	off := imm
	if mode == 1 { // post-index
		off = 0
	}
	gpr64 := !v && opc == 2
	if load {
		if !v {
			if gpr64 {
				an.load(d, gprOrNone(rt), rn, off)
				an.load(d, gprOrNone(rt2), rn, off+8)
			} else {
				an.clobber(d, gprOrNone(rt))
				an.clobber(d, gprOrNone(rt2))
			}
		}
	} else {
		src1, src2 := int8(regNone), int8(regNone)
		if gpr64 {
			src1, src2 = gprOrNone(rt), gprOrNone(rt2)
		}
		an.store(d, rn, off, src1, int(scale))
		an.store(d, rn, off+scale, src2, int(scale))
	}
	if mode == 1 || mode == 3 {
		an.set(d, rn, rn, imm)
	}
}

// gprOrNone maps a GPR field to its register; 31 is the zero register.
func gprOrNone(r int8) int8 {
	if r == 31 {
		return regNone
	}
	return r
}

// decodeLoadStore handles load/store register with an immediate (unsigned
// offset, unscaled, pre- and post-index); false for other forms.
func decodeLoadStore(an *analysis, d *dinsn, w uint32) bool {
	size, v, opc := w>>30, w>>26&1 != 0, w>>22&3
	rt, rn := int8(w&31), int8(w>>5&31)
	var off, wb int64
	writeback := false
	scale := int64(1) << size
	if v && opc >= 2 {
		scale = 16
	}
	if w>>24&1 != 0 { // unsigned offset
		off = int64(w>>10&0xfff) * scale
	} else {
		if w>>21&1 != 0 {
			return false // register offset, atomics
		}
		imm := signExtend(w>>12&0x1ff, 9)
		switch w >> 10 & 3 {
		case 0, 2: // unscaled, unprivileged
			off = imm
		case 1: // post-index
			writeback, wb = true, imm
		case 3: // pre-index
			off, writeback, wb = imm, true, imm
		}
	}
	switch {
	case !v && size == 3 && opc == 2: // PRFM
	case opc == 0 || v && opc == 2: // store
		src := int8(regNone)
		if !v && size == 3 {
			src = gprOrNone(rt)
		}
		an.store(d, rn, off, src, int(scale))
	default: // load
		if !v {
			if size == 3 && opc == 1 {
				an.load(d, gprOrNone(rt), rn, off)
			} else {
				an.clobber(d, gprOrNone(rt))
			}
		}
	}
	if writeback {
		an.set(d, rn, rn, wb)
	}
	return true
}

// a64ReadOnly: instructions whose first operand is not written.
var a64ReadOnly = map[arm64asm.Op]bool{
	arm64asm.CMP: true, arm64asm.CMN: true, arm64asm.TST: true, arm64asm.CCMP: true, arm64asm.CCMN: true,
	arm64asm.FCMP: true, arm64asm.FCMPE: true, arm64asm.FCCMP: true, arm64asm.FCCMPE: true,
	arm64asm.PRFM: true, arm64asm.PRFUM: true, arm64asm.MSR: true, arm64asm.SYS: true,
	arm64asm.DC: true, arm64asm.IC: true, arm64asm.AT: true, arm64asm.TLBI: true,
	arm64asm.HINT: true, arm64asm.NOP: true, arm64asm.DMB: true, arm64asm.DSB: true, arm64asm.ISB: true,
	arm64asm.CLREX: true, arm64asm.HVC: true, arm64asm.SMC: true,
}

// decodeA64Generic: the registers an instruction writes, from x/arch.
func decodeA64Generic(an *analysis, d *dinsn, code []byte) {
	inst, err := arch.DecodeARM64(code)
	if err != nil {
		d.flow = flowBad
		return
	}
	name := inst.Op.String()
	store := strings.HasPrefix(name, "ST") && !strings.Contains(name, "X")
	atomic := strings.HasPrefix(name, "CAS") || strings.HasPrefix(name, "SWP") ||
		strings.HasPrefix(name, "LD") && !strings.HasPrefix(name, "LDR") && !strings.HasPrefix(name, "LDP") && !strings.HasPrefix(name, "LDU") && !strings.HasPrefix(name, "LD1") && !strings.HasPrefix(name, "LD2") && !strings.HasPrefix(name, "LD3") && !strings.HasPrefix(name, "LD4")
	for k, a := range inst.Args {
		if a == nil {
			break
		}
		switch a := a.(type) {
		case arm64asm.Reg:
			if r := a64Reg(a); r >= 0 && (k == 0 && !store && !a64ReadOnly[inst.Op] || atomic ||
				k == 1 && (strings.HasPrefix(name, "LDP") || strings.HasPrefix(name, "LDNP") || strings.HasSuffix(name, "XP"))) {
				an.clobber(d, r)
			}
		case arm64asm.RegSP:
			if k == 0 && !store && !a64ReadOnly[inst.Op] {
				if Reg := arm64asm.Reg(a); Reg == arm64asm.SP || Reg == arm64asm.WSP {
					an.clobber(d, a64SP)
				} else {
					an.clobber(d, a64Reg(Reg))
				}
			}
		case arm64asm.MemImmediate:
			if a.Mode == arm64asm.AddrPreIndex || a.Mode == arm64asm.AddrPostIndex || a.Mode == arm64asm.AddrPostReg {
				b := arm64asm.Reg(a.Base)
				if b == arm64asm.SP || b == arm64asm.WSP {
					an.clobber(d, a64SP)
				} else {
					an.clobber(d, a64Reg(b))
				}
			}
		}
	}
}

// a64Reg maps an x/arch W or X register to its number; -1 for the zero
// register and non-general registers.
func a64Reg(r arm64asm.Reg) int8 {
	switch {
	case r <= arm64asm.W30:
		return int8(r - arm64asm.W0)
	case r >= arm64asm.X0 && r <= arm64asm.X30:
		return int8(r - arm64asm.X0)
	}
	return regNone
}

// bitMask decodes a logical immediate [Arm ARM J1 DecodeBitMasks].
func bitMask(n, immr, imms uint32, sf bool) (uint64, bool) {
	// The element size is given by the highest set bit of N:NOT(imms).
	x := n<<6 | (^imms & 63)
	if x == 0 {
		return 0, false
	}
	l := bits.Len32(x) - 1
	if l < 1 || !sf && n != 0 {
		return 0, false
	}
	esize := uint(1) << l
	levels := uint32(esize - 1)
	s, r := imms&levels, immr&levels
	if s == levels {
		return 0, false
	}
	welem := uint64(1)<<(s+1) - 1
	emask := ^uint64(0) >> (64 - esize)
	if r != 0 {
		welem = (welem>>r | welem<<(esize-uint(r))) & emask
	}
	out := uint64(0)
	for i := uint(0); i < 64; i += esize {
		out |= welem << i
	}
	if !sf {
		out &= 0xffffffff
	}
	return out, true
}

// paddingARM64: nop or zero words.
func paddingARM64(code []byte) bool {
	if len(code) < 4 {
		return true
	}
	w := binary.LittleEndian.Uint32(code)
	return w == 0xd503201f || w == 0
}
