package codeflow

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
)

// x86-64 registers by DWARF number (psABI §3.6.2).
const (
	amdRAX = 0
	amdRDX = 1
	amdRCX = 2
	amdRBX = 3
	amdRSI = 4
	amdRDI = 5
	amdRBP = 6
	amdRSP = 7
	amdR8  = 8
	amdR9  = 9
	amdR10 = 10
	amdR11 = 11
	amdRIP = 16
)

var amd64Machine = &machine{
	arch: arch.AMD64,
	sp:   amdRSP, fp: amdRBP, lr: regNone, raID: amdRIP,
	entrySP: -8,
	redZone: 128,
	// rax, rdx, rcx, rsi, rdi, r8–r11 (psABI §3.2.1).
	callClobber: 1<<amdRAX | 1<<amdRDX | 1<<amdRCX | 1<<amdRSI | 1<<amdRDI |
		1<<amdR8 | 1<<amdR9 | 1<<amdR10 | 1<<amdR11,
	nGPR:    16,
	decode:  decodeAMD64,
	padding: paddingAMD64,
}

// encDWARF maps an x86 register encoding (0–15) to its DWARF number.
var encDWARF = [16]int8{0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15}

// gpr returns the DWARF number of the general register r names (any
// width), and whether it is the full 64-bit register; -1 for others.
func gpr(r x86asm.Reg) (int8, bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return encDWARF[r-x86asm.RAX], true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return encDWARF[r-x86asm.EAX], false
	case r >= x86asm.AX && r <= x86asm.R15W:
		return encDWARF[r-x86asm.AX], false
	case r >= x86asm.AL && r <= x86asm.BL:
		return encDWARF[r-x86asm.AL], false
	case r >= x86asm.AH && r <= x86asm.BH:
		return encDWARF[r-x86asm.AH], false
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return encDWARF[r-x86asm.SPB+4], false
	}
	return regNone, false
}

// readOnly lists instructions that write none of their register or
// memory operands.
var readOnly = [...]bool{
	x86asm.CMP: true, x86asm.TEST: true, x86asm.BT: true, x86asm.NOP: true,
	x86asm.UCOMISS: true, x86asm.UCOMISD: true, x86asm.COMISS: true, x86asm.COMISD: true,
	x86asm.PTEST: true, x86asm.PREFETCHNTA: true, x86asm.PREFETCHT0: true,
	x86asm.PREFETCHT1: true, x86asm.PREFETCHT2: true, x86asm.PREFETCHW: true,
	x86asm.CLFLUSH: true, x86asm.PAUSE: true,
	x86asm.LFENCE: true, x86asm.MFENCE: true, x86asm.SFENCE: true,
	x86asm.OUT: true, x86asm.VERR: true, x86asm.VERW: true,
}

// implicitWrites lists the general registers instructions write besides
// their first operand.
var implicitWrites = map[x86asm.Op][]int8{
	x86asm.MUL: {amdRAX, amdRDX}, x86asm.DIV: {amdRAX, amdRDX}, x86asm.IDIV: {amdRAX, amdRDX},
	x86asm.CWD: {amdRDX}, x86asm.CDQ: {amdRDX}, x86asm.CQO: {amdRDX},
	x86asm.CBW: {amdRAX}, x86asm.CWDE: {amdRAX}, x86asm.CDQE: {amdRAX},
	x86asm.CPUID: {amdRAX, amdRBX, amdRCX, amdRDX},
	x86asm.RDTSC: {amdRAX, amdRDX}, x86asm.RDTSCP: {amdRAX, amdRDX, amdRCX},
	x86asm.RDPMC: {amdRAX, amdRDX}, x86asm.XGETBV: {amdRAX, amdRDX}, x86asm.RDMSR: {amdRAX, amdRDX},
	x86asm.SYSCALL: {amdRAX, amdRCX, amdR11},
	x86asm.CMPXCHG: {amdRAX}, x86asm.CMPXCHG8B: {amdRAX, amdRDX}, x86asm.CMPXCHG16B: {amdRAX, amdRDX},
	x86asm.LAHF:  {amdRAX},
	x86asm.MOVSB: {amdRSI, amdRDI, amdRCX}, x86asm.MOVSW: {amdRSI, amdRDI, amdRCX},
	x86asm.MOVSD: {amdRSI, amdRDI, amdRCX}, x86asm.MOVSQ: {amdRSI, amdRDI, amdRCX},
	x86asm.STOSB: {amdRDI, amdRCX}, x86asm.STOSW: {amdRDI, amdRCX},
	x86asm.STOSD: {amdRDI, amdRCX}, x86asm.STOSQ: {amdRDI, amdRCX},
	x86asm.LODSB: {amdRSI, amdRAX, amdRCX}, x86asm.LODSW: {amdRSI, amdRAX, amdRCX},
	x86asm.LODSD: {amdRSI, amdRAX, amdRCX}, x86asm.LODSQ: {amdRSI, amdRAX, amdRCX},
	x86asm.SCASB: {amdRDI, amdRCX}, x86asm.SCASW: {amdRDI, amdRCX},
	x86asm.SCASD: {amdRDI, amdRCX}, x86asm.SCASQ: {amdRDI, amdRCX},
	x86asm.CMPSB: {amdRSI, amdRDI, amdRCX}, x86asm.CMPSW: {amdRSI, amdRDI, amdRCX},
	x86asm.CMPSD: {amdRSI, amdRDI, amdRCX}, x86asm.CMPSQ: {amdRSI, amdRDI, amdRCX},
	x86asm.INSB: {amdRDI, amdRCX}, x86asm.INSW: {amdRDI, amdRCX}, x86asm.INSD: {amdRDI, amdRCX},
	x86asm.OUTSB: {amdRSI, amdRCX}, x86asm.OUTSW: {amdRSI, amdRCX}, x86asm.OUTSD: {amdRSI, amdRCX},
	x86asm.LOOP: {amdRCX}, x86asm.LOOPE: {amdRCX}, x86asm.LOOPNE: {amdRCX},
}

