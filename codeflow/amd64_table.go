package codeflow

import (
	"golang.org/x/arch/x86/x86asm"
)

func init() {
	amd64Machine.table = tableAMD64
	amd64Machine.facts = factsAMD64
}

// decodeAt decodes instruction k again.
func (an *analysis) decodeAMD64At(k int) (x86asm.Inst, bool) {
	d := &an.insns[k]
	inst, err := decodeX86(an.fn.Code[d.off : d.off+uint32(d.len)])
	return inst, err == nil
}

// tableAMD64 recognises GCC's x86-64 switch tables:
//
//	PIC:      lea T(%rip),%rX … movslq (%rX,%rY,4),%rZ; add %rX,%rZ; jmp *%rZ
//	          (entries: 32-bit offsets from T)
//	non-PIC:  jmp *T(,%rY,8) (entries: 64-bit addresses)
//
// with `cmp $N,%eY; ja default` (or a jbe to the table code) before.
func tableAMD64(an *analysis, i int) ([]uint64, string) {
	inst, ok := an.decodeAMD64At(i)
	if !ok {
		return nil, "undecodable"
	}
	switch a := inst.Args[0].(type) {
	case x86asm.Mem:
		idx, full := gpr(a.Index)
		if a.Base != 0 || a.Segment != 0 || idx < 0 || !full || a.Scale != 8 || disp32(a) < 0 {
			return nil, "a jump through memory that is not T(,%reg,8)"
		}
		n, why := an.findBound(i, loc{reg: idx, size: 8}, true)
		if why != "" {
			return nil, why
		}
		b, why := an.readTable(uint64(disp32(a)), n, 8)
		if why != "" {
			return nil, why
		}
		ts := make([]uint64, n)
		for k := range ts {
			ts[k] = uint64(entryAt(b, k, 8, false))
		}
		return ts, an.checkTargets(ts)
	case x86asm.Reg:
		rz, full := gpr(a)
		if rz < 0 || !full {
			return nil, "a jump through a register that is not 64-bit"
		}
		p, _ := an.chainPrev(i)
		if p < 0 {
			return nil, "a jump through a register that no table load leads to"
		}
		add, ok := an.decodeAMD64At(p)
		r0, f0 := regArg(add.Args[0])
		rx, fx := regArg(add.Args[1])
		if !ok || add.Op != x86asm.ADD || r0 != rz || !f0 || rx < 0 || !fx {
			return nil, "a jump through a register not set by add %base,%reg"
		}
		q, _ := an.chainPrev(p)
		if q < 0 {
			return nil, "a jump through a register that no table load leads to"
		}
		ld, ok := an.decodeAMD64At(q)
		r0, f0 = regArg(ld.Args[0])
		m, isMem := ld.Args[1].(x86asm.Mem)
		if !ok || ld.Op != x86asm.MOVSXD || r0 != rz || !f0 || !isMem || m.Scale != 4 || m.Disp != 0 || m.Segment != 0 {
			return nil, "a jump through a register not loaded by movslq (%base,%idx,4)"
		}
		base, fb := gpr(m.Base)
		idx, fi := gpr(m.Index)
		if base != rx || !fb || idx < 0 || !fi {
			return nil, "a jump through a register not loaded by movslq (%base,%idx,4)"
		}
		tab, ok := an.constBefore(q, base)
		if !ok {
			return nil, "the table's address is not known"
		}
		n, why := an.findBound(q, loc{reg: idx, size: 8}, true)
		if why != "" {
			return nil, why
		}
		b, why := an.readTable(tab, n, 4)
		if why != "" {
			return nil, why
		}
		ts := make([]uint64, n)
		for k := range ts {
			ts[k] = tab + uint64(entryAt(b, k, 4, true))
		}
		return ts, an.checkTargets(ts)
	}
	return nil, "an indirect jump of another form"
}

// noFlags lists instructions that leave the condition flags alone.
var noFlags = map[x86asm.Op]bool{
	x86asm.MOV: true, x86asm.MOVZX: true, x86asm.MOVSX: true, x86asm.MOVSXD: true,
	x86asm.LEA: true, x86asm.NOP: true, x86asm.PUSH: true, x86asm.POP: true,
	x86asm.JMP: true, x86asm.CMOVA: true, x86asm.CMOVAE: true, x86asm.CMOVB: true,
	x86asm.CMOVBE: true, x86asm.CMOVE: true, x86asm.CMOVNE: true, x86asm.CMOVG: true,
	x86asm.CMOVGE: true, x86asm.CMOVL: true, x86asm.CMOVLE: true,
}

