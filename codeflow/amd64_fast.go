package codeflow

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// fastDecodeAMD64 decodes the instructions that make up most compiled
// x86-64 code (mov, lea, add, sub, cmp, test, push, pop, call, jmp, jcc,
// ret, nop, … with at most a REX prefix) into the same x86asm.Inst fields
// x86asm.Decode gives (Op, Args, Len, DataSize, AddrSize, MemBytes: those
// decodeAMD64 uses; TestFastDecodeAMD64 compares them on every
// instruction of the corpus); ok false for anything else, which goes to
// x86asm.Decode. x86asm's table-driven decoder is most of the analysis's
// time otherwise.
func fastDecodeAMD64(code []byte) (inst x86asm.Inst, ok bool) {
	p := 0
	var rex byte
	if len(code) > 0 && code[0]&0xf0 == 0x40 {
		rex, p = code[0], 1
	}
	if p >= len(code) {
		return inst, false
	}
	w := rex&8 != 0
	inst.Mode, inst.AddrSize, inst.DataSize = 64, 64, 32
	if w {
		inst.DataSize = 64
	}
	op := code[p]
	p++
	reg := func(n byte, wide bool) x86asm.Reg {
		if wide {
			return x86asm.RAX + x86asm.Reg(n)
		}
		return x86asm.EAX + x86asm.Reg(n)
	}
	// modrm decodes a ModRM operand at p: the reg field and the r/m
	// operand (a register of the operand size, or memory).
	modrm := func() (regf byte, rm x86asm.Arg, ok bool) {
		if p >= len(code) {
			return 0, nil, false
		}
		m := code[p]
		p++
		mod, r, b := m>>6, m>>3&7|(rex&4)<<1, m&7
		regf = r
		if mod == 3 {
			return regf, reg(b|(rex&1)<<3, w), true
		}
		var mem x86asm.Mem
		if b == 4 { // SIB
			if p >= len(code) {
				return 0, nil, false
			}
			sib := code[p]
			p++
			idx := sib>>3&7 | (rex&2)<<2
			base := sib&7 | (rex&1)<<3
			mem.Scale = 1 << (sib >> 6)
			if idx != 4 {
				mem.Index = x86asm.RAX + x86asm.Reg(idx)
			}
			if sib&7 == 5 && mod == 0 {
				if p+4 > len(code) {
					return 0, nil, false
				}
				mem.Disp = int64(binary.LittleEndian.Uint32(code[p:])) // zero-extended, as x86asm
				p += 4
				return regf, mem, true
			}
			mem.Base = x86asm.RAX + x86asm.Reg(base)
		} else if b == 5 && mod == 0 { // RIP-relative
			if p+4 > len(code) {
				return 0, nil, false
			}
			mem.Base = x86asm.RIP
			mem.Disp = int64(binary.LittleEndian.Uint32(code[p:])) // zero-extended, as x86asm
			p += 4
			return regf, mem, true
		} else {
			mem.Base = x86asm.RAX + x86asm.Reg(b|(rex&1)<<3)
		}
		switch mod {
		case 1:
			if p >= len(code) {
				return 0, nil, false
			}
			mem.Disp = int64(int8(code[p]))
			p++
		case 2:
			if p+4 > len(code) {
				return 0, nil, false
			}
			mem.Disp = int64(binary.LittleEndian.Uint32(code[p:])) // zero-extended, as x86asm
			p += 4
		}
		return regf, mem, true
	}
	imm8 := func() (int64, bool) {
		if p >= len(code) {
			return 0, false
		}
		p++
		return int64(int8(code[p-1])), true
	}
	imm32 := func() (int64, bool) {
		if p+4 > len(code) {
			return 0, false
		}
		p += 4
		return int64(int32(binary.LittleEndian.Uint32(code[p-4:]))), true
	}
	memBytes := func(a x86asm.Arg) {
		if _, isMem := a.(x86asm.Mem); isMem {
			inst.MemBytes = int(inst.DataSize / 8)
		}
	}
	switch {
	case op <= 0x3b && op&7 <= 3 && op&6 != 0 || op == 0x85 || op == 0x89 || op == 0x8b || op == 0x8d:
		// ALU r/m,r and r,r/m (01 03 09 0b … 39 3b), test, mov, lea.
		var o x86asm.Op
		switch {
		case op == 0x85:
			o = x86asm.TEST
		case op == 0x89 || op == 0x8b:
			o = x86asm.MOV
		case op == 0x8d:
			o = x86asm.LEA
		default:
			if op&7 != 1 && op&7 != 3 {
				return inst, false // byte forms
			}
			o = aluOps[op>>3]
		}
		r, rm, ok := modrm()
		if !ok {
			return inst, false
		}
		_, isMem := rm.(x86asm.Mem)
		if op == 0x8d && !isMem {
			return inst, false
		}
		if op&2 != 0 && op != 0x85 || op == 0x8d {
			inst.Args[0], inst.Args[1] = reg(r, w), rm
		} else {
			inst.Args[0], inst.Args[1] = rm, reg(r, w)
		}
		inst.Op = o
		if op != 0x8d {
			memBytes(rm)
		}
	case op == 0x83 || op == 0x81:
		r, rm, ok := modrm()
		if !ok {
			return inst, false
		}
		var imm int64
		if op == 0x83 {
			imm, ok = imm8()
		} else {
			imm, ok = imm32()
		}
		if !ok {
			return inst, false
		}
		inst.Op, inst.Args[0], inst.Args[1] = aluOps[r&7], rm, x86asm.Imm(imm)
		memBytes(rm)
	case op >= 0x50 && op <= 0x5f:
		if w {
			return inst, false
		}
		inst.Op = x86asm.PUSH
		if op >= 0x58 {
			inst.Op = x86asm.POP
		}
		inst.Args[0] = x86asm.RAX + x86asm.Reg(op&7|(rex&1)<<3)
	case op == 0xc3 && rex == 0:
		inst.Op = x86asm.RET
	case op == 0xc9 && rex == 0:
		inst.Op = x86asm.LEAVE
	case op == 0x90 && rex == 0:
		inst.Op = x86asm.NOP
	case (op == 0xe8 || op == 0xe9) && rex == 0:
		rel, ok := imm32()
		if !ok {
			return inst, false
		}
		inst.Op, inst.Args[0] = x86asm.CALL, x86asm.Rel(rel)
		if op == 0xe9 {
			inst.Op = x86asm.JMP
		}
	case op == 0xeb && rex == 0:
		rel, ok := imm8()
		if !ok {
			return inst, false
		}
		inst.Op, inst.Args[0] = x86asm.JMP, x86asm.Rel(rel)
	case op >= 0x70 && op <= 0x7f && rex == 0:
		rel, ok := imm8()
		if !ok {
			return inst, false
		}
		inst.Op, inst.Args[0] = jccOps[op&15], x86asm.Rel(rel)
	case op >= 0xb8 && op <= 0xbf:
		var imm int64
		if w {
			if p+8 > len(code) {
				return inst, false
			}
			imm = int64(binary.LittleEndian.Uint64(code[p:]))
			p += 8
		} else {
			v, ok := imm32()
			if !ok {
				return inst, false
			}
			imm = v
		}
		inst.Op, inst.Args[0], inst.Args[1] = x86asm.MOV, reg(op&7|(rex&1)<<3, w), x86asm.Imm(imm)
	case op == 0x0f:
		if p >= len(code) {
			return inst, false
		}
		op2 := code[p]
		p++
		switch {
		case op2 >= 0x80 && op2 <= 0x8f && rex == 0:
			rel, ok := imm32()
			if !ok {
				return inst, false
			}
			inst.Op, inst.Args[0] = jccOps[op2&15], x86asm.Rel(rel)
		case op2 == 0x1f && rex == 0:
			r, rm, ok := modrm()
			if !ok || r != 0 {
				return inst, false
			}
			inst.Op, inst.Args[0] = x86asm.NOP, rm
			memBytes(rm)
		default:
			return inst, false
		}
	default:
		return inst, false
	}
	inst.Len = p
	return inst, true
}

// aluOps are the operations of opcodes 00–3f by bits 5–3, and of the
// 80–83 group by the ModRM reg field.
var aluOps = [8]x86asm.Op{x86asm.ADD, x86asm.OR, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.SUB, x86asm.XOR, x86asm.CMP}

var jccOps = [16]x86asm.Op{x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
	x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG}
