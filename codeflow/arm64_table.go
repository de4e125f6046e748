package codeflow

import (
	"encoding/binary"
)

func init() {
	arm64Machine.table = tableARM64
	arm64Machine.facts = factsARM64
}

func (an *analysis) wordAt(k int) uint32 {
	d := &an.insns[k]
	if d.len != 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(an.fn.Code[d.off:])
}

// tableARM64 recognises GCC's AArch64 switch tables [Arm ARM C6.2]:
//
//	adrp xT, T; add xT, xT, :lo12:T
//	ldrb wE, [xT, wI, uxtw]         (ldrh …, uxtw #1; ldr …, uxtw #2)
//	adr xB, Lrtx
//	add xJ, xB, wE, sxtb #2         (sxth, sxtw)
//	br xJ
//
// (entries: signed offsets from Lrtx in words), with `cmp wI, N` and a
// b.hi to the default or a b.ls to the table code before.
func tableARM64(an *analysis, i int) ([]uint64, string) {
	w := an.wordAt(i)
	if w&0xfffffc1f != 0xd61f0000 { // BR
		return nil, "an indirect jump of another form"
	}
	rj := int8(w >> 5 & 31)
	p, _ := an.chainPrev(i)
	if p < 0 {
		return nil, "a jump through a register that no table load leads to"
	}
	// ADD (extended register), 64-bit: sf=1 op=0 S=0.
	add := an.wordAt(p)
	opt, amount := add>>13&7, add>>10&7
	if add&0xffe00000 != 0x8b200000 || int8(add&31) != rj || amount != 2 || opt < 4 || opt > 6 {
		return nil, "a jump through a register not set by add xJ, xB, wE, sxt* #2"
	}
	rb, re := int8(add>>5&31), int8(add>>16&31)
	esize := 1 << (opt - 4) // sxtb, sxth, sxtw
	base, ok := an.constBefore(p, rb)
	if !ok {
		return nil, "the base of the table's offsets is not known"
	}
	// The load of wE: the last instruction before the add that writes it.
	q := p
	for {
		if q, _ = an.chainPrev(q); q < 0 {
			return nil, "no table load leads to the jump"
		}
		if an.writes(q, re) {
			break
		}
	}
	// LDRB/LDRH/LDR (register) of a W register: size 1, 2, 4.
	ld := an.wordAt(q)
	var lsize int
	switch ld & 0xffe00c00 {
	case 0x38600800:
		lsize = 1
	case 0x78600800:
		lsize = 2
	case 0xb8600800:
		lsize = 4
	}
	if lsize != esize || int8(ld&31) != re {
		return nil, "the table's entries are not loaded by ldrb/ldrh/ldr (register) of the size the add extends"
	}
	rt, ri := int8(ld>>5&31), int8(ld>>16&31)
	lopt, shifted := ld>>13&7, ld>>12&1 != 0
	if shifted != (lsize > 1) {
		return nil, "the table's index is not scaled by the entry size"
	}
	idx, needZext := loc{reg: ri, size: 4}, false
	switch lopt {
	case 2: // uxtw
	case 3: // lsl: the 64-bit register
		idx.size, needZext = 8, true
	default:
		return nil, "the table's index is not zero-extended"
	}
	tab, ok := an.constBefore(q, rt)
	if !ok {
		return nil, "the table's address is not known"
	}
	n, why := an.findBound(q, idx, needZext)
	if why != "" {
		return nil, why
	}
	b, why := an.readTable(tab, n, lsize)
	if why != "" {
		return nil, why
	}
	ts := make([]uint64, n)
	for k := range ts {
		ts[k] = base + uint64(entryAt(b, k, lsize, true)*4)
	}
	return ts, an.checkTargets(ts)
}

// a64Cond maps B.cond conditions to bounds checks.
var a64Cond = [16]condKind{8: condHi, 2: condHs, 9: condLs, 3: condLo}

func factsARM64(an *analysis, k int) facts {
	w := an.wordAt(k)
	f := facts{dst: regNone, src: regNone}
	rd, rn, rm := int8(w&31), int8(w>>5&31), int8(w>>16&31)
	switch {
	case w&0xff000010 == 0x54000000: // B.cond
		f.kind, f.cond = factCond, a64Cond[w&15]
	case an.insns[k].flow == flowCond: // CBZ, TBZ: no flags
		f.kind = factCond
	case w&0x7f80001f == 0x7100001f: // SUBS (immediate) to the zero register: CMP
		f.kind, f.flags = factCmp, true
		f.imm = uint64(w >> 10 & 0xfff)
		if w>>22&1 != 0 {
			f.imm <<= 12
		}
		f.loc = loc{reg: rn, size: 4}
		if w>>31 != 0 {
			f.loc.size = 8
		}
	case w&0xffe0ffe0 == 0x2a0003e0 && rd != 31 && rm != 31: // MOV Wd, Wm
		f.kind, f.dst, f.src, f.width, f.write32 = factCopy, rd, rm, 4, true
	case w&0xffe0ffe0 == 0xaa0003e0 && rd != 31 && rm != 31: // MOV Xd, Xm
		f.kind, f.dst, f.src, f.width = factCopy, rd, rm, 8
	case w>>27&7 == 7 && w>>26&1 == 0 && w>>24&3 <= 1: // load/store register (GPR)
		if w>>22&3 == 0 {
			f.memWrite = true
		} else if w>>22&3 == 1 && w>>30 < 3 {
			f.write32, f.dst = true, rd // LDRB/LDRH/LDR Wt zero-extend
		}
	case w>>27&7 == 5 && w>>22&1 == 0: // store pair
		f.memWrite = true
	case w>>27&7 == 5, // load pair
		w>>23&0x3f == 0x22 && w>>29&1 == 0, // ADD/SUB (immediate)
		w>>24&0x1f == 0x0b && w>>29&1 == 0, // ADD/SUB (shifted, extended register)
		w>>24&0x1f == 0x0a && w>>29&3 != 3, // logical (shifted register) but ANDS
		w>>23&0x3f == 0x24 && w>>29&3 != 3, // logical (immediate) but ANDS
		w>>23&0x3f == 0x25,                 // MOVN, MOVZ, MOVK
		w>>23&0x3f == 0x26,                 // bitfield
		w&0x1f000000 == 0x10000000,         // ADR, ADRP
		w == 0xd503201f:                    // NOP
	default:
		f.flags, f.memWrite = true, true
	}
	return f
}