// zext32 lists instructions that write their 32-bit destination
// register and so clear the upper half.
var zext32 = map[x86asm.Op]bool{
	x86asm.MOV: true, x86asm.MOVZX: true, x86asm.MOVSX: true, x86asm.LEA: true,
	x86asm.ADD: true, x86asm.SUB: true, x86asm.AND: true, x86asm.OR: true, x86asm.XOR: true,
	x86asm.SHL: true, x86asm.SHR: true, x86asm.SAR: true, x86asm.IMUL: true,
	x86asm.NEG: true, x86asm.NOT: true, x86asm.INC: true, x86asm.DEC: true,
}

var jccCond = map[x86asm.Op]condKind{
	x86asm.JA: condHi, x86asm.JAE: condHs, x86asm.JBE: condLs, x86asm.JB: condLo,
}

func factsAMD64(an *analysis, k int) facts {
	inst, ok := an.decodeAMD64At(k)
	if !ok {
		return facts{flags: true, memWrite: true}
	}
	f := facts{flags: !noFlags[inst.Op], dst: regNone, src: regNone}
	d := &an.insns[k]
	if d.flow == flowCond {
		f.kind, f.cond, f.flags = factCond, jccCond[inst.Op], false
		return f
	}
	a0, a1 := inst.Args[0], inst.Args[1]
	r0, full0 := regArg(a0)
	r1, full1 := regArg(a1)
	switch inst.Op {
	case x86asm.PUSH, x86asm.CALL:
		f.memWrite = true
	case x86asm.CMP:
		imm, isImm := a1.(x86asm.Imm)
		if !isImm || imm < 0 {
			break
		}
		switch a := a0.(type) {
		case x86asm.Reg:
			if full0 || is32(a) {
				f.kind, f.imm = factCmp, uint64(imm)
				f.loc = loc{reg: r0, size: 4}
				if full0 {
					f.loc.size = 8
				}
			}
		case x86asm.Mem:
			if b, disp, ok := memAddr(a); ok {
				f.kind, f.imm = factCmp, uint64(imm)
				f.loc = loc{mem: true, reg: b, disp: disp, size: uint8(inst.MemBytes)}
			}
		}
		return f
	case x86asm.MOV:
		m, isMem := a1.(x86asm.Mem)
		switch {
		case r0 >= 0 && r1 >= 0 && full0 && full1:
			f.kind, f.dst, f.src, f.width = factCopy, r0, r1, 8
		case is32(a0) && is32(a1):
			f.kind, f.dst, f.src, f.width = factCopy, r0, r1, 4
		case isMem && r0 >= 0 && (full0 || is32(a0)):
			// A load of the index: `mov 0x70(%rdi),%eax` after `cmpl
			// $5,0x70(%rdi)` (a 32-bit load clears the upper half).
			if b, disp, ok := memAddr(m); ok {
				f.kind, f.dst = factZextMem, r0
				f.loc = loc{mem: true, reg: b, disp: disp, size: uint8(inst.MemBytes)}
			}
		}
	case x86asm.MOVZX:
		if m, isMem := a1.(x86asm.Mem); isMem && r0 >= 0 {
			if b, disp, ok := memAddr(m); ok {
				f.kind, f.dst = factZextMem, r0
				f.loc = loc{mem: true, reg: b, disp: disp, size: uint8(inst.MemBytes)}
			}
		}
	}
	if is32(a0) && zext32[inst.Op] {
		f.write32, f.dst = true, r0
	}
	if _, isMem := a0.(x86asm.Mem); isMem && inst.Op != x86asm.CMP && inst.Op != x86asm.TEST {
		f.memWrite = true
	}
	for _, r := range implicitWrites[inst.Op] {
		if r == amdRDI {
			f.memWrite = true // string stores
		}
	}
	return f
}

// is32 reports whether a is a 32-bit general register.
func is32(a x86asm.Arg) bool {
	r, ok := a.(x86asm.Reg)
	return ok && r >= x86asm.EAX && r <= x86asm.R15L
}
