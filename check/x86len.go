package check

import "github.com/sframesim/sframesim/arch"

// x86Decoder finds the lengths of x86-64 instructions and whether each is
// a near call or return, as arch.Classify does with x86asm, several times
// faster: finding instruction boundaries is most of check's work on
// x86-64, and x86asm.Decode builds every operand.
//
// x86Len computes an instruction's length from its structure (prefixes,
// opcode, ModRM, SIB, displacement, immediate) without telling valid
// encodings from invalid ones. Which are valid, x86asm decides: the first
// instruction of each shape (the prefixes that change its meaning or
// length, the opcode, ModRM's mod class, reg and, for register forms, rm)
// is decoded by x86asm too, and the shape is trusted from then on only
// when x86asm accepted it with the same length and flow; other shapes,
// and what x86Len does not know, always go to x86asm. Tests compare the
// two over every prefix combination, opcode, ModRM and SIB byte, random
// bytes, and every instruction of the x86-64 corpus.
type x86Decoder struct {
	shapes map[uint32]bool
}

func (d *x86Decoder) classify(code []byte) (arch.Flow, int) {
	flow, n, shape, ok := x86Len(code)
	if !ok {
		return arch.AMD64.Classify(code)
	}
	good, seen := d.shapes[shape]
	if !seen {
		if d.shapes == nil {
			d.shapes = map[uint32]bool{}
		}
		wflow, wn := arch.AMD64.Classify(code)
		good = wflow == flow && wn == n
		d.shapes[shape] = good
		return wflow, wn
	}
	if !good {
		return arch.AMD64.Classify(code)
	}
	return flow, n
}

// Shape bits of x86Len: the prefixes, then the opcode map, opcode and
// ModRM class.
const (
	shape66 = 1 << iota
	shapeF2
	shapeF3
	shapeRepLast // F2 came after F3
	shapeF0
	shapeW
	shape67
	shapeSeg
	shapeMapShift   = 8  // 2 bits: one-byte, 0F, 0F 38, 0F 3A
	shapeOpShift    = 10 // 8 bits
	shapeModRMShift = 18 // 1 + 1 + 3 + 3 bits: present, register form, reg, rm of a register form
)

// x86Len returns the length of the instruction at the start of code, its
// flow and its shape; ok is false when the opcode is not in its tables
// (VEX, EVEX, moffs moves, and other rare encodings) or code ends first.
func x86Len(code []byte) (flow arch.Flow, n int, shape uint32, ok bool) {
	const maxLen = 15
	i := 0
	rexW := false
	// Legacy prefixes, then at most one REX right before the opcode.
prefixes:
	for ; i < len(code) && i < maxLen; i++ {
		switch b := code[i]; {
		case b == 0x66:
			shape |= shape66
		case b == 0xf2:
			shape |= shapeF2 | shapeRepLast
		case b == 0xf3:
			shape = shape&^shapeRepLast | shapeF3
		case b == 0xf0:
			shape |= shapeF0
		case b == 0x67:
			shape |= shape67
		case b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65:
			shape |= shapeSeg
		case b&0xf0 == 0x40:
			if rexW = b&0x08 != 0; rexW {
				shape |= shapeW
			}
			i++
			break prefixes
		default:
			break prefixes
		}
	}
	if i >= len(code) {
		return 0, 0, 0, false
	}
	opsize := shape&shape66 != 0
	op := code[i]
	i++
	var kind uint8
	opMap := uint32(0)
	if op == 0x0f {
		if i >= len(code) {
			return 0, 0, 0, false
		}
		op = code[i]
		i++
		opMap = 1
		switch op {
		case 0x38, 0x3a:
			if i >= len(code) {
				return 0, 0, 0, false
			}
			kind = xM
			opMap = 2
			if op == 0x3a {
				kind, opMap = xM|xIb, 3
			}
			op = code[i]
			i++
		default:
			kind = x86Map2[op]
		}
	} else {
		kind = x86Map1[op] // a second REX, or a prefix after REX: xBad
	}
	if kind == xBad {
		return 0, 0, 0, false
	}
	shape |= opMap<<shapeMapShift | uint32(op)<<shapeOpShift
	flow = arch.FlowOther
	if kind&xM != 0 {
		if i >= len(code) {
			return 0, 0, 0, false
		}
		modrm := code[i]
		i++
		mod, reg, rm := modrm>>6, modrm>>3&7, modrm&7
		m := uint32(1) | uint32(reg)<<2
		if mod == 3 {
			m |= 2 | uint32(rm)<<5
		}
		shape |= m << shapeModRMShift
		if opMap == 0 {
			switch {
			case (op == 0xf6 || op == 0xf7) && reg == 0: // TEST Eb,Ib / Ev,Iz
				kind |= x86Imm(op == 0xf7)
			case op == 0xff && reg == 2: // CALL Ev
				flow = arch.FlowCall
			}
		}
		if mod != 3 {
			if rm == 4 {
				if i >= len(code) {
					return 0, 0, 0, false
				}
				sib := code[i]
				i++
				if mod == 0 && sib&7 == 5 {
					i += 4
				}
			} else if mod == 0 && rm == 5 {
				i += 4 // RIP-relative
			}
			switch mod {
			case 1:
				i++
			case 2:
				i += 4
			}
		}
	}
	switch kind &^ xM {
	case xIb:
		i++
	case xIw:
		i += 2
	case xIz:
		if opsize && !rexW {
			i += 2
		} else {
			i += 4
		}
	case xIv:
		switch {
		case rexW:
			i += 8
		case opsize:
			i += 2
		default:
			i += 4
		}
	case xIwIb:
		i += 3
	case xId:
		i += 4
	}
	if opMap == 0 {
		switch op {
		case 0xe8:
			flow = arch.FlowCall
		case 0xc2, 0xc3:
			flow = arch.FlowRet
		}
	}
	if i > len(code) || i > maxLen {
		return 0, 0, 0, false
	}
	return flow, i, shape, true
}