// memAddr returns the base register and displacement of a memory operand
// whose address is base+disp; ok false when it has an index, a segment
// or a base that is not a general register (rip).
func memAddr(m x86asm.Mem) (base int8, disp int64, ok bool) {
	if m.Index != 0 || m.Segment != 0 {
		return regNone, 0, false
	}
	b, full := gpr(m.Base)
	if b < 0 || !full {
		return regNone, 0, false
	}
	return b, disp32(m), true
}

// decodeAMD64 turns one x86-64 instruction into ops [transfer functions].
func decodeAMD64(an *analysis, code []byte, pc uint64, d *dinsn) {
	inst, err := decodeX86(code)
	if err != nil {
		d.len, d.flow = 1, flowBad
		return
	}
	d.len = uint8(inst.Len)
	next := pc + uint64(inst.Len)
	a0, a1 := inst.Args[0], inst.Args[1]
	r0, full0 := regArg(a0)
	r1, full1 := regArg(a1)
	// push and pop move 8 bytes in 64-bit mode, 2 with a 0x66 prefix.
	size := int64(8)
	if inst.DataSize == 16 {
		size = 2
	}
	switch inst.Op {
	case x86asm.NOP, x86asm.PAUSE:
		return
	case x86asm.JMP:
		switch t := a0.(type) {
		case x86asm.Rel:
			d.flow, d.target = flowJump, next+uint64(int64(t))
		default:
			d.flow = flowIndirect
		}
		return
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
		x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS, x86asm.JCXZ, x86asm.JECXZ,
		x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		if t, ok := a0.(x86asm.Rel); ok {
			d.flow, d.target = flowCond, next+uint64(int64(t))
		} else {
			d.flow = flowBad
		}
		if inst.Op == x86asm.LOOP || inst.Op == x86asm.LOOPE || inst.Op == x86asm.LOOPNE {
			an.clobber(d, amdRCX)
		}
		return
	case x86asm.CALL:
		d.flow = flowCall
		if t, ok := a0.(x86asm.Rel); ok {
			d.target = next + uint64(int64(t))
		}
		an.addOp(d, op{kind: opClobberMask, imm: int64(an.m.callClobber)})
		return
	case x86asm.RET:
		d.flow = flowRet
		return
	case x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		d.flow = flowStop
		return
	case x86asm.INT:
		if a0 == x86asm.Imm(3) {
			d.flow = flowStop
			return
		}
	case x86asm.PUSH:
		n := size
		switch a := a0.(type) {
		case x86asm.Reg:
			if r0 >= 0 && full0 {
				an.store(d, amdRSP, -n, r0, int(n))
			} else {
				an.store(d, amdRSP, -n, regNone, int(n))
			}
		case x86asm.Mem:
			if b, disp, ok := memAddr(a); ok && n == 8 {
				an.load(d, regTmp, b, disp)
				an.store(d, amdRSP, -8, regTmp, 8)
			} else {
				an.store(d, amdRSP, -n, regNone, int(n))
			}
		default:
			an.store(d, amdRSP, -n, regNone, int(n))
		}
		an.set(d, amdRSP, amdRSP, -n)
		return
	case x86asm.POP:
		n := size
		switch a := a0.(type) {
		case x86asm.Reg:
			if r0 >= 0 && full0 {
				an.load(d, r0, amdRSP, 0)
				if r0 != amdRSP {
					an.set(d, amdRSP, amdRSP, n)
				}
			} else {
				an.clobber(d, r0)
				an.set(d, amdRSP, amdRSP, n)
			}
		case x86asm.Mem:
			an.set(d, amdRSP, amdRSP, n)
			if b, disp, ok := memAddr(a); ok {
				an.store(d, b, disp, regNone, int(n))
			}
		}
		return
	case x86asm.PUSHF, x86asm.PUSHFQ:
		an.store(d, amdRSP, -size, regNone, int(size))
		an.set(d, amdRSP, amdRSP, -size)
		return
	case x86asm.POPF, x86asm.POPFQ:
		an.set(d, amdRSP, amdRSP, size)
		return
	case x86asm.LEAVE:
		an.set(d, amdRSP, amdRBP, 0)
		an.load(d, amdRBP, amdRSP, 0)
		an.set(d, amdRSP, amdRSP, 8)
		return
	case x86asm.ENTER:
		frame, _ := a0.(x86asm.Imm)
		level, _ := a1.(x86asm.Imm)
		if level != 0 {
			an.clobber(d, amdRSP)
			an.clobber(d, amdRBP)
			return
		}
		an.store(d, amdRSP, -8, amdRBP, 8)
		an.set(d, amdRSP, amdRSP, -8)
		an.set(d, amdRBP, amdRSP, 0)
		an.set(d, amdRSP, amdRSP, -int64(frame))
		return
	case x86asm.MOV:
		switch {
		case r0 >= 0 && full0 && r1 >= 0 && full1:
			an.set(d, r0, r1, 0)
			return
		case r0 >= 0 && full0:
			if m, ok := a1.(x86asm.Mem); ok {
				if b, disp, ok := memAddr(m); ok {
					an.load(d, r0, b, disp)
					return
				}
			}
		case r0 < 0:
			if m, ok := a0.(x86asm.Mem); ok {
				if b, disp, ok := memAddr(m); ok {
					src := int8(regNone)
					if r1 >= 0 && full1 {
						src = r1
					}
					an.store(d, b, disp, src, inst.MemBytes)
				}
				return
			}
		}
	case x86asm.LEA:
		if m, ok := a1.(x86asm.Mem); ok && r0 >= 0 && full0 && inst.AddrSize == 64 {
			if b, disp, ok := memAddr(m); ok {
				an.set(d, r0, b, disp)
				return
			}
			if m.Base == x86asm.RIP && m.Index == 0 && m.Segment == 0 {
				an.addOp(d, op{kind: opConst, dst: r0, imm: int64(next) + disp32(m)})
				return
			}
		}
	case x86asm.ADD, x86asm.SUB:
		if imm, ok := a1.(x86asm.Imm); ok && r0 >= 0 && full0 {
			v := int64(imm)
			if inst.Op == x86asm.SUB {
				v = -v
			}
			an.set(d, r0, r0, v)
			return
		}
		if r0 == amdRSP && inst.Op == x86asm.SUB {
			// sub %reg,%rsp: alloca, a non-negative size.
			an.addOp(d, op{kind: opClobber, dst: amdRSP, flags: fDown})
			return
		}
	case x86asm.AND:
		if imm, ok := a1.(x86asm.Imm); ok && r0 >= 0 && full0 && imm < 0 && imm&(-imm) == -imm {
			an.addOp(d, op{kind: opAlign, dst: r0, src: r0, imm: -int64(imm)})
			return
		}
	case x86asm.XCHG, x86asm.XADD:
		if inst.Op == x86asm.XCHG && r0 >= 0 && r0 == r1 && full0 {
			return // xchg %ax,%ax and the like: a nop
		}
		an.clobber(d, r0)
		an.clobber(d, r1)
		if m, ok := a0.(x86asm.Mem); ok {
			if b, disp, ok := memAddr(m); ok {
				an.store(d, b, disp, regNone, inst.MemBytes)
			}
		}
		return
	case x86asm.MULX:
		an.clobber(d, r0)
		an.clobber(d, r1)
		return
	}
	// Anything else: what it writes is no longer known.
	if int(inst.Op) < len(readOnly) && readOnly[inst.Op] {
		return
	}
	for _, r := range implicitWrites[inst.Op] {
		an.clobber(d, r)
	}
	switch a := a0.(type) {
	case x86asm.Reg:
		if r0 >= 0 {
			if r0 == amdRSP {
				// Neither of the forms above: record it, the reason
				// names the instruction.
				an.clobber(d, amdRSP)
			} else {
				an.clobber(d, r0)
			}
		}
	case x86asm.Mem:
		if b, disp, ok := memAddr(a); ok {
			an.store(d, b, disp, regNone, max(inst.MemBytes, 1))
		}
	}
}

// decodeX86 decodes one instruction: the fast path for the common ones,
// x86asm for the others.
func decodeX86(code []byte) (x86asm.Inst, error) {
	if inst, ok := fastDecodeAMD64(code); ok {
		return inst, nil
	}
	return arch.DecodeX86(code)
}

// disp32 returns a memory operand's displacement: x86asm gives a 32-bit
// one zero-extended, the CPU sign-extends it.
func disp32(m x86asm.Mem) int64 { return int64(int32(m.Disp)) }

func regArg(a x86asm.Arg) (int8, bool) {
	if r, ok := a.(x86asm.Reg); ok {
		return gpr(r)
	}
	return regNone, false
}

// paddingAMD64: nop (any form), int3, or zero bytes.
func paddingAMD64(code []byte) bool {
	if len(code) > 0 && (code[0] == 0xcc || code[0] == 0) {
		return true
	}
	inst, err := decodeX86(code)
	return err == nil && (inst.Op == x86asm.NOP || inst.Op == x86asm.XCHG && inst.Args[0] == inst.Args[1])
}