// Operand kinds of the opcode tables: xM (a ModRM byte follows) ORed
// with at most one immediate kind; xBad: not in the tables.
const (
	xBad  uint8 = 0
	xNone uint8 = 1    // no ModRM, no immediate
	xIb   uint8 = 2    // imm8 or rel8
	xIw   uint8 = 3    // imm16
	xIz   uint8 = 4    // imm16 with 66 (and no REX.W), else imm32
	xIv   uint8 = 5    // imm64 with REX.W, imm16 with 66, else imm32
	xIwIb uint8 = 6    // ENTER
	xId   uint8 = 7    // rel32 (x86asm decides about 66)
	xM    uint8 = 0x80 // ModRM (and SIB, displacement)
)

// x86Imm is the immediate of TEST Eb,Ib (F6 /0) or Ev,Iz (F7 /0).
func x86Imm(wide bool) uint8 {
	if wide {
		return xIz
	}
	return xIb
}

// x86Map1 is the one-byte opcode map of 64-bit mode [Intel SDM vol. 2
// A.3, Table A-2]. Left out (xBad): prefixes and the 0F escape, opcodes
// invalid in 64-bit mode, VEX (C4, C5) and EVEX (62), and moffs moves
// (A0-A3).
var x86Map1 = func() (m [256]uint8) {
	for op := 0; op < 0x40; op++ {
		switch op & 7 {
		case 0, 1, 2, 3: // ALU Eb,Gb / Ev,Gv / Gb,Eb / Gv,Ev
			m[op] = xM
		case 4: // ALU AL,Ib
			m[op] = xIb
		case 5: // ALU rAX,Iz
			m[op] = xIz
		default: // segment prefixes, 0F, and opcodes invalid in 64-bit mode
		}
	}
	for op := 0x50; op <= 0x5f; op++ {
		m[op] = xNone // PUSH, POP
	}
	m[0x63] = xM // MOVSXD
	m[0x68] = xIz
	m[0x69] = xM | xIz
	m[0x6a] = xIb
	m[0x6b] = xM | xIb
	for op := 0x6c; op <= 0x6f; op++ {
		m[op] = xNone // INS, OUTS
	}
	for op := 0x70; op <= 0x7f; op++ {
		m[op] = xIb // Jcc rel8
	}
	m[0x80] = xM | xIb
	m[0x81] = xM | xIz
	m[0x83] = xM | xIb
	for op := 0x84; op <= 0x8f; op++ {
		m[op] = xM // TEST, XCHG, MOV, LEA, POP Ev
	}
	for op := 0x90; op <= 0x9f; op++ {
		m[op] = xNone // XCHG, NOP, PAUSE, CBW, CWD, FWAIT, PUSHF, POPF, SAHF, LAHF
	}
	m[0x9a] = xBad // far CALL: invalid in 64-bit mode
	for op := 0xa4; op <= 0xaf; op++ {
		m[op] = xNone // string instructions
	}
	m[0xa8] = xIb
	m[0xa9] = xIz
	for op := 0xb0; op <= 0xb7; op++ {
		m[op] = xIb // MOV r8, Ib
	}
	for op := 0xb8; op <= 0xbf; op++ {
		m[op] = xIv // MOV r, Iv
	}
	m[0xc0] = xM | xIb
	m[0xc1] = xM | xIb
	m[0xc2] = xIw // RET Iw
	m[0xc3] = xNone
	m[0xc6] = xM | xIb
	m[0xc7] = xM | xIz
	m[0xc8] = xIwIb // ENTER
	m[0xc9] = xNone // LEAVE
	m[0xca] = xIw   // far RET Iw
	m[0xcb] = xNone
	m[0xcc] = xNone // INT3
	m[0xcd] = xIb   // INT
	m[0xcf] = xNone // IRET
	for op := 0xd0; op <= 0xd3; op++ {
		m[op] = xM // shifts and rotates
	}
	m[0xd7] = xNone // XLAT
	for op := 0xd8; op <= 0xdf; op++ {
		m[op] = xM // x87
	}
	for op := 0xe0; op <= 0xe7; op++ {
		m[op] = xIb // LOOPcc, JRCXZ, IN, OUT
	}
	m[0xe8] = xId // CALL
	m[0xe9] = xId // JMP
	m[0xeb] = xIb // JMP rel8
	for op := 0xec; op <= 0xef; op++ {
		m[op] = xNone // IN, OUT
	}
	m[0xf1] = xNone // INT1
	m[0xf4] = xNone // HLT
	m[0xf5] = xNone // CMC
	m[0xf6] = xM
	m[0xf7] = xM
	for op := 0xf8; op <= 0xfd; op++ {
		m[op] = xNone // CLC, STC, CLI, STI, CLD, STD
	}
	m[0xfe] = xM
	m[0xff] = xM
	return m
}()

// x86Map2 is the two-byte (0F) opcode map [Intel SDM vol. 2 A.3, Table
// A-3]; 0F 38 and 0F 3A are handled by x86Len (ModRM, and an imm8 for
// 0F 3A). Left out: 3DNow! (0F 0F), and the opcodes whose immediate
// depends on the prefix (0F 78, 0F 79: EXTRQ, INSERTQ).
var x86Map2 = func() (m [256]uint8) {
	for op := range 256 {
		m[op] = xM
	}
	for _, op := range []int{0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37, 0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9, 0xaa} {
		m[op] = xNone // SYSCALL, CLTS, SYSRET, INVD, WBINVD, UD2, FEMMS, WRMSR, RDTSC, RDMSR, RDPMC, SYSENTER, SYSEXIT, GETSEC, EMMS, PUSH/POP FS/GS, CPUID, RSM
	}
	for _, op := range []int{0x0f, 0x36, 0x39, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x04, 0x0a, 0x0c, 0x24, 0x25, 0x26, 0x27, 0x78, 0x79, 0x7a, 0x7b} {
		m[op] = xBad
	}
	for op := 0xc8; op <= 0xcf; op++ {
		m[op] = xNone // BSWAP
	}
	for _, op := range []int{0x70, 0x71, 0x72, 0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6} {
		m[op] = xM | xIb // PSHUF*, shifts by immediate, SHLD, SHRD, BT* Ib, CMPccPS, PINSRW, PEXTRW, SHUFPS
	}
	for op := 0x80; op <= 0x8f; op++ {
		m[op] = xId // Jcc rel32
	}
	return m
}()
